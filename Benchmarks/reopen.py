#!/usr/bin/env python3
"""How fast a cached list's first screen comes back, whatever the list's length.

    python3 Benchmarks/reopen.py [--daemon PATH] [--sizes 1000,100000,1000000] [--page-size 1000] [--runs 5]

For each size, a daemon with a private cache file loads the whole list from this script's own
API on loopback (pages of PAGE_SIZE small rows, an ETag each, the API's own 304s), page after
page, and exits. Then, RUNS times, a new daemon on that file: `createSource`, and the time from
sending `fetchData` to the answer to `objectsInSection` of the first 100 rows, sent as soon as
the first `didChange` arrived (what an editor does to draw its first screen). Each run then
waits for the load cycle's end (every cached row shown) and says how long that took.

Prints each run, the medians, and the largest size's median over the smallest's (the floor:
at most 2).
"""
import argparse, json, os, shutil, statistics, sys, tempfile, threading, time
from urllib.parse import parse_qs, urlparse

from rpcclient import Daemon, QuietHandler, notification, serve_http

CHANGED, FINISHED = notification("didChange"), notification("finishedLoading")


class API:
    """`/items?page=N`: PAGE_SIZE rows a page, `total` rows in all; bodies made on demand."""

    def __init__(self, page_size):
        self.page_size = page_size
        self.total = 0
        self.lock = threading.Lock()
        self.requests = 0

    def body(self, page):
        first = (page - 1) * self.page_size + 1
        last = min(self.total, page * self.page_size)
        items = [{"id": i, "title": f"Issue {i}", "state": "open"} for i in range(first, last + 1)]
        return json.dumps({"items": items, "total": self.total}).encode()


def serve(api):
    class Handler(QuietHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            page = int(parse_qs(urlparse(self.path).query).get("page", ["1"])[0])
            etag = f'"t{api.total}-p{page}"'
            with api.lock:
                api.requests += 1
            if self.headers.get("If-None-Match") == etag:
                return self.send_not_modified(etag)
            self.send_json(api.body(page), [("ETag", etag)])

    return serve_http(Handler)


def spawn(path, cache_path, log_path=None):
    arguments = [path, "serve", "--cache-path", cache_path, "--cache-max-bytes", str(1 << 30)]
    if log_path:
        with open(log_path, "ab") as log:
            daemon = Daemon(arguments + ["--log-level", "debug"], stderr=log)
    else:
        daemon = Daemon(arguments)
    daemon.initialize()
    return daemon


def create(daemon, base, pages):
    daemon.request("createSource", {
        "name": "issues", "kind": "paginated", "identityKey": "id", "remoteConfiguration": {"baseURL": base},
        "apiPath": "/items", "keyPath": "items", "pageSize": API_PAGE_SIZE[0],
        "pagination": {"totalPath": "total", "maxPages": max(1000, pages)},
        "cache": {"enabled": True, "maxPages": max(1000, pages)}})


API_PAGE_SIZE = [1000]


def load_whole(daemon, pages):
    started = time.perf_counter()
    daemon.request("fetchData", {"source": "issues", "wait": True})
    for _ in range(pages - 1):
        daemon.send("fetchNextPage", {"source": "issues"})
        daemon.until(FINISHED, timeout=120)
    return time.perf_counter() - started


def reopen(daemon, rows):
    """fetchData → the first 100 rows read; and → every cached row shown (the cycle's end)."""
    started = time.perf_counter()
    daemon.send("fetchData", {"source": "issues"})
    daemon.until(CHANGED, timeout=120)
    answer = daemon.request("objectsInSection", {"source": "issues", "section": 0, "start": 0, "count": 100})
    first = time.perf_counter() - started
    read = answer["objects"] if isinstance(answer, dict) else answer
    if [row.get("id") for row in read] != list(range(1, 101)):
        raise RuntimeError(f"the first rows read are not rows 1...100: {read[:3]}...")
    daemon.until(FINISHED, timeout=300)
    whole = time.perf_counter() - started
    count = daemon.request("numberOfObjectsInSection", {"source": "issues", "section": 0})
    count = count["count"] if isinstance(count, dict) else count
    if count != rows:
        raise RuntimeError(f"the cycle ended with {count} rows, not the {rows} cached")
    return first, whole


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--daemon", default=".build/release/datasourced")
    parser.add_argument("--sizes", default="1000,100000,1000000")
    parser.add_argument("--page-size", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--log", help="append the reopening daemons' debug logs to this file")
    args = parser.parse_args()
    API_PAGE_SIZE[0] = args.page_size
    sizes = [int(size) for size in args.sizes.split(",")]
    api = API(args.page_size)
    server = serve(api)
    scratch = tempfile.mkdtemp(prefix="datasourced-reopen-bench")
    medians = {}
    try:
        for rows in sizes:
            api.total = rows
            pages = -(-rows // args.page_size)
            cache_path = os.path.join(scratch, f"{rows}.sqlite")
            loader = spawn(args.daemon, cache_path)
            create(loader, server.base, pages)
            loaded = load_whole(loader, pages)
            loader.close()
            print(f"{rows} rows ({pages} pages of {args.page_size}): loaded and cached in {loaded:.1f} s", flush=True)
            firsts, wholes = [], []
            for run in range(args.runs):
                daemon = spawn(args.daemon, cache_path, args.log)
                create(daemon, server.base, pages)
                first, whole = reopen(daemon, rows)
                daemon.close()
                firsts.append(first)
                wholes.append(whole)
                print(f"  run {run + 1}: first 100 rows read {first * 1000:.1f} ms; every row shown {whole * 1000:.1f} ms", flush=True)
            medians[rows] = statistics.median(firsts)
            print(f"  median: first 100 rows {medians[rows] * 1000:.1f} ms; every row {statistics.median(wholes) * 1000:.1f} ms", flush=True)
        smallest, largest = min(sizes), max(sizes)
        ratio = medians[largest] / medians[smallest]
        print(f"first 100 rows, {largest} rows ÷ {smallest}: {ratio:.2f} (floor: at most 2)")
        print(f"RESULT reopen first100 " + " ".join(f"rows{rows}_ms={medians[rows] * 1000:.2f}" for rows in sizes)
              + f" ratio={ratio:.3f}", file=sys.stderr)
    finally:
        server.shutdown()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
