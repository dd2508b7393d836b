#!/usr/bin/env python3
"""Where the time of a 4 KB `str_replace` goes, per system call group, measured with
`strace -f -T` around a Boris server (issue 14: an edit should cost its fsync and little
else). Stdlib only; needs strace.

    cargo build --release --bin boris
    python3 bench/edit_split.py [--edits 200] [--boris target/release/boris]

strace slows every system call, so the absolute figures are inflated; the split (which
share of an edit each step takes) is the point. The edited file sits in a fresh temp
directory; edits alternate two tokens as bench/peers.py does.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import file_tools as ft  # noqa: E402

LINE = re.compile(r"^(?:\[pid\s+\d+\]\s+|\d+\s+)?(\w+)\((.*)\)\s+=\s+(-?\d+|\?)[^<]*<([\d.]+)>$")


def classify(name: str, args: str, rc: str, fds: dict[str, str]) -> str | None:
    """The step a system call belongs to; None for the transport and the runtime."""
    fd = args.split(",", 1)[0].strip()
    if name in ("fsync", "fdatasync"):
        return "fsync"
    if name in ("rename", "renameat", "renameat2"):
        return "rename"
    if name == "getdents64":
        return "directory sweep"
    if name == "openat":
        what = "temp" if ".boris-tmp" in args or "O_EXCL" in args else ("dir" if "O_DIRECTORY" in args else "file")
        if rc.isdigit():
            fds[rc] = what
        return {"temp": "create temp file", "dir": "directory sweep", "file": "open + read"}[what]
    if name in ("newfstatat", "statx", "fstat", "stat", "lstat"):
        return "stat"
    if name in ("read", "pread64"):
        return "open + read" if fds.get(fd) == "file" else None
    if name in ("write", "pwrite64", "writev"):
        return "write temp file" if fds.get(fd) == "temp" else None
    if name in ("fchmod", "fchown", "fchmodat", "fchownat"):
        return "mode + owner"
    if name == "close":
        what = fds.pop(fd, None)
        return None if what is None else "close"
    if name in ("unlink", "unlinkat"):
        return "directory sweep"
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boris", default=str(ft.DEFAULT_BORIS))
    ap.add_argument("--edits", type=int, default=200)
    args = ap.parse_args()
    # A relative binary path names the file from here: the server starts in a temp dir.
    args.boris = type(args.boris)(os.path.abspath(args.boris))
    strace = shutil.which("strace")
    if not strace:
        sys.exit("error: strace not found")
    with tempfile.TemporaryDirectory(prefix="boris-editsplit-") as tmp:
        work = Path(tmp)
        path = work / "edit_4k.txt"
        text = ("x" * 60 + "\n") * 30 + ft.TOKEN_A + "\n" + ("y" * 60 + "\n") * 35
        path.write_text(text)
        log = work / "strace.log"
        spec = ft.boris_spec(Path(args.boris), work)
        env = dict(os.environ)
        env.update(ft.QUIET_ENV)
        argv = [strace, "-f", "-T", "-qq", "-o", str(log), *spec.argv]
        c = ft.Client(argv, env, work / "stderr", work)
        walls = []
        try:
            c.call("initialize", ft.initialize_params())
            c.notify("notifications/initialized")
            rid, data = ft.tool_request(c, "view", {"path": str(path)})
            c.timed(rid, data)
            cur = text
            for _ in range(args.edits):
                old, new = (ft.TOKEN_A, ft.TOKEN_B) if ft.TOKEN_A in cur else (ft.TOKEN_B, ft.TOKEN_A)
                rid, data = ft.tool_request(c, "str_replace", {"path": str(path), "old_str": old, "new_str": new})
                ns, msg = c.timed(rid, data)
                if ft.result_text(msg)[0]:
                    sys.exit(f"edit failed: {ft.result_text(msg)[1][:300]}")
                cur = cur.replace(old, new)
                walls.append(ns / 1e6)
        finally:
            c.close()
            time.sleep(0.2)
        if os.environ.get("EDIT_SPLIT_KEEP"):
            shutil.copy(log, os.environ["EDIT_SPLIT_KEEP"])
        sums: dict[str, float] = collections.defaultdict(float)
        counts: dict[str, int] = collections.defaultdict(int)
        fds: dict[str, str] = {}
        started = False
        for raw in log.read_text(errors="replace").splitlines():
            m = LINE.match(raw.strip())
            if not m:
                continue
            name, a, rc, secs = m.groups()
            if name == "openat" and "edit_4k.txt" in a and not started:
                # the view; edits start after it
                started = True
                fds[rc] = "file"
                continue
            if not started:
                continue
            step = classify(name, a, rc, fds)
            if step:
                sums[step] += float(secs)
                counts[step] += 1
        n = args.edits
        wall = statistics.median(walls)
        print(f"{n} edits of a 4 KB file under strace -f -T; median wall time per edit {wall:.3f} ms\n")
        print("| step | system calls per edit | time per edit (strace -T) |")
        print("|---|---:|---:|")
        for step in ("stat", "open + read", "create temp file", "write temp file", "mode + owner", "fsync", "close", "rename", "directory sweep"):
            print(f"| {step} | {counts[step] / n:.2f} | {sums[step] * 1000 / n:.3f} ms |")
        total = sum(sums.values()) * 1000 / n
        print(f"| all of the above | {sum(counts.values()) / n:.2f} | {total:.3f} ms |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
