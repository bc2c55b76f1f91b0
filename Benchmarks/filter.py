#!/usr/bin/env python3
"""Filtered sources (issue 30): a fuzzy query typed a key at a time over 100,000 book titles,
side by side with `fzf --filter` over the same titles; a predicate over 1,000,000 rows; and one
insert into the child of a filtered view of 300,000 rows against the same insert with no view.

    python3 Benchmarks/filter.py [--daemon PATH] [--query wizard] [--titles 100000]
                                 [--rows 1000000] [--edit-rows 300000] [--runs 3]

Fuzzy: the titles (made from word lists with a fixed seed, written one a line to a temporary
file that fzf reads) are a simple source's rows, under a filtered source with no query. For
each prefix of `--query` (q, qu, ...), `setFilter` with that `match` is sent and the time to
its `dataSource/didChange` is taken (the daemon builds, encodes and writes the change set; the
client has read it whole and parsed it), or to its answer when the rows did not change (no
didChange); the keystrokes are typed in order, as a person types, so each grows the previous
query. fzf's time is `fzf --filter PREFIX < titles` as a whole process (start, read, match,
sort, print to /dev/null). Each figure is the median of `--runs` runs; a run types the whole
query into the daemon, removes it (not timed), then runs fzf for each prefix, so that both
see the same load.

Predicate: `setFilter {"filter": {"keyPath": "genre", "op": "eq", "value": X}}` over
`--rows` rows (12 genres), to its didChange; then another genre; then the filter removed.
Each to the didChange read and parsed, and to its last byte read (the daemon's part: for the
first step the change set is 83,334 runs, 1.1 MB, which Python's json.loads alone takes tens
of milliseconds to parse).

Insert: `insertObjects` of one row in the middle of a simple source of `--edit-rows` rows, to
its answer (which comes after every didChange it causes), with no view, then with a filtered
view (`genre eq`, a match query "e") over it: medians of 50 inserts each.

Prints figures only; never passes or fails. Needs fzf (Debian's: apt-get install -y fzf).
"""
import argparse, json, os, random, shutil, statistics, subprocess, sys, tempfile, time

from rpcclient import Daemon, RPCError

ADJECTIVES = ["Silver", "Hidden", "Last", "Broken", "Burning", "Silent", "Golden", "Lost", "Forgotten", "Crimson", "Winter",
              "Iron", "Shattered", "Secret", "Endless", "Dark", "Bright", "Wandering", "Hollow", "Distant"]
NOUNS = ["Kingdom", "Wizard", "Garden", "River", "Tower", "Sword", "Mirror", "Empire", "Forest", "Crown", "Dragon", "Harbor",
         "Library", "Orchard", "Lantern", "Compass", "Voyage", "Archive", "Citadel", "Meadow"]
PLACES = ["the North", "Avalon", "the Sea", "Babel", "the Moors", "Earthsea", "the Mountain", "Samarkand", "the Valley",
          "Ys", "the Dunes", "Carthage", "the Marsh", "Zanzibar", "the Steppe"]
GENRES = ["fantasy", "sf", "history", "mystery", "romance", "horror", "travel", "poetry", "classic", "essay", "drama", "memoir"]


def titles(count, seed=30):
    generator = random.Random(seed)
    shapes = [lambda: f"The {generator.choice(ADJECTIVES)} {generator.choice(NOUNS)}",
              lambda: f"{generator.choice(NOUNS)} of {generator.choice(PLACES)}",
              lambda: f"The {generator.choice(NOUNS)} and the {generator.choice(NOUNS)}",
              lambda: f"A {generator.choice(ADJECTIVES)} {generator.choice(NOUNS)} in {generator.choice(PLACES)}"]
    return [f"{generator.choice(shapes)()} ({1800 + generator.randrange(225)})" for _ in range(count)]


def spawn(path, capabilities=None):
    daemon = Daemon([path, "serve", "--no-cache"], stderr=subprocess.DEVNULL)
    daemon.initialize(**({"capabilities": capabilities} if capabilities else {}))
    return daemon


