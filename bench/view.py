#!/usr/bin/env python3
"""Boris's `view` of a 100 MB file against its floors, in one run (issue 21 §2).

Every row is measured side by side with its floor and reported as a ratio:

- views that show 100 lines (the first or the last 100, repeated) against a `view` of a
  4 KB file in the same session, the calls alternating (goal for a repeat tail of an
  unchanged or appended file: within 3x);
- the first tail view of the file (a new server each time, so the line index is
  built) against `wc -l` of the same file, alternating (goal: no slower).

Conditions that change what Boris does are rows of their own: the file older than Boris's
2 s racy window or changed within it (`touch`, an append), the default --max-file-size
(10 MB: the file is over it) or 200 MB (under it: a view-before-edit record is kept), and
the claude-code profile's `Read` with an offset (its tail is a range near the end).

Usage: python3 bench/view.py [--boris target/release/boris] [--samples 40] [--first 7]

Stdlib only; the client is bench/file_tools.py's. Times are from the request's write to
its response line; `wc -l` is a process (fork and exec included, as a shell pays them).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import file_tools as ft  # noqa: E402

LINES = 1_200_000  # 85 bytes each: 102 MB
LINE_BYTES = 85
RACY_WINDOW = 2.0


def line(n: int) -> str:
    head = f"line {n:08d} "
    return head + "y" * (LINE_BYTES - len(head) - 1) + "\n"


def write_big(path: Path) -> None:
    with open(path, "w") as f:
        for start in range(1, LINES + 1, 10_000):
            f.write("".join(line(n) for n in range(start, min(start + 10_000, LINES + 1))))


class Boris:
    def __init__(self, binary: str, work: Path, extra: list[str]):
        argv = [binary, "--transport", "stdio", "--workdir", str(work), "--log-level", "warn", *extra]
        self.c = ft.Client(argv, dict(os.environ), work / "boris-stderr.log", work)
        self.c.call("initialize", ft.initialize_params())
        self.c.notify("notifications/initialized")

    def call(self, tool: str, args: dict) -> tuple[float, str]:
        """Milliseconds to the response line, and the result's text (an error raises)."""
        rid, data = self.c.encode("tools/call", {"name": tool, "arguments": args})
        ns, msg = self.c.timed(rid, data)
        result = msg.get("result") or {}
        text = "".join(b.get("text", "") for b in result.get("content", []))
        if "error" in msg or result.get("isError"):
            raise RuntimeError(f"{tool} {args}: {msg.get('error') or text[:300]}")
        return ns / 1e6, text

    def close(self) -> None:
        self.c.close()


def last_number(text: str) -> int:
    return int(text.rstrip("\n").rsplit("\n", 1)[-1].split("\t", 1)[0])


