#!/usr/bin/env python3
"""GraphQL pages against REST pages of the same rows: the daemon's CPU per page when the rows
come as a Relay connection (`POST /graphql`, `data.items.edges[].node`, paged by
`first`/`after`) and when they come as a plain array (`GET /items?page=N`, `keyPath: items`),
from the same fixture server, the same rows, runs taken in turns (REST, GraphQL, REST, ...).

Usage: python3 Benchmarks/graphql.py [--daemon PATH] [--pages 100] [--objects 1000] [--runs 5] [--no-mapping]

The fixture server answers the GraphQL pages in order (one route a page, each `times: 1`),
so what is measured is the daemon: building and sending each POST body, receiving, parsing
the connection, taking each edge's node, mapping, change sets and notifications. With
`--objects 10000 --pages 10 --no-mapping`, the figure is the extraction of 10,000 nodes from
`edges[].node` against a key path over a plain array of the same objects.
Prints figures only; never passes or fails.
"""
import argparse, json, os, statistics, tempfile

from pagefetch import MAPPING, item
from rpcclient import Daemon, FixtureServer

QUERY = "query($first: Int, $after: String) { items(first: $first, after: $after) { pageInfo { hasNextPage endCursor } edges { node { id title } } } }"


def write_fixtures(path, pages, objects):
    """REST pages under /items?page=N, and the same rows as GraphQL pages under /graphql."""
    with open(path, "w") as handle:
        handle.write('{"fixtures":[')
        for p in range(1, pages + 1):
            rows = [item((p - 1) * objects + i + 1) for i in range(objects)]
            rest = {"items": rows, "page": p, "number_of_pages": pages}
            graphql = {"data": {"items": {"pageInfo": {"hasNextPage": p < pages, "endCursor": f"c{p}"},
                                          "edges": [{"cursor": f"r{row['id']}", "node": row} for row in rows]}}}
            handle.write(("," if p > 1 else "") + json.dumps({"path": "/items", "query": {"page": str(p)}, "body": rest}))
            handle.write("," + json.dumps({"path": "/graphql", "times": 1, "body": graphql}))
        handle.write("]}")


def page_through(daemon, shape, base, args):
    """The daemon's CPU seconds to page through every page of `shape`."""
    common = {"name": shape, "kind": "paginated", "identityKey": "id", "remoteConfiguration": {"baseURL": base},
              **({} if args.no_mapping else {"mapping": MAPPING})}
    if shape == "rest":
        params = {**common, "apiPath": "/items", "keyPath": "items"}
    else:
        params = {**common, "apiPath": "/graphql", "pageSize": args.objects,
                  "graphql": {"query": QUERY, "connection": "items"}}
    daemon.request("createSource", params)
    before = daemon.cpu_seconds()
    daemon.send("fetchData", {"source": shape})
    for page in range(args.pages):
        daemon.final()
        if page + 1 < args.pages:
            daemon.send("fetchNextPage", {"source": shape})
    cpu = daemon.cpu_seconds() - before
    count = daemon.request("numberOfObjectsInSection", {"source": shape, "section": 0})
    assert count in (args.pages * args.objects, args.pages * args.objects + 1), f"{shape}: loaded {count} rows"
    return cpu


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--daemon", default=".build/release/datasourced")
    parser.add_argument("--pages", type=int, default=100)
    parser.add_argument("--objects", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-mapping", action="store_true")
    args = parser.parse_args()
    handle = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
    handle.close()
    ratios, per_page = [], {"rest": [], "graphql": []}
    for run in range(args.runs):
        # A fresh server each run: its GraphQL routes answer once each.
        write_fixtures(handle.name, args.pages, args.objects)
        server = FixtureServer(args.daemon, handle.name)
        figures = {}
        for shape in ("rest", "graphql") if run % 2 == 0 else ("graphql", "rest"):
            daemon = Daemon([args.daemon])
            daemon.initialize()
            figures[shape] = page_through(daemon, shape, server.base, args) * 1000 / args.pages
            daemon.close()
        server.close()
        for shape, ms in figures.items():
            per_page[shape].append(ms)
        ratios.append(figures["graphql"] / figures["rest"])
        print(f"run {run + 1}: daemon CPU a page: REST {figures['rest']:.2f} ms, GraphQL {figures['graphql']:.2f} ms, "
              f"ratio {ratios[-1]:.2f}")
    os.unlink(handle.name)
    print(f"RESULT graphql pages={args.pages} objects={args.objects} mapping={'no' if args.no_mapping else 'yes'} "
          f"rest_ms_per_page={statistics.median(per_page['rest']):.2f} graphql_ms_per_page={statistics.median(per_page['graphql']):.2f} "
          f"ratio_median={statistics.median(ratios):.2f} ratio_min={min(ratios):.2f} ratio_max={max(ratios):.2f}")


if __name__ == "__main__":
    main()
