#!/usr/bin/env python3
"""An action's optimistic change on screen: the time from writing `performAction` to reading its
`dataSource/didChange`, against one `ping` round trip in the same session, on a remote list of
N rows (300,000 by default). Runs in turns: a ping, an action, a ping, ... Each action renames a
different row (`PATCH /items/{id}`, answered 200 by `datasourced fixtures` in a process of its
own, so that no server shares the client's interpreter), and the next starts once the last has
settled, so each change is measured alone.

Usage: python3 Benchmarks/actions.py [--daemon PATH] [--rows 300000] [--actions 200]
Prints figures only; never passes or fails. The in-process figures (a rollback, a page under
pending mutations) are `datasourced-bench actions`.
"""
import argparse, json, os, statistics, tempfile, time

from rpcclient import Daemon, FixtureServer, notification


def write_fixtures(path, rows, identities):
    """`GET /items`: the rows; `PATCH /items/{id}` for each identity renamed: the row renamed."""
    with open(path, "w") as handle:
        handle.write('{"fixtures":[')
        handle.write(json.dumps({"path": "/items", "body": {"items": [
            {"id": i, "title": f"Item {i}", "year": 1900 + i % 120} for i in range(rows)]}}))
        for n, identity in enumerate(identities):
            handle.write("," + json.dumps({"path": f"/items/{identity}", "method": "PATCH",
                                           "body": {"id": identity, "title": f"Renamed {n}", "year": 1900 + identity % 120}}))
        handle.write("]}")


def main():
    parser = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--daemon", default=os.path.join(here, "..", ".build", "release", "datasourced"))
    parser.add_argument("--rows", type=int, default=300_000)
    parser.add_argument("--actions", type=int, default=200)
    args = parser.parse_args()
    identities = [(n * 7919) % args.rows for n in range(args.actions)]
    with tempfile.TemporaryDirectory() as folder:
        fixtures = os.path.join(folder, "fixtures.json")
        write_fixtures(fixtures, args.rows, identities)
        server = FixtureServer(args.daemon, fixtures)
        try:
            measure(args, server.base, identities)
        finally:
            server.close()


def measure(args, base, identities):
    daemon = Daemon([args.daemon, "serve", "--no-cache"])
    daemon.initialize()
    daemon.request("createSource", {
        "name": "items", "kind": "remote", "identityKey": "id", "keyPath": "items", "apiPath": "/items",
        "remoteConfiguration": {"baseURL": base}, "limits": {"maxObjectsPerPage": 1_000_000},
        "actions": {"rename": {"method": "PATCH", "path": "/items/{id}", "body": {"title": "{$values.title}"},
                               "values": {"title": {"type": "string", "required": True}}, "optimistic": "update"}}})
    daemon.request("fetchData", {"source": "items", "wait": True})
    pings, changes = [], []
    for n in range(args.actions):
        start = time.perf_counter()
        daemon.request("ping")
        pings.append(time.perf_counter() - start)
        start = time.perf_counter()
        daemon.send("performAction", {"source": "items", "action": "rename", "identity": identities[n],
                                      "values": {"title": f"Renamed {n}"}})
        daemon.until(notification("didChange", source="items"))
        changes.append(time.perf_counter() - start)
        daemon.until(lambda message: message.get("method") == "dataSource/didSettleMutation")
    daemon.close()
    ping, change = statistics.median(pings), statistics.median(changes)
    print(f"actions.py: {args.rows} rows, {args.actions} actions; medians: ping {ping * 1e6:.1f} µs, "
          f"performAction to its didChange {change * 1e6:.1f} µs")
    print(f"RESULT actions_on_screen rows={args.rows} change_over_ping={change / ping:.3f}")


if __name__ == "__main__":
    main()
