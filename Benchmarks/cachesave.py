#!/usr/bin/env python3
"""What saving pages to the persisted cache costs, page by page: a list of PAGES pages loaded
with the cache on and with it off.

    python3 Benchmarks/cachesave.py [--daemon PATH] [--pages 1000] [--rows-per-page 100] [--runs 3]

1. Load: a paginated source loaded page by page from this script's own HTTP API (loopback),
   timed from `fetchData` to the daemon's exit after the last page's `finishedLoading` (the
   exit waits for the cache's writes), with the cache on and with it off, each pair in the
   same run. Ratio on / off, medians of RUNS runs.
2. Each save: the daemon's debug log says what each write to the cache took ("page cache:
   stored ... in N microseconds"). The median of the first ten pages' saves and of the last
   ten, and their ratio: a save that rewrote the entry would grow with the pages held.
"""
import argparse, os, re, shutil, statistics, tempfile, time

from cache import API, FINISHED, serve, spawn

SAVE_LINE = re.compile(rb"page cache: stored .*: (\d+) pages, (\d+) kept, in (\d+) microseconds")


def saves(log_path):
    """Each write the daemon logged: (pages in the entry, pages kept as stored, microseconds)."""
    with open(log_path, "rb") as log:
        return [tuple(int(group) for group in found.groups()) for found in map(SAVE_LINE.search, log) if found]


def load(daemon_path, base, pages, cache_path, log_path=None, cached=True):
    daemon = spawn(daemon_path, cache_path, log_path)
    params = {"name": "issues", "kind": "paginated", "identityKey": "id", "remoteConfiguration": {"baseURL": base},
              "apiPath": "/issues", "keyPath": "items", "pagination": {"totalPath": "total", "maxPages": pages},
              "cache": {"enabled": cached, "maxPages": pages}}
    daemon.request("createSource", params)
    started = time.perf_counter()
    daemon.request("fetchData", {"source": "issues", "wait": True})
    for _ in range(pages - 1):
        daemon.send("fetchNextPage", {"source": "issues"})
        daemon.until(FINISHED)
    daemon.close()
    return time.perf_counter() - started


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--daemon", default=".build/release/datasourced")
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--rows-per-page", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    api = API(args.pages * args.rows_per_page, args.pages)
    server = serve(api)
    scratch = tempfile.mkdtemp(prefix="datasourced-cachesave-bench")
    try:
        on, off, firsts, lasts = [], [], [], []
        for run in range(args.runs):
            log_path = os.path.join(scratch, f"run{run}.log")
            on.append(load(args.daemon, server.base, args.pages, os.path.join(scratch, f"on{run}.sqlite"), log_path))
            off.append(load(args.daemon, server.base, args.pages, os.path.join(scratch, f"off{run}.sqlite"), cached=False))
            written = saves(log_path)
            if len(written) != args.pages:
                raise RuntimeError(f"the daemon logged {len(written)} saves, not one per page ({args.pages})")
            kept = [entry[1] for entry in written]
            first = statistics.median(entry[2] for entry in written[:10]) / 1000
            last = statistics.median(entry[2] for entry in written[-10:]) / 1000
            firsts.append(first)
            lasts.append(last)
            print(f"run {run + 1}: load with the cache {on[-1]:.2f} s, without {off[-1]:.2f} s ({on[-1] / off[-1]:.2f}x); "
                  f"a save: first pages {first:.2f} ms, last pages {last:.2f} ms ({last / first:.2f}x); "
                  f"pages kept by the last save: {kept[-1]} of {written[-1][0]}")
        print(f"{args.pages} pages of {args.rows_per_page} rows, medians of {args.runs} runs:")
        print(f"  load, cache on / off: {statistics.median(on):.2f} s / {statistics.median(off):.2f} s = "
              f"{statistics.median(on) / statistics.median(off):.2f}x")
        print(f"  one save, last ten pages / first ten: {statistics.median(lasts):.2f} ms / {statistics.median(firsts):.2f} ms = "
              f"{statistics.median(lasts) / statistics.median(firsts):.2f}x")
    finally:
        server.shutdown()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