def timed_request(daemon, method, params, until_change_of=None):
    """The result, and the seconds from sending to the first didChange of `until_change_of` (or to
    the answer): to that message read whole and parsed, and to its last byte (the daemon's part,
    without this client's json.loads, which for a million-row change set is itself tens of ms)."""
    start = time.perf_counter()
    request_id = daemon.send(method, params)
    changed = arrived = None
    while True:
        body = daemon.frames.next()
        last_byte = time.perf_counter()
        message = json.loads(body)
        if changed is None and until_change_of and message.get("method") == "dataSource/didChange" \
                and message["params"]["source"] == until_change_of:
            arrived, changed = last_byte - start, time.perf_counter() - start
        if message.get("id") == request_id:
            break
    if "error" in message:
        raise RPCError(f"{method}: {message['error']}")
    if changed is None:
        # No didChange (the rows did not change): the time to the answer.
        arrived = changed = time.perf_counter() - start
    return message["result"], changed, arrived


def create_rows(daemon, name, rows, chunk=100_000):
    daemon.request("createSource", {"name": name, "kind": "simple", "identityKey": "id", "objects": rows[:chunk]})
    for start in range(chunk, len(rows), chunk):
        daemon.request("insertObjects", {"source": name, "objects": rows[start:start + chunk]})


def milliseconds(seconds):
    return f"{seconds * 1000:.1f}"


def fuzzy(daemon_path, query, count, runs):
    lines = titles(count)
    directory = tempfile.mkdtemp(prefix="filter-bench-")
    try:
        path = os.path.join(directory, "titles.txt")
        with open(path, "w") as file:
            file.write("\n".join(lines) + "\n")
        daemon = spawn(daemon_path)
        create_rows(daemon, "books", [{"id": n, "title": t, "genre": GENRES[n % len(GENRES)]} for n, t in enumerate(lines)])
        daemon.request("createSource", {"name": "search", "kind": "filtered", "source": "books"})
        ours = {k: [] for k in range(1, len(query) + 1)}
        theirs, counts, fzf_counts = {k: [] for k in ours}, {}, {}
        # Ours and fzf's alternate, a whole query each: both see the same load on a shared machine.
        for _ in range(runs):
            for k in ours:
                result, seconds, _ = timed_request(daemon, "setFilter", {"source": "search", "match": {"query": query[:k], "keyPaths": ["title"]}},
                                                   until_change_of="search")
                ours[k].append(seconds)
                counts[k] = result["counts"][0]
            daemon.request("setFilter", {"source": "search", "match": None})
            for k in ours:
                with open(path, "rb") as source:
                    start = time.perf_counter()
                    output = subprocess.run(["fzf", "--filter", query[:k]], stdin=source, stdout=subprocess.PIPE, check=False).stdout
                    theirs[k].append(time.perf_counter() - start)
                    fzf_counts[k] = output.count(b"\n")
        daemon.close()
        print(f"## Fuzzy match over {count:,} titles, query {query!r} typed a key at a time (median of {runs})")
        print("| keystroke | query | rows | setFilter → didChange (ms) | fzf --filter (ms) | fzf rows | ratio |")
        print("|---|---|---|---|---|---|---|")
        for k in ours:
            a, b = statistics.median(ours[k]), statistics.median(theirs[k])
            print(f"| {k} | `{query[:k]}` | {counts[k]:,} | {milliseconds(a)} | {milliseconds(b)} | {fzf_counts[k]:,} | {a / b:.2f} |")
            print(f"RESULT fuzzy keystroke={k} rows={counts[k]} ours_ms={a * 1000:.2f} fzf_ms={b * 1000:.2f} ratio={a / b:.3f}", file=sys.stderr)
    finally:
        shutil.rmtree(directory)


