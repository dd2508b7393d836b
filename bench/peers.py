#!/usr/bin/env python3
"""Boris against peer MCP servers, in one run: `@modelcontextprotocol/server-filesystem`,
`@wonderwhy-er/desktop-commander` and `litecode` (Rust, Claude Code tool names), plus the
`rg` CLI for the two searches.

Stdlib only (Python 3.11+). Reuses bench/file_tools.py's raw JSON-RPC client, so every
server is driven by the same code path. bench/peers.sh installs the pinned servers, the
kernel corpus and builds Boris, then runs this script; see bench/README.md.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import file_tools as ft  # noqa: E402  (the shared client, file generator and helpers)
from search import RG_FLAGS, REGEX, GLOB  # noqa: E402  (same patterns as search.py)

HERE = ft.HERE
REPO = ft.REPO
BORIS, FS, DC, LC = "boris", "server-filesystem", "desktop-commander", "litecode"
ONE_MIB = 1 << 20
MIB_MARKER = "END-OF-MIB-FILE-9e2b"
CALL_TIMEOUT = 30.0  # seconds, any single request
SEARCH_TIMEOUT = 120.0  # seconds, one search (including desktop-commander's polling)


class Errors:
    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, server: str, what: str) -> None:
        self.items.append(f"{server}: {what}")
        if len(self.items) <= 20:
            print(f"  ERROR {server}: {what[:300]}", file=sys.stderr)


ERR = Errors()


class Watchdog:
    """One long-lived thread that kills a server whose call outlives its deadline. Arming
    and disarming only set two fields: no thread is started or woken per call, so the
    harness puts no extra work on the (2-core) machine while a call is being timed — a
    thread started per call did, and it slowed the fastest server most."""

    POLL = 0.05  # seconds between checks

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._until = 0.0
        threading.Thread(target=self._run, daemon=True).start()

    def arm(self, proc: subprocess.Popen, seconds: float) -> None:
        with self._lock:
            self._proc, self._until = proc, time.monotonic() + seconds

    def disarm(self) -> None:
        with self._lock:
            self._proc = None

    def _run(self) -> None:
        while True:
            time.sleep(self.POLL)
            with self._lock:
                proc = self._proc if self._proc is not None and time.monotonic() > self._until else None
                if proc is not None:
                    self._proc = None
            if proc is not None:
                proc.kill()


WATCHDOG = Watchdog()


@contextmanager
def deadline(c: ft.Client, seconds: float):
    """Kills the server if the block takes longer than `seconds`: the blocked readline then
    sees EOF and Client raises RpcError. Keeps every call bounded."""
    WATCHDOG.arm(c.proc, seconds)
    try:
        yield
    finally:
        WATCHDOG.disarm()


@dataclass
class Server:
    name: str
    argv: list[str]
    env: dict[str, str]
    version: str
    tools: dict[str, dict] = field(default_factory=dict)
    res: dict[str, object] = field(default_factory=dict)  # metric -> value (ms, calls/s, ...)
    notes: dict[str, str] = field(default_factory=dict)

    def start(self, logs: Path, cwd: Path, tag: str) -> ft.Client:
        return ft.Client(self.argv, self.env, logs / f"{self.name}-{tag}.stderr", cwd)


def base_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(ft.QUIET_ENV)
    return env


def call_tool(c: ft.Client, server: str, tool: str, args: dict, timeout: float = CALL_TIMEOUT) -> tuple[int, bool, str]:
    rid, data = ft.tool_request(c, tool, args)
    with deadline(c, timeout):
        ns, msg = c.timed(rid, data)
    is_err, text = ft.result_text(msg)
    return ns, is_err, text


def init(c: ft.Client) -> None:
    with deadline(c, CALL_TIMEOUT):
        r = c.call("initialize", ft.initialize_params())
    if "serverInfo" not in r:
        raise ft.RpcError(f"initialize: {r}")
    c.notify("notifications/initialized")


def p50(ns: list[int]) -> float | None:
    return statistics.median(ns) / 1e6 if ns else None


# --------------------------------------------------------------------------- per-server calls


def read_args(s: Server, path: Path) -> tuple[str, dict]:
    if s.name == BORIS:
        return "view", {"path": str(path)}
    if s.name == FS:
        return ("read_text_file" if "read_text_file" in s.tools else "read_file"), {"path": str(path)}
    if s.name == LC:
        # Its default page is 2000 lines; the 1 MiB file has 1,048.
        return "Read", {"file_path": str(path)}
    return "read_file", {"path": str(path), "offset": 0, "length": 10_000_000}


def range_args(s: Server, path: Path, which: str) -> tuple[str, dict]:
    """The first (`head`) or last (`tail`) 100 lines of the 100 MB file."""
    head = which == "head"
    if s.name == BORIS:
        r = [1, 100] if head else [-100, -1]
        return "view", {"path": str(path), "view_range": r}
    if s.name == FS:
        return ("read_text_file" if "read_text_file" in s.tools else "read_file"), {"path": str(path), ("head" if head else "tail"): 100}
    if s.name == LC:
        # `offset` is the 1-based line to start from.
        return "Read", {"file_path": str(path), "offset": 1 if head else BIG_LINES - 99, "limit": 100}
    return "read_file", {"path": str(path), "offset": 0 if head else -100, "length": 100}


def edit_args(s: Server, path: Path, old: str, new: str) -> tuple[str, dict]:
    if s.name == BORIS:
        return "str_replace", {"path": str(path), "old_str": old, "new_str": new}
    if s.name == FS:
        return "edit_file", {"path": str(path), "edits": [{"oldText": old, "newText": new}]}
    if s.name == LC:
        return "Edit", {"file_path": str(path), "old_string": old, "new_string": new}
    return "edit_block", {"file_path": str(path), "old_string": old, "new_string": new, "expected_replacements": 1}


def need_tools(s: Server) -> None:
    want = {BORIS: ["view", "str_replace", "grep", "glob"], FS: ["edit_file", "search_files"], DC: ["read_file", "edit_block", "start_search", "get_more_search_results"], LC: ["Read", "Edit", "Grep", "Glob"]}[s.name]
    missing = [t for t in want if t not in s.tools]
    if s.name == FS and not ({"read_text_file", "read_file"} & set(s.tools)):
        missing.append("read_text_file")
    if missing:
        raise SystemExit(f"error: {s.name} lacks {missing}; it has {sorted(s.tools)}")


# --------------------------------------------------------------------------- scenarios


def spawn_trials(s: Server, n: int, logs: Path, cwd: Path) -> None:
    times = []
    for i in range(n + 1):  # the first one warms the page cache, unmeasured
        t0 = time.perf_counter_ns()
        c = s.start(logs, cwd, "spawn")
        try:
            init(c)
            t1 = time.perf_counter_ns()
            if i:
                times.append(t1 - t0)
        except (ft.RpcError, OSError) as e:
            ERR.add(s.name, f"spawn: {e}")
        c.close()
    s.res["spawn"] = p50(times)


def pipelined_reads(c: ft.Client, tool: str, args: dict, total: int, inflight: int) -> tuple[float, int]:
    """`total` reads with `inflight` requests outstanding at a time; returns (calls/s, errors)."""
    reqs = [ft.tool_request(c, tool, args) for _ in range(total)]
    pending: set[int] = set()
    sent = done = errors = 0
    t0 = time.perf_counter_ns()
    with deadline(c, CALL_TIMEOUT * 4):
        while sent < min(inflight, total):
            c._write(reqs[sent][1]); pending.add(reqs[sent][0]); sent += 1
        while done < total:
            line = c._out.readline()
            if not line:
                raise ft.RpcError("server closed stdout during the pipelined reads")
            msg = json.loads(line)
            if "method" in msg or msg.get("id") not in pending:
                continue
            pending.discard(msg["id"]); done += 1
            if ft.result_text(msg)[0]:
                errors += 1
            if sent < total:
                c._write(reqs[sent][1]); pending.add(reqs[sent][0]); sent += 1
    secs = (time.perf_counter_ns() - t0) / 1e9
    return total / secs, errors


def file_scenario(s: Server, files: ft.Files, mib: Path, big: Path, args) -> None:
    c = s.start(files.logs, files.workdir, "files")
    try:
        init(c)
        with deadline(c, CALL_TIMEOUT):
            ns_list, msg = c.timed(*c.encode("tools/list", {}))
        s.tools = {t["name"]: t for t in msg["result"]["tools"]}
        s.res["tools/list"] = ns_list / 1e6
        s.res["tools"] = len(s.tools)
        need_tools(s)
        gc.disable()
        # 4 KB reads, sequential
        tool, a = read_args(s, files.view_file)
        times = []
        for i in range(args.warmup + args.reads):
            ns, bad, text = call_tool(c, s.name, tool, a)
            if bad or ft.VIEW_MARKER not in text:
                ERR.add(s.name, f"read 4 KB: {text[:200]}")
            elif i >= args.warmup:
                times.append(ns)
        s.res["read4k"] = p50(times)
        # 4 KB reads, 4 in flight
        rate, bad = pipelined_reads(c, tool, a, args.reads, 4)
        for _ in range(bad):
            ERR.add(s.name, "pipelined read returned isError")
        s.res["read4k_x4"] = rate
        # 1 MiB reads
        tool, a = read_args(s, mib)
        times = []
        for i in range(2 + args.mib_reads):
            ns, bad, text = call_tool(c, s.name, tool, a)
            if bad or MIB_MARKER not in text:
                ERR.add(s.name, f"read 1 MiB: no end marker (result {len(text)} chars): {text[:200]}")
            elif i >= 2:
                times.append(ns)
        s.res["read1m"] = p50(times)
        # first and last 100 lines of a 100 MB file; the first call of each is timed
        # apart (Boris builds its line index on the first tail)
        for key, which, marker in (("head100", "head", big_marker(100)), ("tail100", "tail", big_marker(BIG_LINES))):
            tool, a = range_args(s, big, which)
            times = []
            for i in range(1 + args.mib_reads):
                ns, bad, text = call_tool(c, s.name, tool, a)
                if bad or marker not in text or len(text) > 100 * 200:
                    ERR.add(s.name, f"read {which} of 100 MB: {len(text)} chars: {text[:200]}")
                elif i == 0:
                    s.res[key + "_first"] = ns / 1e6
                else:
                    times.append(ns)
            s.res[key] = p50(times)
        # unique edits, alternating A->B and B->A, each checked by reading the file back
        path = files.workdir / f"edit_4k_{s.name[:2]}.txt"
        path.write_text(files.edit_text)
        if s.name == BORIS:
            call_tool(c, s.name, "view", {"path": str(path)})  # Boris's view-before-edit rule
        if s.name == LC:
            call_tool(c, s.name, "Read", {"file_path": str(path)})  # its read-before-edit rule
        cur, times = files.edit_text, []
        for i in range(args.warmup + args.edits):
            old, new = (ft.TOKEN_A, ft.TOKEN_B) if ft.TOKEN_A in cur else (ft.TOKEN_B, ft.TOKEN_A)
            tool, a = edit_args(s, path, old, new)
            ns, bad, text = call_tool(c, s.name, tool, a)
            cur = cur.replace(old, new)
            if bad or path.read_text() != cur:
                ERR.add(s.name, f"edit {i}: {text[:200]}")
                cur = path.read_text()
            elif i >= args.warmup:
                times.append(ns)
        s.res["edit"] = p50(times)
        gc.enable()
        st = c.proc_status()
        s.res["hwm"] = st.get("VmHWM", 0) / 1024
    except (ft.RpcError, OSError, KeyError, json.JSONDecodeError) as e:
        ERR.add(s.name, f"file scenario aborted: {e}")
    finally:
        gc.enable()
        c.close()


def dc_search(c: ft.Client, args_: dict, timeout: float) -> tuple[int, int, str]:
    """desktop-commander searches asynchronously: start_search, then get_more_search_results
    until it says COMPLETED. Returns (ns from start to completion, results, last text)."""
    t0 = time.perf_counter_ns()
    _, bad, text = call_tool(c, DC, "start_search", args_, timeout)
    if bad:
        raise ft.RpcError(f"start_search: {text[:300]}")
    sid = next((ln.split(":", 1)[1].strip() for ln in text.splitlines() if "session" in ln.lower() and ":" in ln), None)
    if sid is None:
        raise ft.RpcError(f"no session id in: {text[:300]}")
    sid = sid.strip("` ")
    complete = "Search completed" in text or "COMPLETED" in text
    offset = 0
    count = 0
    while not complete:
        if (time.perf_counter_ns() - t0) / 1e9 > timeout:
            raise ft.RpcError("search timed out")
        time.sleep(0.005)
        _, bad, text = call_tool(c, DC, "get_more_search_results", {"sessionId": sid, "offset": 0, "length": 1}, timeout)
        if bad:
            raise ft.RpcError(f"get_more_search_results: {text[:300]}")
        complete = "COMPLETED" in text or "Search completed" in text
    ns = time.perf_counter_ns() - t0
    # Untimed: the total result count.
    _, _, text = call_tool(c, DC, "get_more_search_results", {"sessionId": sid, "offset": 0, "length": 1}, timeout)
    for ln in text.splitlines():
        low = ln.lower()
        if "total" in low and any(ch.isdigit() for ch in ln):
            digits = "".join(ch if ch.isdigit() else " " for ch in ln).split()
            count = int(digits[0]) if digits else 0
            break
    return ns, count, text


def search_request(s: Server, kind: str, root: Path) -> tuple[str, dict] | None:
    if s.name == BORIS:
        if kind == "grep":
            return "grep", {"pattern": REGEX, "path": str(root), "output_mode": "content"}
        return "glob", {"pattern": f"**/{GLOB}", "path": str(root)}
    if s.name == FS:
        if kind == "grep":
            return None
        return "search_files", {"path": str(root), "pattern": f"**/{GLOB}"}
    if s.name == LC:
        if kind == "grep":
            return "Grep", {"pattern": REGEX, "path": str(root), "output_mode": "content"}
        return "Glob", {"pattern": f"**/{GLOB}", "path": str(root)}
    if kind == "grep":
        return "start_search", {"path": str(root), "pattern": REGEX, "searchType": "content", "ignoreCase": False, "contextLines": 0, "maxResults": 1_000_000}
    return "start_search", {"path": str(root), "pattern": GLOB, "searchType": "files", "ignoreCase": False, "maxResults": 1_000_000}


def count_lines(s: Server, kind: str, text: str) -> int:
    if s.name == LC:  # JSON: {"filenames": [...]} / {"content": "path:line:text\n..."}
        d = json.loads(text)
        if kind == "glob":
            return len(d.get("filenames", []))
        return sum(1 for ln in d.get("content", "").splitlines() if ln.strip())
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if s.name == BORIS and kind == "grep":  # its header; the listed lines may be capped
        import re
        m = re.match(r"Found (\d+) matching lines?\b", text)
        return int(m.group(1)) if m else sum(1 for ln in lines if ":" in ln)
    return sum(1 for ln in lines if GLOB.lstrip("*") in ln)


def search_scenario(s: Server, corpus: Path, logs: Path, runs: int) -> None:
    for kind in ("grep", "glob"):
        req = search_request(s, kind, corpus)
        if req is None:
            s.notes[kind] = "n/a (no content-search tool)"
            continue
        if s.name == BORIS:  # Boris only reaches its --workdir: root it at the corpus
            argv = list(s.argv)
            argv[argv.index("--workdir") + 1] = str(corpus)
            c = ft.Client(argv, s.env, logs / f"{s.name}-search-{kind}.stderr", corpus)
        else:
            c = s.start(logs, corpus, f"search-{kind}")
        try:
            init(c)
            times, count = [], None
            for i in range(runs + 1):  # first run warms the page cache / server
                if s.name == DC:
                    ns, count, _ = dc_search(c, req[1], SEARCH_TIMEOUT)
                else:
                    ns, bad, text = call_tool(c, s.name, req[0], req[1], SEARCH_TIMEOUT)
                    if bad:
                        raise ft.RpcError(f"{req[0]}: {text[:300]}")
                    count = count_lines(s, kind, text)
                if i:
                    times.append(ns)
            s.res[kind] = p50(times)
            s.res[kind + "_n"] = count
        except (ft.RpcError, OSError, StopIteration) as e:
            ERR.add(s.name, f"{kind} search: {e}")
            s.notes[kind] = f"failed ({str(e)[:80]})"
        finally:
            c.close()


def rg_runs(rg: str, corpus: Path, runs: int) -> dict:
    out = {}
    for kind, extra in (("grep", ["-n", REGEX]), ("glob", ["--files", "-g", GLOB])):
        times, n = [], 0
        for i in range(runs + 1):
            t0 = time.perf_counter_ns()
            p = subprocess.run([rg, *RG_FLAGS, *extra], cwd=corpus, capture_output=True, timeout=SEARCH_TIMEOUT)
            t1 = time.perf_counter_ns()
            if p.returncode not in (0, 1):
                ERR.add("rg", p.stderr.decode(errors="replace")[:200])
            n = p.stdout.count(b"\n")
            if i:
                times.append(t1 - t0)
        out[kind], out[kind + "_n"] = p50(times), n
    return out


# --------------------------------------------------------------------------- report


def mib_text() -> str:
    line = "x" * 1000 + "\n"
    body = line * (ONE_MIB // len(line) - 1)
    tail = f"// {MIB_MARKER}\n"
    pad = ONE_MIB - len(body) - len(tail)
    return body + "/" * (pad - 1) + "\n" + tail


BIG_LINES = 1_200_000  # lines of the 100 MB file, 85 bytes each


def big_marker(n: int) -> str:
    return f"L{n:08d}|"


def write_big(path: Path) -> None:
    """1.2M numbered lines of 85 bytes: 102,000,000 bytes."""
    pad = "y" * (85 - len(big_marker(0)) - 1)
    with path.open("w") as f:
        for start in range(1, BIG_LINES + 1, 10_000):
            f.write("".join(f"{big_marker(n)}{pad}\n" for n in range(start, min(start + 10_000, BIG_LINES + 1))))


def fmt_ms(v) -> str:
    return "n/a" if v is None else (f"{v:.3f} ms" if v < 10 else f"{v:.0f} ms")


def replay_peers(args) -> list[str]:
    """edit_replay.py's optional peers: the installed litecode and server-filesystem."""
    extra = []
    if Path(args.lc_bin).exists():
        extra += ["--litecode", args.lc_bin]
    if (Path(args.fs_dir) / "package.json").exists():
        extra += ["--fs-dir", args.fs_dir, "--node", args.node]
    return extra


