#!/usr/bin/env python3
"""The real-edit replay (issue 15 §2, §3): the changes of a git history, replayed
through Boris's str_replace and multi_edit, through Boris's Claude Code profile (Edit,
MultiEdit) and, when given, through litecode and server-filesystem; checked byte for byte,
with the time and the characters of each edit call.

For each commit (newest first) and each text file it modified (UTF-8, at most
--max-bytes before and after), the change is split into hunks (difflib, no context). Each
hunk becomes one edit whose old text is the hunk's old lines, grown by one line of
context at a time (above, then below) until it is unique in the file as it is at that
point; hunks are applied bottom-up, so every old text is read from the file as the edits
before it left it (which also makes the list a valid all-hunks-in-one-call list). Every
server (the table in server_table: start command, read call, one-hunk edit call,
all-hunks edit call) gets the same files and hunks, each in its own work directory:

- one call per hunk: the parent version is written, read once (litecode and Boris's
  Claude Code profile refuse an edit of a file not read), and every hunk is applied with
  its own call;
- all hunks in one call: the parent version again, read, one call with every hunk
  (server-filesystem's edit_file takes a list; litecode offers no MultiEdit).

The file must then equal the commit's version byte for byte; a server that normalises the
file is reported as it is, never matched loosely. For Boris's default profile each
str_replace is first made with dry_run: true, so the two result forms of issue 15 §3 are
Boris's own: the numbered snippet it returned before (rebuilt by `snippet`) and the
unified diff (the dry run's diff, under the one-line header a diff result has: "Edited
PATH: replaced 1 occurrence at line N.").

As a model writes (--as-model, issue 21 §1): a model reads files through a view that
hides CRs, so every old text and new text is sent with `\n` line breaks only, and it
writes short edits. The hunks are taken from the file as the view shows it (`\r\n` read as
`\n`); each old text is the hunk's old lines with --context lines either side (0: the
lines alone), grown one line at a time (above, then below) only while it is not unique
(or is empty: an insertion takes the line above it, or below at the top of the file), and
without the line break at its end when the new text ends in one too (a model writes
`foo`, not `foo\n`). Such an old text is one line with no line break, or begins with
`\n` when its first line is blank. The report counts, over the CRLF files (every line
break of the parent and of the commit is `\r\n`), those that end byte-exact, with mixed
line endings (both `\n` and `\r\n` where the commit has one kind), and with a stray CR (a
`\r` not followed by `\n` that the commit does not have). A file with CRs that is not a
CRLF file (the commit changes line endings, or a version mixes them) cannot be written
by a model that sees no CR: it is replayed, and its miss is not a bug. --suffixes widens
the file set (a comma-separated list of suffixes, or `*` for every file that is UTF-8
text).

Usage: python3 bench/edit_replay.py --boris target/release/boris [--repo .] [--rev HEAD]
       [--commits 200] [--litecode BIN] [--fs-dir DIR]
       [--as-model [--context N]] [--suffixes .cpp,.h,...|*]
Exit status 1 when any Boris mode is not byte-exact (a bug); peers' misses are reported,
not fatal. Stdlib only; reuses bench/file_tools.py's JSON-RPC client.
"""

from __future__ import annotations

import argparse
import difflib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
import file_tools as ft  # noqa: E402

TEXT_SUFFIXES = {".rs", ".py", ".md", ".yaml", ".yml", ".toml", ".sh", ".mjs", ".js", ".ts", ".json", ".txt"}


def git(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True).stdout


def changes(repo: Path, rev: str, commits: int, max_bytes: int, suffixes: set[str] | None = None):
    """(commit, path, old text, new text) for every modified text file (`suffixes`: the
    file names taken, TEXT_SUFFIXES by default; an empty set takes every suffix)."""
    suffixes = TEXT_SUFFIXES if suffixes is None else suffixes
    revs = git(repo, "rev-list", "--no-merges", f"--max-count={commits}", rev).decode().split()
    for rev in revs:
        try:
            out = git(repo, "diff-tree", "--no-commit-id", "-r", "--diff-filter=M", "--name-only", f"{rev}^", rev).decode()
        except subprocess.CalledProcessError:  # the root commit
            continue
        for path in out.splitlines():
            if suffixes and Path(path).suffix not in suffixes:
                continue
            try:
                old_b = git(repo, "show", f"{rev}^:{path}")
                new_b = git(repo, "show", f"{rev}:{path}")
            except subprocess.CalledProcessError:
                continue
            if len(old_b) > max_bytes or len(new_b) > max_bytes or b"\0" in old_b + new_b:
                continue
            try:
                yield rev[:12], path, old_b.decode(), new_b.decode()
            except UnicodeDecodeError:
                continue


