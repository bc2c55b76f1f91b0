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

Not measured here: the jump to row 999,999 and counted placeholders (issue 31, items 3 and 4),
which the daemon does not implement yet. Prints figures only; never passes or fails.
"""
import argparse, json, os, subprocess, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

def serve(rows, page_size):
    pages = (rows + page_size - 1) // page_size

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            query = parse_qs(urlparse(self.path).query)
            page = int(query.get("page", ["1"])[0])
            start = (page - 1) * page_size
            items = [{"id": n, "title": f"Item {n}"} for n in range(start, min(rows, start + page_size))]
            body = json.dumps({"items": items, "number_of_pages": pages, "total_count": rows}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, pages

class Daemon:
    def __init__(self, path):
        self.process = subprocess.Popen([path, "--no-cache"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.next_id = 0

    def request(self, method, params=None):
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None: message["params"] = params
        body = json.dumps(message).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self.process.stdin.flush()
        return self.until(lambda m: m.get("id") == self.next_id)

    def receive(self):
        length = None
        while True:
            line = self.process.stdout.readline()
            if line in (b"\r\n", b""): break
            if line.lower().startswith(b"content-length:"): length = int(line.split(b":")[1])
        return json.loads(self.process.stdout.read(length))

    def until(self, predicate):
        while True:
            message = self.receive()
            if predicate(message): return message

    def final(self, source):
        return self.until(lambda m: m.get("method") in ("dataSource/finishedLoading", "dataSource/failedWithError")
                          and m["params"]["source"] == source)

    def memory(self, field):
        with open(f"/proc/{self.process.pid}/status") as status:
            for line in status:
                if line.startswith(field + ":"): return int(line.split()[1]) * 1024
        return 0

    def close(self):
        self.request("shutdown")
        self.process.stdin.close()
        self.process.wait(timeout=30)

def scroll(daemon_path, base, pages, page_size, window):
    daemon = Daemon(daemon_path)
    daemon.request("initialize")
    params = {"name": "long", "kind": "paginated", "identityKey": "id", "remoteConfiguration": {"baseURL": base},
              "apiPath": "/items", "keyPath": "items", "pageSize": page_size, "pagination": {"maxPages": 1000000}}
    if window: params["window"] = {"maxPages": window}
    daemon.request("createSource", params)
    daemon.request("fetchData", {"source": "long"})
    daemon.final("long")
    after_first = daemon.memory("VmRSS")
    started = time.monotonic()
    requests = 1
    while True:
        count = daemon.request("numberOfObjectsInSection", {"source": "long", "section": 0})["result"]
        answer = daemon.request("willDisplayObjectAtIndexPath", {"source": "long", "indexPath": [0, count - 1]})
        if not answer["result"]["fetchStarted"]: break
        requests += 1
        if daemon.final("long").get("method") == "dataSource/failedWithError": sys.exit("a page failed")
    down = time.monotonic() - started
    if window:
        while True:
            answer = daemon.request("willDisplayObjectAtIndexPath", {"source": "long", "indexPath": [0, 0]})
            if not answer["result"]["fetchStarted"]: break
            requests += 1
            if daemon.final("long").get("method") == "dataSource/failedWithError": sys.exit("a page failed")
    total = time.monotonic() - started
    description = daemon.request("describeSource", {"source": "long"})["result"]
    peak = daemon.memory("VmHWM")
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
    base = f"http://127.0.0.1:{server.server_address[1]}"
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
