#!/usr/bin/env python3
"""A stand-in daemon for the plugin's tests of counted placeholders (issue 31), speaking
the contract the lead fixed before the daemon had it: a paginated source created with
`placeholders: "counted"` has its full size once its first page gives the total; unloaded
rows are {"$placeholder": "unloaded", "index": N}; a page arriving turns its rows into
objects with `updated` (no inserts); willDisplayObjectAtIndexPath on an unloaded row
farther than `jumpThreshold` from the loaded rows loads only the page holding it, and the
rows loaded before become placeholders again (updated); nearer, it loads the next page
towards it. describeSource has `placeholders: {requested, inForce, reason?}`.

Only what the plugin sends is served (page numbers, one section, one load at a time).
Pages are real requests to the fixture API (Clients/fixtures.json), made synchronously:
events are written in the daemon's order (willLoadData, didChangeLoadState, didChange,
didChangeLoadState, finishedLoading). tests/main.lua runs the same tests against the real
daemon once it accepts `placeholders`.
"""
import json
import sys
import urllib.request

out = sys.stdout.buffer
inp = sys.stdin.buffer
sources = {}
load_states_wanted = False
MAX_VALUES = 20000  # rows whose values a change set carries; more: none (read them)


def send(message):
    body = json.dumps(message, separators=(",", ":")).encode()
    out.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    out.flush()


def notify(method, params):
    send({"jsonrpc": "2.0", "method": method, "params": params})


def receive():
    length = None
    while True:
        line = inp.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return json.loads(inp.read(length))


class Source:
    def __init__(self, params):
        self.params = params
        self.name = params["name"]
        self.page_size = int(params.get("pageSize", 20))
        self.first_page = 1
        self.requested = params.get("placeholders", "trailing")
        self.jump_threshold = int(params.get("jumpThreshold", 2 * self.page_size))
        self.total = None
        self.pages = {}  # page number -> objects
        self.revision = 1
        self.fetching = False
        self.states = {d: {"state": "idle"} for d in ("refresh", "prepend", "append")}
        self.last_url = None

    def counted(self):
        return self.requested == "counted" and self.total is not None

    def count(self):
        if self.counted():
            return self.total
        return sum(len(objects) for objects in self.pages.values())

    def row(self, index):
        page = index // self.page_size + self.first_page
        objects = self.pages.get(page)
        offset = index % self.page_size
        if objects is not None and offset < len(objects):
            return objects[offset]
        return {"$placeholder": "unloaded", "index": index}

    def rows(self, start, count):
        if self.counted():
            return [self.row(i) for i in range(start, min(self.total, start + count))]
        flat = [o for page in sorted(self.pages) for o in self.pages[page]]
        return flat[start:start + count]

    def loaded_range(self):
        if not self.pages:
            return None
        low, high = min(self.pages), max(self.pages)
        return (low - self.first_page) * self.page_size, (high - self.first_page + 1) * self.page_size - 1

    def describe(self):
        placeholders = {"requested": self.requested, "inForce": "counted" if self.counted() else "trailing"}
        if self.requested == "counted" and not self.counted():
            placeholders["reason"] = "the total is not known before the first page"
        return {"name": self.name, "kind": "paginated", "numberOfSections": 1, "sectionTitles": [""],
                "counts": [self.count()], "isFetching": self.fetching, "revision": self.revision,
                "identityKey": self.params.get("identityKey"), "placeholders": placeholders,
                "capabilities": {"pageBackwards": True, "jump": True, "countedPlaceholders": True, "reasons": {}},
                "loadStates": self.states, "lastURL": self.last_url, "pageSize": self.page_size,
                "numberOfTotalResults": self.total,
                "numberOfObjects": sum(len(objects) for objects in self.pages.values())}

    def set_state(self, direction, state):
        self.states = dict(self.states, **{direction: state})
        if load_states_wanted:
            notify("dataSource/didChangeLoadState", {"source": self.name, "loadStates": self.states})

    def change(self, changes, values):
        previous = self.revision
        self.revision += 1
        params = {"source": self.name, "changes": changes, "revision": self.revision, "previousRevision": previous}
        if values is not None:
            params["values"] = values
        notify("dataSource/didChange", params)

    def load(self, page, direction, drop_others=False):
        """One cycle: page `page` in `direction`; with drop_others (a jump) the pages held
        before become placeholders."""
        self.fetching = True
        notify("dataSource/willLoadData", {"source": self.name})
        self.set_state(direction, {"state": "loading"})
        remote = self.params.get("remoteConfiguration", {})
        url = "%s%s?page=%d&page_size=%d" % (remote.get("baseURL", ""), self.params.get("apiPath", ""), page,
                                             self.page_size)
        self.last_url = url
        try:
            with urllib.request.urlopen(url, timeout=10) as response:
                body = json.loads(response.read())
        except Exception as error:  # noqa: BLE001 - a test double: any failure fails the cycle
            failure = {"kind": "http", "message": str(error), "url": url}
            self.fetching = False
            self.set_state(direction, {"state": "error", "error": failure})
            notify("dataSource/failedWithError", {"source": self.name, "error": failure})
            return
        objects = body
        for part in (self.params.get("keyPath") or "").split("."):
            if part:
                objects = objects[part]
        was_counted, old_count = self.counted(), self.count()
        dropped = sorted(self.pages) if drop_others else []
        if self.total is None and isinstance(body.get("total_count"), int):
            self.total = body["total_count"]
        for old in dropped:
            del self.pages[old]
        self.pages[page] = objects
        start = (page - self.first_page) * self.page_size
        if was_counted:
            touched = set(range(start, start + len(objects)))
            for old in dropped:
                if old != page:
                    base = (old - self.first_page) * self.page_size
                    touched.update(range(base, base + self.page_size))
            updated = sorted(touched)
            self.change({"updated": [[0, i] for i in updated]}, {"inserted": [], "updated": [self.row(i) for i in updated]})
        else:
            count = self.count()
            inserted = list(range(old_count, count)) if not self.counted() else list(range(count))
            deleted = [] if not self.counted() else [[0, i] for i in range(old_count)]
            values = None
            if len(inserted) <= MAX_VALUES:
                values = {"inserted": [self.row(i) if self.counted() else self.rows(i, 1)[0] for i in inserted],
                          "updated": []}
            self.change({"deleted": deleted, "inserted": [[0, i] for i in inserted]}, values)
        self.fetching = False
        self.states = {"refresh": {"state": "idle"}, "prepend": {"state": "idle"}, "append": {"state": "idle"}}
        if min(self.pages) == self.first_page:
            self.states["prepend"] = {"state": "endReached"}
        if self.total is not None and (max(self.pages) - self.first_page + 1) * self.page_size >= self.total:
            self.states["append"] = {"state": "endReached"}
        self.set_state(direction, self.states[direction])
        notify("dataSource/finishedLoading", {"source": self.name})

    def will_display(self, index):
        if self.fetching or not self.pages:
            return False
        low, high = self.loaded_range()
        page = index // self.page_size + self.first_page
        if page in self.pages:
            if index >= high and self.states["append"]["state"] == "idle":
                self.load(max(self.pages) + 1, "append")
                return True
            if index <= low and self.states["prepend"]["state"] == "idle":
                self.load(min(self.pages) - 1, "prepend")
                return True
            return False
        distance = low - index if index < low else index - high
        if distance > self.jump_threshold:
            self.load(page, "refresh", drop_others=True)
        elif index > high:
            self.load(max(self.pages) + 1, "append")
        else:
            self.load(min(self.pages) - 1, "prepend")
        return True