def hunks_to_edits(old: str, new: str) -> list[tuple[str, str, int]] | None:
    """(old_str, new_str, hunk's first line) per hunk, bottom-up; None if one cannot be
    made unique."""
    a = old.splitlines(keepends=True)
    b = new.splitlines(keepends=True)
    ops = [op for op in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if op[0] != "equal"]
    cur = list(a)
    edits = []
    for _, i1, i2, j1, j2 in reversed(ops):
        text = "".join(cur)
        lo, hi = i1, i2
        grow_up = True
        while True:
            old_str = "".join(cur[lo:hi])
            if old_str and text.count(old_str) == 1:
                break
            if grow_up and lo > 0:
                lo -= 1
            elif hi < len(cur):
                hi += 1
            elif lo > 0:
                lo -= 1
            else:
                return None
            grow_up = not grow_up
        new_str = "".join(cur[lo:i1]) + "".join(b[j1:j2]) + "".join(cur[i2:hi])
        if new_str == old_str:
            return None
        edits.append((old_str, new_str, lo + 1))
        cur = cur[:i1] + b[j1:j2] + cur[i2:]
    return edits


def lf_view(text: str) -> str:
    """The text as a model reads it through a view: every `\r\n` read as `\n`."""
    return text.replace("\r\n", "\n")


def all_crlf(text: str) -> bool:
    """Every line break is `\r\n` (and there is one)."""
    return "\n" in text and text.count("\n") == text.count("\r\n")


def model_edits(old: str, new: str, context: int) -> list[tuple[str, str, int]] | None:
    """The hunks of `old` → `new` as a model writes them (--as-model): read from the LF
    view of both versions, each old text the hunk's lines with `context` lines either
    side, grown (above, then below) only while it is empty or not unique, and without the
    line break at its end when the new text ends in one too. Bottom-up, as
    hunks_to_edits; None if one cannot be made unique; [] when the view shows no change
    (the commit changed line endings only)."""
    a = lf_view(old).splitlines(keepends=True)
    b = lf_view(new).splitlines(keepends=True)
    ops = [op for op in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if op[0] != "equal"]
    cur = list(a)
    edits = []
    for _, i1, i2, j1, j2 in reversed(ops):
        text = "".join(cur)
        lo, hi = max(i1 - context, 0), min(i2 + context, len(cur))
        grow_up = True
        while True:
            old_str = "".join(cur[lo:hi])
            new_str = "".join(cur[lo:i1]) + "".join(b[j1:j2]) + "".join(cur[i2:hi])
            if old_str.endswith("\n") and new_str.endswith("\n"):
                old_str, new_str = old_str[:-1], new_str[:-1]
            if old_str and text.count(old_str) == 1:
                break
            if grow_up and lo > 0:
                lo -= 1
            elif hi < len(cur):
                hi += 1
            elif lo > 0:
                lo -= 1
            else:
                return None
            grow_up = not grow_up
        if new_str == old_str:
            return None
        edits.append((old_str, new_str, lo + 1))
        cur = cur[:i1] + b[j1:j2] + cur[i2:]
    return edits


def ending_kind(got: bytes, want: bytes) -> str:
    """How a replayed CRLF file ended (--as-model): "exact", "mixed" (both `\n` and
    `\r\n` line breaks where the commit has one kind), "stray CR" (a `\r` not followed by
    `\n` that the commit does not have), both, or "other" (it differs otherwise)."""
    if got == want:
        return "exact"

    def kinds(t: bytes) -> tuple[bool, bool]:
        crlf = t.count(b"\r\n")
        return crlf > 0, t.count(b"\n") > crlf

    def lone_cr(t: bytes) -> int:
        return t.count(b"\r") - t.count(b"\r\n")

    mixed = all(kinds(got)) and not all(kinds(want))
    stray = lone_cr(got) > lone_cr(want)
    if mixed and stray:
        return "mixed + stray CR"
    return "mixed" if mixed else "stray CR" if stray else "other"


