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
import argparse, json, os, tempfile

from rpcclient import Daemon, FixtureServer

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
    server = FixtureServer(args.daemon, f.name)
    base = server.base
    cache_dir = tempfile.mkdtemp()
    daemon = Daemon([args.daemon, "--cache-path", os.path.join(cache_dir, "cache.sqlite")])

    def rss():
        return daemon.status_kb("VmRSS")

    daemon.initialize()
    path = "/slow" if args.cancel else {"304": "/same", "200": "/plain"}.get(args.cache, "/empty")
    source = {"name": "r", "kind": "remote", "remoteConfiguration": {"baseURL": base}, "apiPath": path, "keyPath": "items"}
    if args.cache:
        source["cache"] = {"enabled": True}
    daemon.request("createSource", source)
    samples = [(0, rss())]
    for n in range(1, args.fetches + 1):
        if args.ping:
            daemon.request("ping", {})
        elif args.cancel:
            daemon.request("fetchData", {"source": "r"})
            daemon.request("cancelFetch", {"source": "r"})
        else:
            daemon.request("fetchData", {"source": "r", "wait": True})
        if n % args.every == 0:
            samples.append((n, rss()))
            print(f"{n:>7} fetches: RSS {samples[-1][1]} kB", flush=True)
    half = len(samples) // 2
    first = (samples[half][1] - samples[1][1]) * 1024 / max(1, samples[half][0] - samples[1][0])
    second = (samples[-1][1] - samples[half][1]) * 1024 / max(1, samples[-1][0] - samples[half][0])
    print(f"growth per fetch: {first:.1f} B over fetches {samples[1][0]}-{samples[half][0]}, {second:.1f} B over {samples[half][0]}-{samples[-1][0]}")
    daemon.close(); server.close()

main()
