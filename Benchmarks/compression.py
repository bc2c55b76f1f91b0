#!/usr/bin/env python3
"""Compression: bytes on the wire and the daemon's CPU per page with and without
`Accept-Encoding: gzip, deflate`, in one run, and the daemon's peak RSS under a gzip bomb.

    python3 Benchmarks/compression.py [--daemon PATH] [--pages 200] [--objects 500] [--runs 3] [--bomb-gib 4]

The API is a small Python server on loopback (HTTP/1.1, kept alive) serving pages of
`--objects` objects (~250 bytes each as JSON), gzipped (level 6, made once, before timing)
when the request accepts gzip. Bytes on the wire are what the server wrote for each page,
status line and headers included. Each run pages a paginated source through `--pages` pages
with `remoteConfiguration.compression` true, then another with false, in one daemon; the
daemon's CPU is its CPU clock (all threads, user + system; /proc/PID/stat utime+stime where
the clock cannot be had) over the paging, divided by the pages: it includes receiving,
inflating, parsing, mapping and the notifications, not the server's time.

The bomb: `--bomb-gib` GiB of zeros gzipped (about 1 MB a GiB), sent until the daemon hangs
up, to a fresh daemon with `limits.maxBodyBytes` at its default (32 MiB) and at 8 MiB; its
peak RSS (VmHWM) is read before and after. Prints figures only; never passes or fails.
"""
import argparse, gzip, json, os, queue, statistics, threading, time, zlib

from rpcclient import Daemon, QuietHandler, serve_http

def item(n):
    return {"id": n, "number": n, "title": f"Issue {n}: the widget fails to frobnicate when the moon is full",
            "state": ["open", "closed"][n % 2], "user": {"login": f"user{n % 37}", "id": 1000 + n % 37},
            "labels": [{"name": "bug"}, {"name": "triage"}][: n % 3], "comments": n % 11,
            "created_at": "2024-05-01T10:00:00Z", "url": f"https://api.example.invalid/repos/o/r/issues/{n}"}

class Pages:
    def __init__(self, pages, objects):
        self.raw, self.gzipped = [], []
        for p in range(pages):
            body = json.dumps({"items": [item(p * objects + i + 1) for i in range(objects)], "page": p + 1}).encode()
            self.raw.append(body)
            self.gzipped.append(gzip.compress(body, compresslevel=6, mtime=0))

class Counter:
    """Bytes written to the socket, by everyone, under a lock."""
    def __init__(self):
        self.lock, self.total = threading.Lock(), 0
    def add(self, n):
        with self.lock: self.total += n
    def get(self):
        with self.lock: return self.total

def server(pages, bomb, counter):
    class Counting:
        def __init__(self, inner): self.inner = inner
        def write(self, data):
            counter.add(len(data))
            return self.inner.write(data)
        def flush(self): return self.inner.flush()
        def __getattr__(self, name): return getattr(self.inner, name)

    class Handler(QuietHandler):
        protocol_version = "HTTP/1.1"
        def setup(self):
            super().setup()
            self.wfile = Counting(self.wfile)
        def do_GET(self):
            if self.path.startswith("/bomb"):
                return self.send_bomb()
            page = int(self.path.split("page=")[1].split("&")[0]) if "page=" in self.path else 1
            gzipped = "gzip" in self.headers.get("Accept-Encoding", "")
            body = (pages.gzipped if gzipped else pages.raw)[(page - 1) % len(pages.raw)]
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            if gzipped: self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        def send_bomb(self):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Connection", "close")
            self.end_headers()
            head, piece, count, done = bomb
            sent = 0
            try:
                self.wfile.write(head)
                sent += len(head)
                for _ in range(count):
                    self.wfile.write(piece)
                    sent += len(piece)
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True
            done.put(sent)

    return serve_http(Handler)

