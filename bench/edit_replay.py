#!/usr/bin/env python3
"""The real-edit replay (issue 15 §2, §3): the changes of a git history, replayed
through Boris's str_replace and multi_edit, checked byte for byte, with the characters
each edit returns.

For each commit (newest first) and each text file it modified (UTF-8, at most
--max-bytes before and after), the change is split into hunks (difflib, no context). Each
hunk becomes one str_replace whose old_str is the hunk's old lines, grown by one line of
context at a time (above, then below) until it is unique in the file as it is at that
point; hunks are applied bottom-up, so every old_str is read from the file as the edits
before it left it (which also makes the list a valid multi_edit list). Then:

- str_replace: the parent version is written, viewed, and every hunk is applied with its
  own call; each call is first made with dry_run: true, so both result forms are Boris's
  own: today's numbered snippet (the real call's result) and a unified diff (the dry run's
  diff, under the one-line header a diff result would have: "Edited PATH: replaced 1
  occurrence at line N.").
- multi_edit: the parent version again, viewed, all hunks of the file in one call.

The file must then equal the commit's version byte for byte.

Usage: python3 bench/edit_replay.py --boris target/release/boris [--repo .] [--rev HEAD] [--commits 200]
Stdlib only; reuses bench/file_tools.py's JSON-RPC client.
"""

from __future__ import annotations

import argparse
import difflib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import file_tools as ft  # noqa: E402

TEXT_SUFFIXES = {".rs", ".py", ".md", ".yaml", ".yml", ".toml", ".sh", ".mjs", ".js", ".ts", ".json", ".txt"}


def git(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True).stdout


def changes(repo: Path, rev: str, commits: int, max_bytes: int):
    """(commit, path, old text, new text) for every modified text file."""
    revs = git(repo, "rev-list", "--no-merges", f"--max-count={commits}", rev).decode().split()
    for rev in revs:
        try:
            out = git(repo, "diff-tree", "--no-commit-id", "-r", "--diff-filter=M", "--name-only", f"{rev}^", rev).decode()
        except subprocess.CalledProcessError:  # the root commit
            continue
        for path in out.splitlines():
            if Path(path).suffix not in TEXT_SUFFIXES:
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


def call(c: ft.Client, tool: str, args: dict) -> tuple[int, bool, str]:
    rid, data = ft.tool_request(c, tool, args)
    ns, msg = c.timed(rid, data)
    err, text = ft.result_text(msg)
    return ns, err, text


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--boris", required=True)
    ap.add_argument("--repo", default=str(Path(__file__).resolve().parent.parent))
    ap.add_argument("--rev", default="HEAD", help="the newest commit replayed")
    ap.add_argument("--commits", type=int, default=200)
    ap.add_argument("--max-bytes", type=int, default=65536)
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="boris-replay-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("BORIS_")}
    c = ft.Client([str(Path(args.boris).resolve()), "--transport", "stdio"], env, work / "stderr.log", work)
    c.call("initialize", ft.initialize_params())
    c.notify("notifications/initialized")

    files = skipped = 0
    exact_single = exact_multi = 0
    snippet_chars: list[int] = []
    diff_chars: list[int] = []
    multi_chars: list[float] = []
    edit_ns: list[int] = []
    failures: list[str] = []
    mismatched_snippets: list[str] = []
    n = 0
    for rev, path, old, new in changes(Path(args.repo), args.rev, args.commits, args.max_bytes):
        edits = hunks_to_edits(old, new)
        if not edits:
            skipped += 1
            continue
        files += 1
        n += 1
        name = f"f{n}{Path(path).suffix}"
        # str_replace, one call per hunk
        target = work / name
        target.write_bytes(old.encode())
        call(c, "view", {"path": name})
        ok = True
        cur = old
        for old_str, new_str, _ in edits:
            args_ = {"path": name, "old_str": old_str, "new_str": new_str}
            _, err, dry = call(c, "str_replace", {**args_, "dry_run": True})
            ns, err2, text = call(c, "str_replace", args_)
            if err or err2:
                ok = False
                failures.append(f"{rev} {path}: {(dry if err else text)[:160]}")
                break
            edit_ns.append(ns)
            snip = snippet(str(target), cur, old_str, new_str)
            if text.split("\n", 1)[0].endswith("The lines around it now read:") and text != snip:
                mismatched_snippets.append(f"{rev} {path}")
            cur = cur.replace(old_str, new_str, 1)
            snippet_chars.append(len(snip))
            header = f"Edited {target}: replaced 1 occurrence at line {snip.split(' at line ', 1)[1].split('.', 1)[0]}.\n"
            diff = dry.split(" as follows:\n", 1)[1]
            diff_chars.append(len(header) + len(diff))
        if ok and target.read_bytes() == new.encode():
            exact_single += 1
        elif ok:
            failures.append(f"{rev} {path}: str_replace result differs from the commit")
        # multi_edit, all hunks in one call
        mname = f"m{n}{Path(path).suffix}"
        mtarget = work / mname
        mtarget.write_bytes(old.encode())
        call(c, "view", {"path": mname})
        _, err, text = call(c, "multi_edit", {"path": mname, "edits": [{"old_str": o, "new_str": s} for o, s, _ in edits]})
        if err:
            failures.append(f"{rev} {path} (multi_edit): {text[:160]}")
        elif mtarget.read_bytes() == new.encode():
            exact_multi += 1
            multi_chars.append(len(text) / len(edits))
        else:
            failures.append(f"{rev} {path}: multi_edit result differs from the commit")
    c.close()

    def stats(v):
        return f"mean {statistics.mean(v):.0f}, median {statistics.median(v):.0f}" if v else "–"

    shorter = sum(1 for s, d in zip(snippet_chars, diff_chars) if d < s)
    head = git(Path(args.repo), "rev-parse", "--short=12", args.rev).decode().strip()
    pct = 100 * (1 - sum(diff_chars) / sum(snippet_chars)) if snippet_chars else 0
    print(f"Commits: the last {args.commits} (at most) up to {head}: {files} modified text files "
          f"({skipped} skipped: a hunk could not be made unique), {len(snippet_chars)} hunks.\n")
    print("| | str_replace (one call per hunk) | multi_edit (one call per file) |")
    print("|---|---:|---:|")
    print(f"| byte-exact files | {exact_single}/{files} | {exact_multi}/{files} |")
    if edit_ns:
        print(f"| ms per edit call (median) | {statistics.median(edit_ns) / 1e6:.3f} | – |")
    print(f"| characters returned per hunk, numbered snippet (before issue 15) | {stats(snippet_chars)} | – |")
    print(f"| characters returned per hunk, unified diff (now) | {stats(diff_chars)} | {stats(multi_chars)} |")
    print(f"\nThe diff result is {pct:.0f}% shorter in total ({sum(diff_chars)} against "
          f"{sum(snippet_chars)} characters) and shorter on {shorter} of {len(snippet_chars)} hunks.")
    if mismatched_snippets:
        print(f"the rebuilt snippet differs from Boris's on {len(mismatched_snippets)} edits, e.g. {mismatched_snippets[0]}")
    for f in failures[:20]:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