def snippet(name: str, cur: str, old_str: str, new_str: str) -> str:
    """The numbered-snippet result str_replace returned before issue 15 (4 lines of
    context, `cat -n` numbering), rebuilt here so the comparison can be rerun after the
    switch; checked against Boris's own text while Boris still returned it."""
    idx = cur.find(old_str)
    newc = cur[:idx] + new_str + cur[idx + len(old_str):]
    first = cur[:idx].count("\n") + 1
    last = newc[: idx + max(len(new_str) - 1, 0)].count("\n") + 1
    lines = newc.split("\n")
    if newc.endswith("\n"):
        lines.pop()
    lo, hi = max(first - 4, 1), last + 4
    out = []
    for n in range(lo, min(hi, len(lines)) + 1):
        line = lines[n - 1].removesuffix("\r")
        if len(line) > 2000:
            line = line[:2000] + f"... [truncated, {len(lines[n - 1].removesuffix(chr(13)))} chars total]"
        out.append(f"{n:>6}\t{line}\n")
    return (f"Edited {name}: replaced 1 occurrence at line {first}. The lines around it now read:\n"
            + "".join(out))


class Watchdog:
    """Kills a server whose call outlives CALL_TIMEOUT, so a hung peer cannot stall the
    run. One long-lived thread: arming a call only sets two fields (no thread per call,
    which would put work on the machine while a call is timed)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._until = 0.0
        threading.Thread(target=self._run, daemon=True).start()

    def arm(self, proc: subprocess.Popen) -> None:
        with self._lock:
            self._proc, self._until = proc, time.monotonic() + CALL_TIMEOUT

    def disarm(self) -> None:
        with self._lock:
            self._proc = None

    def _run(self) -> None:
        while True:
            time.sleep(0.1)
            with self._lock:
                if self._proc is not None and time.monotonic() > self._until:
                    self._proc.kill()
                    self._proc = None


CALL_TIMEOUT = 30.0  # seconds, any single call
WATCHDOG = Watchdog()


@dataclass
class Server:
    """One server (or tool profile) of the replay and how it is driven."""

    key: str  # its work directory's name; every key has the same length, so every server
    # sees paths of the same length and echoes them at the same cost
    label: str
    argv: list[str]  # "{dir}" stands for its work directory
    read: tuple[str, Callable[[str], dict]]
    single: tuple[str, Callable[[str, str, str], dict]]
    multi: tuple[str, Callable[[str, list[tuple[str, str]]], dict]] | None
    absolute: bool = True  # paths are sent absolute (else relative to its work directory)
    ours: bool = False  # a Boris mode: any failure is a bug (exit status 1)
    env: dict[str, str] = field(default_factory=dict)
    # filled by the run
    client: ft.Client | None = None
    dir: Path = Path()
    version: str = ""
    multi_note: str = ""
    dead: str = ""
    exact: dict[str, int] = field(default_factory=lambda: {"single": 0, "multi": 0})
    ns: dict[str, list[int]] = field(default_factory=lambda: {"single": [], "multi": []})
    chars: dict[str, list[float]] = field(default_factory=lambda: {"single": [], "multi": []})
    failures: dict[str, list[str]] = field(default_factory=lambda: {"single": [], "multi": []})
    # --as-model: how each CRLF file ended ("exact", "mixed", "stray CR", ...) per mode
    endings: dict[str, Counter] = field(default_factory=lambda: {"single": Counter(), "multi": Counter()})

    def call(self, tool: str, args: dict) -> tuple[int, bool, str]:
        rid, data = ft.tool_request(self.client, tool, args)
        WATCHDOG.arm(self.client.proc)
        try:
            ns, msg = self.client.timed(rid, data)
        finally:
            WATCHDOG.disarm()
        err, text = ft.result_text(msg)
        return ns, err, text


def cc_tools() -> dict:
    """Claude Code's tool names and arguments (Boris --tool-profile claude-code, litecode)."""
    return {
        "read": ("Read", lambda p: {"file_path": p}),
        "single": ("Edit", lambda p, o, n: {"file_path": p, "old_string": o, "new_string": n}),
        "multi": ("MultiEdit", lambda p, es: {"file_path": p, "edits": [{"old_string": o, "new_string": n} for o, n in es]}),
    }


