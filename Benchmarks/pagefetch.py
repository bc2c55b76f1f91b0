#!/usr/bin/env python3
"""Page-fetch benchmark: the daemon's own cost per fetched page of 1,000 mapped objects,
and the time to page through 100 pages from a local fixture API.

Usage: python3 Benchmarks/pagefetch.py [--daemon PATH] [--pages 100] [--objects 1000] [--runs 3] [--no-mapping]
(FIXTURE_SERVER=PATH serves the fixtures with another binary, e.g. when --daemon is a wrapper.)

The fixture API is `datasourced fixtures` over a generated file (100 pages, 1,000 objects
of ~230 bytes each). The daemon's cost is its CPU time (user + system, from /proc/PID/stat)
spent while paging, divided by the pages: it includes receiving the HTTP response, jansson
parsing, mapping, change sets and writing the notifications, and excludes the server's time.
Prints figures only; never passes or fails.
"""
import argparse, json, os, subprocess, sys, tempfile, time

def item(n):
    return {"id": n, "title": f"Item {n}", "category": ["books", "games", "music"][n % 3], "price": n * 1.5, "in_stock": n % 2 == 0,
            "created_at": "2024-05-01T10:00:00Z", "url": f"https://example.invalid/items/{n}",
            "author": {"name": f"Author {n}", "email": f"a{n}@example.invalid"}, "tags": ["a", "b"]}

MAPPING = {"id": {"type": "integer"}, "title": {"type": "string"}, "price": {"type": "number"},
           "created": {"keyPath": "created_at", "type": "date"}, "author": {"keyPath": "author.name"}, "tags": {"items": {"type": "string"}}}

class Daemon:
    def __init__(self, path):
        self.process = subprocess.Popen([path], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.next_id = 0

    def send(self, method, params=None, notify=False):
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None: message["params"] = params
        if not notify:
            self.next_id += 1
            message["id"] = self.next_id
        body = json.dumps(message).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self.process.stdin.flush()
        return message.get("id")

    def receive(self):
        length = None
        while True:
            line = self.process.stdout.readline()
            if line in (b"\r\n", b""): break
            if line.lower().startswith(b"content-length:"): length = int(line.split(b":")[1])
        return json.loads(self.process.stdout.read(length))

    def wait_for(self, predicate):
        while True:
            message = self.receive()
            if predicate(message): return message

    def cpu_seconds(self):
        fields = open(f"/proc/{self.process.pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--daemon", default=".build/release/datasourced")
    parser.add_argument("--pages", type=int, default=100)
    parser.add_argument("--objects", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-mapping", action="store_true", help="keep objects as they arrive (no mapping)")
    args = parser.parse_args()

    fixtures = [{"path": "/items", "query": {"page": str(p)},
                 "body": {"items": [item((p - 1) * args.objects + i + 1) for i in range(args.objects)], "page": p,
                          "number_of_pages": args.pages, "total_count": args.pages * args.objects}}
                for p in range(1, args.pages + 1)]
    page_bytes = len(json.dumps(fixtures[0]["body"], separators=(",", ":")))
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump({"fixtures": fixtures}, handle)
    server = subprocess.Popen([os.environ.get("FIXTURE_SERVER", args.daemon), "fixtures", handle.name], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    base = json.loads(server.stdout.readline())["baseURL"]

    results = []
    for run in range(args.runs):
        daemon = Daemon(args.daemon)
        daemon.send("initialize", {})
        daemon.receive()
        daemon.send("createSource", {"name": "p", "kind": "paginated", "identityKey": "id", "remoteConfiguration": {"baseURL": base},
                                     "apiPath": "/items", "keyPath": "items", **({} if args.no_mapping else {"mapping": MAPPING})})
        daemon.receive()
        cpu_before, started = daemon.cpu_seconds(), time.monotonic()
        daemon.send("fetchData", {"source": "p"})
        for page in range(args.pages):
            daemon.wait_for(lambda m: m.get("method") in ("dataSource/finishedLoading", "dataSource/failedWithError"))
            if page + 1 < args.pages:
                request = daemon.send("fetchNextPage", {"source": "p"})
        elapsed, cpu = time.monotonic() - started, daemon.cpu_seconds() - cpu_before
        daemon.send("numberOfObjectsInSection", {"source": "p", "section": 0})
        count = daemon.wait_for(lambda m: m.get("id") == daemon.next_id)["result"]
        assert count == args.pages * args.objects, f"loaded {count} rows"
        daemon.process.stdin.close(); daemon.process.wait()
        results.append((elapsed, cpu))
        print(f"run {run + 1}: {args.pages} pages x {args.objects} objects in {elapsed:.3f} s; daemon CPU {cpu * 1000 / args.pages:.2f} ms/page")
    server.stdin.close(); server.wait(); os.unlink(handle.name)
    best_elapsed = min(r[0] for r in results); best_cpu = min(r[1] for r in results)
    print(f"page body: {page_bytes} bytes ({page_bytes // args.objects} bytes/object)")
    print(f"RESULT pagefetch pages={args.pages} objects={args.objects} best_total_s={best_elapsed:.3f} "
          f"best_ms_per_page={best_elapsed * 1000 / args.pages:.2f} daemon_cpu_ms_per_page={best_cpu * 1000 / args.pages:.2f}")

if __name__ == "__main__":
    main()
