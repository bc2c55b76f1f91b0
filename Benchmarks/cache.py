#!/usr/bin/env python3
"""Issue 14's figures: how fast a list reopens from the persisted cache, and what
revalidation saves.

    python3 Benchmarks/cache.py [--daemon PATH] [--rows 10000] [--pages 10] [--runs 5] [--refreshes 100]

1. Cold load: a paginated source of ROWS rows in PAGES pages, loaded page by page from a
   local HTTP API (this script's own server, on loopback), timed from `fetchData` to the
   last page's `finishedLoading`.
2. Warm open: a new daemon on the same cache file, timed from `fetchData` to the
   `didChange` that shows the last cached row (before the revalidation's answer; a list
   longer than a screen shows its first pages at once and the rest in turns).
   Ratio warm / cold, medians of RUNS runs (each pair in the same run, so the ratio holds on
   a noisy machine). Its yardstick (issue 33): jansson's `json_loadb` of the same bytes
   (the PAGES bodies the server sends, about 2 MB), timed through ctypes in the same run
   right after each warm open; the ratio warm / json_loadb is printed for each run. The
   daemon runs with --log-level debug and logs where the warm open's time went inside it
   (SQLite read, decode, checks, identities, change set); the rest of the time measured from
   outside is the request's and the event's way through the daemon (the encode) and the
   pipes, and the client reading the event.
3. Revalidation: REFRESHES `fetchData`s of the unchanged list (each sends the first page's
   ETag: 304) and REFRESHES live refreshes (refreshIntervalSeconds 1: every loaded page
   revalidated), against the same server without validators (every request a full body):
   requests and body bytes counted by the server.
"""
import argparse, ctypes, ctypes.util, json, os, re, shutil, statistics, sys, tempfile, threading, time
from urllib.parse import parse_qs, urlparse

from rpcclient import Daemon, QuietHandler, notification, serve_http


class API:
    """Pages of the list, with an ETag each (unless validators are off); counts what it sends."""

    def __init__(self, rows, pages, latency_ms=0):
        self.latency = latency_ms / 1000
        size = rows // pages
        self.pages = {}
        for page in range(1, pages + 1):
            items = [{"id": i, "title": f"Issue {i}", "state": "open", "labels": ["bug", "p2"],
                      "body": "Steps to reproduce: open the list, scroll to the end, wait. " * 2}
                     for i in range((page - 1) * size + 1, page * size + 1)]
            self.pages[page] = json.dumps({"items": items, "total": rows}).encode()
        self.validators = True
        self.requests = 0
        self.body_bytes = 0
        self.lock = threading.Lock()

    def reset_counts(self):
        with self.lock:
            self.requests = 0
            self.body_bytes = 0


def serve(api):
    class Handler(QuietHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            if api.latency:
                time.sleep(api.latency)  # the API's own latency, simulated: part of what is measured
            query = parse_qs(urlparse(self.path).query)
            page = int(query.get("page", ["1"])[0])
            body = api.pages.get(page, json.dumps({"items": [], "total": 0}).encode())
            etag = f'"p{page}-{len(body)}"'
            with api.lock:
                api.requests += 1
            if api.validators and self.headers.get("If-None-Match") == etag:
                return self.send_not_modified(etag)
            self.send_json(body, [("ETag", etag)] if api.validators else [])
            with api.lock:
                api.body_bytes += len(body)

    return serve_http(Handler)


class Jansson:
    """jansson's own parse of the same bytes: the warm open's yardstick."""

    def __init__(self):
        self.lib = ctypes.CDLL(ctypes.util.find_library("jansson") or "libjansson.so.4")
        self.lib.json_loadb.restype = ctypes.c_void_p
        self.lib.json_loadb.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_void_p]
        self.lib.json_delete.argtypes = [ctypes.c_void_p]

    def parse_seconds(self, bodies, repeats=3):
        """The median time to parse every body once (the trees freed after the timing)."""
        times = []
        for _ in range(repeats):
            trees = []
            started = time.perf_counter()
            for body in bodies:
                trees.append(self.lib.json_loadb(body, len(body), 0, None))
            times.append(time.perf_counter() - started)
            if not all(trees):
                raise RuntimeError("jansson refused a page body")
            for tree in trees:
                self.lib.json_delete(tree)
        return statistics.median(times)