def boris_edit_reports(args) -> str:
    """Boris alone, same run: the peak RSS of a str_replace on a 10 MiB file
    (bench/edit_memory.py) and where a 4 KB edit's system-call time goes
    (bench/edit_split.py, when strace is installed)."""
    parts = []
    runs = [
        ("edit_memory.py", [], "Peak RSS of one `str_replace` on a 10 MiB file"),
        ("edit_replay.py", replay_peers(args), "The real-edit replay: this repository's history through str_replace and multi_edit, against litecode and server-filesystem"),
    ]
    if shutil.which("strace"):
        runs.append(("edit_split.py", ["--edits", str(args.edits)], "Where a 4 KB edit's time goes"))
    for script, extra, title in runs:
        print(f"peers: boris: {script}", file=sys.stderr)
        p = subprocess.run([sys.executable, str(HERE / script), "--boris", args.boris, *extra], capture_output=True, text=True, timeout=600)
        if p.returncode != 0:
            ERR.add(BORIS, f"{script}: {p.stderr.strip()[-300:]}")
            continue
        parts.append(f"### {title} (`bench/{script}`)\n\n{p.stdout.strip()}\n")
    return "\n".join(parts)


def keep_other_sections(md: str, old_path: Path) -> str:
    """The `## ` sections of the file being replaced that this script does not write
    (other benchmarks' figures: the sandbox's, the CRLF replay's) are kept, before
    "## What was run"."""
    if not old_path.exists():
        return md
    def sections(text: str) -> list[str]:
        parts = text.split("\n## ")
        return ["## " + p for p in parts[1:]]
    title = lambda sec: sec.split("\n", 1)[0]
    ours = {title(sec) for sec in sections(md)}
    kept = [sec.rstrip("\n") + "\n\n" for sec in sections(old_path.read_text()) if title(sec) not in ours]
    if not kept:
        return md
    anchor = "\n## What was run"
    at = md.find(anchor)
    if at < 0:
        return md.rstrip("\n") + "\n\n" + "".join(kept)
    return md[: at + 1] + "".join(kept) + md[at + 1 :]


