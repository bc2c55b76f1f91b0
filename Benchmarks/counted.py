#!/usr/bin/env python3
"""Counted placeholders and jumps benchmark (issue 31): over a generated 1,000,000-row API
(page numbers, pages of 100, a total in every response), in one run:

- a single page fetch: `fetchData` to `finishedLoading` of a source without counting (median);
- the jump: with `placeholders: "counted"`, `willDisplayObjectAtIndexPath` on row 999,999 (and
  back on row 0, and on rows in between) to the `finishedLoading` after which the row reads as
  its object: the requests each jump makes, and its median time against the page fetch's (floor:
  1 request, 2x);
- reads: `objectsInSection` of 100 rows at random places in the counted 1,000,000-row list
  against the same read of a 100-row simple source (median round trip; floor 2x);
- what counting costs once: the first page of the counted list (its one `didChange` makes
  1,000,000 rows: one `[0, 0, 1000000]` with the `changeRanges` capability, which this client
  sends unless `--no-change-ranges`) and the daemon's RSS after it.

Usage: python3 Benchmarks/counted.py [--daemon PATH] [--rows 1000000] [--page-size 100]
Prints figures only; never passes or fails.
"""
import argparse, os, random, statistics, time

from rpcclient import Daemon
from window import serve  # the same page server

def timed(action):
    started = time.perf_counter()
    result = action()
    return time.perf_counter() - started, result

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--daemon", default=os.environ.get("DATASOURCED", ".build/release/datasourced"))
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--page-size", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--no-change-ranges", action="store_true",
                        help="without the changeRanges capability: every inserted row its own [section, item]")
    args = parser.parse_args()
    server, pages = serve(args.rows, args.page_size)
    base = server.base
    print(f"{args.rows} rows in {pages} pages of {args.page_size}; daemon {args.daemon}")
    daemon = Daemon([args.daemon, "--no-cache"])
    daemon.initialize(capabilities={"changeRanges": not args.no_change_ranges})
    common = {"kind": "paginated", "identityKey": "id", "remoteConfiguration": {"baseURL": base}, "apiPath": "/items",
              "keyPath": "items", "pageSize": args.page_size}

    # A single page fetch, without counting.
    daemon.request("createSource", dict(common, name="plain"))
    fetches = []
    for _ in range(args.repeats):
        seconds, _ = timed(lambda: (daemon.request("fetchData", {"source": "plain"}), daemon.final("plain")))
        fetches.append(seconds)
    page_fetch = statistics.median(fetches)

    # The counted list: its first page, then jumps.
    daemon.request("createSource", dict(common, name="counted", placeholders="counted"))
    requests_before = server.requests
    first_seconds, _ = timed(lambda: (daemon.request("fetchData", {"source": "counted"}), daemon.final("counted")))
    rss_after_first = daemon.status_kb("VmRSS") * 1024
    count = daemon.request("numberOfObjectsInSection", {"source": "counted", "section": 0})
    assert count == args.rows, f"the counted list has {count} rows"
    jumps, jump_requests = [], []
    far = random.Random(7)
    targets = [args.rows - 1, 0] * (args.repeats // 2) + [far.randrange(args.rows) for _ in range(args.repeats)]
    for row in targets:
        before = server.requests
        def jump():
            answer = daemon.request("willDisplayObjectAtIndexPath", {"source": "counted", "indexPath": [0, row]})
            assert answer["fetchStarted"], (row, answer)
            while True:  # a prefetch the jump superseded ends first, cancelled
                final = daemon.final("counted")
                if final["method"] == "dataSource/finishedLoading": break
                assert final["params"]["error"]["kind"] == "cancelled", final
        seconds, _ = timed(jump)
        shown = daemon.request("objectAtIndexPath", {"source": "counted", "indexPath": [0, row]})
        assert shown.get("id") == row, shown
        jumps.append(seconds)
        jump_requests.append(server.requests - before)
    jump = statistics.median(jumps)

    # Reads: 100 rows anywhere in the counted list against a 100-row simple source.
    daemon.request("createSource", {"name": "small", "kind": "simple", "identityKey": "id",
                                    "objects": [{"id": n, "title": f"Item {n}"} for n in range(100)]})
    rng = random.Random(11)
    def read(source, start):
        return daemon.request("objectsInSection", {"source": source, "section": 0, "start": start, "count": 100})
    small, counted = [], []
    for _ in range(20):  # warm up both paths
        read("small", 0), read("counted", rng.randrange(args.rows - 100))
    for _ in range(300):
        small.append(timed(lambda: read("small", 0))[0])
        counted.append(timed(lambda: read("counted", rng.randrange(args.rows - 100)))[0])
    read_ratio = statistics.median(counted) / statistics.median(small)
    daemon.close()
    server.shutdown()

    print(f"single page fetch (fetchData -> finishedLoading, median of {len(fetches)}): {page_fetch * 1e3:.2f} ms")
    print(f"jump (willDisplay on a far unloaded row -> finishedLoading, median of {len(jumps)}): {jump * 1e3:.2f} ms "
          f"= {jump / page_fetch:.2f}x the page fetch (floor 2x); requests per jump: {sorted(set(jump_requests))} (floor 1)")
    print(f"objectsInSection of 100 rows: counted {args.rows:,}-row list {statistics.median(counted) * 1e6:.0f} us, "
          f"100-row simple source {statistics.median(small) * 1e6:.0f} us (medians of 300): "
          f"{read_ratio:.2f}x (floor 2x)")
    print(f"the counted list's first page (fetchData -> finishedLoading, one didChange making {args.rows} rows): "
          f"{first_seconds * 1e3:.0f} ms; RSS after it {rss_after_first / 1e6:.1f} MB")

if __name__ == "__main__":
    main()
