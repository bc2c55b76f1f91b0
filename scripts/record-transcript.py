#!/usr/bin/env python3
"""Record a transcript: send the messages of a draft to a fresh daemon and write the
draft back with an `expect` step after each send for every message the daemon answered.

Usage: scripts/record-transcript.py DRAFT.json OUT.json [--daemon PATH]

A draft is a transcript whose steps are only `send`, `comment` and `closeInput`. The
recording is a starting point: read every expectation, and loosen values that
legitimately vary (with "$any", "$string", ...) before committing it.
"""
import json
import subprocess
import sys
import threading
import queue


def frames(stream, out):
    while True:
        header = b""
        while not header.endswith(b"\r\n\r\n"):
            byte = stream.read(1)
            if not byte:
                out.put(None)
                return
            header += byte
        length = next(int(line.split(b":")[1]) for line in header.split(b"\r\n") if line.lower().startswith(b"content-length"))
        out.put(json.loads(stream.read(length)))


def main():
    draft_path, out_path = sys.argv[1], sys.argv[2]
    daemon = sys.argv[sys.argv.index("--daemon") + 1] if "--daemon" in sys.argv else ".build/debug/datasourced"
    draft = json.load(open(draft_path))
    base_url = None
    if "fixtures" in draft:
        server = subprocess.Popen([daemon, "fixtures", draft_path], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        base_url = json.loads(server.stdout.readline())["baseURL"]

    def substitute(value, old, new):
        if isinstance(value, str):
            return value.replace(old, new)
        if isinstance(value, list):
            return [substitute(v, old, new) for v in value]
        if isinstance(value, dict):
            return {k: substitute(v, old, new) for k, v in value.items()}
        return value

    process = subprocess.Popen([daemon, "serve", *draft.get("daemonArguments", [])], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    received = queue.Queue()
    threading.Thread(target=frames, args=(process.stdout, received), daemon=True).start()
    steps = []

    def drain(settle_ms=0):
        # A ping round trip marks the end of what the previous message caused; a draft step
        # may ask for "settleMilliseconds" so that network completions arrive first.
        marker = {"jsonrpc": "2.0", "id": "__record_marker__", "method": "ping", "params": {"delayMilliseconds": settle_ms}}
        body = json.dumps(marker).encode()
        process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        process.stdin.flush()
        while True:
            message = received.get(timeout=10)
            if message is None or message.get("id") == "__record_marker__":
                return
            if sent.get("method") == "initialize" and message.get("id") == sent.get("id") and "result" in message:
                # Capabilities grow with every release; transcripts should not break on that.
                message["result"] = "$object"
            steps.append({"expect": substitute(message, base_url, "${fixtures}") if base_url else message})

    sent = {}
    for step in draft["steps"]:
        settle = step.pop("settleMilliseconds", 0)
        steps.append(step)
        if "send" in step:
            sent = step["send"] if isinstance(step["send"], dict) else {}
            message = substitute(step["send"], "${fixtures}", base_url) if base_url else step["send"]
            body = json.dumps(message, ensure_ascii=False).encode()
            process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
            process.stdin.flush()
            drain(settle)
        elif "expectRequests" in step:
            pass
        elif "closeInput" in step:
            process.stdin.close()
    draft["steps"] = steps
    with open(out_path, "w") as out:
        json.dump(draft, out, indent=1, ensure_ascii=False)
        out.write("\n")
    process.kill()


if __name__ == "__main__":
    main()