def first_number(text: str) -> int:
    return int(text.split("\t", 1)[0])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--boris", default=str(ft.DEFAULT_BORIS))
    ap.add_argument("--samples", type=int, default=40, help="calls per repeated-view row (and as many floor calls)")
    ap.add_argument("--first", type=int, default=7, help="first tail views (new servers) and `wc -l` runs")
    ap.add_argument("--tmp", default=None, help="where the files go (default: the system temp directory)")
    args = ap.parse_args()
    # A relative binary path names the file from here: the server starts in a temp dir.
    args.boris = type(args.boris)(os.path.abspath(args.boris))
    wall0 = time.time()

    work = Path(tempfile.mkdtemp(prefix="boris-bench-view-", dir=args.tmp))
    big = work / "big.txt"
    small = work / "small.txt"
    small.write_text(ft.make_text(ft.FILE_SIZE, None, ft.VIEW_MARKER))
    write_big(big)
    size = big.stat().st_size
    gc_was = ft.gc.isenabled()
    ft.gc.disable()

    def old_enough() -> None:
        time.sleep(max(0.0, RACY_WINDOW + 0.2 - (time.time() - big.stat().st_mtime)))

    rows: list[tuple[str, str, str, str]] = []  # what, boris, floor, ratio

    def paired(b: Boris, what: str, tool: str, args_: dict, check, floor_tool: str = "view",
               before=None, racy: bool = False) -> None:
        """`samples` calls of the row, each after one floor call (a 4 KB view)."""
        floor_args = {"path": str(small)} if floor_tool == "view" else {"file_path": str(small)}
        b.call(tool, args_)  # warm-up (and, for a touched file, its index)
        b.call(floor_tool, floor_args)
        xs, fs = [], []
        for _ in range(args.samples):
            if racy and time.time() - big.stat().st_mtime > RACY_WINDOW - 0.1:
                break  # the rest would be of a file older than the window
            fs.append(b.call(floor_tool, floor_args)[0])
            if before:
                before()
            ms, text = b.call(tool, args_)
            check(text)
            xs.append(ms)
        if racy and len(xs) < args.samples:
            what += f" ({len(xs)} samples: the window closed)"
        ratios = sorted(x / f for x, f in zip(xs, fs))
        rows.append((what, f"{min(xs):.3f} / {statistics.median(xs):.3f} ms",
                     f"{min(fs):.3f} / {statistics.median(fs):.3f} ms",
                     f"{statistics.median(xs) / statistics.median(fs):.2f}× (pairs: min {ratios[0]:.2f}, "
                     f"median {statistics.median(ratios):.2f})"))

    def head_ok(text: str) -> None:
        assert first_number(text) == 1 and last_number(text) == 100, text[-200:]

    def tail_ok(total):
        def check(text: str) -> None:
            assert last_number(text) == total() and first_number(text) == total() - 99, text[-200:]
            assert text.rstrip("\n").endswith(line(total()).rstrip("\n")) or total() > LINES, text[-200:]
        return check

    lines_now = [LINES]

    def append_line() -> None:
        lines_now[0] += 1
        with open(big, "a") as f:
            f.write(f"appended {lines_now[0]}\n")

    for label, extra in (("default limit (10 MB)", []), ("--max-file-size=200MB", ["--max-file-size=200MB"])):
        b = Boris(args.boris, work, extra)
        old_enough()
        paired(b, f"lines 1–100, file older than 2 s, {label}", "view",
               {"path": str(big), "view_range": [1, 100]}, head_ok)
        paired(b, f"last 100 lines, repeated, unchanged file older than 2 s, {label}", "view",
               {"path": str(big), "view_range": [-100, -1]}, tail_ok(lambda: lines_now[0]))
        os.utime(big)
        paired(b, f"lines 1–100, file changed within 2 s (`touch`), {label}", "view",
               {"path": str(big), "view_range": [1, 100]}, head_ok, racy=True)
        os.utime(big)
        paired(b, f"last 100 lines, repeated, file changed within 2 s (`touch`), {label}", "view",
               {"path": str(big), "view_range": [-100, -1]}, tail_ok(lambda: lines_now[0]), racy=True)
        paired(b, f"last 100 lines, each after an append of a line, {label}", "view",
               {"path": str(big), "view_range": [-100, -1]}, tail_ok(lambda: lines_now[0]),
               before=append_line)
        b.close()

    # The claude-code profile: `Read` with an offset near the end is a range, not a tail.
    old_enough()
    b = Boris(args.boris, work, ["--tool-profile", "claude-code"])
    total = lines_now[0]
    paired(b, "claude-code `Read` of the last 100 lines by offset, repeated", "Read",
           {"file_path": str(big), "offset": total - 99, "limit": 100},
           lambda text: None, floor_tool="Read")
    b.close()

    # First tail views (the index is built) against `wc -l` of the same file.
    subprocess.run(["wc", "-l", str(big)], capture_output=True, check=True)
    firsts, wcs = [], []
    for i in range(args.first):
        b = Boris(args.boris, work, [])
        b.call("view", {"path": str(small)})
        order = ("view", "wc") if i % 2 == 0 else ("wc", "view")
        for which in order:
            if which == "view":
                ms, text = b.call("view", {"path": str(big), "view_range": [-100, -1]})
                tail_ok(lambda: lines_now[0])(text)
                firsts.append(ms)
            else:
                t = time.perf_counter_ns()
                out = subprocess.run(["wc", "-l", str(big)], capture_output=True, text=True, check=True).stdout
                wcs.append((time.perf_counter_ns() - t) / 1e6)
                assert int(out.split()[0]) == lines_now[0], out
        b.close()
    ratios = sorted(x / f for x, f in zip(firsts, wcs))
    rows.append(("first view of the last 100 lines (new server: the line index is built)",
                 f"{min(firsts):.2f} / {statistics.median(firsts):.2f} ms",
                 f"`wc -l`: {min(wcs):.2f} / {statistics.median(wcs):.2f} ms",
                 f"{statistics.median(firsts) / statistics.median(wcs):.2f}× (pairs: min {ratios[0]:.2f}, "
                 f"median {statistics.median(ratios):.2f})"))
    if gc_was:
        ft.gc.enable()

    info = ft.machine_info()
    print(f"# view benchmark (`{' '.join(sys.argv)}`)\n")
    print(f"{size / 1e6:.0f} MB file of {LINES:,} lines of {LINE_BYTES} bytes (then appended to), "
          f"{args.samples} samples per row, {args.first} first views; {info['nproc']} CPUs ({info['cpu']}), "
          f"load at end {info['load']}; files on {ft.fs_type(work)}; whole run {time.time() - wall0:.0f} s.\n")
    print("Times are min / median. Floor: a `view` of a 4 KB file in the same session, "
          "alternating with the row's calls (claude-code: `Read` of it), or `wc -l` of the 100 MB file. "
          "Ratio: the medians' ratio, and the pair-by-pair ratios' min and median.\n")
    print("| view | boris | floor | ratio |\n| --- | ---: | ---: | ---: |")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    big.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
