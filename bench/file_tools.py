#!/usr/bin/env python3
"""Side-by-side latency / memory benchmark of Boris's file tools against the reference
`@modelcontextprotocol/server-filesystem` MCP server.

Stdlib only (Python 3.11+). Both servers are driven by the same client code over raw stdio
JSON-RPC: one JSON object per line on stdin, responses read line by line from stdout until
the one with the matching id (notifications are skipped, server-to-client requests are
answered, stderr goes to a log file). See bench/README.md for what is measured and how.

Usage (bench/run.sh installs the reference server and builds Boris first):

    python3 bench/file_tools.py --boris target/release/boris \
        --ref-dir bench/.cache/reference/node_modules/@modelcontextprotocol/server-filesystem \
        [--calls 1000] [--spawns 20] [--warmup 50] [--only boris] [--out results.md]
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEFAULT_BORIS = REPO / "target" / "release" / "boris"
DEFAULT_REF_DIR = (
    HERE / ".cache" / "reference" / "node_modules" / "@modelcontextprotocol" / "server-filesystem"
)

PROTOCOL_VERSION = "2025-06-18"
FILE_SIZE = 4096
# The two tokens str_replace / edit_file flip between; each occurs exactly once in the
# edit file, and the filler text never contains either.
TOKEN_A = "alpha_7f3a"
TOKEN_B = "beta_7f3a"
# Marker on the last line of the view file: a result that contains it holds the whole file.
VIEW_MARKER = "END-OF-VIEW-FILE-c41d"

# Environment for the servers: telemetry / update checks off, nothing else changed.
QUIET_ENV = {
    "DO_NOT_TRACK": "1",
    "NO_UPDATE_NOTIFIER": "1",
    "npm_config_update_notifier": "false",
    "npm_config_fund": "false",
    "npm_config_audit": "false",
    "NEXT_TELEMETRY_DISABLED": "1",
    "RUST_BACKTRACE": "0",
}

BORIS = "boris"
REF = "server-filesystem"


# --------------------------------------------------------------------------- the client


class RpcError(Exception):
    pass


class Client:
    """One server process, spoken to over newline-delimited JSON-RPC on stdio.

    Exactly the same code path is used for both servers: requests are encoded before the
    clock starts, written with a single os.write, and the clock stops as soon as the line
    holding the matching response has been read (before it is parsed), so JSON decoding
    of a large result does not count against the server that sent it.
    """

    def __init__(self, argv: list[str], env: dict[str, str], stderr_path: Path, cwd: Path):
        self.argv = argv
        self.stderr_path = stderr_path
        self._stderr = open(stderr_path, "ab")
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=env,
            cwd=cwd,
            bufsize=-1,  # stdout: a BufferedReader, so readline() is one C call
        )
        self._in_fd = self.proc.stdin.fileno()
        self._out = self.proc.stdout
        self._next_id = 0
        self.notifications = 0
        self.server_requests = 0

    @property
    def pid(self) -> int:
        return self.proc.pid

    def encode(self, method: str, params: dict | None = None) -> tuple[int, bytes]:
        self._next_id += 1
        msg = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            msg["params"] = params
        return self._next_id, (json.dumps(msg, separators=(",", ":")) + "\n").encode()

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            n = os.write(self._in_fd, view)
            view = view[n:]

    def notify(self, method: str, params: dict | None = None) -> None:
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self._write((json.dumps(msg, separators=(",", ":")) + "\n").encode())

    def timed(self, rid: int, data: bytes) -> tuple[int, dict]:
        """Sends a pre-encoded request; returns (nanoseconds to the response line, message)."""
        t0 = time.perf_counter_ns()
        self._write(data)
        while True:
            line = self._out.readline()
            t1 = time.perf_counter_ns()
            if not line:
                raise RpcError(f"server closed stdout (exit {self.proc.poll()}); stderr: {self.stderr_tail()}")
            try:
                msg = json.loads(line)
            except json.JSONDecodeError:
                raise RpcError(f"non-JSON line on stdout: {line[:200]!r}")
            if "method" in msg:
                if "id" in msg:  # a request from the server (ping, roots/list, ...)
                    self.server_requests += 1
                    self._answer_server_request(msg)
                else:
                    self.notifications += 1
                continue
            if msg.get("id") == rid:
                return t1 - t0, msg
            # A response to something else: not expected, skip it.

    def call(self, method: str, params: dict | None = None) -> dict:
        rid, data = self.encode(method, params)
        _, msg = self.timed(rid, data)
        if "error" in msg:
            raise RpcError(f"{method}: JSON-RPC error {msg['error']}")
        return msg["result"]

    def _answer_server_request(self, msg: dict) -> None:
        if msg["method"] == "ping":
            reply = {"jsonrpc": "2.0", "id": msg["id"], "result": {}}
        else:
            reply = {
                "jsonrpc": "2.0",
                "id": msg["id"],
                "error": {"code": -32601, "message": "not supported by the benchmark client"},
            }
        self._write((json.dumps(reply) + "\n").encode())

    def stderr_tail(self, n: int = 2000) -> str:
        try:
            self._stderr.flush()
            return self.stderr_path.read_bytes()[-n:].decode(errors="replace")
        except OSError:
            return "?"

    def proc_status(self) -> dict[str, int]:
        """VmHWM / VmRSS (KiB) of the server process, from /proc/<pid>/status."""
        out = {}
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in ("VmHWM", "VmRSS", "Threads"):
                    out[key] = int(rest.split()[0])
        return out

    def close(self, timeout: float = 5.0) -> int | None:
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self.proc.stdout.close()
        self._stderr.close()
        return rc


def initialize_params() -> dict:
    # No `roots` capability: server-filesystem then uses its command-line directory.
    return {
        "protocolVersion": PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "boris-bench", "version": "1"},
    }


# --------------------------------------------------------------------------- servers


@dataclass
class ServerSpec:
    name: str
    argv: list[str]
    version: str
    read_tool: str = ""
    edit_tool: str = ""

    def read_args(self, path: str) -> dict:
        return {"path": path}

    def edit_args(self, path: str, old: str, new: str) -> dict:
        if self.name == BORIS:
            return {"path": path, "old_str": old, "new_str": new}
        return {"path": path, "edits": [{"oldText": old, "newText": new}]}


def boris_spec(binary: Path, workdir: Path) -> ServerSpec:
    if not binary.exists():
        sys.exit(f"error: {binary} not found; build it with `cargo build --release`")
    version = subprocess.run([str(binary), "--version"], capture_output=True, text=True).stdout.strip()
    argv = [str(binary), "--transport", "stdio", "--workdir", str(workdir), "--log-level", "warn"]
    return ServerSpec(BORIS, argv, version or "?", read_tool="view", edit_tool="str_replace")


def ref_spec(ref_dir: Path, node: str, workdir: Path) -> ServerSpec:
    pkg = ref_dir / "package.json"
    if not pkg.exists():
        sys.exit(f"error: {pkg} not found; run bench/run.sh (it installs the pinned package)")
    meta = json.loads(pkg.read_text())
    bin_field = meta.get("bin")
    entry = bin_field if isinstance(bin_field, str) else next(iter(bin_field.values()))
    # node is run directly (no npx / shell): the measured pid is the server itself.
    argv = [node, str(ref_dir / entry), str(workdir)]
    return ServerSpec(REF, argv, f"{meta['name']}@{meta['version']}")


def pick_tools(spec: ServerSpec, tools: list[dict]) -> None:
    """Checks the installed server's tools/list for the tools (and arguments) we call."""
    by_name = {t["name"]: t for t in tools}
    if spec.name == BORIS:
        for need in ("view", "str_replace"):
            if need not in by_name:
                sys.exit(f"error: boris has no {need!r} tool (has {sorted(by_name)})")
        return
    for cand in ("read_text_file", "read_file"):
        if cand in by_name:
            spec.read_tool = cand
            break
    else:
        sys.exit(f"error: server-filesystem has no read_text_file/read_file (has {sorted(by_name)})")
    if "edit_file" not in by_name:
        sys.exit(f"error: server-filesystem has no edit_file (has {sorted(by_name)})")
    props = by_name["edit_file"].get("inputSchema", {}).get("properties", {})
    item = props.get("edits", {}).get("items", {}).get("properties", {})
    if not {"oldText", "newText"} <= set(item):
        sys.exit(f"error: edit_file's edits items are not {{oldText,newText}}: {props}")
    spec.edit_tool = "edit_file"


