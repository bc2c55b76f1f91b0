"""The benchmarks' one JSON-RPC client: the daemon (or the C stub) spawned on pipes and spoken
to with LSP framing (Content-Length headers), as every script under Benchmarks/ needs it; and
the loopback APIs the daemon is pointed at (a script's own handler, or `datasourced fixtures`).

Frames are written with os.write and read from a buffer that os.read fills 64 KiB at a time,
so a frame costs a search for its header's end and a slice: the way Benchmarks/rtt.py reads
100,000 pipelined answers, and the one way here, so that no script's figures carry a slower
reader of its own. Scripts run as `python3 Benchmarks/x.py` import it from their own
folder (Python puts the script's folder on sys.path).
"""
import ctypes, json, os, queue, select, subprocess, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CHUNK = 1 << 16  # a pipe's capacity on Linux: a read rarely returns more


def frame(body):
    """A message body (bytes) with its header."""
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def encode(message):
    return frame(json.dumps(message, separators=(",", ":")).encode())


class RPCError(RuntimeError):
    """An error answer where the benchmark expected a result."""


class Frames:
    """The frames a process writes to `fd`: bodies as bytes, or skipped by their headers."""

    def __init__(self, fd, name):
        self.fd = fd
        self.name = name
        self.buffer = bytearray()

    def _fill(self, deadline=None):
        if deadline is not None and not select.select([self.fd], [], [], max(deadline - time.monotonic(), 0))[0]:
            raise TimeoutError(f"{self.name} wrote no frame in time")
        chunk = os.read(self.fd, CHUNK)
        if not chunk:
            raise EOFError(f"{self.name} closed its output")
        self.buffer += chunk

    def _body_length(self, end):
        """The length in the header that ends at `end`, had it not come as the daemon and the stub write
        it (`Content-Length: N` last)."""
        header = bytes(self.buffer[:end])
        field = header.lower().find(b"content-length:")
        if field < 0:
            raise ValueError(f"{self.name} wrote a frame without Content-Length: {header[:200]!r}")
        return int(header[field + 15:].split(b"\r\n")[0])

    # next and skip each parse the header inline, with literals rather than names: a call or a
    # global look-up more a frame shows in rtt.py's figures (one loop shared by both made next
    # 240 ns slower a frame, on about 620).

    def next(self, deadline=None):
        """The next frame's body (bytes), unparsed; `deadline` (monotonic seconds) bounds the wait."""
        buffer = self.buffer
        end = buffer.find(b"\r\n\r\n")
        while end < 0:
            self._fill(deadline)
            end = buffer.find(b"\r\n\r\n")
        try:
            total = end + 4 + int(buffer[buffer.rfind(b"Content-Length:", 0, end) + 15:end])
        except ValueError:
            total = end + 4 + self._body_length(end)
        while len(buffer) < total:
            self._fill(deadline)
        body = bytes(buffer[end + 4:total])
        del buffer[:total]
        return body

    def skip(self, count):
        """Reads `count` frames, looking at their headers only."""
        buffer = self.buffer
        for _ in range(count):
            end = buffer.find(b"\r\n\r\n")
            while end < 0:
                self._fill()
                end = buffer.find(b"\r\n\r\n")
            try:
                total = end + 4 + int(buffer[buffer.rfind(b"Content-Length:", 0, end) + 15:end])
            except ValueError:
                total = end + 4 + self._body_length(end)
            while len(buffer) < total:
                self._fill()
            del buffer[:total]


