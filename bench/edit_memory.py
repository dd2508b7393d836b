#!/usr/bin/env python3
"""Peak RSS (VmHWM) and time of one `str_replace` on a large file, for issue 14's memory
goal (peak at most file size x 2 + 16 MiB). Stdlib only; reuses file_tools.py's client.

    cargo build --release --bin boris
    python3 bench/edit_memory.py [--size-mib 10] [--boris target/release/boris]

Each case runs in a fresh server: `view` of a small range (view-before-edit), then one
`str_replace` near the end of the file (a hit) or of a string absent from it (a miss,
which also searches for the closest region). VmHWM is read from /proc after the call.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import file_tools as ft  # noqa: E402

MIB = 1 << 20


def run_case(boris: Path, work: Path, size: int, kind: str) -> dict:
    path = work / f"edit_{kind}.txt"
    line = "abcdefghij" * 8 + "0123\n"  # 85 bytes
    n = size // len(line)
    body = line * (n - 1) + "UNIQUE-TAIL-LINE-7f3e\n"
    path.write_text(body)
    spec = ft.boris_spec(boris, work)
    env = dict(os.environ)
    env.update(ft.QUIET_ENV)
    c = ft.Client(spec.argv, env, work / f"{kind}.stderr", work)
    try:
        c.call("initialize", ft.initialize_params())
        c.notify("notifications/initialized")
        rid, data = ft.tool_request(c, "view", {"path": str(path), "view_range": [1, 5]})
        c.timed(rid, data)
        before = c.proc_status().get("VmHWM", 0) / 1024
        old = "UNIQUE-TAIL-LINE-7f3e" if kind == "hit" else "NOT-IN-THE-FILE-0000\nxyz"
        rid, data = ft.tool_request(c, "str_replace", {"path": str(path), "old_str": old, "new_str": "EDITED"})
        ns, msg = c.timed(rid, data)
        is_err, text = ft.result_text(msg)
        if (kind == "hit") == is_err:
            sys.exit(f"{kind}: unexpected result: {text[:300]}")
        after = c.proc_status().get("VmHWM", 0) / 1024
    finally:
        c.close()
    return {"kind": kind, "before": before, "after": after, "ms": ns / 1e6}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boris", default=str(ft.DEFAULT_BORIS))
    ap.add_argument("--size-mib", type=float, default=10)
    args = ap.parse_args()
    # A relative binary path names the file from here: the server starts in a temp dir.
    args.boris = type(args.boris)(os.path.abspath(args.boris))
    size = int(args.size_mib * MIB)
    with tempfile.TemporaryDirectory(prefix="boris-editmem-") as tmp:
        work = Path(tmp)
        limit = size * 2 / MIB + 16
        print(f"file {size / MIB:.1f} MiB; goal: peak RSS <= {limit:.1f} MiB")
        print("| case | VmHWM before the edit | VmHWM after | edit time |")
        print("|---|---:|---:|---:|")
        for kind in ("hit", "miss"):
            r = run_case(Path(args.boris), work, size, kind)
            ok = "ok" if r["after"] <= limit else "OVER"
            print(f"| str_replace, {kind} | {r['before']:.1f} MiB | {r['after']:.1f} MiB ({ok}) | {r['ms']:.1f} ms |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
