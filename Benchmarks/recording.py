#!/usr/bin/env python3
"""What `--record FILE` costs per request as a session grows. Issue 27 (defect 15) measured
0.14-0.18 s per 1,000 requests without recording, and 2.75, 6.8, 9.4, 18.6, 24.4, 32.9 s for
successive thousands with it: the recorder rewrote the whole transcript after every event.

    python3 Benchmarks/recording.py [--daemon PATH] [--requests N] [--every K] [--method ping|objectAtIndexPath]

Runs the same session twice, without and with --record, one request at a time (each answered
before the next is sent), and prints the seconds each K requests took, side by side, with the
bytes the daemon wrote (write(2) calls: its answers on stdout and the transcript) per K requests."""
import argparse, os, sys, tempfile, time

from rpcclient import Daemon


def session(daemon_command, method, requests, every):
    daemon = Daemon(daemon_command)

    def call(name, params=None):
        try:
            return daemon.request(name, params)
        except EOFError:
            sys.exit(f"the daemon stopped answering ({' '.join(daemon_command)})")

    def written():
        return daemon.proc_number("io", "wchar")

    call("initialize", {})
    if method == "objectAtIndexPath":
        call("createSource", {"name": "s", "kind": "simple", "objects": [{"id": n, "title": f"Book {n}"} for n in range(100)]})
    params = {"source": "s", "indexPath": [0, 7]} if method == "objectAtIndexPath" else {}
    figures = []
    start, bytes_before = time.monotonic(), written()
    for n in range(1, requests + 1):
        call(method, params)
        if n % every == 0:
            now, bytes_now = time.monotonic(), written()
            figures.append((now - start, bytes_now - bytes_before))
            start, bytes_before = now, bytes_now
    daemon.close()
    return figures


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--daemon", default=".build/release/datasourced")
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--every", type=int, default=1000)
    parser.add_argument("--method", choices=["ping", "objectAtIndexPath"], default="ping")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="datasourced-recording-bench") as directory:
        transcript = os.path.join(directory, "session.json")
        plain = session([args.daemon], args.method, args.requests, args.every)
        recorded = session([args.daemon, "--record", transcript], args.method, args.requests, args.every)
        size = os.path.getsize(transcript)
    print(f"{args.method}, {args.every:,} requests per row ({args.daemon})")
    print(f"{'requests':>13} | {'s, no --record':>14} | {'s, --record':>11} | {'kB written, no --record':>23} | {'kB written, --record':>20}")
    for row, ((plain_s, plain_b), (rec_s, rec_b)) in enumerate(zip(plain, recorded)):
        print(f"{row * args.every + 1:>6}-{(row + 1) * args.every:<6} | {plain_s:>14.2f} | {rec_s:>11.2f} | {plain_b / 1024:>23.0f} | {rec_b / 1024:>20.0f}")
    print(f"transcript: {size / 1024:.0f} kB after {args.requests:,} requests")


main()
