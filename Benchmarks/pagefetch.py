#!/usr/bin/env python3
"""Page-fetch benchmark: the daemon's own cost per fetched page of 1,000 mapped objects,
and the time to page through 100 pages from a local fixture API.

Usage: python3 Benchmarks/pagefetch.py [--daemon PATH] [--pages 100] [--objects 1000] [--runs 3] [--no-mapping]
                                      [--checkpoints 10,100,1000] [--c-parse Benchmarks/.bin/parse_loop] [--threads] [--second-source]
                                      [--bare .build/release/datasourced-bench]
(FIXTURE_SERVER=PATH serves the fixtures with another binary, e.g. when --daemon is a wrapper.)

With --c-parse (built by Benchmarks/run.sh pagefetch), jansson's own json_loadb + json_decref of
the first page's body as served is timed from C before and after the daemon's runs, and the
daemon's CPU per page is given as a ratio to it: the figure the floor is set on, both measured
in one run. The CPU per page is also given over the first 10, 100, ... pages of each run
(--checkpoints), to show whether it grows with the list.

With --bare, after each daemon run a fresh `datasourced-bench barefetch` process fetches the same
pages with the daemon's HTTP client and parses each with jansson, and nothing else: its CPU per
page is the platform's share (the Swift runtime, AsyncHTTPClient and NIO, first touches of
memory), and the difference to the daemon's is what the daemon does with a page.

The fixture API is `datasourced fixtures` over a generated file (100 pages, 1,000 objects
of ~230 bytes each). The daemon's cost is its CPU time (all threads, user + system, read from its CPU clock
to the nanosecond) spent while paging, divided by the pages: it includes receiving the HTTP response, jansson
parsing, mapping, change sets and writing the notifications, and excludes the server's time.
Prints figures only; never passes or fails.
"""
import argparse, json, os, subprocess, tempfile, time, urllib.request

from rpcclient import Daemon, FixtureServer

def item(n):
    return {"id": n, "title": f"Item {n}", "category": ["books", "games", "music"][n % 3], "price": n * 1.5, "in_stock": n % 2 == 0,
            "created_at": "2024-05-01T10:00:00Z", "url": f"https://example.invalid/items/{n}",
            "author": {"name": f"Author {n}", "email": f"a{n}@example.invalid"}, "tags": ["a", "b"]}

MAPPING = {"id": {"type": "integer"}, "title": {"type": "string"}, "price": {"type": "number"},
           "created": {"keyPath": "created_at", "type": "date"}, "author": {"keyPath": "author.name"}, "tags": {"items": {"type": "string"}}}

def write_fixtures(path, pages, objects):
    """The fixture file, written page by page (a thousand pages of a thousand objects is 236 MB)."""
    with open(path, "w") as handle:
        handle.write('{"fixtures":[')
        for p in range(1, pages + 1):
            body = {"items": [item((p - 1) * objects + i + 1) for i in range(objects)], "page": p,
                    "number_of_pages": pages, "total_count": pages * objects}
            handle.write(("," if p > 1 else "") + json.dumps({"path": "/items", "query": {"page": str(p)}, "body": body}))
        handle.write("]}")

def result_fields(command, name):
    """Runs `command` and returns the name=value fields of its `RESULT <name>` line."""
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    line = next(l for l in output.splitlines() if l.startswith(f"RESULT {name} "))
    return dict(part.split("=") for part in line.split()[2:])

def jansson_parse(program, path):
    """(best, median) ms of jansson's parse of the file, from C."""
    fields = result_fields([program, path, "200"], "c-parse")
    return float(fields["best_ms"]), float(fields["median_ms"])

def bare_fetch(program, base, pages, checkpoints):
    """CPU ms a page at each checkpoint of `datasourced-bench barefetch` over the same pages."""
    fields = result_fields([program, "barefetch", "--base", base, "--pages", str(pages), "--checkpoints", ",".join(map(str, checkpoints))],
                           "barefetch")
    return {c: float(fields[f"cpu_ms_per_page_{c}"]) for c in checkpoints}

