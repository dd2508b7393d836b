#!/usr/bin/env python3
"""Three Boris instances behind HAProxy (issue 31 §2), driven by real MCP sessions.

Started by tests/fleet/run.sh (which installs the pinned HAProxy). Standard library only:
each request goes on a fresh connection, as HAProxy balances request by request.

What it checks, in order (every step prints what a client saw):
1. six session-era sessions through the proxy, each kept on the instance that answered
   its initialize (affinity on `Mcp-Session-Id`, learned from the response header):
   files, a view then an edit that needs the view record, a bash cwd, a background task,
   a terminal;
2. stateless (2026-07-28) requests: the tools that keep no state go round robin over all
   three; the ones that do (edits, bash, tasks, terminals, undo, and view, which leaves the
   record edits check) go to one instance;
3. SIGTERM to one instance with a call of its running: the call finishes within the
   grace, the instance refuses new sessions, then its sessions get a clear error through
   the proxy (never an answer from another instance), the other sessions go on with all
   their state, the stopped sessions' files are on the shared disk, stateless requests
   work through the survivors;
4. SIGKILL to a second instance (a crash, no drain): the same, with one survivor.
"""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import http.client
from pathlib import Path

HERE = Path(__file__).resolve().parent
BORIS = os.environ.get("BORIS_BIN", "target/debug/boris")
HAPROXY = os.environ.get("HAPROXY", "haproxy")
TOKEN = "fleet-test-token"
SESSION_ERA = "2025-11-25"
STATELESS_ERA = "2026-07-28"
GRACE_S = 4

failures = []


def check(ok, what):
    print(("  ok   " if ok else "  FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Reply:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body
        self.served_by = headers.get("x-served-by", "")
        self.message = None
        text = body.decode("utf-8", "replace")
        if headers.get("content-type", "").startswith("text/event-stream"):
            for line in text.splitlines():
                if line.startswith("data:") and line[5:].strip():
                    msg = json.loads(line[5:])
                    if "id" in msg and ("result" in msg or "error" in msg):
                        self.message = msg
        elif text.strip().startswith("{"):
            self.message = json.loads(text)

    @property
    def text(self):
        """The tool result's text (or the JSON-RPC error's message, or the body)."""
        m = self.message or {}
        if "result" in m:
            return "".join(c.get("text", "") for c in m["result"].get("content", []))
        if "error" in m:
            return "JSON-RPC error: " + m["error"].get("message", "")
        return self.body.decode("utf-8", "replace")[:200]

    @property
    def is_error(self):
        m = self.message or {}
        return "result" not in m or bool(m["result"].get("isError"))

    def seen(self):
        return f"HTTP {self.status} from {self.served_by or 'the instance itself'}: {self.text.strip()[:120]!r}"


def post(port, body, headers=None, timeout=30):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    h = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "Connection": "close",
    }
    if TOKEN:
        h["Authorization"] = f"Bearer {TOKEN}"
    h.update(headers or {})
    try:
        conn.request("POST", "/mcp", json.dumps(body).encode(), h)
        r = conn.getresponse()
        return Reply(r.status, {k.lower(): v for k, v in r.getheaders()}, r.read())
    finally:
        conn.close()


class Session:
    """A session-era client: initialize, then its id on every request."""

    def __init__(self, port, name):
        self.port, self.name, self.next_id = port, name, 1
        r = post(port, self.rpc("initialize", {
            "protocolVersion": SESSION_ERA, "capabilities": {},
            "clientInfo": {"name": name, "version": "1"}}), {})
        self.id = r.headers.get("mcp-session-id")
        self.home = r.served_by
        if not self.id:
            raise RuntimeError(f"{name}: no session: {r.seen()}")
        post(port, {"jsonrpc": "2.0", "method": "notifications/initialized"}, self.headers())

    def rpc(self, method, params):
        self.next_id += 1
        return {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}

    def headers(self):
        return {"Mcp-Session-Id": self.id, "MCP-Protocol-Version": SESSION_ERA}

    def call(self, tool, args, timeout=30):
        return post(self.port, self.rpc("tools/call", {"name": tool, "arguments": args}),
                    self.headers(), timeout)


def stateless(port, tool, args):
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": tool, "arguments": args, "_meta": {
            "io.modelcontextprotocol/protocolVersion": STATELESS_ERA,
            "io.modelcontextprotocol/clientCapabilities": {}}}}
    return post(port, body, {"MCP-Protocol-Version": STATELESS_ERA,
                             "Mcp-Method": "tools/call", "Mcp-Name": tool})


class Instance:
    def __init__(self, name, workdir, logdir, extra=()):
        self.name = name
        self.log = open(logdir / f"{name}.log", "w+")
        token = ["--token", TOKEN] if TOKEN else []
        self.proc = subprocess.Popen(
            [BORIS, "--transport", "http", "--port", "0", "--workdir", str(workdir), *token,
             "--shutdown-grace", str(GRACE_S), "--log-format", "json", *extra],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.log)
        self.port = self.wait_for_port()

    def wait_for_port(self):
        deadline = time.time() + 30
        while time.time() < deadline:
            self.log.seek(0)
            for line in self.log.read().splitlines():
                m = re.search(r'"bound":"127\.0\.0\.1:(\d+)"', line)
                if m:
                    return int(m.group(1))
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError(f"{self.name} did not start (see {self.log.name})")


