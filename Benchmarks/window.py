#!/usr/bin/env python3
"""Window benchmark (issue 31): RSS growth while scrolling a long paginated API from the top to
the bottom and back, with `window: {maxPages: 10}` against the same scroll without a window,
measured in one run.

Usage: python3 Benchmarks/window.py [--daemon PATH] [--rows 1000000] [--page-size 100]

The API is served by this script (a threaded HTTP server generating page N of `--rows` small
objects on request, with `number_of_pages`), so a 1,000,000-row list costs no fixture file.
Each source scrolls down by displaying its last row (`willDisplayObjectAtIndexPath`) page after
page, and, with the window, back up by displaying its first row (each loads the page before,
dropped on the way down). The figure is the daemon's peak RSS (VmHWM) minus its RSS after the
first page; the floor is 20 MB with the window. Without a window the scroll goes down only (it
holds every page: there is nothing to load on the way back).

The jump to row 999,999 and reads of a counted list are measured by Benchmarks/counted.py,
which uses this script's page server. Prints figures only; never passes or fails.
"""
import argparse, json, os, sys, time
from urllib.parse import parse_qs, urlparse

from rpcclient import Daemon, QuietHandler, serve_http

def serve(rows, page_size):
    pages = (rows + page_size - 1) // page_size

    class Handler(QuietHandler):
        def do_GET(self):
            server.requests += 1
            query = parse_qs(urlparse(self.path).query)
            page = int(query.get("page", ["1"])[0])
            start = (page - 1) * page_size
            items = [{"id": n, "title": f"Item {n}"} for n in range(start, min(rows, start + page_size))]
            self.send_json({"items": items, "number_of_pages": pages, "total_count": rows})

    server = serve_http(Handler)
    server.requests = 0  # requests served, for figures that count them
    return server, pages

def scroll(daemon_path, base, pages, page_size, window):
    daemon = Daemon([daemon_path, "--no-cache"])
    daemon.initialize()
    params = {"name": "long", "kind": "paginated", "identityKey": "id", "remoteConfiguration": {"baseURL": base},
              "apiPath": "/items", "keyPath": "items", "pageSize": page_size, "pagination": {"maxPages": 1000000}}
    if window: params["window"] = {"maxPages": window}
    daemon.request("createSource", params)
    daemon.request("fetchData", {"source": "long"})
    daemon.final("long")
    after_first = daemon.status_kb("VmRSS") * 1024
    started = time.monotonic()
    requests = 1
    while True:
        count = daemon.request("numberOfObjectsInSection", {"source": "long", "section": 0})
        answer = daemon.request("willDisplayObjectAtIndexPath", {"source": "long", "indexPath": [0, count - 1]})
        if not answer["fetchStarted"]: break
        requests += 1
        if daemon.final("long").get("method") == "dataSource/failedWithError": sys.exit("a page failed")
    down = time.monotonic() - started
    if window:
        while True:
            answer = daemon.request("willDisplayObjectAtIndexPath", {"source": "long", "indexPath": [0, 0]})
            if not answer["fetchStarted"]: break
            requests += 1
            if daemon.final("long").get("method") == "dataSource/failedWithError": sys.exit("a page failed")
    total = time.monotonic() - started
    description = daemon.request("describeSource", {"source": "long"})
    peak = daemon.status_kb("VmHWM") * 1024
    daemon.close()
    return {"after_first": after_first, "peak": peak, "requests": requests, "down_seconds": down, "seconds": total,
            "held": description["numberOfObjects"], "dropped": description.get("pagesDropped", 0)}

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--daemon", default=os.environ.get("DATASOURCED", ".build/release/datasourced"))
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--page-size", type=int, default=100)
    args = parser.parse_args()
    server, pages = serve(args.rows, args.page_size)
    base = server.base
    print(f"{args.rows} rows in {pages} pages of {args.page_size}; daemon {args.daemon}")
    for label, window in (("window.maxPages 10, down and back", 10), ("no window, down", None)):
        figures = scroll(args.daemon, base, pages, args.page_size, window)
        growth = (figures["peak"] - figures["after_first"]) / 1e6
        print(f"{label}: peak RSS - RSS after the first page = {growth:.1f} MB "
              f"(after the first page {figures['after_first'] / 1e6:.1f} MB, peak {figures['peak'] / 1e6:.1f} MB); "
              f"{figures['requests']} requests, {figures['seconds']:.1f} s ({figures['down_seconds']:.1f} s down); "
              f"{figures['held']} objects held at the end, {figures['dropped']} pages dropped")
    server.shutdown()

if __name__ == "__main__":
    main()
