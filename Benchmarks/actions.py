#!/usr/bin/env python3
"""An action's optimistic change on screen: the time from writing `performAction` to reading its
`dataSource/didChange`, against one `ping` round trip in the same session, on a remote list of
N rows (300,000 by default). Runs in turns: a ping, an action, a ping, ... Each action renames a
different row (`PATCH /items/{id}`, answered 200 by the benchmark's own loopback API), and the
next starts once the last has settled, so each change is measured alone.

Usage: python3 Benchmarks/actions.py [--daemon PATH] [--rows 300000] [--actions 200]
Prints figures only; never passes or fails. The in-process figures (a rollback, a page under
pending mutations) are `datasourced-bench actions`.
"""
import argparse, json, os, statistics, time

from rpcclient import Daemon, QuietHandler, notification, serve_http


def make_handler(rows):
    page = json.dumps({"items": [{"id": i, "title": f"Item {i}", "year": 1900 + i % 120} for i in range(rows)]}).encode()

    class Handler(QuietHandler):
        def _send(self, status, body):
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            self._send(200, page)

        def do_PATCH(self):
            length = int(self.headers.get("Content-Length", "0"))
            change = json.loads(self.rfile.read(length) or b"{}")
            row = int(self.path.rsplit("/", 1)[-1])
            self._send(200, json.dumps({"id": row, "title": change.get("title"), "year": 1900 + row % 120}).encode())

    return Handler


def main():
    parser = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--daemon", default=os.path.join(here, "..", ".build", "release", "datasourced"))
    parser.add_argument("--rows", type=int, default=300_000)
    parser.add_argument("--actions", type=int, default=200)
    args = parser.parse_args()
    server = serve_http(make_handler(args.rows))
    daemon = Daemon([args.daemon, "serve", "--no-cache"])
    daemon.initialize()
    daemon.request("createSource", {
        "name": "items", "kind": "remote", "identityKey": "id", "keyPath": "items", "apiPath": "/items",
        "remoteConfiguration": {"baseURL": server.base}, "limits": {"maxObjectsPerPage": 1_000_000},
        "actions": {"rename": {"method": "PATCH", "path": "/items/{id}", "body": {"title": "{$values.title}"},
                               "values": {"title": {"type": "string", "required": True}}, "optimistic": "update"}}})
    daemon.request("fetchData", {"source": "items", "wait": True})
    pings, changes = [], []
    for n in range(args.actions):
        start = time.perf_counter()
        daemon.request("ping")
        pings.append(time.perf_counter() - start)
        start = time.perf_counter()
        daemon.send("performAction", {"source": "items", "action": "rename", "identity": (n * 7919) % args.rows,
                                      "values": {"title": f"Renamed {n}"}})
        daemon.until(notification("didChange", source="items"))
        changes.append(time.perf_counter() - start)
        daemon.until(lambda message: message.get("method") == "dataSource/didSettleMutation")
    daemon.close()
    server.shutdown()
    ping, change = statistics.median(pings), statistics.median(changes)
    print(f"actions.py: {args.rows} rows, {args.actions} actions; medians: ping {ping * 1e6:.1f} µs, "
          f"performAction to its didChange {change * 1e6:.1f} µs")
    print(f"RESULT actions_on_screen rows={args.rows} change_over_ping={change / ping:.3f}")


if __name__ == "__main__":
    main()
