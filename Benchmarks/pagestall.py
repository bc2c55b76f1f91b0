#!/usr/bin/env python3
"""Does one large page hold up other requests? A loopback API answers one gzip page of N rows
(`[0,0,...]`, 2 bytes a row: 30 MiB inflate from about 30 KB); while the daemon fetches,
decodes and applies it, a `ping` is sent every 2 ms and each answer's wait is measured. Then
the source is destroyed and the daemon's resident memory read again.

    python3 Benchmarks/pagestall.py [--daemon PATH] [--rows N] [--limit N] [--rounds K]
                                    [--row-bytes B | --arrays K] [--identity-key KEY]

Prints, per round: the page's outcome (rows, or the failure's kind), the time from fetchData
to its final event, the pings' waits (count, median, p99, max, in ms), and RSS (MB) at its peak
during the round and after destroySource. `--limit` sets the source's limits.maxObjectsPerPage
(default: the daemon's own); a page over it fails with kind tooLarge.
"""
import argparse, gzip, statistics, threading, time

from rpcclient import Daemon, QuietHandler, notification, serve_http


def lazily_freed_kb(pid):
    """LazyFree of /proc/PID/smaps_rollup: pages given back with MADV_FREE that resident size still counts."""
    with open(f"/proc/{pid}/smaps_rollup") as rollup:
        for line in rollup:
            if line.startswith("LazyFree:"):
                return int(line.split()[1])
    return 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--daemon", default=".build/release/datasourced")
    parser.add_argument("--rows", type=int, default=15_700_000)
    parser.add_argument("--limit", type=int, help="limits.maxObjectsPerPage of the source")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--arrays", type=int, default=0,
                        help="the page as this many arrays of --rows / ARRAYS zeros each (default: one array of rows)")
    parser.add_argument("--identity-key", help="the source's identityKey (default: whole-value identity)")
    parser.add_argument("--interval-ms", type=float, default=2.0)
    parser.add_argument("--row-bytes", type=int, default=0,
                        help="rows as objects {\"id\": N, \"text\": \"xx...\"} of about this size (default: the number 0)")
    args = parser.parse_args()

    if args.arrays:
        # The rows cut into arrays of fewer elements each: under the per-array limit, not the total.
        size = args.rows // args.arrays
        inner = "[" + ",".join(["0"] * size) + "]"
        body = gzip.compress(("[" + ",".join([inner] * args.arrays) + "]").encode(), compresslevel=9)
    elif args.row_bytes:
        filler = "x" * max(0, args.row_bytes - 30)
        rows = ",".join('{"id":%d,"text":"%s"}' % (i, filler) for i in range(args.rows))
        body = gzip.compress(("[" + rows + "]").encode(), compresslevel=6)
    else:
        body = gzip.compress(b"[" + b"0," * (args.rows - 1) + b"0]", compresslevel=9)

    class Handler(QuietHandler):
        protocol_version = "HTTP/1.0"

        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = serve_http(Handler)
    daemon = Daemon([args.daemon, "--no-cache"])
    daemon.initialize(capabilities={"changeRanges": True})
    daemon.start_reader()
    print(f"page: {args.rows} rows, {len(body)} bytes gzip")
    for round in range(1, args.rounds + 1):
        spec = {"name": f"big{round}", "kind": "remote", "remoteConfiguration": {"baseURL": server.base},
                "apiPath": "/page", "limits": {"maxBodyBytes": 1 << 30}}
        if args.identity_key:
            spec["identityKey"] = args.identity_key
        if args.limit:
            spec["limits"]["maxObjectsPerPage"] = args.limit
        daemon.request("createSource", spec)
        sent = {}
        waits = []
        peak = [daemon.status_kb("VmRSS")]
        stop = threading.Event()
        lock = threading.Lock()

        def pinger():
            while not stop.is_set():
                with lock:
                    # Noted before it is sent: its answer may be read before send returns.
                    sent[daemon.next_id + 1] = time.monotonic()
                    daemon.send("ping")
                peak[0] = max(peak[0], daemon.status_kb("VmRSS"))
                time.sleep(args.interval_ms / 1000)

        started = time.monotonic()
        with lock:
            fetch = daemon.send("fetchData", {"source": spec["name"]})
        thread = threading.Thread(target=pinger)
        thread.start()
        outcome = None
        while outcome is None:
            message = daemon.receive(time.monotonic() + 600)
            if message.get("id") in sent:
                waits.append((daemon.arrived_at - sent.pop(message["id"])) * 1000)
            elif notification("finishedLoading", "failedWithError", source=spec["name"])(message):
                elapsed = time.monotonic() - started
                if message["method"].endswith("failedWithError"):
                    outcome = f"failed: {message['params']['error']['kind']}"
                else:
                    outcome = "loaded"
        stop.set()
        thread.join()
        # The answers to the pings still in flight.
        while sent:
            message = daemon.receive(time.monotonic() + 60)
            if message.get("id") in sent:
                waits.append((daemon.arrived_at - sent.pop(message["id"])) * 1000)
        count = daemon.request("numberOfObjectsInSection", {"source": spec["name"], "section": 0})
        daemon.request("destroySource", {"name": spec["name"]})
        # Memory is handed back once the answer is written: the next request's answer follows it.
        daemon.request("ping")
        after = daemon.status_kb("VmRSS")
        lazy = lazily_freed_kb(daemon.pid)
        waits.sort()
        p99 = waits[min(len(waits) - 1, int(len(waits) * 0.99))]
        print(f"round {round}: {outcome} ({count} rows) in {elapsed * 1000:.0f} ms; pings {len(waits)}: "
              f"median {statistics.median(waits):.2f} ms, p99 {p99:.2f} ms, max {waits[-1]:.2f} ms; "
              f"RSS peak {peak[0] / 1024:.0f} MB, after destroySource {after / 1024:.0f} MB "
              f"({lazy / 1024:.0f} MB of it freed lazily: MADV_FREE pages the kernel takes back when it needs them)")
        print(f"RESULT pagestall round={round} outcome={outcome.split(':')[0]} rows={count} "
              f"ping_max_ms={waits[-1]:.2f} ping_p99_ms={p99:.2f} rss_peak_mb={peak[0] / 1024:.0f} rss_after_mb={after / 1024:.0f} lazyfree_mb={lazy / 1024:.0f}")
    daemon.close()
    server.shutdown()


if __name__ == "__main__":
    main()