def server_table(args) -> list[Server]:
    """The per-server tool mapping: start command, read call, one-hunk edit call and
    all-hunks edit call. Peers are optional (--litecode, --fs-dir)."""
    boris = str(Path(args.boris).resolve())
    table = [
        Server("s0", "boris (default profile)", [boris, "--transport", "stdio"],
               read=("view", lambda p: {"path": p}),
               single=("str_replace", lambda p, o, n: {"path": p, "old_str": o, "new_str": n}),
               multi=("multi_edit", lambda p, es: {"path": p, "edits": [{"old_str": o, "new_str": n} for o, n in es]}),
               absolute=False, ours=True),
        Server("s1", "boris --tool-profile claude-code", [boris, "--transport", "stdio", "--tool-profile", "claude-code"],
               **cc_tools(), ours=True),
    ]
    if args.litecode:
        lc = str(Path(args.litecode).resolve())
        # It runs commands with $SHELL (unused here); pinned as tests/compat/run.sh does.
        table.append(Server("s2", "litecode", [lc, "--cwd", "{dir}"], **cc_tools(), env={"SHELL": "/bin/bash"}))
    if args.fs_dir:
        spec = ft.ref_spec(Path(args.fs_dir).resolve(), args.node, Path("{dir}"))
        table.append(Server(
            "s3", "server-filesystem", spec.argv,
            read=("read_text_file", lambda p: {"path": p}),
            single=("edit_file", lambda p, o, n: {"path": p, "edits": [{"oldText": o, "newText": n}]}),
            multi=("edit_file", lambda p, es: {"path": p, "edits": [{"oldText": o, "newText": n} for o, n in es]}),
            version="server-filesystem " + spec.version.rsplit("@", 1)[-1]))
    return table


def start(s: Server, work: Path) -> None:
    s.dir = work / s.key
    s.dir.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("BORIS_")}
    env.update(ft.QUIET_ENV)
    env.update(s.env)
    argv = [a.replace("{dir}", str(s.dir)) for a in s.argv]
    if not s.version:
        p = subprocess.run([argv[0], "--version"], capture_output=True, text=True)
        s.version = p.stdout.strip().splitlines()[0] if p.returncode == 0 and p.stdout.strip() else "?"
    s.client = ft.Client(argv, env, work / f"{s.key}.stderr.log", s.dir)
    init = s.client.call("initialize", ft.initialize_params())
    s.client.notify("notifications/initialized")
    info = init.get("serverInfo", {})
    if s.version == "?" and info:
        s.version = f"{info.get('name', '?')} {info.get('version', '?')}"
    tools = {t["name"] for t in s.client.call("tools/list", {})["tools"]}
    for need in (s.read[0], s.single[0]):
        if need not in tools:
            sys.exit(f"error: {s.label} has no {need!r} tool (has {sorted(tools)})")
    if s.multi and s.multi[0] not in tools:
        s.multi_note = f"not offered: no `{s.multi[0]}` in its tools/list"
        s.multi = None


def how_differs(got: bytes, want: bytes) -> str:
    """One line on how a file that is not byte-exact differs from the commit."""
    if got == want.replace(b"\r\n", b"\n"):
        return "CRLF line endings turned into LF"
    g, w = got.splitlines(keepends=True), want.splitlines(keepends=True)
    for i, (a, b) in enumerate(zip(g, w)):
        if a != b:
            return f"line {i + 1} is {a[:80]!r}, the commit has {b[:80]!r}"
    return f"{len(g)} lines, the commit has {len(w)}"