COST_LINE = re.compile(rb"warm open of .*microseconds: (.*)")


def warm_open_costs(log_path):
    """The phases the daemon logged for its warm open, in milliseconds, in its order."""
    with open(log_path, "rb") as log:
        for line in log:
            found = COST_LINE.search(line)
            if found:
                return [(name.decode(), int(value) / 1000)
                        for name, value in (part.split(b"=") for part in found.group(1).split())]
    return []


def spawn(path, cache_path, log_path=None):
    """The daemon on `cache_path`, initialized; with `log_path`, its debug log there."""
    arguments = [path, "serve", "--cache-path", cache_path]
    if not log_path:
        daemon = Daemon(arguments)
    else:
        with open(log_path, "wb") as log:
            daemon = Daemon(arguments + ["--log-level", "debug"], stderr=log)
    daemon.initialize()
    return daemon


CHANGED, FINISHED = notification("didChange"), notification("finishedLoading")


def create(daemon, base, pages, refresh=None):
    params = {"name": "issues", "kind": "paginated", "identityKey": "id", "remoteConfiguration": {"baseURL": base},
              "apiPath": "/issues", "keyPath": "items", "pagination": {"totalPath": "total"},
              "cache": {"enabled": True, "maxPages": pages}}
    if refresh:
        params["refreshIntervalSeconds"] = refresh
    daemon.request("createSource", params)


def cold_load(daemon, pages):
    started = time.perf_counter()
    daemon.request("fetchData", {"source": "issues", "wait": True})
    for _ in range(pages - 1):
        daemon.send("fetchNextPage", {"source": "issues"})
        daemon.until(FINISHED)
    return time.perf_counter() - started


