#!/usr/bin/env python3
"""Issue 33's round-trip figures from outside: a Python client, not the Swift harness.

    python3 Benchmarks/rtt.py --daemon PATH --stub Benchmarks/.bin/stub_server [--objects 10000]
                              [--count 100000] [--sequential 20000] [--runs 5]

Each run spawns the daemon and the C stub in turn (so a drifting machine moves both), sends
`initialize` and a `createSource` of OBJECTS small objects (the stub answers -32601), then:

1. One at a time: SEQUENTIAL `objectAtIndexPath` requests, each written when the last answer
   has been read whole; the p50 round trip.
2. Pipelined: COUNT `objectAtIndexPath` requests written by one thread as fast as the pipe
   takes them while the main thread reads the answers; requests a second, from the first
   byte written to the last answer read.

It prints daemon / stub for both: the medians over the runs, and the pipelined ratio pair by
pair. The client frames requests before the clock starts and reads answers by their
Content-Length without parsing them, but it is Python: it spends several microseconds a
message that the Swift harness does not, on the same 2 cores the server runs on.
"""
import argparse, os, statistics, subprocess, sys, threading, time

from rpcclient import Daemon, frame


def objects_text(count):
    return b"[" + b",".join(
        b'{"id":%d,"title":"Item %d","group":"g%d","score":%d}' % (i, i, i % 100, (i * 7919) % 1000)
        for i in range(count)) + b"]"


def spawn(command, objects):
    """The daemon or the stub, initialized, with a simple source of `objects` objects (the stub refuses it: -32601)."""
    server = Daemon(command, stderr=subprocess.DEVNULL)
    server.write(frame(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}'))
    server.frames.next()
    server.write(frame(b'{"jsonrpc":"2.0","id":2,"method":"createSource","params":{"name":"items","kind":"simple","identityKey":"id","objects":'
                       + objects_text(objects) + b"}}"))
    server.frames.next()
    return server


def request(n, objects):
    return frame(b'{"jsonrpc":"2.0","id":%d,"method":"objectAtIndexPath","params":{"source":"items","indexPath":[0,%d]}}'
                 % (1000 + n, n % objects))


def one_at_a_time(command, objects, count):
    server = spawn(command, objects)
    out, next_frame = server.input, server.frames.next
    frames = [request(n, objects) for n in range(count)]
    times = []
    clock = time.perf_counter_ns
    for body in frames:
        start = clock()
        os.write(out, body)
        next_frame()
        times.append(clock() - start)
    server.close(shutdown=False)
    return statistics.median(times) / 1000


def pipelined(command, objects, count):
    server = spawn(command, objects)
    payload = b"".join(request(n, objects) for n in range(count))
    writer = threading.Thread(target=server.write, args=(payload,))
    start = time.perf_counter()
    writer.start()
    server.frames.skip(count)
    seconds = time.perf_counter() - start
    writer.join()
    server.close(shutdown=False)
    return count / seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--daemon", required=True)
    parser.add_argument("--stub", required=True)
    parser.add_argument("--objects", type=int, default=10000)
    parser.add_argument("--count", type=int, default=100000)
    parser.add_argument("--sequential", type=int, default=20000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    daemon, stub = [args.daemon], [args.stub]
    print(f"rtt.py (a Python client): {args.sequential} objectAtIndexPath one at a time, {args.count} pipelined; "
          f"{args.runs} runs, daemon and stub in turn; source of {args.objects} objects")
    sequential = {"daemon": [], "stub": []}
    rates = {"daemon": [], "stub": []}
    for run in range(1, args.runs + 1):
        for name, command in (("daemon", daemon), ("stub", stub)):
            sequential[name].append(one_at_a_time(command, args.objects, args.sequential))
        for name, command in (("daemon", daemon), ("stub", stub)):
            rates[name].append(pipelined(command, args.objects, args.count))
        print(f"  run {run}: one at a time p50 daemon {sequential['daemon'][-1]:.1f} us, stub {sequential['stub'][-1]:.1f} us; "
              f"pipelined daemon {rates['daemon'][-1]:,.0f} req/s, stub {rates['stub'][-1]:,.0f} req/s "
              f"({rates['daemon'][-1] / rates['stub'][-1]:.2f})")
        sys.stdout.flush()
    d_rtt, s_rtt = statistics.median(sequential["daemon"]), statistics.median(sequential["stub"])
    d_rate, s_rate = statistics.median(rates["daemon"]), statistics.median(rates["stub"])
    pairs = [d / s for d, s in zip(rates["daemon"], rates["stub"])]
    print(f"  one at a time, median of the runs' p50: daemon {d_rtt:.1f} us, stub {s_rtt:.1f} us; daemon / stub {d_rtt / s_rtt:.2f} (floor <= 1.5)")
    print(f"  pipelined, median: daemon {d_rate:,.0f} req/s, stub {s_rate:,.0f} req/s; daemon / stub {d_rate / s_rate:.2f}, "
          f"pair by pair {min(pairs):.2f}-{max(pairs):.2f} (floor >= 0.9)")
    print(f"RESULT rtt.py rtt_ratio={d_rtt / s_rtt:.2f} daemon_p50_us={d_rtt:.2f} stub_p50_us={s_rtt:.2f} "
          f"pipelined_ratio={d_rate / s_rate:.2f} daemon_rate={d_rate:.0f} stub_rate={s_rate:.0f}")


if __name__ == "__main__":
    main()