def replay_file(s: Server, n: int, rev: str, path: str, old: str, new: str, edits, cmp: dict | None,
                crlf: bool = False) -> None:
    """Both modes of one server on one file: each hunk with its own call, then all hunks
    in one call. `cmp` (Boris's default profile only) collects the snippet/diff
    comparison of issue 15 §3 from a dry run before each real call. `crlf` (--as-model, a
    CRLF file): how the file ended is tallied in `s.endings` ("refused" when a call
    failed)."""
    if s.dead:
        for mode in ("single", "multi"):
            s.failures[mode].append(f"{rev} {path}: not run ({s.dead})")
        return
    try:
        # One call per hunk.
        target = s.dir / f"f{n}{Path(path).suffix}"
        target.write_bytes(old.encode())
        p = str(target) if s.absolute else target.name
        s.call(s.read[0], s.read[1](p))
        ok, cur = True, old
        for old_str, new_str, _ in edits:
            args_ = s.single[1](p, old_str, new_str)
            if cmp is not None:
                _, err, dry = s.call(s.single[0], {**args_, "dry_run": True})
                if err:
                    ok = False
                    s.failures["single"].append(f"{rev} {path} (dry run): {dry[:160]}")
                    break
            ns, err, text = s.call(s.single[0], args_)
            if err:
                ok = False
                s.failures["single"].append(f"{rev} {path}: {text[:160]}")
                if crlf:
                    s.endings["single"]["refused"] += 1
                break
            s.ns["single"].append(ns)
            s.chars["single"].append(len(text))
            if cmp is not None:
                snip = snippet(str(target), cur, old_str, new_str)
                if text.split("\n", 1)[0].endswith("The lines around it now read:") and text != snip:
                    cmp["mismatched"].append(f"{rev} {path}")
                cmp["snippet"].append(len(snip))
                line = snip.split(" at line ", 1)[1].split(".", 1)[0]
                header = f"Edited {target}: replaced 1 occurrence at line {line}.\n"
                cmp["diff"].append(len(header) + len(dry.split(" as follows:\n", 1)[1]))
            cur = cur.replace(old_str, new_str, 1)
        if ok:
            got = target.read_bytes()
            if crlf:
                s.endings["single"][ending_kind(got, new.encode())] += 1
            if got == new.encode():
                s.exact["single"] += 1
            else:
                s.failures["single"].append(f"{rev} {path}: {how_differs(got, new.encode())}")
        # All hunks in one call.
        if s.multi is None:
            return
        target = s.dir / f"m{n}{Path(path).suffix}"
        target.write_bytes(old.encode())
        p = str(target) if s.absolute else target.name
        s.call(s.read[0], s.read[1](p))
        ns, err, text = s.call(s.multi[0], s.multi[1](p, [(o, t) for o, t, _ in edits]))
        if err:
            s.failures["multi"].append(f"{rev} {path}: {text[:160]}")
            if crlf:
                s.endings["multi"]["refused"] += 1
            return
        s.ns["multi"].append(ns)
        s.chars["multi"].append(len(text) / len(edits))
        got = target.read_bytes()
        if crlf:
            s.endings["multi"][ending_kind(got, new.encode())] += 1
        if got == new.encode():
            s.exact["multi"] += 1
        else:
            s.failures["multi"].append(f"{rev} {path}: {how_differs(got, new.encode())}")
    except (ft.RpcError, OSError) as e:
        s.dead = f"the server stopped: {str(e)[:200]}"
        s.failures["single"].append(f"{rev} {path}: {s.dead}")


