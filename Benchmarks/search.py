#!/usr/bin/env python3
"""Issue 30's search-as-you-type floor: a person types a 20-letter query, one letter every
50 ms (20 keystrokes in a second), into a list backed by an API that answers in 50 ms. Each
keystroke is an `updateSource` with `debounceMilliseconds`; the floor is at most 3 requests,
and the rows at the end must be the last query's.

    python3 Benchmarks/search.py [--daemon PATH] [--debounce 150] [--latency 50] [--interval 50] [--runs 5]

Prints, per run: the requests the API received, the queries they asked for, the time from
the last keystroke to the last query's rows (`didChange` + `finishedLoading`), and whether
the rows shown at the end are the last query's. The API is this script's own server on
loopback; the keystrokes are timed with the monotonic clock.
"""
import argparse, json, statistics, sys, threading, time
from urllib.parse import parse_qs, urlparse

from rpcclient import Daemon, QuietHandler, notification, serve_http

WORD = "thelefthandofdarknes"  # 20 letters: a query per keystroke, "t", "th", ...


class API:
    def __init__(self, latency_ms):
        self.latency = latency_ms / 1000
        self.queries = []
        self.lock = threading.Lock()


def serve(api):
    class Handler(QuietHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            query = parse_qs(urlparse(self.path).query).get("q", [""])[0]
            with api.lock:
                api.queries.append(query)
            time.sleep(api.latency)
            # A title for each prefix of the word that the query is a prefix of, so that each
            # query has its own rows.
            items = [{"id": n, "title": WORD[:n]} for n in range(1, len(WORD) + 1) if WORD[:n].startswith(query)]
            self.send_json({"items": items})

    return serve_http(Handler)


FINISHED = notification("finishedLoading")


def run_once(daemon_path, debounce, latency, interval):
    api = API(latency)
    server = serve(api)
    daemon = Daemon([daemon_path, "serve", "--no-cache"])
    daemon.start_reader()  # keystrokes must not wait for answers
    try:
        daemon.initialize()
        base = server.base
        daemon.request("createSource", {"name": "search", "kind": "remote", "identityKey": "id",
                                        "remoteConfiguration": {"baseURL": base}, "apiPath": "/books",
                                        "queryParameters": {"q": ""}, "keyPath": "items"})
        daemon.send("fetchData", {"source": "search", "wait": True})
        daemon.until(FINISHED, timeout=30)
        with api.lock:
            api.queries.clear()
        start = time.monotonic()
        for n in range(1, len(WORD) + 1):
            # Keystroke n at n * interval after the first: the schedule, not the sleeps, sets the pace.
            pause = start + (n - 1) * interval / 1000 - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            daemon.send("updateSource", {"source": "search", "queryParameters": {"q": WORD[:n]},
                                         "debounceMilliseconds": debounce})
        last_keystroke = time.monotonic()
        typing = last_keystroke - start
        daemon.until(FINISHED, timeout=30)
        done_at = daemon.arrived_at
        rows = daemon.request("allObjects", {"source": "search"})
        with api.lock:
            queries = list(api.queries)
        return {"requests": len(queries), "queries": queries, "typingSeconds": round(typing, 3),
                "lastKeystrokeToRowsMs": round((done_at - last_keystroke) * 1000, 1),
                "lastQuerysRows": rows == [{"id": len(WORD), "title": WORD}]}
    finally:
        daemon.close()
        server.shutdown()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--daemon", default=".build/release/datasourced")
    parser.add_argument("--debounce", type=int, default=150)
    parser.add_argument("--latency", type=int, default=50)
    parser.add_argument("--interval", type=int, default=50)
    parser.add_argument("--runs", type=int, default=5)
    arguments = parser.parse_args()
    results = [run_once(arguments.daemon, arguments.debounce, arguments.latency, arguments.interval) for _ in range(arguments.runs)]
    for result in results:
        print(json.dumps(result))
    requests = [r["requests"] for r in results]
    latencies = [r["lastKeystrokeToRowsMs"] for r in results]
    print(f"RESULT keystrokes {len(WORD)} every {arguments.interval} ms, debounce {arguments.debounce} ms, API latency "
          f"{arguments.latency} ms: requests max {max(requests)} (floor <= 3), last keystroke to the last query's rows "
          f"median {statistics.median(latencies)} ms, rows the last query's in {sum(r['lastQuerysRows'] for r in results)}/{len(results)} runs")
    return 0 if max(requests) <= 3 and all(r["lastQuerysRows"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
