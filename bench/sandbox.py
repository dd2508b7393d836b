#!/usr/bin/env python3
"""What the sandbox costs (issue 18 §5), measured side by side in one run.

Two Boris servers on the same binary, one started with `--sandbox off` and one with the
sandbox on (`--sandbox on`, or as `--probe` pretends: landlock-only for the degraded
path), each in its own work directory:

  1. `true` through the bash tool: the round trip, median and p90 of N calls (the first
     call of a session, which starts its jail, is reported on its own);
  2. `yes | head -c 1000000000` through the tool: wall time and the ratio to unconfined;
  3. with --tree N: `true` in a work directory holding N directories (the deny list
     and git metadata are looked for under the allowed directories before each
     command), against the same directory unconfined.

Ratios are confined / unconfined (1.00 = no cost). Usage:
  python3 bench/sandbox.py [--boris target/release/boris] [--n 300] [--tree 2000]
      [--probe landlock-only]
Stdlib only; reuses bench/file_tools.py's JSON-RPC client.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import file_tools as ft  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


def start(boris: Path, workdir: Path, sandbox: str, probe: str | None, log: Path) -> ft.Client:
    env = dict(os.environ)
    env.pop("BORIS_SANDBOX_PROBE", None)
    if probe:
        env["BORIS_SANDBOX_PROBE"] = probe
    argv = [str(boris), "--transport", "stdio", "--sandbox", sandbox, "--deny-dir", ".env",
            "--log-level", "warn"]
    c = ft.Client(argv, env, log, workdir)
    c.call("initialize", ft.initialize_params())
    c.notify("notifications/initialized")
    return c


def bash(c: ft.Client, command: str, timeout_ms: int = 600_000) -> tuple[int, str]:
    rid, data = c.encode("tools/call", {"name": "bash", "arguments": {"command": command, "timeout": timeout_ms}})
    ns, msg = c.timed(rid, data)
    if "error" in msg:
        raise ft.RpcError(str(msg["error"]))
    text = msg["result"]["content"][0]["text"]
    if msg["result"].get("isError") or "exit_code: 0" not in text:
        raise ft.RpcError(f"{command!r} failed: {text[:300]}")
    return ns, text


def rounds(c: ft.Client, n: int) -> list[float]:
    return sorted(bash(c, "true")[0] / 1e6 for _ in range(n))


def pct(xs: list[float], p: float) -> float:
    return xs[min(len(xs) - 1, int(p * len(xs)))]


def make_tree(root: Path, dirs: int) -> None:
    for i in range(dirs):
        d = root / f"d{i // 100}" / f"e{i % 100}"
        d.mkdir(parents=True, exist_ok=True)
        (d / "f.txt").write_text("x\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--boris", default=str(REPO / "target/release/boris"))
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--gb", type=int, default=1_000_000_000, help="bytes of output for step 2")
    ap.add_argument("--reps", type=int, default=5, help="runs of step 2 on each server")
    ap.add_argument("--tree", type=int, default=2000, help="directories for step 3 (0: skip)")
    ap.add_argument("--probe", help="BORIS_SANDBOX_PROBE for the confined server (landlock-only)")
    args = ap.parse_args()
    # A relative binary path names the file from here: the server starts in a temp dir.
    args.boris = type(args.boris)(os.path.abspath(args.boris))
    boris = Path(args.boris).resolve()
    rows: list[tuple[str, str, str, str]] = []
    with tempfile.TemporaryDirectory(prefix="boris-sandbox-bench-") as tmp:
        tmp = Path(tmp)
        for name in ("off", "on"):
            (tmp / name).mkdir()
        log = tmp / "stderr.log"
        off = start(boris, tmp / "off", "off", None, log)
        on = start(boris, tmp / "on", "on" if not args.probe else "auto", args.probe, log)
        try:
            first_off = bash(off, "true")[0] / 1e6
            first_on = bash(on, "true")[0] / 1e6
            rows.append(("`true`, the session's first call", f"{first_off:.2f} ms", f"{first_on:.2f} ms", f"{first_on / first_off:.2f}×"))
            # Interleaved, so both see the same machine.
            a, b = [], []
            for _ in range(args.n):
                a.append(bash(off, "true")[0] / 1e6)
                b.append(bash(on, "true")[0] / 1e6)
            a.sort()
            b.sort()
            rows.append((f"`true`, median of {args.n}", f"{statistics.median(a):.3f} ms", f"{statistics.median(b):.3f} ms",
                         f"{statistics.median(b) / statistics.median(a):.2f}× (+{statistics.median(b) - statistics.median(a):.3f} ms)"))
            rows.append((f"`true`, p90 of {args.n}", f"{pct(a, .9):.3f} ms", f"{pct(b, .9):.3f} ms", f"{pct(b, .9) / pct(a, .9):.2f}×"))
            cmd = f"yes | head -c {args.gb}"
            t_off, t_on = [], []
            for _ in range(args.reps):
                t0 = time.perf_counter()
                bash(off, cmd)
                t_off.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                bash(on, cmd)
                t_on.append(time.perf_counter() - t0)
            mo, mn = statistics.median(t_off), statistics.median(t_on)
            rows.append((f"`{cmd}`, median of {args.reps}", f"{mo:.2f} s", f"{mn:.2f} s", f"{mn / mo:.2f}×"))
            lo, ln = min(t_off), min(t_on)
            rows.append((f"`{cmd}`, fastest of {args.reps}", f"{lo:.2f} s", f"{ln:.2f} s", f"{ln / lo:.2f}×"))
        finally:
            off.close()
            on.close()
        if args.tree:
            for name in ("off", "on"):
                make_tree(tmp / f"tree-{name}", args.tree)
            off = start(boris, tmp / "tree-off", "off", None, log)
            on = start(boris, tmp / "tree-on", "on" if not args.probe else "auto", args.probe, log)
            try:
                bash(off, "true")
                bash(on, "true")
                a, b = [], []
                for _ in range(max(20, args.n // 5)):
                    a.append(bash(off, "true")[0] / 1e6)
                    b.append(bash(on, "true")[0] / 1e6)
                ma, mb = statistics.median(a), statistics.median(b)
                rows.append((f"`true` in a tree of {args.tree} directories, median of {len(a)}", f"{ma:.3f} ms", f"{mb:.3f} ms",
                             f"{mb / ma:.2f}× (+{mb - ma:.3f} ms)"))
            finally:
                off.close()
                on.close()
    mode = f"sandbox on ({args.probe})" if args.probe else "sandbox on"
    print(f"| what | --sandbox off | {mode} | confined / unconfined |")
    print("|---|---:|---:|---:|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