class Daemon:
    """`command` (the daemon with its arguments, or the C stub) on pipes.

    Requests are numbered from 1. An error answer raises RPCError wherever `until` meets it:
    no benchmark sends a request meant to fail, and a figure taken past one would be wrong.
    """

    def __init__(self, command, env=None, stderr=None):
        self.command = list(command)
        self.process = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                                        env=env, bufsize=0)
        self.pid = self.process.pid
        self.input = self.process.stdin.fileno()
        self.frames = Frames(self.process.stdout.fileno(), " ".join(self.command))
        self.next_id = 0
        self.arrivals = None  # with a reader thread: (monotonic time, message), None at the end
        self.arrived_at = None  # with a reader thread: when the message `receive` returned last was read
        self.cpu_clock = None

    # Writing.

    def write(self, data):
        """Writes all of `data` (framed bytes), 64 KiB a write."""
        view = memoryview(data)
        while view:
            view = view[os.write(self.input, view[:CHUNK]):]

    def send(self, method, params=None):
        """Sends a request without waiting; returns its id."""
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.write(encode(message))
        return self.next_id

    def notify(self, method, params=None):
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.write(encode(message))

    # Reading.

    def start_reader(self):
        """Reads messages on a thread of its own from now on, each with the time it was read: for
        a script that must send on a schedule while answers and notifications arrive."""
        self.arrivals = queue.Queue()

        def read():
            while True:
                try:
                    body = self.frames.next()
                except EOFError:
                    self.arrivals.put(None)
                    return
                self.arrivals.put((time.monotonic(), json.loads(body)))

        threading.Thread(target=read, daemon=True).start()

    def receive(self, deadline=None):
        """The next message, parsed; `deadline` (monotonic seconds) bounds the wait."""
        if self.arrivals is None:
            return json.loads(self.frames.next(deadline))
        try:
            item = self.arrivals.get(timeout=None if deadline is None else max(deadline - time.monotonic(), 0.001))
        except queue.Empty:
            raise TimeoutError(f"{self.frames.name} wrote no message in time") from None
        if item is None:
            self.arrivals.put(None)  # the end stays the end for a later call
            raise EOFError(f"{self.frames.name} closed its output")
        self.arrived_at, message = item
        return message

    def until(self, predicate, timeout=None):
        """The first message `predicate` accepts, passing over the others."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            message = self.receive(deadline)
            if "error" in message:
                raise RPCError(f"error answer to request {message.get('id')}: {message['error']}")
            if predicate(message):
                return message

    def request(self, method, params=None):
        """Sends a request and returns its result, passing over the notifications before it."""
        number = self.send(method, params)
        try:
            return self.until(lambda message: message.get("id") == number)["result"]
        except RPCError as error:
            raise RPCError(f"{method}: {error}") from None

    def initialize(self, **params):
        """`initialize` with these params (capabilities=..., clientInfo=...); its result."""
        return self.request("initialize", params)

    def final(self, source=None):
        """The next `finishedLoading` or `failedWithError` (of `source`, if given)."""
        return self.until(notification("finishedLoading", "failedWithError", source=source))

    def close(self, shutdown=True, timeout=30):
        """`shutdown` and `exit` (unless the process speaks no more than `initialize`, as the C stub),
        then the end of its input; waits for the process to end and returns its status."""
        if shutdown:
            self.request("shutdown")
            self.notify("exit")
        self.process.stdin.close()
        return self.process.wait(timeout=timeout)

    # What the process uses, from /proc.

    def proc_number(self, name, field):
        """The number after `field:` in /proc/PID/name (status: kB; io: bytes); None without it."""
        with open(f"/proc/{self.pid}/{name}") as lines:
            for line in lines:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
        return None

    def status_kb(self, field):
        return self.proc_number("status", field)

    def cpu_seconds(self):
        """The process's CPU time (all threads, ended ones too): its CPU clock, to the nanosecond,
        where the C library gives it; else /proc, in clock ticks (10 ms, too coarse for a page)."""
        if self.cpu_clock is None:
            clock = ctypes.c_int()
            try:
                found = ctypes.CDLL(None).clock_getcpuclockid(self.pid, ctypes.byref(clock)) == 0
            except (OSError, AttributeError):
                found = False
            self.cpu_clock = clock.value if found else False
        if self.cpu_clock is not False:
            return time.clock_gettime(self.cpu_clock)
        with open(f"/proc/{self.pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def thread_cpu(self):
        """CPU seconds by thread name, from /proc (threads that have ended are not counted)."""
        totals = {}
        task = f"/proc/{self.pid}/task"
        for tid in os.listdir(task):
            try:
                with open(f"{task}/{tid}/comm") as comm, open(f"{task}/{tid}/schedstat") as schedstat:
                    name, seconds = comm.read().strip(), int(schedstat.read().split()[0]) / 1e9
            except OSError:
                continue
            totals[name] = totals.get(name, 0) + seconds
        return totals


def notification(*names, source=None):
    """A predicate for `until`: a `dataSource/NAME` notification of one of `names` (of `source`, if given)."""
    methods = {f"dataSource/{name}" for name in names}
    return lambda message: message.get("method") in methods and (source is None or message["params"]["source"] == source)


class QuietHandler(BaseHTTPRequestHandler):
    """The base of the benchmarks' own APIs: no line on stderr a request."""

    def log_message(self, *args):
        pass

    def send_json(self, body, headers=()):
        """A 200 with `body` (JSON bytes, or a value to encode) and `headers` (name, value pairs)."""
        if not isinstance(body, bytes):
            body = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def send_not_modified(self, etag):
        """A 304 confirming `etag`."""
        self.send_response(304)
        self.send_header("ETag", etag)
        self.send_header("Content-Length", "0")
        self.end_headers()


def serve_http(handler):
    """Serves `handler` (a QuietHandler) on a loopback port from a thread of its own; the server,
    with its URL in `base`."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.base = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class FixtureServer:
    """`datasourced fixtures FILE`: an HTTP API on loopback serving the fixture file's routes."""

    def __init__(self, program, fixture_file):
        self.process = subprocess.Popen([program, "fixtures", fixture_file], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.base = json.loads(self.process.stdout.readline())["baseURL"]

    def close(self):
        self.process.stdin.close()
        self.process.wait()