def stats(v) -> str:
    return f"mean {statistics.mean(v):.0f}, median {statistics.median(v):.0f}" if v else "–"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--boris", required=True)
    ap.add_argument("--litecode", help="litecode binary (optional peer)")
    ap.add_argument("--fs-dir", help="the installed @modelcontextprotocol/server-filesystem package (optional peer)")
    ap.add_argument("--node", default=shutil.which("node") or "node")
    ap.add_argument("--repo", default=str(Path(__file__).resolve().parent.parent))
    ap.add_argument("--rev", default="HEAD", help="the newest commit replayed")
    ap.add_argument("--commits", type=int, default=200)
    ap.add_argument("--max-bytes", type=int, default=65536)
    ap.add_argument("--as-model", action="store_true",
                    help="send old and new texts as a model writes them: LF line breaks only, short old texts "
                         "(issue 21 §1); counts how the CRLF files end")
    ap.add_argument("--context", type=int, default=None,
                    help="with --as-model: lines of context either side of a hunk (default 0: the hunk's lines "
                         "alone, grown only to be unique)")
    ap.add_argument("--suffixes", default="",
                    help="comma-separated suffixes replayed besides the default set (.rs, .py, .md, ...), "
                         "or * for every file that is UTF-8 text")
    ap.add_argument("--apply-patch", action="store_true",
                    help="replay each commit as one apply_patch call covering all its files, in both formats "
                         "(Codex's envelope, git's unified diff) and wrapped (fence, prose, heredoc) in turn "
                         "(issue 19; bench/patch_replay.py)")
    args = ap.parse_args()
    # A relative binary path names the file from here: the server starts in a temp dir.
    args.boris = type(args.boris)(os.path.abspath(args.boris))
    if args.apply_patch:
        import patch_replay  # noqa: E402

        return patch_replay.main(args)
    if args.context is not None and not args.as_model:
        ap.error("--context goes with --as-model")
    if args.context is not None and args.context < 0:
        ap.error("--context must be 0 or more")
    suffixes = TEXT_SUFFIXES
    if args.suffixes.strip() == "*":
        suffixes = set()
    elif args.suffixes:
        suffixes = TEXT_SUFFIXES | {x.strip() if x.strip().startswith(".") else "." + x.strip()
                                    for x in args.suffixes.split(",") if x.strip()}
    if args.as_model:
        return main_as_model(args, suffixes)

    work = Path(tempfile.mkdtemp(prefix="boris-replay-"))
    servers = server_table(args)
    for s in servers:
        start(s, work)

    files = skipped = hunks = 0
    cmp = {"snippet": [], "diff": [], "mismatched": []}
    for rev, path, old, new in changes(Path(args.repo), args.rev, args.commits, args.max_bytes, suffixes):
        edits = hunks_to_edits(old, new)
        if not edits:
            skipped += 1
            continue
        files += 1
        hunks += len(edits)
        for s in servers:
            replay_file(s, files, rev, path, old, new, edits, cmp if s.key == "s0" else None)
    for s in servers:
        s.client.close()

    head = git(Path(args.repo), "rev-parse", "--short=12", args.rev).decode().strip()
    b = servers[0]
    snippet_chars, diff_chars = cmp["snippet"], cmp["diff"]
    shorter = sum(1 for s_, d in zip(snippet_chars, diff_chars) if d < s_)
    pct = 100 * (1 - sum(diff_chars) / sum(snippet_chars)) if snippet_chars else 0
    print(f"Commits: the last {args.commits} (at most) up to {head}: {files} modified text files "
          f"({skipped} skipped: a hunk could not be made unique), {hunks} hunks.\n")
    print("| | str_replace (one call per hunk) | multi_edit (one call per file) |")
    print("|---|---:|---:|")
    print(f"| byte-exact files | {b.exact['single']}/{files} | {b.exact['multi']}/{files} |")
    if b.ns["single"]:
        print(f"| ms per edit call (median) | {statistics.median(b.ns['single']) / 1e6:.3f} | – |")
    print(f"| characters returned per hunk, numbered snippet (before issue 15) | {stats(snippet_chars)} | – |")
    print(f"| characters returned per hunk, unified diff (now) | {stats(diff_chars)} | {stats(b.chars['multi'])} |")
    print(f"\nThe diff result is {pct:.0f}% shorter in total ({sum(diff_chars)} against "
          f"{sum(snippet_chars)} characters) and shorter on {shorter} of {len(snippet_chars)} hunks.")
    if cmp["mismatched"]:
        print(f"the rebuilt snippet differs from Boris's on {len(cmp['mismatched'])} edits, e.g. {cmp['mismatched'][0]}")

    print("\nThe same hunks and files through each server, one call per hunk and all hunks of a file in one call:\n")
    print("| server | edit call | byte-exact files | ms per edit call (median) | characters returned per hunk |")
    print("|---|---|---:|---:|---:|")
    for s in servers:
        name = s.label if s.ours else s.version if s.version.startswith(s.label) else f"{s.label} {s.version}"
        print(f"| {name} | `{s.single[0]}`, one call per hunk | {s.exact['single']}/{files} | "
              f"{statistics.median(s.ns['single']) / 1e6 if s.ns['single'] else float('nan'):.3f} | {stats(s.chars['single'])} |")
        if s.multi:
            print(f"| {name} | `{s.multi[0]}`, all hunks of a file in one call | {s.exact['multi']}/{files} | "
                  f"{statistics.median(s.ns['multi']) / 1e6 if s.ns['multi'] else float('nan'):.3f} | {stats(s.chars['multi'])} |")
        else:
            print(f"| {name} | – ({s.multi_note}) | – | – | – |")
    bug = False
    for s in servers:
        for mode in ("single", "multi"):
            fails = s.failures[mode]
            if not fails:
                continue
            tool = s.single[0] if mode == "single" else (s.multi[0] if s.multi else "?")
            if s.ours:
                bug = True
                for f in fails[:20]:
                    print(f"FAIL {s.label} {tool}: {f}")
            else:
                print(f"\n{s.label} `{tool}` ({'one call per hunk' if mode == 'single' else 'all hunks in one call'}): "
                      f"{len(fails)} of {files} files not byte-exact, e.g.:")
                for f in fails[:3]:
                    print(f"- {f}")
    if any(s.failures["single"] or s.failures["multi"] for s in servers):
        print(f"edit_replay: files and server logs kept in {work}", file=sys.stderr)
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if bug else 0


