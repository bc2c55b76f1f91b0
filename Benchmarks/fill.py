#!/usr/bin/env python3
"""A filter that fills a screen over a list still paging: a `filtered` source with `fill`
over a paginated source of PAGES pages whose matches start on page FIRST_MATCH.

    python3 Benchmarks/fill.py [--daemon PATH] [--pages 100] [--page-size 20] [--first-match 40] [--fill 30]

The script's own API (loopback) serves PAGES pages of PAGE_SIZE rows; from page FIRST_MATCH on,
every other row's title holds "ubik". A paginated source loads its first page; then a filtered
source over it with `match: {query: "ubik"}` and `fill: FILL` is made, as an editor's `/` does.
Printed: the pages the server was asked for, against the pages the matches needed (the page
whose rows bring the FILLth match; none past it may be asked for), and the time from the
filtered source's `createSource` to the `didChange` that brings it to FILL rows. Prints
figures; exits non-zero only if the daemon asked for a page past the one that filled the
screen, or stopped short of it.
"""
import argparse, json, sys, time
from urllib.parse import parse_qs, urlparse

from rpcclient import Daemon, QuietHandler, notification, serve_http


def serve(pages, page_size, first_match):
    class Handler(QuietHandler):
        def do_GET(self):
            page = int(parse_qs(urlparse(self.path).query).get("page", ["1"])[0])
            server.asked.append(page)
            start = (page - 1) * page_size
            items = [{"id": n, "title": f"{'Ubik' if page >= first_match and n % 2 == 0 else 'Dune'} {n}"}
                     for n in range(start, start + page_size)] if 1 <= page <= pages else []
            self.send_json({"items": items, "number_of_pages": pages})

    server = serve_http(Handler)
    server.asked = []
    return server


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--daemon", default=".build/release/datasourced")
    parser.add_argument("--pages", type=int, default=100)
    parser.add_argument("--page-size", type=int, default=20)
    parser.add_argument("--first-match", type=int, default=40)
    parser.add_argument("--fill", type=int, default=30)
    args = parser.parse_args()
    server = serve(args.pages, args.page_size, args.first_match)
    matches_per_page = (args.page_size + 1) // 2
    needed = args.first_match + (args.fill + matches_per_page - 1) // matches_per_page - 1
    daemon = Daemon([args.daemon, "--no-cache"])
    daemon.initialize(capabilities={"changeRanges": True})
    daemon.request("createSource", {"name": "books", "kind": "paginated", "identityKey": "id",
                                    "remoteConfiguration": {"baseURL": server.base}, "apiPath": "/items",
                                    "keyPath": "items", "pageSize": args.page_size})
    daemon.request("fetchData", {"source": "books", "wait": True})
    started = time.perf_counter()
    daemon.request("createSource", {"name": "found", "kind": "filtered", "source": "books",
                                    "match": {"query": "ubik", "keyPaths": ["title"]}, "fill": args.fill})
    def matches():
        rows = daemon.request("objectsInSection", {"source": "found", "section": 0})["objects"]
        return sum(1 for row in rows if "$placeholder" not in row)
    # A read passes over the notifications before its answer, and answers after them: wait for
    # the next change or page end, then read again.
    while matches() < args.fill:
        daemon.until(notification("didChange", "finishedLoading", "failedWithError"), timeout=60)
    filled = time.perf_counter() - started
    # Anything the daemon would still ask for is asked for by now: the last page's load ends first.
    description = daemon.request("describeSource", {"source": "found"})
    daemon.close()
    server.shutdown()
    asked = sorted(set(server.asked))
    print(f"{args.pages} pages of {args.page_size}, matches from page {args.first_match}, fill {args.fill}; daemon {args.daemon}")
    print(f"pages asked for: {len(asked)} (last {asked[-1]}); the matches needed pages 1...{needed}")
    print(f"createSource of the filtered source -> its {args.fill} matches shown: {filled * 1e3:.1f} ms; "
          f"describeSource.fill {description.get('fill')}")
    if asked != list(range(1, needed + 1)):
        print(f"the daemon asked for {asked[:3]}...{asked[-3:]}, not pages 1...{needed}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