def haproxy_config(port, instances):
    servers = "\n".join(
        f"    server {i.name} 127.0.0.1:{i.port} check" for i in instances)
    template = (HERE / "haproxy.cfg").read_text()
    if os.environ.get("FLEET_BREAK") == "affinity":
        # The self-check: without stickiness the session checks must fail.
        template = re.sub(r"(?m)^\s*stick (match|store-response).*$", "", template)
    if os.environ.get("FLEET_BREAK") == "view-anywhere":
        # The self-check: a stateless view balanced round robin leaves its record elsewhere.
        template = template.replace("-m str grep glob", "-m str view grep glob")
    return template.replace("@PORT@", str(port)).replace("@SERVERS@", servers)


def wait_until(what, predicate, seconds=15):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            if predicate():
                return True
        except OSError:
            pass  # the proxy is not listening yet
        time.sleep(0.1)
    check(False, f"in time: {what}")
    return False


def session_goes_on(s, k):
    """Every piece of a live session's state is still there, on its own instance."""
    r = s.call("bash", {"command": "pwd"})
    check(r.status == 200 and r.text.strip().endswith(f"/d{k}") and r.served_by == s.home,
          f"{s.name} on {s.home}: bash cwd kept ({r.seen()})")
    # Its own edits keep the view record current, so no view between them.
    new = f"edit{s.edits}"
    r = s.call("str_replace", {"path": f"{s.work}/sessions/{k}.txt", "old_str": s.word, "new_str": new})
    s.edits, s.word = s.edits + 1, new
    check(r.status == 200 and not r.is_error, f"{s.name}: an edit on its view record ({r.seen()})")
    r = s.call("task_output", {"task_id": s.task, "block": False})
    check(r.status == 200 and not r.is_error and "running" in r.text,
          f"{s.name}: its background task runs ({r.seen()})")
    r = s.call("terminal_write", {"session_id": s.terminal, "text": f"echo again-{k}\n",
                                  "yield_time_ms": 500})
    check(r.status == 200 and f"again-{k}" in r.text, f"{s.name}: its terminal answers ({r.seen()})")


def session_is_gone(s, survivors):
    """A stopped instance's session: an error status, never a result from another instance."""
    for tool, args in [("bash", {"command": "pwd"}), ("view", {"path": "four.txt"})]:
        r = s.call(tool, args)
        no_result = r.message is None or "error" in r.message
        check(r.status in (404, 502, 503) and no_result,
              f"{s.name} (was on {s.home}) {tool}: {r.seen()}")
        check(r.served_by in survivors or not r.served_by,
              f"{s.name}: answered by a survivor or the proxy, not {s.home}")


def stateless_round(port, n, survivors):
    by = set()
    for _ in range(n):
        r = stateless(port, "glob", {"pattern": "*.txt"})
        ok = r.status == 200 and not r.is_error and "four.txt" in r.text
        check(ok, f"stateless glob: {r.seen()[:60]}") if not ok else None
        by.add(r.served_by)
    check(by == set(survivors), f"stateless glob x{n}: served by {sorted(by)} (round robin over {sorted(survivors)})")
    # view leaves the record the edit checks: both go to the same instance.
    name = f"stateless-{len(survivors)}.txt"
    # Written from outside: only the view can leave the record.
    (WORK / name).write_text("one\n")
    steps = [stateless(port, "view", {"path": name}),
             stateless(port, "str_replace", {"path": name, "old_str": "one", "new_str": "two"})]
    bad = [r.seen() for r in steps if r.status != 200 or r.is_error]
    check(not bad and len({r.served_by for r in steps}) == 1,
          f"stateless view, then edit: on {sorted({r.served_by for r in steps})} {bad}")
    homes = {stateless(port, "bash", {"command": "echo hi"}).served_by for _ in range(4)}
    check(len(homes) == 1 and homes <= set(survivors),
          f"stateless bash x4: all on one instance ({sorted(homes)})")