METHODS = ["allObjects", "createSource", "describeSource", "fetchData", "listSources", "numberOfObjectsInSection",
           "objectsInSection", "ping", "sectionTitles", "shutdown", "willDisplayObjectAtIndexPath"]


def handle(method, params):
    global load_states_wanted
    if method == "initialize":
        load_states_wanted = bool((params.get("capabilities") or {}).get("loadStates"))
        return {"protocolVersion": "1.5", "serverInfo": {"name": "counted_daemon.py", "version": "0"},
                "capabilities": {"methods": METHODS, "changeValues": True}}
    if method == "listSources":
        return [{"name": name, "kind": "paginated"} for name in sources]
    if method == "createSource":
        if params.get("kind") != "paginated":
            raise ValueError("counted_daemon.py serves paginated sources only")
        sources[params["name"]] = Source(params)
        return sources[params["name"]].describe()
    if method in ("ping", "shutdown"):
        return None
    source = sources[params["source"]]
    if method == "describeSource":
        return source.describe()
    if method == "numberOfObjectsInSection":
        return source.count()
    if method == "sectionTitles":
        return [""]
    if method == "allObjects":
        objects = source.rows(0, source.count())
        return {"objects": objects, "revision": source.revision} if params.get("withRevision") else objects
    if method == "objectsInSection":
        start = params.get("start", 0)
        count = params.get("count", source.count() - start)
        return {"section": 0, "start": start, "objects": source.rows(start, count),
                "numberOfObjects": source.count(), "revision": source.revision}
    if method == "fetchData":
        return "load-first-page"
    if method == "willDisplayObjectAtIndexPath":
        return ("display", params["indexPath"][1])
    raise ValueError("counted_daemon.py does not serve " + method)


def main():
    while True:
        message = receive()
        if message is None or message.get("method") == "exit":
            return
        if "id" not in message:
            continue
        try:
            result = handle(message["method"], message.get("params") or {})
        except Exception as error:  # noqa: BLE001 - answered as the daemon would, an error
            send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32602, "message": str(error)}})
            continue
        source = sources.get((message.get("params") or {}).get("source"))
        if result == "load-first-page":
            # The answer first, then the cycle (the page comes "from the network").
            send({"jsonrpc": "2.0", "id": message["id"], "result": {"isFetching": True}})
            source.load(source.first_page, "refresh", drop_others=True)
        elif isinstance(result, tuple):
            # willDisplay answers after the cycle's events here: one thread, a test double.
            started = source.will_display(result[1])
            send({"jsonrpc": "2.0", "id": message["id"], "result": {"fetchStarted": started}})
        else:
            send({"jsonrpc": "2.0", "id": message["id"], "result": result})


main()
