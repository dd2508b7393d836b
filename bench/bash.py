#!/usr/bin/env python3
"""Benchmark of Boris's bash tool (issue 3's numbers), stdlib only.

Measured in one run, on this machine:
  1. round trip of `bash` with `true` through the MCP server vs a raw `bash -c true`
     spawn from the same Python process (median of N each);
  2. `yes | head -c 1000000000` through the tool against its floor, the same pipe into a
     file (`bash -c 'yes | head -c N > FILE'`, FILE beside Boris's spill files in the
     temp directory), alternating, --gb-runs of each: min/median wall time, the ratio
     tool/floor pair by pair (issue 21 §3: goal ≤ 1.25), and the server's peak RSS
     (VmHWM) against its RSS before;
  3. 1,000 calls mixing plain commands, timeouts, cancellations and background tasks,
     then: processes left in any group Boris started (by a unique marker in their
     command lines) and zombies whose parent is Boris.

Usage: python3 bench/bash.py [--boris target/release/boris] [--n 200] [--mixed 1000]
                            [--bytes 1000000000] [--gb-runs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MARKER = "7.31415"  # `sleep 7.31415`: no other process on the machine sleeps this long


class Client:
    """Raw newline-delimited JSON-RPC over the server's stdio."""

    def __init__(self, argv: list[str], cwd: str):
        self.proc = subprocess.Popen(
            argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, bufsize=0,
        )
        self.next_id = 0
        self.out = self.proc.stdout

    def send(self, msg: dict) -> None:
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())

    def request(self, method: str, params: dict, wait: bool = True):
        self.next_id += 1
        rid = self.next_id
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return self.wait(rid) if wait else rid

    def wait(self, rid: int) -> dict:
        while True:
            line = self.out.readline()
            if not line:
                raise RuntimeError("server closed stdout")
            msg = json.loads(line)
            if msg.get("id") == rid and "method" not in msg:
                return msg

    def call(self, name: str, args: dict, wait: bool = True):
        return self.request("tools/call", {"name": name, "arguments": args}, wait)

    def initialize(self) -> None:
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                    "clientInfo": {"name": "bench", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def vm(self, key: str) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])  # kB
        return -1

    def close(self) -> int:
        self.proc.stdin.close()
        return self.proc.wait(timeout=30)