def zero_bomb(gib):
    """A gzip stream of `gib` GiB of zeros: its start and a piece repeated (each a full flush of 1 MiB of zeros, the same bytes each time)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = bytes(1 << 20)
    head = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    piece = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    assert compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH) == piece
    return head, piece, (gib << 10) - 1, queue.Queue()

def spawn(path):
    """The daemon, without the proxy settings of this environment: the API is on loopback."""
    environment = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    return Daemon([path, "serve", "--no-cache"], env=environment)

def page_through(daemon, name, base, compression, pages, counter):
    """(wire bytes per page, CPU ms per page) paging `name` through `pages` pages."""
    daemon.request("createSource", {"name": name, "kind": "paginated", "identityKey": "id", "apiPath": "/items", "keyPath": "items",
                                    "remoteConfiguration": {"baseURL": base, "compression": compression, "proxy": None},
                                    "pagination": {"strategy": "pageNumber", "maxPages": pages + 1}})
    bytes_before, cpu_before = counter.get(), daemon.cpu_seconds()
    for page in range(pages):
        daemon.send("fetchData" if page == 0 else "fetchNextPage", {"source": name})
        final = daemon.final()
        assert final["method"] == "dataSource/finishedLoading", final
    cpu, wire = daemon.cpu_seconds() - cpu_before, counter.get() - bytes_before
    daemon.request("destroySource", {"name": name})
    return wire / pages, cpu * 1000 / pages

def bomb_rss(path, base, limit):
    daemon = spawn(path)
    daemon.initialize()
    before = daemon.status_kb("VmHWM")
    params = {"name": "bomb", "kind": "remote", "apiPath": "/bomb", "remoteConfiguration": {"baseURL": base, "proxy": None}}
    if limit: params["limits"] = {"maxBodyBytes": limit}
    daemon.request("createSource", params)
    started = time.monotonic()
    error = daemon.request("fetchData", {"source": "bomb", "wait": True}).get("error", {})
    elapsed = time.monotonic() - started
    after = daemon.status_kb("VmHWM")
    daemon.close()
    return before, after, error, elapsed

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--daemon", default=".build/release/datasourced")
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--objects", type=int, default=500)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--bomb-gib", type=int, default=4)
    args = parser.parse_args()
    pages = Pages(args.pages, args.objects)
    counter = Counter()
    bomb = zero_bomb(args.bomb_gib)
    httpd = server(pages, bomb, counter)
    base = httpd.base
    raw, packed = statistics.mean(map(len, pages.raw)), statistics.mean(map(len, pages.gzipped))
    print(f"page: {args.objects} objects, {raw / 1024:.1f} KiB as JSON, {packed / 1024:.1f} KiB gzipped ({raw / packed:.1f}x)")

    daemon = spawn(args.daemon)
    daemon.initialize(clientInfo={"name": "compression.py"})
    figures = {True: [], False: []}
    for run in range(args.runs):
        for compression in (True, False):
            wire, cpu = page_through(daemon, f"s{run}{compression}", base, compression, args.pages, counter)
            figures[compression].append((wire, cpu))
            print(f"run {run + 1}, compression {str(compression).lower():5}: {wire / 1024:7.1f} KiB on the wire a page, {cpu:.3f} ms CPU a page", flush=True)
    daemon.close()
    for compression in (True, False):
        wire = statistics.mean(w for w, _ in figures[compression])
        cpu = statistics.median(c for _, c in figures[compression])
        print(f"RESULT compression={str(compression).lower()} wire_kib_per_page={wire / 1024:.1f} cpu_ms_per_page={cpu:.3f} (median of {args.runs} runs of {args.pages} pages)")

    head, piece, count, done = bomb
    print(f"bomb: {args.bomb_gib} GiB of zeros, {(len(head) + count * len(piece)) / 1e6:.1f} MB gzipped")
    for limit in (None, 8 << 20):
        before, after, error, elapsed = bomb_rss(args.daemon, base, limit)
        sent = done.get(timeout=60)  # the server's thread, once the daemon has hung up
        print(f"RESULT bomb maxBodyBytes={limit or 'default(33554432)'} kind={error.get('kind')} vmhwm_before_kb={before} "
              f"vmhwm_after_kb={after} wire_bytes_sent={sent} seconds={elapsed:.2f}")
        print(f"  message: {error.get('message')}")
    httpd.shutdown()

main()
