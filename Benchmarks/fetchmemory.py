#!/usr/bin/env python3
"""Resident memory of the daemon over many completed (or cancelled) HTTP fetches: does it
plateau? Issue 12 measured ~0.8 KB more per fetch with no plateau over 8,000.

    python3 Benchmarks/fetchmemory.py [--daemon PATH] [--fetches N] [--every K]
                                      [--cancel | --cache 304|200 | --ping]

Prints RSS (kB) every K fetches and the growth per fetch over each half of the run.
--cache keeps the source in a persisted cache (a private temporary file) over a route with an
ETag, so each fetch revalidates: `304` answers it unchanged; `200` is a route without validators, so
each fetch gets the whole body again (the same rows) and the entry is stored again. --ping sends `ping` instead of fetching: the cost of a request alone.
Issue 27 asked for a plateau over 100,000 fetches: --fetches 100000 --every 10000."""
import argparse, json, os, subprocess, sys, tempfile

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--daemon", default=".build/release/datasourced")
    parser.add_argument("--fetches", type=int, default=20000)
    parser.add_argument("--every", type=int, default=2000)
    parser.add_argument("--cancel", action="store_true", help="cancel each fetch before it answers (a delayed route)")
    parser.add_argument("--cache", choices=["304", "200"], help="a cached source revalidating each fetch")
    parser.add_argument("--ping", action="store_true", help="ping instead of fetching")
    args = parser.parse_args()
    fixtures = {"fixtures": [{"path": "/empty", "body": {"items": []}},
                             {"path": "/slow", "delayMilliseconds": 200, "body": {"items": []}},
                             {"path": "/same", "etag": "v1", "body": {"items": [{"id": 1}, {"id": 2}]}},
                             {"path": "/plain", "body": {"items": [{"id": 1}, {"id": 2}]}}]}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(fixtures, f)
    server = subprocess.Popen([args.daemon, "fixtures", f.name], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    base = json.loads(server.stdout.readline())["baseURL"]
    cache_dir = tempfile.mkdtemp()
    daemon = subprocess.Popen([args.daemon, "--cache-path", os.path.join(cache_dir, "cache.sqlite")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    ids = iter(range(1, 1 << 62))

    def send(method, params):
        body = json.dumps({"jsonrpc": "2.0", "id": next(ids), "method": method, "params": params}).encode()
        daemon.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        daemon.stdin.flush()

    def answer():
        while True:
            length = 0
            while True:
                line = daemon.stdout.readline()
                if line in (b"\r\n", b""):
                    break
                if line.lower().startswith(b"content-length"):
                    length = int(line.split(b":")[1])
            message = json.loads(daemon.stdout.read(length))
            if "id" in message:
                return message

    def rss():
        for line in open(f"/proc/{daemon.pid}/status"):
            if line.startswith("VmRSS"):
                return int(line.split()[1])

    send("initialize", {}); answer()
    path = "/slow" if args.cancel else {"304": "/same", "200": "/plain"}.get(args.cache, "/empty")
    source = {"name": "r", "kind": "remote", "remoteConfiguration": {"baseURL": base}, "apiPath": path, "keyPath": "items"}
    if args.cache:
        source["cache"] = {"enabled": True}
    send("createSource", source); answer()
    samples = [(0, rss())]
    for n in range(1, args.fetches + 1):
        if args.ping:
            send("ping", {}); answer()
        elif args.cancel:
            send("fetchData", {"source": "r"}); answer()
            send("cancelFetch", {"source": "r"}); answer()
        else:
            send("fetchData", {"source": "r", "wait": True}); answer()
        if n % args.every == 0:
            samples.append((n, rss()))
            print(f"{n:>7} fetches: RSS {samples[-1][1]} kB", flush=True)
    half = len(samples) // 2
    first = (samples[half][1] - samples[1][1]) * 1024 / max(1, samples[half][0] - samples[1][0])
    second = (samples[-1][1] - samples[half][1]) * 1024 / max(1, samples[-1][0] - samples[half][0])
    print(f"growth per fetch: {first:.1f} B over fetches {samples[1][0]}-{samples[half][0]}, {second:.1f} B over {samples[half][0]}-{samples[-1][0]}")
    daemon.stdin.close(); daemon.wait(); server.stdin.close(); server.wait()

main()