def warm_open(daemon, rows):
    """From `fetchData` to the change that shows the last of the `rows` cached rows (a long
    list's come in turns after its first pages), and to the cycle's end."""
    started = time.perf_counter()
    daemon.send("fetchData", {"source": "issues"})
    held = 0
    while held < rows:
        change = daemon.until(CHANGED, timeout=60)["params"]["changes"]
        held += len(change.get("inserted", [])) - len(change.get("deleted", []))
    shown = time.perf_counter() - started
    daemon.until(FINISHED)
    return shown, time.perf_counter() - started


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--daemon", default=".build/release/datasourced")
    parser.add_argument("--rows", type=int, default=10000)
    parser.add_argument("--pages", type=int, default=10)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--refreshes", type=int, default=100)
    parser.add_argument("--latency-ms", type=int, default=0, help="the API's latency per request (0: loopback as fast as it goes)")
    parser.add_argument("--skip-refreshes", action="store_true")
    args = parser.parse_args()
    api = API(args.rows, args.pages, args.latency_ms)
    server = serve(api)
    base = server.base
    scratch = tempfile.mkdtemp(prefix="datasourced-cache-bench")
    jansson = Jansson()
    bodies = list(api.pages.values())
    try:
        colds, warms, fresh, parses, splits = [], [], [], [], []
        for run in range(args.runs):
            cache_path = os.path.join(scratch, f"run{run}.sqlite")
            first = spawn(args.daemon, cache_path)
            create(first, base, args.pages)
            colds.append(cold_load(first, args.pages))
            first.close()
            log_path = os.path.join(scratch, f"run{run}.log")
            second = spawn(args.daemon, cache_path, log_path)
            create(second, base, args.pages)
            shown, revalidated = warm_open(second, args.rows)
            parses.append(jansson.parse_seconds(bodies))
            warms.append(shown)
            fresh.append(revalidated)
            second.close()
            costs = warm_open_costs(log_path)
            inside = sum(ms for _, ms in costs)
            splits.append(costs + [("rest", shown * 1000 - inside)])
            print(f"run {run + 1}: cold {colds[-1] * 1000:.1f} ms, cached rows shown {shown * 1000:.1f} ms "
                  f"(ratio {shown / colds[-1]:.3f}), revalidated (304) {revalidated * 1000:.1f} ms; "
                  f"json_loadb of the {sum(map(len, bodies))} bytes {parses[-1] * 1000:.1f} ms, "
                  f"warm / json_loadb {shown / parses[-1]:.2f}", flush=True)
            print("    inside the daemon (ms): " + ", ".join(f"{name} {ms:.1f}" for name, ms in splits[-1]), flush=True)
        ratios = [w / c for w, c in zip(warms, colds)]
        print(f"median: cold {statistics.median(colds) * 1000:.1f} ms, cached rows shown {statistics.median(warms) * 1000:.1f} ms, "
              f"ratio {statistics.median(ratios):.3f} (range {min(ratios):.3f}-{max(ratios):.3f})")
        yardstick = [w / p for w, p in zip(warms, parses)]
        print(f"warm open / json_loadb: median {statistics.median(yardstick):.2f} (range {min(yardstick):.2f}-{max(yardstick):.2f}); "
              f"json_loadb median {statistics.median(parses) * 1000:.1f} ms (floor: 1.5)")
        names = [name for name, _ in splits[0]]
        if all([name for name, _ in split] == names for split in splits):
            print("median split (ms): " + ", ".join(
                f"{name} {statistics.median(split[index][1] for split in splits):.1f}" for index, name in enumerate(names)))
        print(f"RESULT warm_open ms={statistics.median(warms) * 1000:.2f} json_loadb_ms={statistics.median(parses) * 1000:.2f} "
              f"ratio={statistics.median(yardstick):.3f}", file=sys.stderr)

        if args.skip_refreshes:
            return
        # Revalidation savings.
        results = {}
        for validators in (True, False):
            api.validators = validators
            daemon = spawn(args.daemon, os.path.join(scratch, f"refresh-{validators}.sqlite"))
            create(daemon, base, args.pages)
            cold_load(daemon, args.pages)
            api.reset_counts()
            for _ in range(args.refreshes):
                daemon.request("fetchData", {"source": "issues", "wait": True})
            fetches = (api.requests, api.body_bytes)
            api.reset_counts()
            daemon.request("setRefreshInterval", {"source": "issues", "seconds": 1})
            # Without validators each refresh reloads every page in full: a few show the cost.
            wanted = (args.refreshes if validators else 5) * args.pages
            deadline = time.time() + args.refreshes * 1.3 + 60
            while api.requests < wanted and time.time() < deadline:
                time.sleep(0.2)  # a measurement window, not synchronisation: the daemon refreshes on its own clock
            daemon.request("setRefreshInterval", {"source": "issues", "seconds": None})
            refreshes = (api.requests, api.body_bytes)
            daemon.close()
            results[validators] = (fetches, refreshes)
        (f_on, r_on), (f_off, r_off) = results[True], results[False]
        print(f"{args.refreshes} fetchData of the unchanged list: with ETags {f_on[0]} requests, {f_on[1]} body bytes; "
              f"without {f_off[0]} requests, {f_off[1]} body bytes (saved {f_off[1] - f_on[1]} bytes; "
              f"a reload without a cache would be {args.refreshes * args.pages} requests)")
        per_refresh = r_off[1] / max(1, r_off[0] // args.pages)
        print(f"live refreshes (every loaded page revalidated): with ETags {r_on[0]} requests ({r_on[0] // args.pages} refreshes), "
              f"{r_on[1]} body bytes; without, {r_off[0]} requests ({r_off[0] // args.pages} refreshes), {r_off[1]} body bytes, "
              f"{per_refresh:.0f} bytes a refresh: {args.refreshes} refreshes would be {per_refresh * args.refreshes:.0f} bytes")
    finally:
        server.shutdown()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
