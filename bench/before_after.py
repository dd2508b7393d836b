#!/usr/bin/env python3
"""Two Boris binaries side by side, call by call: `view` of a 4 KB file and `str_replace`
in it (flipping a token back and forth), per call.

Both servers run at once over stdio, each in its own copy of the files; every iteration
calls one then the other (the order alternating), so load on a shared machine hits both
alike. Prints each binary's median and mean wall time, the server's CPU time per call
(its threads' schedstat: far less sensitive to a busy machine than wall time), and the
ratios after / before: of the medians, the pair-by-pair median, and of the CPU times. Environment variables pass through, so e.g.
`BORIS_DENY_DIRS=.env,secrets` measures both with a deny list.

    python3 bench/before_after.py --before OLD/boris --after target/release/boris \
        [--calls 2000] [--tmp /dev/shm]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

TOKEN_A, TOKEN_B = "alpha_7f3a", "beta_7f3a"


class Server:
    def __init__(self, binary: Path, workdir: Path) -> None:
        self.proc = subprocess.Popen(
            [str(binary), "--transport", "stdio", "--workdir", str(workdir), "--log-level", "warn",
             "--require-view-before-edit", "false"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=workdir,
        )
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "before-after", "version": "0"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg: dict) -> None:
        assert self.proc.stdin
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()

    def request(self, method: str, params: dict) -> dict:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        assert self.proc.stdout
        while True:
            msg = json.loads(self.proc.stdout.readline())
            if msg.get("id") == self.next_id:
                return msg

    def timed_call(self, tool: str, args: dict) -> int:
        start = time.perf_counter_ns()
        resp = self.request("tools/call", {"name": tool, "arguments": args})
        elapsed = time.perf_counter_ns() - start
        if "error" in resp or resp["result"].get("isError"):
            raise SystemExit(f"{tool} failed: {resp}")
        return elapsed

    def cpu_ns(self) -> int:
        """CPU time the server's threads have run, in ns (/proc/PID/task/*/schedstat):
        what a call costs the server, whatever else the machine runs meanwhile."""
        total = 0
        for task in Path(f"/proc/{self.proc.pid}/task").iterdir():
            try:
                total += int((task / "schedstat").read_text().split()[0])
            except (OSError, ValueError, IndexError):
                pass
        return total

    def close(self) -> None:
        assert self.proc.stdin
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, required=True)
    ap.add_argument("--after", type=Path, required=True)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--tmp", help="where the files go (e.g. /dev/shm: no fsync, whose noise on a busy disk drowns a few percent)")
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="before-after-", dir=args.tmp))
    text = "".join(f"line {i:04} of the four kilobyte file, padding padding\n" for i in range(70))
    servers = {}
    for name in ("before", "after"):
        d = root / name
        d.mkdir()
        (d / "view.txt").write_text(text[:4096])
        (d / "edit.txt").write_text(text[:4000] + TOKEN_A + "\n")
        servers[name] = Server(getattr(args, name), d.resolve())
    times: dict[tuple[str, str], list[int]] = {}
    cpu: dict[tuple[str, str], int] = {}
    token = {name: TOKEN_A for name in servers}
    for op in ("view", "str_replace"):
        for i in range(args.warmup + args.calls):
            if i == args.warmup:
                for name in servers:
                    cpu[(name, op)] = -servers[name].cpu_ns()
            order = ("before", "after") if i % 2 == 0 else ("after", "before")
            for name in order:
                d = root / name
                if op == "view":
                    ns = servers[name].timed_call("view", {"path": str(d / "view.txt")})
                else:
                    new = TOKEN_B if token[name] == TOKEN_A else TOKEN_A
                    ns = servers[name].timed_call(
                        "str_replace", {"path": str(d / "edit.txt"), "old_str": token[name], "new_str": new})
                    token[name] = new
                if i >= args.warmup:
                    times.setdefault((name, op), []).append(ns)
        for name in servers:
            cpu[(name, op)] += servers[name].cpu_ns()
    for s in servers.values():
        s.close()
    print(f"{args.calls} calls of each, interleaved; files in {args.tmp or tempfile.gettempdir()}; "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("| call | before: median / mean wall, server CPU per call (ms) | after: the same | after / before: wall medians, pairs' median; server CPU |")
    print("| --- | ---: | ---: | ---: |")
    for op in ("view", "str_replace"):
        b, a = times[("before", op)], times[("after", op)]
        pairs = statistics.median(x / y for x, y in zip(a, b))
        bm, am = statistics.median(b) / 1e6, statistics.median(a) / 1e6
        bc, ac = (cpu[(n, op)] / args.calls / 1e6 for n in ("before", "after"))
        print(f"| {op} 4 KB | {bm:.3f} / {statistics.fmean(b) / 1e6:.3f}, {bc:.4f} | {am:.3f} / "
              f"{statistics.fmean(a) / 1e6:.3f}, {ac:.4f} | {am / bm:.3f}×, {pairs:.3f}×; {ac / bc:.3f}× |")


if __name__ == "__main__":
    main()