def boris_floor_reports(args) -> str:
    """Boris alone, same run, against floors (issue 21): views of a 100 MB file against a
    4 KB view and `wc -l` (bench/view.py), and 1 GB of command output against the same
    pipe into a file (bench/bash.py)."""
    parts = []
    runs = [
        ("view.py", [], "Views of a 100 MB file against a 4 KB view and `wc -l`"),
        ("bash.py", [], "The bash tool against a raw spawn, and 1 GB of output against the same pipe into a file"),
    ]
    for script, extra, title in runs:
        print(f"peers: boris: {script}", file=sys.stderr)
        p = subprocess.run([sys.executable, str(HERE / script), "--boris", args.boris, *extra], capture_output=True, text=True, timeout=900)
        if p.returncode != 0:
            ERR.add(BORIS, f"{script}: {p.stderr.strip()[-300:]}")
            continue
        out = p.stdout.strip()
        if out.startswith("# "):  # the script's own title: this section has one
            out = out.split("\n", 1)[-1].strip()
        parts.append(f"### {title} (`bench/{script}`)\n\n{out}\n")
    return "\n".join(parts)


def render(servers: list[Server], rgres: dict, args, corpus: Path, cmd: str, wall: float, extra: str = "",
           floors: str = "") -> str:
    b = {s.name: s for s in servers}.get(BORIS)
    rows = [
        ("spawn → initialize (median of %d)" % args.spawns, "spawn", "ms"),
        ("tools/list (one call)", "tools/list", "ms"),
        ("read 4 KB, sequential (p50 of %d)" % args.reads, "read4k", "ms"),
        ("read 4 KB, 4 in flight (%d calls)" % args.reads, "read4k_x4", "rate"),
        ("read 1 MiB (p50 of %d)" % args.mib_reads, "read1m", "ms"),
        ("read lines 1–100 of 100 MB (p50 of %d)" % args.mib_reads, "head100", "ms"),
        ("read the last 100 lines of 100 MB (p50 of %d)" % args.mib_reads, "tail100", "ms"),
        ("… the first such call (Boris builds its line index)", "tail100_first", "ms"),
        ("unique edit 4 KB (p50 of %d)" % args.edits, "edit", "ms"),
        (f"regex content search `{REGEX}` (median of {args.search_runs})", "grep", "ms"),
        (f"file-name search `{GLOB}` (median of {args.search_runs})", "glob", "ms"),
        ("peak RSS (VmHWM) after the file scenario", "hwm", "mib"),
    ]
    head = "| metric | " + " | ".join(s.name for s in servers) + " | rg |"
    lines = [head, "|---|" + "---:|" * (len(servers) + 1)]
    for label, key, unit in rows:
        cells = []
        for s in servers:
            v = s.res.get(key)
            if v is None:
                cells.append(s.notes.get(key, "n/a"))
                continue
            if unit == "ms":
                cell = fmt_ms(v)
            elif unit == "rate":
                cell = f"{v:,.0f} calls/s"
            else:
                cell = f"{v:.1f} MiB"
            if s is not b and b is not None and b.res.get(key):
                r = v / b.res[key] if unit != "rate" else b.res[key] / v
                cell += f" ({r:.2f}×)"
            if key in ("grep", "glob") and s.res.get(key + "_n") is not None:
                cell += f", {s.res[key + '_n']} results"
            cells.append(cell)
        if key in ("grep", "glob"):
            rv = rgres.get(key)
            rcell = fmt_ms(rv) + (f" ({rv / b.res[key]:.2f}×)" if b and b.res.get(key) else "") + f", {rgres.get(key + '_n')} results"
        else:
            rcell = "–"
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {rcell} |")
    table = "\n".join(lines)
    mi = ft.machine_info()
    def shown_path(p: Path) -> str:
        """Relative to the repository when inside it: no machine's paths in the report."""
        try:
            return str(p.resolve().relative_to(REPO))
        except ValueError:
            return p.name

    git = ft.sh("git", "rev-parse", "--short", "HEAD", cwd=REPO)
    dirty = " (dirty tree)" if ft.sh("git", "status", "--porcelain", "--untracked-files=no", cwd=REPO) else ""
    rgv = ft.sh(args.rg, "--version").splitlines()[0] if shutil.which(args.rg) else "?"
    nodev = ft.sh(args.node, "--version")
    errs = ERR.items
    status = (f"**This run had {len(errs)} error(s); figures next to them may be incomplete:**\n\n" + "\n".join(f"- {e[:300]}" for e in errs[:20]) + "\n") if errs else "No errors: every call succeeded, every read held its end marker and every edit left the expected file.\n"
    return f"""# Benchmarks: Boris against peer MCP servers

Generated by `bench/peers.sh` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} (whole run {wall:.0f} s).
This file is overwritten by each run; numbers are from one shared, noisy machine — compare
the ratios within this run, not absolute figures across machines.

{status}
Ratios in parentheses are **peer / boris** for times (above 1 = Boris faster) and for
memory, and **boris / peer** for calls/s (above 1 = Boris faster). `rg` is the ripgrep CLI
(`{' '.join(RG_FLAGS)}`), spawned per search, for scale.

{table}

## Boris's edits: memory and time

{extra or "(not run)"}
The memory goal (issue 14) is a peak of at most the file size × 2 + 16 MiB. The split is
measured under `strace -f -T`, which slows every system call: read it as shares of an
edit, not as absolute times; the fsync is the one step kept on purpose (durability).
Issue 14 took five system calls out of each edit (a second stat of the target, the
statx + lseek size probe of `File::read_to_end`, the chmod of a temp file now created
with its final mode, a getpid per edit): 14 remain on this path, of which three are the
scope check's `readlink`s (not counted in the table), one the read's end-of-file probe,
and the rest the temp-file protocol (create, write, chown, fsync, rename, close).

## Boris against its floors: views and command output

{floors or "(not run)"}
## What was run

```
{cmd}
```

- Servers: {', '.join(f'`{s.name}` {s.version} ({s.res.get("tools", "?")} tools)' for s in servers)}; {rgv}; node {nodev}.
- Boris: `{shown_path(Path(args.boris))}` at git {git}{dirty}.
- Machine: {mi['nproc']} CPUs ({mi['cpu']}), {mi['mem']}, {mi['kernel']}; load at end {mi['load']}; temp files on {ft.fs_type(Path(tempfile.gettempdir()))}.
- Search corpus: `{corpus.name}` (the Debian `linux-source` kernel tree, full tree, not only `drivers/`).

## What each row means

- Each server runs as its own process (node runs `dist/index.js` directly, no npx), driven
  over raw stdio JSON-RPC by the client in `bench/file_tools.py`. The servers run one after
  another (not interleaved as in `file_tools.py`); every call has a timeout ({CALL_TIMEOUT:.0f} s,
  searches {SEARCH_TIMEOUT:.0f} s) after which the server is killed and the call counted as an error.
- spawn → initialize: wall time from `Popen` to the `initialize` response, after one unmeasured spawn.
- Reads: Boris `view`, server-filesystem `read_text_file`, desktop-commander `read_file`
  (`offset 0`, `length 10000000`, and `fileReadLineLimit` raised in its config, so it returns
  the whole file). Each result must contain the marker on the file's last line. The 1 MiB file
  is 1,048 lines of 1,000 bytes, under Boris's 2,000-line view page. {args.warmup} unmeasured warm-up
  calls precede the 4 KB reads and the edits. "4 in flight" keeps 4 requests outstanding on the
  one session and reports completed calls per second.
- 100 MB reads: 1,200,000 numbered lines of 85 bytes (over Boris's 10 MB `--max-file-size`,
  so it cannot be edited and its view is never hashed). Boris `view` with `view_range`
  `[1, 100]` and `[-100, -1]` (the last 100 lines); server-filesystem `read_text_file` with `head: 100` /
  `tail: 100`; desktop-commander `read_file` with `offset 0` / `offset -100`, `length 100`.
  Each result must hold the marker of line 100 / line 1,200,000. One call of each
  precedes the p50 samples, and the tail's is shown on its own row: Boris counts the
  file's lines into its cached line index then. The file is at least 2.2 s old when the
  reads start (Boris's racy-timestamp window, DEC-5 in docs/decisions.md).
- Edits: Boris `str_replace`, server-filesystem `edit_file`, desktop-commander `edit_block`;
  alternating `{ft.TOKEN_A} → {ft.TOKEN_B}` and back, so every call changes the file, each checked by
  reading the file back (untimed). Boris fsyncs; the others do not.
- Regex content search: Boris `grep` (content mode), desktop-commander `start_search`
  (`searchType: content`, `contextLines: 0`, case-sensitive) polled with
  `get_more_search_results` every 5 ms until it reports COMPLETED (its search runs the system
  `rg`, because `npm ci --ignore-scripts` skips `@vscode/ripgrep`'s binary download);
  server-filesystem has no content-search tool (n/a). The result counts are as each tool
  reports them (Boris: the total in its `Found N matching lines` header; the lines it
  lists may be capped, so it can return less text than the others); the tools differ in ignore-file and hidden-file defaults.
- Boris's search session runs with `--workdir` set to the corpus (it only reaches its
  working directory).
- File-name search: Boris `glob **/{GLOB}`, server-filesystem `search_files` (pattern
  `**/{GLOB}`, its own JS directory walk), desktop-commander `start_search` (`searchType: files`,
  pattern `{GLOB}`).
- litecode 0.1.2 (`cargo install --locked`, run as `litecode --cwd <temp dir>`) is driven
  with its own tools: `Read` (`file_path`, and `offset` = 1-based first line + `limit` for
  the 100 MB rows), `Edit` after one `Read` (its read-before-edit rule), `Grep`
  (`output_mode: content`) and `Glob` (`**/*_test.c`); its results are JSON, counted from
  `content` lines / `filenames`. Its `Glob` returns at most 100 names (its own cap, no
  argument raises it). It logs at INFO to stderr by default, as shipped.
- Peak RSS: `VmHWM` from `/proc/<pid>/status` of the server process after the file scenario.
- desktop-commander runs with `DESKTOP_COMMANDER_DISABLE_TELEMETRY=1` and a private `HOME`
  whose `~/.claude-server-commander/config.json` has `"telemetryEnabled": false`; all servers
  get `DO_NOT_TRACK=1` and the npm update/fund/audit switches off.

## How to reproduce

```sh
cargo build --release --bin boris     # peers.sh also does this
bench/peers.sh                        # installs pinned peers (bench/reference, bench/peers), rg + kernel corpus, runs, writes BENCHMARKS.md
bench/peers.sh --reads 200 --search-runs 1   # quicker
```

Pinned versions: `bench/reference/package-lock.json` (server-filesystem) and
`bench/peers/package-lock.json` (desktop-commander). Installed into `bench/.cache/` with
`npm ci --ignore-scripts`.
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boris", default=str(ft.DEFAULT_BORIS))
    ap.add_argument("--fs-dir", default=str(ft.DEFAULT_REF_DIR))
    ap.add_argument("--dc-dir", default=str(HERE / ".cache" / "peers" / "node_modules" / "@wonderwhy-er" / "desktop-commander"))
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--node", default=shutil.which("node") or "node")
    ap.add_argument("--rg", default=shutil.which("rg") or "rg")
    ap.add_argument("--spawns", type=int, default=10)
    ap.add_argument("--reads", type=int, default=500)
    ap.add_argument("--mib-reads", type=int, default=20)
    ap.add_argument("--edits", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--search-runs", type=int, default=3)
    ap.add_argument("--lc-bin", default=str(HERE / ".cache" / "litecode" / "bin" / "litecode"))
    ap.add_argument("--only", action="append", choices=[BORIS, FS, DC, LC])
    ap.add_argument("--out", default=str(REPO / "BENCHMARKS.md"))
    ap.add_argument("--tmp", default=None)
    args = ap.parse_args()
    # A relative binary path names the file from here: the server starts in a temp dir.
    args.boris = type(args.boris)(os.path.abspath(args.boris))
    t_start = time.time()
    corpus = Path(args.corpus).resolve()
    files = ft.Files.create(args.tmp)
    mib = files.workdir / "read_1m.txt"
    mib.write_text(mib_text())
    assert mib.stat().st_size == ONE_MIB
    big = files.workdir / "big_100m.txt"
    write_big(big)
    assert big.stat().st_size == BIG_LINES * 85
    # A file an agent reads has usually not been written within the last 2 s: past that
    # window Boris trusts its stamp (no hash, a cached line index).
    time.sleep(max(0.0, 2.2 - (time.time() - big.stat().st_mtime)))

    servers: list[Server] = []
    want = set(args.only or [BORIS, FS, DC, LC])
    if BORIS in want:
        b = ft.boris_spec(Path(args.boris), files.workdir)
        servers.append(Server(BORIS, b.argv, base_env(), b.version))
    if FS in want:
        # Allowed directories: the temp tree and the corpus.
        r = ft.ref_spec(Path(args.fs_dir), args.node, files.workdir)
        servers.append(Server(FS, r.argv + [str(corpus)], base_env(), r.version))
    if DC in want:
        pkg = Path(args.dc_dir) / "package.json"
        if not pkg.exists():
            sys.exit(f"error: {pkg} not found; run bench/peers.sh (it installs the pinned package)")
        meta = json.loads(pkg.read_text())
        home = files.root / "dc-home"
        (home / ".claude-server-commander").mkdir(parents=True)
        (home / ".claude-server-commander" / "config.json").write_text(json.dumps({
            "telemetryEnabled": False,
            "allowedDirectories": [str(files.workdir), str(corpus)],
            "fileReadLineLimit": 10_000_000,
            "fileWriteLineLimit": 10_000,
            "pendingWelcomeOnboarding": False,
            "welcomeOnboardingEligible": False,
        }))
        env = base_env()
        env.update({"HOME": str(home), "DESKTOP_COMMANDER_DISABLE_TELEMETRY": "1"})
        servers.append(Server(DC, [args.node, str(Path(args.dc_dir) / meta["bin"]["desktop-commander"])], env, f"{meta['name']}@{meta['version']}"))

    if LC in want:
        lc = Path(args.lc_bin)
        if not lc.exists():
            sys.exit(f"error: {lc} not found; run bench/peers.sh (it installs the pinned crate)")
        version = ft.sh(str(lc), "--version").strip().replace(" ", "@")
        servers.append(Server(LC, [str(lc), "--cwd", str(files.workdir)], base_env(), version))

    for s in servers:
        print(f"peers: {s.name}: spawn ×{args.spawns}", file=sys.stderr)
        spawn_trials(s, args.spawns, files.logs, files.workdir)
        print(f"peers: {s.name}: file scenario", file=sys.stderr)
        file_scenario(s, files, mib, big, args)
        print(f"peers: {s.name}: searches on {corpus}", file=sys.stderr)
        search_scenario(s, corpus, files.logs, args.search_runs)
    print("peers: rg", file=sys.stderr)
    rgres = rg_runs(args.rg, corpus, args.search_runs)

    extra = boris_edit_reports(args) if BORIS in want else ""
    floors = boris_floor_reports(args) if BORIS in want else ""

    cmd = " ".join([sys.executable.rsplit("/", 1)[-1], "bench/peers.py", *sys.argv[1:]])
    cmd = os.environ.get("PEERS_CMD", cmd)
    md = render(servers, rgres, args, corpus, cmd, time.time() - t_start, extra, floors)
    md = keep_other_sections(md, Path(args.out))
    Path(args.out).write_text(md)
    print(md)
    print(f"peers: wrote {args.out}; {len(ERR.items)} error(s); logs in {files.logs}", file=sys.stderr)
    return 1 if ERR.items else 0


if __name__ == "__main__":
    sys.exit(main())