def text_of(resp: dict) -> str:
    return "".join(c.get("text", "") for c in resp.get("result", {}).get("content", []))


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--boris", default=str(REPO / "target" / "release" / "boris"))
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--mixed", type=int, default=1000)
    ap.add_argument("--bytes", type=int, default=1_000_000_000)
    ap.add_argument("--gb-runs", type=int, default=5)
    args = ap.parse_args()
    # A relative binary path names the file from here: the server starts in a temp dir.
    args.boris = type(args.boris)(os.path.abspath(args.boris))

    work = tempfile.mkdtemp(prefix="boris-bench-bash-")
    client = Client([args.boris, "--transport", "stdio", "--log-level", "warn"], work)
    client.initialize()
    rows = []

    # 1. `true` round trip vs a raw spawn.
    for _ in range(20):
        client.call("bash", {"command": "true"})
        subprocess.run(["/bin/bash", "-c", "true"])
    tool, raw = [], []
    for _ in range(args.n):
        t = time.perf_counter_ns()
        r = client.call("bash", {"command": "true"})
        tool.append((time.perf_counter_ns() - t) / 1e6)
        assert "exit_code: 0" in text_of(r), r
        t = time.perf_counter_ns()
        subprocess.run(["/bin/bash", "-c", "true"])
        raw.append((time.perf_counter_ns() - t) / 1e6)
    p50_tool, p50_raw = statistics.median(tool), statistics.median(raw)
    rows.append(("`bash` `true` round trip, p50 / p99 (ms)", f"{p50_tool:.2f} / {pct(tool, 99):.2f}",
                 f"raw `bash -c true`: {p50_raw:.2f} / {pct(raw, 99):.2f}",
                 f"+{p50_tool - p50_raw:.2f} ms (target ≤ +2 ms)"))

    # 2. A gigabyte through the pipe, against the same pipe into a file.
    rss_before = client.vm("VmRSS")
    floor_file = Path(work) / "floor.out"
    tool_s, floor_s = [], []
    for i in range(args.gb_runs):
        # Alternate which goes first, so that drift in the machine's speed hits both.
        for which in (("tool", "floor") if i % 2 == 0 else ("floor", "tool")):
            t = time.perf_counter_ns()
            if which == "tool":
                r = client.call("bash", {"command": f"yes | head -c {args.bytes}", "timeout": 600000})
                tool_s.append((time.perf_counter_ns() - t) / 1e9)
                body = text_of(r)
                assert "exit_code: 0" in body and "Truncated: output was" in body, body[-300:]
            else:
                subprocess.run(["/bin/bash", "-c", f"yes | head -c {args.bytes} > {floor_file}"], check=True)
                floor_s.append((time.perf_counter_ns() - t) / 1e9)
                assert floor_file.stat().st_size == args.bytes
                floor_file.unlink()
    hwm = client.vm("VmHWM")
    pairs = sorted(a / b for a, b in zip(tool_s, floor_s))
    rows.append((f"`yes \\| head -c {args.bytes}`, min / median of {args.gb_runs}",
                 f"{min(tool_s):.2f} / {statistics.median(tool_s):.2f} s "
                 f"({args.bytes / statistics.median(tool_s) / 1e6:.0f} MB/s)",
                 f"into a file: {min(floor_s):.2f} / {statistics.median(floor_s):.2f} s",
                 f"tool / floor pair by pair: min {pairs[0]:.2f}, median {statistics.median(pairs):.2f} "
                 "(goal ≤ 1.25)"))
    rows.append(("server peak RSS (VmHWM) after it", f"{hwm / 1024:.1f} MiB",
                 f"RSS before: {rss_before / 1024:.1f} MiB", "target ≤ 32 MiB"))

    # 3. 1,000 mixed calls.
    t = time.perf_counter_ns()
    kinds = {"plain": 0, "timeout": 0, "cancel": 0, "background": 0}
    for i in range(args.mixed):
        k = i % 10
        if k < 6:
            kinds["plain"] += 1
            client.call("bash", {"command": f"echo {i}; (sleep {MARKER} &) ; true"})
        elif k < 8:
            kinds["timeout"] += 1
            r = client.call("bash", {"command": f"sleep {MARKER}", "timeout": 20})
            assert "timed out" in text_of(r), r
        elif k == 8:
            kinds["cancel"] += 1
            rid = client.call("bash", {"command": f"sleep {MARKER}"}, wait=False)
            time.sleep(0.01)
            client.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                         "params": {"requestId": rid}})
        else:
            kinds["background"] += 1
            r = client.call("bash", {"command": f"sleep {MARKER}", "run_in_background": True})
            tid = text_of(r).split("task_id: ")[1].split()[0]
            client.call("task_stop", {"task_id": tid})
    client.call("bash", {"command": "true"})  # every earlier call has been answered or dropped
    mixed_secs = (time.perf_counter_ns() - t) / 1e9
    time.sleep(1.0)
    left = subprocess.run(["pgrep", "-f", f"sleep {MARKER}"], capture_output=True, text=True).stdout.split()
    zombies = [
        line for line in subprocess.run(["ps", "-eo", "ppid=,stat="], capture_output=True, text=True).stdout.splitlines()
        if line.split()[0] == str(client.proc.pid) and line.split()[1].startswith("Z")
    ]
    rows.append((f"{args.mixed} mixed calls {kinds}", f"{mixed_secs:.1f} s",
                 f"processes left: {len(left)}, zombies of Boris: {len(zombies)}", "target 0 / 0"))
    code = client.close()
    time.sleep(0.5)
    left_after = subprocess.run(["pgrep", "-f", f"sleep {MARKER}"], capture_output=True, text=True).stdout.split()
    rows.append(("after stdin EOF", f"exit code {code}", f"processes left: {len(left_after)}", "target 0 / 0"))

    print(f"# bash benchmark ({os.cpu_count()} cores, `{' '.join(sys.argv)}`)\n")
    print("| measure | boris | reference | note |\n| --- | --- | --- | --- |")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