def predicate(daemon_path, count, runs, change_ranges=False):
    # changeRanges: the deleted rows between two kept ones go as one [0, item, count].
    daemon = spawn(daemon_path, {"changeRanges": True} if change_ranges else None)
    create_rows(daemon, "big", [{"id": n, "genre": GENRES[n % len(GENRES)], "year": 1800 + n % 225} for n in range(count)])
    daemon.request("createSource", {"name": "view", "kind": "filtered", "source": "big"})
    steps = [("genre eq fantasy", {"keyPath": "genre", "op": "eq", "value": "fantasy"}),
             ("genre eq sf (another genre)", {"keyPath": "genre", "op": "eq", "value": "sf"}),
             ("filter removed", None)]
    figures = {name: [] for name, _ in steps}
    last_bytes = {name: [] for name, _ in steps}
    for _ in range(runs):
        for name, filter in steps:
            _, seconds, arrived = timed_request(daemon, "setFilter", {"source": "view", "filter": filter}, until_change_of="view")
            figures[name].append(seconds)
            last_bytes[name].append(arrived)
    daemon.close()
    print(f"\n## Predicate over {count:,} rows: setFilter → didChange (median of {runs})"
          f"{', changeRanges' if change_ranges else ''}")
    print("| step | ms, to didChange parsed | ms, to its last byte |")
    print("|---|---|---|")
    for name, _ in steps:
        print(f"| {name} | {milliseconds(statistics.median(figures[name]))} | {milliseconds(statistics.median(last_bytes[name]))} |")
        print(f"RESULT predicate step={name.split(' (')[0].replace(' ', '_')} changeRanges={str(change_ranges).lower()} "
              f"ms={statistics.median(figures[name]) * 1000:.2f} last_byte_ms={statistics.median(last_bytes[name]) * 1000:.2f}",
              file=sys.stderr)


def insert(daemon_path, count, inserts=50):
    rows = [{"id": n, "title": t, "genre": GENRES[n % len(GENRES)]} for n, t in enumerate(titles(count, seed=31))]
    results = {}
    for with_view in (False, True):
        daemon = spawn(daemon_path)
        create_rows(daemon, "child", rows)
        if with_view:
            daemon.request("createSource", {"name": "view", "kind": "filtered", "source": "child",
                                            "filter": {"keyPath": "genre", "op": "eq", "value": "fantasy"},
                                            "match": {"query": "e", "keyPaths": ["title"]}})
        times = []
        for n in range(inserts):
            row = {"id": count + n, "title": "The Emerald Tower", "genre": "fantasy"}
            _, seconds, _ = timed_request(daemon, "insertObjects", {"source": "child", "objects": [row], "index": count // 2})
            times.append(seconds)
        daemon.close()
        results[with_view] = statistics.median(times)
    print(f"\n## One insert into a simple source of {count:,} rows, to its answer (median of {inserts})")
    print("| | ms |")
    print("|---|---|")
    print(f"| no view | {milliseconds(results[False])} |")
    print(f"| under a filtered view (filter and match) | {milliseconds(results[True])} |")
    print(f"| ratio | {results[True] / results[False]:.2f} |")
    print(f"RESULT insert rows={count} plain_ms={results[False] * 1000:.3f} filtered_ms={results[True] * 1000:.3f} "
          f"ratio={results[True] / results[False]:.2f}", file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--daemon", default=".build/release/datasourced")
    parser.add_argument("--query", default="wizard")
    parser.add_argument("--titles", type=int, default=100_000)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--edit-rows", type=int, default=300_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--parts", default="fuzzy,predicate,insert", help="which of fuzzy, predicate, insert to run")
    arguments = parser.parse_args()
    parts = arguments.parts.split(",")
    if "fuzzy" in parts and shutil.which("fzf") is None:
        sys.exit("fzf is needed: apt-get install -y fzf")
    fzf = subprocess.run(['fzf', '--version'], stdout=subprocess.PIPE, text=True).stdout.strip() if shutil.which("fzf") else "none"
    print(f"fzf {fzf}; load average {os.getloadavg()[0]:.2f}")
    if "fuzzy" in parts: fuzzy(arguments.daemon, arguments.query, arguments.titles, arguments.runs)
    if "predicate" in parts:
        predicate(arguments.daemon, arguments.rows, arguments.runs)
        predicate(arguments.daemon, arguments.rows, arguments.runs, change_ranges=True)
    if "insert" in parts: insert(arguments.daemon, arguments.edit_rows)


if __name__ == "__main__":
    main()
