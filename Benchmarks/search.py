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
import argparse, json, statistics, subprocess, sys, threading, time, queue
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

WORD = "thelefthandofdarknes"  # 20 letters: a query per keystroke, "t", "th", ...


class API:
    def __init__(self, latency_ms):
        self.latency = latency_ms / 1000
        self.queries = []
        self.lock = threading.Lock()


def serve(api):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_GET(self):
            query = parse_qs(urlparse(self.path).query).get("q", [""])[0]
            with api.lock:
                api.queries.append(query)
            time.sleep(api.latency)
            # A title for each prefix of the word that the query is a prefix of, so that each
            # query has its own rows.
            items = [{"id": n, "title": WORD[:n]} for n in range(1, len(WORD) + 1) if WORD[:n].startswith(query)]
            body = json.dumps({"items": items}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class Daemon:
    """The daemon on pipes, its messages read by a thread of their own (keystrokes must not
    wait for answers)."""

    def __init__(self, path):
        self.process = subprocess.Popen([path, "serve", "--no-cache"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.messages = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        out = self.process.stdout
        while True:
            length = 0
            while True:
                line = out.readline()
                if line in (b"\r\n", b""):
                    break
                if line.lower().startswith(b"content-length"):
                    length = int(line.split(b":")[1])
            if length == 0:
                self.messages.put(None)
                return
            self.messages.put((time.monotonic(), json.loads(out.read(length))))

    def send(self, method, params=None):
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        body = json.dumps(message).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self.process.stdin.flush()
        return self.next_id

    def until(self, predicate, timeout=30):
        deadline = time.monotonic() + timeout
        while True:
            item = self.messages.get(timeout=max(deadline - time.monotonic(), 0.001))
            if item is None:
                raise RuntimeError("the daemon closed its output")
            at, message = item
            if "error" in message:
                raise RuntimeError(f"error: {message}")
            if predicate(message):
                return at, message

    def request(self, method, params=None):
        number = self.send(method, params)
        return self.until(lambda m: m.get("id") == number)[1].get("result")

    def close(self):
        self.request("shutdown")
        body = b'{"jsonrpc":"2.0","method":"exit"}'
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self.process.stdin.close()
        self.process.wait(timeout=30)


def run_once(daemon_path, debounce, latency, interval):
    api = API(latency)
    server = serve(api)
    daemon = Daemon(daemon_path)
    try:
        daemon.request("initialize", {})
        base = f"http://127.0.0.1:{server.server_address[1]}"
        daemon.request("createSource", {"name": "search", "kind": "remote", "identityKey": "id",
                                        "remoteConfiguration": {"baseURL": base}, "apiPath": "/books",
                                        "queryParameters": {"q": ""}, "keyPath": "items"})
        daemon.send("fetchData", {"source": "search", "wait": True})
        daemon.until(lambda m: m.get("method") == "dataSource/finishedLoading")
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
        done_at, _ = daemon.until(lambda m: m.get("method") == "dataSource/finishedLoading")
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