# --------------------------------------------------------------------------- files


def make_text(size: int, token: str | None, marker: str | None) -> str:
    """Deterministic source-like ASCII text of exactly `size` bytes, ~55 lines."""
    lines = [
        f"    let value_{i:04d} = compute(\"item {i:04d}\", {i * 7 % 97}); // filler line\n"
        for i in range(size // 40)
    ]
    if token:
        lines[len(lines) // 4] = f"    let selected = \"{token}\"; // the line the benchmark edits\n"
    tail = f"// {marker}\n" if marker else "// end\n"
    body = ""
    for line in lines:
        if len(body) + len(line) + len(tail) + 8 > size:
            break
        body += line
    pad = size - len(body) - len(tail)  # ≥ 8: one comment line fills the gap exactly
    text = body + "//" + "-" * (pad - 3) + "\n" + tail
    assert len(text.encode()) == size, len(text)
    return text


@dataclass
class Files:
    """The temp tree both servers work on: one shared 4 KB view file, and one 4 KB edit file
    per server with identical content (the sessions run interleaved, so each server flips
    its own copy; the names have the same length)."""

    root: Path
    workdir: Path
    logs: Path
    view_file: Path
    edit_text: str = ""

    @classmethod
    def create(cls, base: str | None) -> "Files":
        root = Path(tempfile.mkdtemp(prefix="boris-bench-", dir=base)).resolve()
        workdir = root / "work"
        logs = root / "logs"
        workdir.mkdir()
        logs.mkdir()
        f = cls(root, workdir, logs, workdir / "view_4k.txt")
        f.view_file.write_text(make_text(FILE_SIZE, None, VIEW_MARKER))
        f.edit_text = make_text(FILE_SIZE, TOKEN_A, None)
        assert f.edit_text.count(TOKEN_A) == 1 and TOKEN_B not in f.edit_text
        return f

    def edit_file(self, server: str) -> Path:
        path = self.workdir / f"edit_4k_{server[0]}.txt"
        if not path.exists():
            path.write_text(self.edit_text)
        return path


# --------------------------------------------------------------------------- measurement


def pct(sorted_ns: list[int], p: float) -> float:
    """Nearest-rank percentile, in milliseconds."""
    if not sorted_ns:
        return float("nan")
    k = max(0, math.ceil(p / 100 * len(sorted_ns)) - 1)
    return sorted_ns[k] / 1e6


@dataclass
class Result:
    spec: ServerSpec
    spawn_ns: list[int] = field(default_factory=list)
    ping_ns: list[int] = field(default_factory=list)
    view_ns: list[int] = field(default_factory=list)
    edit_ns: list[int] = field(default_factory=list)
    status_after_init: dict = field(default_factory=dict)
    status_after_view: dict = field(default_factory=dict)
    status_after_edit: dict = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    error_count: int = 0
    edits_verified: int = 0
    edits_unverified: int = 0
    negotiated: str = ""
    server_info: dict = field(default_factory=dict)
    notifications: int = 0
    server_requests: int = 0
    exit_code: int | None = None

    def error(self, what: str) -> None:
        self.error_count += 1
        if len(self.errors) < 10:
            self.errors.append(what)


def start(spec: ServerSpec, files: Files, tag: str) -> Client:
    env = dict(os.environ)
    env.update(QUIET_ENV)
    return Client(spec.argv, env, files.logs / f"{spec.name}-{tag}.stderr", files.workdir)


def spawn_once(spec: ServerSpec, files: Files, res: Result | None) -> int:
    """Wall time from Popen to the parsed initialize result; the process is then closed."""
    params = initialize_params()
    t0 = time.perf_counter_ns()
    c = start(spec, files, "spawn")
    rid, data = c.encode("initialize", params)
    _, msg = c.timed(rid, data)
    t1 = time.perf_counter_ns()
    if "error" in msg or "serverInfo" not in msg.get("result", {}):
        if res is not None:
            res.error(f"initialize: {msg}")
    rc = c.close()
    if rc not in (0, None) and res is not None:
        res.error(f"exit code {rc} after a spawn trial; stderr: {c.stderr_tail(300)}")
    return t1 - t0


def result_text(msg: dict) -> tuple[bool, str]:
    """(is_error, concatenated text) of a tools/call response."""
    if "error" in msg:
        return True, f"JSON-RPC error {msg['error']}"
    r = msg.get("result", {})
    text = "".join(b.get("text", "") for b in r.get("content", []) if b.get("type") == "text")
    return bool(r.get("isError")), text


def tool_request(c: Client, tool: str, args: dict) -> tuple[int, bytes]:
    return c.encode("tools/call", {"name": tool, "arguments": args})


class Session:
    """One long-lived server process and the calls of phases 2–4 on it."""

    def __init__(self, spec: ServerSpec, files: Files, res: Result):
        self.spec, self.files, self.res = spec, files, res
        self.dead = False
        self.edit_path = files.edit_file(spec.name)
        self.edit_i = 0
        self.c = start(spec, files, "session")
        self._guard(self._init)

    def _guard(self, fn, *a) -> None:
        if self.dead:
            return
        try:
            fn(*a)
        except RpcError as e:
            self.res.error(f"session aborted: {e}")
            self.dead = True

    def _init(self) -> None:
        init = self.c.call("initialize", initialize_params())
        self.res.negotiated = init.get("protocolVersion", "?")
        self.res.server_info = init.get("serverInfo", {})
        self.c.notify("notifications/initialized")
        pick_tools(self.spec, self.c.call("tools/list").get("tools", []))
        self.res.status_after_init = self.c.proc_status()

    def status(self) -> dict:
        return {} if self.dead else self.c.proc_status()

    # ---- ping: the JSON-RPC round-trip floor (client + pipes + server framing)
    def pings(self, n: int, measure: bool) -> None:
        self._guard(self._pings, n, measure)

    def _pings(self, n: int, measure: bool) -> None:
        for _ in range(n):
            rid, data = self.c.encode("ping")
            ns, msg = self.c.timed(rid, data)
            if "error" in msg:
                self.res.error(f"ping: {msg['error']}")
            elif measure:
                self.res.ping_ns.append(ns)

    # ---- view / read_text_file of the shared 4 KB file
    def views(self, n: int, measure: bool) -> None:
        self._guard(self._views, n, measure)

    def _views(self, n: int, measure: bool) -> None:
        tool, args = self.spec.read_tool, self.spec.read_args(str(self.files.view_file))
        for _ in range(n):
            rid, data = tool_request(self.c, tool, args)
            ns, msg = self.c.timed(rid, data)
            is_err, text = result_text(msg)
            if is_err or VIEW_MARKER not in text:
                self.res.error(f"{tool}: {'error' if is_err else 'marker missing'}: {text[:300]}")
            elif measure:
                self.res.view_ns.append(ns)

    # ---- str_replace / edit_file flipping TOKEN_A <-> TOKEN_B in this server's copy
    def edit_setup(self) -> None:
        if self.spec.name == BORIS:  # view-before-edit (not timed)
            self._guard(self._views_edit_file)

    def _views_edit_file(self) -> None:
        _, msg = self.c.timed(*tool_request(self.c, "view", {"path": str(self.edit_path)}))
        is_err, text = result_text(msg)
        if is_err:
            self.res.error(f"view before edit: {text[:300]}")

    def edits(self, n: int, measure: bool) -> None:
        self._guard(self._edits, n, measure)

    def _edits(self, n: int, measure: bool) -> None:
        tool, path = self.spec.edit_tool, str(self.edit_path)
        for _ in range(n):
            old, new = (TOKEN_A, TOKEN_B) if self.edit_i % 2 == 0 else (TOKEN_B, TOKEN_A)
            self.edit_i += 1
            rid, data = tool_request(self.c, tool, self.spec.edit_args(path, old, new))
            ns, msg = self.c.timed(rid, data)
            is_err, text = result_text(msg)
            # Check that the call really changed the file (outside the timed region).
            on_disk = self.edit_path.read_text()
            expected = self.files.edit_text if new == TOKEN_A else self.files.edit_text.replace(TOKEN_A, TOKEN_B)
            if is_err:
                self.res.error(f"{tool} #{self.edit_i}: {text[:300]}")
            if on_disk != expected:
                self.res.edits_unverified += 1
                if not is_err:
                    self.res.error(f"{tool} #{self.edit_i}: the file does not hold the expected content")
            elif not is_err:
                self.res.edits_verified += 1
                if measure:
                    self.res.edit_ns.append(ns)

    def close(self) -> None:
        if not self.dead:
            self.res.notifications = self.c.notifications
            self.res.server_requests = self.c.server_requests
        self.res.exit_code = self.c.close()


def run_sessions(specs: list[ServerSpec], files: Files, results: dict[str, "Result"], calls: int, warmup: int, block: int) -> None:
    """Phases 2–4 with every server alive at once: each phase warms every server up, then
    runs the measured calls in blocks of `block`, alternating servers (and which goes
    first) block by block, so that background load drifts over both alike."""
    sessions = [Session(s, files, results[s.name]) for s in specs]
    try:

        def phase(op: str) -> None:
            for s in sessions:
                getattr(s, op)(warmup, False)
            done, k = 0, 0
            while done < calls:
                n = min(block, calls - done)
                order = sessions if k % 2 == 0 else sessions[::-1]
                for s in order:
                    getattr(s, op)(n, True)
                done, k = done + n, k + 1
                gc.collect()

        phase("pings")
        phase("views")
        for s in sessions:
            s.res.status_after_view = s.status()
            s.edit_setup()
        phase("edits")
        for s in sessions:
            s.res.status_after_edit = s.status()
    finally:
        for s in sessions:
            s.close()


# --------------------------------------------------------------------------- report


def machine_info() -> dict:
    cpu = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "?"
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    except OSError:
        pass
    return {
        "nproc": str(len(os.sched_getaffinity(0))),
        "cpu": cpu,
        "mem": mem,
        "kernel": f"{platform.system()} {platform.release()} {platform.machine()}",
        "load": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }


def sh(*argv: str, cwd: Path | None = None) -> str:
    try:
        return subprocess.run(argv, capture_output=True, text=True, cwd=cwd, timeout=10).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return "?"


def fs_type(path: Path) -> str:
    out = sh("df", "-T", str(path)).splitlines()
    return out[-1].split()[1] if len(out) >= 2 else "?"


def fmt(v: float | None, digits: int = 3) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    return f"{v:.{digits}f}"


def ratio(num: float | None, den: float | None) -> str:
    if not num or not den or math.isnan(num) or math.isnan(den):
        return "–"
    return f"{num / den:.2f}×"


def render(results: dict[str, Result], args, files: Files, node: str, load_at_start: str) -> tuple[str, list[str]]:
    b = results.get(BORIS)
    r = results.get(REF)
    rows: list[tuple[str, float | None, float | None, str, int]] = []

    def stat(res: Result | None, f):
        return f(res) if res is not None else None

    def time_row(label, f, digits=3):
        bv, rv = stat(b, f), stat(r, f)
        rows.append((label, bv, rv, ratio(rv, bv), digits))

    def mem_row(label, f):
        bv, rv = stat(b, f), stat(r, f)
        rows.append((label, bv, rv, ratio(bv, rv), 1))

    time_row("spawn → initialize result, median (ms)", lambda x: statistics.median(x.spawn_ns) / 1e6 if x.spawn_ns else None, 2)
    time_row("spawn → initialize result, min (ms)", lambda x: min(x.spawn_ns) / 1e6 if x.spawn_ns else None, 2)
    time_row("ping round trip p50 (ms) — transport floor, for reference", lambda x: pct(sorted(x.ping_ns), 50))
    for p in (50, 90, 99):
        time_row(f"view 4 KB p{p} (ms)", lambda x, p=p: pct(sorted(x.view_ns), p))
    for p in (50, 90, 99):
        time_row(f"str_replace 4 KB p{p} (ms)", lambda x, p=p: pct(sorted(x.edit_ns), p))
    mem_row("VmRSS after initialize (MiB)", lambda x: x.status_after_init.get("VmRSS", 0) / 1024 or None)
    mem_row(f"peak RSS VmHWM after {args.calls} views (MiB)", lambda x: x.status_after_view.get("VmHWM", 0) / 1024 or None)
    mem_row(f"peak RSS VmHWM after {args.calls} views + {args.calls} edits (MiB)", lambda x: x.status_after_edit.get("VmHWM", 0) / 1024 or None)
    mem_row("VmRSS at the end (MiB)", lambda x: x.status_after_edit.get("VmRSS", 0) / 1024 or None)

    lines = []
    lines.append("| metric | boris | server-filesystem | ratio |")
    lines.append("|---|---:|---:|---:|")
    for label, bv, rv, rt, d in rows:
        lines.append(f"| {label} | {fmt(bv, d)} | {fmt(rv, d)} | {rt} |")

    def count_row(label, f):
        lines.append(f"| {label} | {stat(b, f) if b else '–'} | {stat(r, f) if r else '–'} | |")

    count_row("errors (isError / JSON-RPC / unexpected content)", lambda x: x.error_count)
    count_row("edits verified on disk / not changed", lambda x: f"{x.edits_verified} / {x.edits_unverified}")
    count_row("read tool · edit tool", lambda x: f"`{x.spec.read_tool}` · `{x.spec.edit_tool}`")
    count_row("threads at the end", lambda x: x.status_after_edit.get("Threads", "?"))

    table = "\n".join(lines)

    # Targets (Boris only).
    targets = []
    if b is not None:
        checks = [
            ("spawn → initialize median ≤ 10 ms", statistics.median(b.spawn_ns) / 1e6 if b.spawn_ns else None, 10.0, "ms"),
            ("view p50 ≤ 0.25 ms", pct(sorted(b.view_ns), 50) if b.view_ns else None, 0.25, "ms"),
            ("peak RSS (VmHWM) ≤ 20 MiB", b.status_after_edit.get("VmHWM", 0) / 1024 or None, 20.0, "MiB"),
        ]
        for label, v, limit, unit in checks:
            if v is None:
                targets.append(f"- {label}: not measured")
            else:
                ok = v <= limit
                targets.append(f"- {'PASS' if ok else 'MISS'} — {label}: {v:.3f} {unit}")
        if b.error_count:
            targets.append(f"- MISS — boris returned {b.error_count} errors")

    mi = machine_info()
    cmd = " ".join(shlex.quote(a) for a in [sys.executable, *sys.argv])
    git = sh("git", "describe", "--always", "--dirty", "--abbrev=12", cwd=REPO)
    parts = [
        "## Boris vs server-filesystem: file tools over stdio",
        "",
        table,
        "",
        f"Ratios: times are server-filesystem / boris (how many times faster Boris is); memory is boris / server-filesystem. "
        f"{args.calls} measured calls per operation and server after {args.warmup} warm-up calls, on 4096-byte files; "
        f"latency = write of the request line → read of the response line, one call at a time, nearest-rank percentiles. "
        f"Both servers stay alive and take turns every {args.block} calls; {args.spawns} spawns per server, interleaved. "
        f"Peak RSS is /proc/<pid>/status VmHWM of the server process (node itself for server-filesystem).",
        "",
    ]
    if targets:
        parts += ["### Boris targets", "", *targets, ""]
    parts += [
        "### Run",
        "",
        f"- command: `{cmd}`",
        f"- boris: `{b.spec.version if b else '–'}` (git {git}) — `{' '.join(b.spec.argv) if b else '–'}`",
        f"- server-filesystem: `{r.spec.version if r else '–'}` on node {sh(node, '--version')} — `{' '.join(r.spec.argv) if r else '–'}`",
        f"- negotiated protocol: boris {b.negotiated if b else '–'}, server-filesystem {r.negotiated if r else '–'}",
        f"- python {platform.python_version()}; temp files on {fs_type(files.root)} ({files.root})",
        f"- machine: nproc {mi['nproc']}, CPU {mi['cpu']}, RAM {mi['mem']}, {mi['kernel']}",
        f"- load average (1/5/15 min) at start: {load_at_start}; at end: {mi['load']}",
        f"- date: {time.strftime('%Y-%m-%d %H:%M:%S %z')}",
    ]
    all_errors = [f"{n}: {e}" for n, res in results.items() for e in res.errors]
    return "\n".join(parts) + "\n", all_errors


# --------------------------------------------------------------------------- main


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=1000, help="measured calls per operation (default 1000)")
    ap.add_argument("--spawns", type=int, default=20, help="measured spawns per server (default 20)")
    ap.add_argument("--warmup", type=int, default=50, help="warm-up calls per operation (default 50)")
    ap.add_argument("--block", type=int, default=100, help="measured calls per server before switching to the other (default 100)")
    ap.add_argument("--only", choices=[BORIS, REF], help="benchmark one server only")
    ap.add_argument("--boris", type=Path, default=DEFAULT_BORIS, help="boris binary (default target/release/boris)")
    ap.add_argument("--ref-dir", type=Path, default=DEFAULT_REF_DIR, help="installed @modelcontextprotocol/server-filesystem package dir")
    ap.add_argument("--node", default=shutil.which("node") or "node", help="node binary")
    ap.add_argument("--tmp", default=None, help="where to create the temporary files (default: system temp dir)")
    ap.add_argument("--out", type=Path, help="also write the markdown report here")
    ap.add_argument("--json", type=Path, help="also write raw samples (ns) and /proc status here")
    ap.add_argument("--keep", action="store_true", help="keep the temp dir (server stderr logs are in it)")
    args = ap.parse_args()
    if args.calls < 1 or args.spawns < 1 or args.block < 1 or args.warmup < 0:
        ap.error("--calls, --spawns and --block must be ≥ 1, --warmup ≥ 0")

    load_at_start = machine_info()["load"]
    files = Files.create(args.tmp)
    specs: list[ServerSpec] = []
    if args.only in (None, BORIS):
        specs.append(boris_spec(args.boris.resolve(), files.workdir))
    if args.only in (None, REF):
        specs.append(ref_spec(args.ref_dir.resolve(), args.node, files.workdir))
    results = {s.name: Result(s) for s in specs}

    gc.disable()  # no collector pauses inside timed regions (same for both servers)
    try:
        # 1. spawn → initialize, interleaved so that drift hits both servers alike.
        for s in specs:
            for _ in range(2):  # page cache, dynamic loader, node's compile cache
                spawn_once(s, files, results[s.name])
        for i in range(args.spawns):
            for s in specs:
                results[s.name].spawn_ns.append(spawn_once(s, files, results[s.name]))
            gc.collect()
        print(f"spawns done: " + ", ".join(f"{n} median {statistics.median(r.spawn_ns)/1e6:.2f} ms" for n, r in results.items()), file=sys.stderr)

        # 2–4. long-lived sessions, run interleaved: pings, views, edits, /proc status.
        t = time.monotonic()
        run_sessions(specs, files, results, args.calls, args.warmup, args.block)
        print(f"sessions done in {time.monotonic() - t:.1f} s ("
              + ", ".join(f"{n}: {r.error_count} errors" for n, r in results.items()) + ")", file=sys.stderr)
    finally:
        gc.enable()

    report, errors = render(results, args, files, args.node, load_at_start)
    print(report)
    if errors:
        print(f"### Errors ({sum(r.error_count for r in results.values())}; first ones)\n", file=sys.stdout)
        for e in errors:
            print(f"- {e}")
        report += "\n### Errors (first ones)\n\n" + "\n".join(f"- {e}" for e in errors) + "\n"
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(report)
        print(f"report written to {args.out}", file=sys.stderr)
    if args.json:
        raw = {
            n: {
                "version": r.spec.version,
                "argv": r.spec.argv,
                "spawn_ns": r.spawn_ns,
                "ping_ns": r.ping_ns,
                "view_ns": r.view_ns,
                "edit_ns": r.edit_ns,
                "status_after_init": r.status_after_init,
                "status_after_view": r.status_after_view,
                "status_after_edit": r.status_after_edit,
                "errors": r.errors,
                "error_count": r.error_count,
            }
            for n, r in results.items()
        }
        args.json.write_text(json.dumps(raw))
    if args.keep:
        print(f"temp dir kept: {files.root}", file=sys.stderr)
    else:
        shutil.rmtree(files.root, ignore_errors=True)
    return 1 if any(r.error_count for r in results.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