def main_as_model(args, suffixes: set[str]) -> int:
    """--as-model: every file replayed with model_edits; the report counts how the CRLF
    files end, per server and edit call."""
    context = args.context or 0
    work = Path(tempfile.mkdtemp(prefix="boris-replay-"))
    servers = server_table(args)
    for s in servers:
        start(s, work)

    files = skipped = endings_only = hunks = crlf_files = 0
    # Files no model that sees no CR can write as the commit has them: the commit changes
    # the endings of lines it does not touch, or the parent or the commit mixes endings.
    unreachable: set[str] = set()
    for rev, path, old, new in changes(Path(args.repo), args.rev, args.commits, args.max_bytes, suffixes):
        edits = model_edits(old, new, context)
        if edits is None:
            skipped += 1
            continue
        if not edits:
            endings_only += 1
            continue
        files += 1
        hunks += len(edits)
        crlf = all_crlf(old) and all_crlf(new)
        crlf_files += crlf
        if not crlf and not ("\r" not in old and "\r" not in new):
            unreachable.add(f"{rev} {path}")
        for s in servers:
            replay_file(s, files, rev, path, old, new, edits, None, crlf=crlf)
    for s in servers:
        s.client.close()

    head = git(Path(args.repo), "rev-parse", "--short=12", args.rev).decode().strip()
    print(f"Commits: the last {args.commits} (at most) up to {head}: {files} modified text files "
          f"({skipped} skipped: a hunk could not be made unique; {endings_only} skipped: the view shows "
          f"no change, only line endings changed), {hunks} hunks.")
    print(f"As a model writes: LF line breaks only, {context} lines of context. {crlf_files} of the files "
          f"are CRLF files (every line break of the parent and of the commit is CRLF); {len(unreachable)} "
          f"others have CRs but cannot be written by a model that sees none (the commit changes line "
          f"endings, or a version mixes them): replayed, never counted as a bug.\n")
    kinds = ["exact", "mixed", "stray CR", "mixed + stray CR", "other", "refused"]
    print("| server | edit call | byte-exact files | CRLF files byte-exact | mixed endings | stray CR "
          "| mixed + stray CR | otherwise different | call refused |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for s in servers:
        name = s.label if s.ours else s.version if s.version.startswith(s.label) else f"{s.label} {s.version}"
        for mode, tool in (("single", s.single[0]), ("multi", s.multi[0] if s.multi else None)):
            if tool is None:
                print(f"| {name} | – ({s.multi_note}) | – | – | – | – | – | – | – |")
                continue
            e = s.endings[mode]
            how = "one call per hunk" if mode == "single" else "all hunks of a file in one call"
            print(f"| {name} | `{tool}`, {how} | {s.exact[mode]}/{files} | {e['exact']}/{crlf_files} | "
                  + " | ".join(str(e[k]) for k in kinds[1:]) + " |")
    bug = False
    for s in servers:
        for mode in ("single", "multi"):
            fails = [f for f in s.failures[mode] if not any(f.startswith(k + ":") for k in unreachable)]
            if not fails:
                continue
            tool = s.single[0] if mode == "single" else (s.multi[0] if s.multi else "?")
            if s.ours:
                bug = True
            print(f"\n{s.label} `{tool}`: {len(fails)} of {files} files not byte-exact"
                  f"{' (a bug)' if s.ours else ''}, e.g.:")
            for f in fails[:20 if s.ours else 3]:
                print(f"- {f}")
    if any(s.failures["single"] or s.failures["multi"] for s in servers):
        print(f"edit_replay: files and server logs kept in {work}", file=sys.stderr)
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if bug else 0


if __name__ == "__main__":
    sys.exit(main())