def main():
    tmp = Path(tempfile.mkdtemp(prefix="boris-fleet-"))
    global WORK
    work = WORK = tmp / "work"  # one workdir for all three (deploy/README.md says why)
    (work / "sessions").mkdir(parents=True)
    (work / "four.txt").write_text(("x" * 63 + "\n") * 64)
    instances = [Instance(f"b{i}", work, tmp) for i in (1, 2, 3)]
    port = free_port()
    cfg = tmp / "haproxy.cfg"
    cfg.write_text(haproxy_config(port, instances))
    proxy = subprocess.Popen([HAPROXY, "-db", "-f", str(cfg)], stdout=open(tmp / "haproxy.log", "w"),
                             stderr=subprocess.STDOUT)
    names = [i.name for i in instances]
    try:
        time.sleep(0.3)
        if proxy.poll() is not None:
            raise RuntimeError(f"haproxy did not start: {(tmp / 'haproxy.log').read_text()}")
        print(f"fleet: {', '.join(f'{i.name} :{i.port}' for i in instances)} behind HAProxy :{port}; logs in {tmp}")
        wait_until("the proxy sees all three ready",
                   lambda: {stateless(port, "glob", {"pattern": "*.txt"}).served_by
                            for _ in range(6)} == set(names))

        print("1. session-era sessions, each on the instance that answered its initialize")
        sessions = [Session(port, f"s{k}") for k in range(6)]
        check(sorted(s.home for s in sessions) == sorted(names * 2),
              f"six sessions spread two an instance: {[s.home for s in sessions]}")
        for k, s in enumerate(sessions):
            s.work, s.word, s.edits = work, "bye", 0
            steps = [
                s.call("create_file", {"path": f"sessions/{k}.txt", "content": f"hello {k}\n"}),
                s.call("view", {"path": f"sessions/{k}.txt"}),
                s.call("str_replace", {"path": f"sessions/{k}.txt", "old_str": "hello", "new_str": "bye"}),
                # From here on the session's cwd is d{k}: file paths are absolute.
                s.call("bash", {"command": f"mkdir -p d{k} && cd d{k}"}),
            ]
            r = s.call("bash", {"command": f"sleep 600.{k}", "run_in_background": True})
            s.task = (re.search(r"task_\d+", r.text) or [None])[0]
            steps.append(r)
            r = s.call("terminal_start", {"command": "bash --norc", "yield_time_ms": 300})
            s.terminal = (re.search(r"term_\d+", r.text) or [None])[0]
            steps.append(r)
            bad = [r.seen() for r in steps if r.status != 200 or r.is_error]
            check(not bad and s.task and s.terminal, f"{s.name}: files, edit, bash, task {s.task}, terminal {s.terminal} {bad}")
            check({r.served_by for r in steps} == {s.home}, f"{s.name}: every call on {s.home}")
        for k, s in enumerate(sessions):
            session_goes_on(s, k)

        print("2. stateless requests")
        stateless_round(port, 9, names)

        victim = instances[1]
        print(f"3. SIGTERM to {victim.name} while a call of its runs (grace {GRACE_S} s)")
        on_victim = [s for s in sessions if s.home == victim.name]
        late = {}
        t = threading.Thread(target=lambda: late.update(r=on_victim[0].call("bash", {"command": "sleep 2; echo finished-late"})))
        t.start()
        time.sleep(0.7)
        victim.proc.send_signal(signal.SIGTERM)
        time.sleep(0.3)
        r = post(victim.port, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": SESSION_ERA, "capabilities": {}, "clientInfo": {"name": "late", "version": "1"}}})
        check(r.status == 503 and "shutting down" in r.text, f"{victim.name} draining, a new session straight to it: {r.seen()}")
        t.join()
        check(late["r"].status == 200 and "finished-late" in late["r"].text,
              f"the running call finished within the grace: {late['r'].seen()}")
        check(victim.proc.wait(timeout=GRACE_S + 5) == 0, f"{victim.name} exited 0 after the drain")
        survivors = [i.name for i in instances if i.proc.poll() is None]
        for s in on_victim:
            session_is_gone(s, survivors)
        fresh = Session(port, "fresh")
        check(fresh.home in survivors, f"a new session through the proxy lands on {fresh.home}")
        for k, s in enumerate(sessions):
            if s.home != victim.name:
                session_goes_on(s, k)
        for k, s in enumerate(sessions):
            if s.home == victim.name:
                r = stateless(port, "grep", {"pattern": s.word, "path": f"sessions/{k}.txt",
                                                "output_mode": "content"})
                check(r.status == 200 and s.word in r.text,
                      f"{s.name}'s edit (made on {victim.name}) is on the shared disk: {r.seen()}")
        stateless_round(port, 6, survivors)

        crashed = instances[2]
        print(f"4. SIGKILL to {crashed.name} (a crash: no drain)")
        crashed.proc.kill()
        crashed.proc.wait()
        survivors = [instances[0].name]
        for s in sessions:
            if s.home == crashed.name:
                session_is_gone(s, survivors)
        for k, s in enumerate(sessions):
            if s.home == survivors[0]:
                session_goes_on(s, k)
        stateless_round(port, 4, survivors)
    finally:
        proxy.terminate()
        for i in instances:
            if i.proc.poll() is None:
                i.proc.terminate()
        for i in instances:
            try:
                i.proc.wait(timeout=GRACE_S + 5)
            except subprocess.TimeoutExpired:
                i.proc.kill()
        proxy.wait()
    if failures:
        print(f"fleet: {len(failures)} failed; logs in {tmp}")
        return 1
    subprocess.run(["rm", "-rf", str(tmp)])
    print("fleet: all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