def page_through(daemon, name, base, args, pages, checkpoints):
    """Creates source `name` and pages through `pages` pages; the daemon's CPU seconds spent
    since the source was created, at each checkpoint."""
    daemon.request("createSource", {"name": name, "kind": "paginated", "identityKey": "id", "remoteConfiguration": {"baseURL": base},
                                    "apiPath": "/items", "keyPath": "items", **({} if args.no_mapping else {"mapping": MAPPING})})
    cpu_before, at = daemon.cpu_seconds(), {}
    daemon.send("fetchData", {"source": name})
    for page in range(pages):
        daemon.final()
        if page + 1 in checkpoints: at[page + 1] = daemon.cpu_seconds() - cpu_before
        if page + 1 < pages:
            daemon.send("fetchNextPage", {"source": name})
    count = daemon.request("numberOfObjectsInSection", {"source": name, "section": 0})
    # Paged only partway, the list ends with its loading row.
    assert count in (pages * args.objects, pages * args.objects + 1), f"loaded {count} rows"
    return at

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--daemon", default=".build/release/datasourced")
    parser.add_argument("--pages", type=int, default=100)
    parser.add_argument("--objects", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-mapping", action="store_true", help="keep objects as they arrive (no mapping)")
    parser.add_argument("--checkpoints", default="10,100,1000")
    parser.add_argument("--second-source", action="store_true",
                        help="then page through the first 10 pages again with a second source in the same daemon (what they cost once it is warm)")
    parser.add_argument("--threads", action="store_true", help="also give each thread's CPU per page (threads alive at the end)")
    parser.add_argument("--c-parse", default="", help="the parse_loop program: time jansson's parse of a page from C")
    parser.add_argument("--bare", default="", help="the datasourced-bench program: after each daemon run, the same pages "
                        "fetched and parsed by a fresh process that does nothing else (barefetch), for the platform's share")
    args = parser.parse_args()
    checkpoints = sorted({c for c in map(int, args.checkpoints.split(",")) if 0 < c < args.pages} | {args.pages})

    handle = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
    handle.close()
    write_fixtures(handle.name, args.pages, args.objects)
    server = FixtureServer(os.environ.get("FIXTURE_SERVER", args.daemon), handle.name)
    base = server.base
    page_body = urllib.request.urlopen(base + "/items?page=1").read()
    page_bytes = len(page_body)
    body_file = handle.name + ".page1"
    with open(body_file, "wb") as out:
        out.write(page_body)
    parses = [jansson_parse(args.c_parse, body_file)] if args.c_parse else []

    results, bare = [], []
    for run in range(args.runs):
        daemon = Daemon([args.daemon])
        daemon.initialize()
        cpu_before, started, threads_before = daemon.cpu_seconds(), time.monotonic(), daemon.thread_cpu()
        at = page_through(daemon, "p", base, args, args.pages, checkpoints)
        elapsed, cpu = time.monotonic() - started, daemon.cpu_seconds() - cpu_before
        threads = {name: seconds - threads_before.get(name, 0) for name, seconds in daemon.thread_cpu().items()}
        # The same first pages again, from a new source in the same (now warm) daemon.
        again = page_through(daemon, "q", base, args, min(args.pages, 10), [1, 2, 3, min(args.pages, 10)]) if args.second_source else None
        daemon.close()
        results.append((elapsed, cpu, at))
        spans = ", ".join(f"first {c}: {at[c] * 1000 / c:.2f}" for c in checkpoints)
        last = checkpoints[-2] if len(checkpoints) > 1 else 0
        marginal = (at[args.pages] - at[last]) * 1000 / (args.pages - last) if last else cpu * 1000 / args.pages
        print(f"run {run + 1}: {args.pages} pages x {args.objects} objects in {elapsed:.3f} s; daemon CPU {cpu * 1000 / args.pages:.2f} ms/page"
              f" ({spans}; pages {last + 1}-{args.pages}: {marginal:.2f} ms/page)")
        if again:
            print("  a second source in the same daemon, CPU a page: " + ", ".join(f"first {c}: {again[c] * 1000 / c:.2f}" for c in sorted(again)))
        if args.bare:
            bare.append(bare_fetch(args.bare, base, args.pages, checkpoints))
            print("  barefetch (a fresh process that only fetches and parses each page), CPU a page: "
                  + ", ".join(f"first {c}: {bare[-1][c]:.2f}" for c in checkpoints))
        if args.threads:
            print("  by thread, ms/page: " + ", ".join(f"{name} {seconds * 1000 / args.pages:.2f}"
                                                      for name, seconds in sorted(threads.items(), key=lambda item: -item[1]) if seconds > 0))
    if args.c_parse: parses.append(jansson_parse(args.c_parse, body_file))
    server.close(); os.unlink(handle.name); os.unlink(body_file)
    best_elapsed = min(r[0] for r in results); best_cpu = min(r[1] for r in results)
    print(f"page body: {page_bytes} bytes ({page_bytes // args.objects} bytes/object)")
    print(f"RESULT pagefetch pages={args.pages} objects={args.objects} best_total_s={best_elapsed:.3f} "
          f"best_ms_per_page={best_elapsed * 1000 / args.pages:.2f} daemon_cpu_ms_per_page={best_cpu * 1000 / args.pages:.2f}")
    if parses:
        median = sum(p[1] for p in parses) / len(parses)
        print("jansson parse of page 1 from C (CPU time), before / after the runs: " + " / ".join(f"best {b:.3f} ms, median {m:.3f} ms" for b, m in parses)
              + f"; using the mean of the medians, {median:.3f} ms")
        for c in checkpoints:
            per_page = min(r[2][c] for r in results) * 1000 / c
            print(f"RESULT pagefetch_ratio pages={c} daemon_cpu_ms_per_page={per_page:.2f} jansson_ms={median:.3f} ratio={per_page / median:.2f}")
        for c in checkpoints if bare else []:
            per_page = min(b[c] for b in bare)
            print(f"RESULT barefetch_ratio pages={c} cpu_ms_per_page={per_page:.2f} jansson_ms={median:.3f} ratio={per_page / median:.2f}")

if __name__ == "__main__":
    main()
