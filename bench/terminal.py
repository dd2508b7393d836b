#!/usr/bin/env python3
"""Benchmark of Boris's terminal sessions (issue 19 §1), stdlib only.

Measured in one run, on this machine, against references on the same machine:
  1. yield precision: terminal_read with yield_time_ms Y on a session whose program
     works without output (`sleep`), for several Y: the answer's time against Y (the
     reference): overshoot in ms (goal: within 50 ms) and the ratio answer/Y;
  2. write latency: a python3 REPL prints the time it printed (`print(time.time())`),
     terminal_write answers once it waits at its prompt again: the answer's arrival
     minus the program's own output time (goal: a few ms), against the same round trip
     on a raw pseudo-terminal from this process (python's pty module: write, read
     until the prompt), as a ratio;
  3. throughput: N MB of lines through a session (`head -c N | tr | fold`), the call's
     time against the same pipeline on a raw pseudo-terminal read by this process, and
     the server's peak RSS (VmHWM).

Usage: python3 bench/terminal.py [--boris target/release/boris] [--writes 50]
                                [--mb 20] [--yields 0,100,500,1000,2000]
"""

from __future__ import annotations

import argparse
import json
import os
import pty
import re
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


class Client:
    """Raw newline-delimited JSON-RPC over the server's stdio."""

    def __init__(self, argv: list[str], cwd: str):
        self.proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     bufsize=0)
        self.next_id = 0

    def request(self, method: str, params: dict) -> dict:
        self.next_id += 1
        rid = self.next_id
        msg = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("server closed stdout")
            reply = json.loads(line)
            if reply.get("id") == rid and "method" not in reply:
                return reply

    def call(self, name: str, args: dict) -> str:
        reply = self.request("tools/call", {"name": name, "arguments": args})
        result = reply.get("result", {})
        text = "".join(b.get("text", "") for b in result.get("content", []))
        if result.get("isError"):
            raise RuntimeError(f"{name} failed: {text}")
        return text

    def initialize(self) -> None:
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                    "clientInfo": {"name": "bench", "version": "1"}})
        self.proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')

    def peak_rss_kb(self) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
        return -1

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def session_id(text: str) -> str:
    return re.search(r"session_id: (\S+)", text).group(1)


def yields(client: Client, values: list[int]) -> list[tuple[int, float]]:
    sid = session_id(client.call("terminal_start", {"command": "sleep 600",
                                                     "yield_time_ms": 0}))
    out = []
    for y in values:
        for _ in range(3):
            t = time.perf_counter()
            text = client.call("terminal_read", {"session_id": sid, "yield_time_ms": y})
            took = (time.perf_counter() - t) * 1000
            assert "status: running" in text, text
            out.append((y, took))
    client.call("terminal_stop", {"session_id": sid})
    return out


PRINT_TIME = "print(repr(time.time()))\n"


def boris_writes(client: Client, n: int) -> list[float]:
    sid = session_id(client.call("terminal_start", {"command": "python3 -q"}))
    client.call("terminal_write", {"session_id": sid, "text": "import time\n"})
    lat = []
    for _ in range(n):
        text = client.call("terminal_write", {"session_id": sid, "text": PRINT_TIME})
        got = time.time()
        assert "status: waiting for input" in text, text
        printed = float(re.search(r"\n(\d+\.\d+)\n", text).group(1))
        lat.append((got - printed) * 1000)
    client.call("terminal_stop", {"session_id": sid})
    return lat


def raw_writes(n: int) -> list[float]:
    """The same round trip on a pseudo-terminal this process reads itself: from the
    program's output time to the moment its next prompt has been read."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp("python3", ["python3", "-q"])
    buf = b""

    def read_until_prompt() -> bytes:
        nonlocal buf
        while not buf.endswith(b">>> "):
            select.select([fd], [], [])
            buf += os.read(fd, 65536)
        out, buf = buf, b""
        return out

    read_until_prompt()
    os.write(fd, b"import time\n")
    read_until_prompt()
    lat = []
    for _ in range(n):
        os.write(fd, PRINT_TIME.encode())
        out = read_until_prompt()
        got = time.time()
        printed = float(re.search(rb"\n(\d+\.\d+)\r?\n", out).group(1))
        lat.append((got - printed) * 1000)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    return lat


def pipeline(mb: int) -> str:
    return f"head -c {mb * 1000000} /dev/zero | tr '\\0' x | fold -w 100; echo; echo done"


def boris_throughput(client: Client, mb: int) -> float:
    t = time.perf_counter()
    text = client.call("terminal_start", {"command": pipeline(mb), "cols": 101,
                                           "yield_time_ms": 600000,
                                           "max_output_chars": 2000})
    took = time.perf_counter() - t
    assert text.endswith("done"), text[-200:]
    return took


def raw_throughput(mb: int) -> float:
    t = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp("bash", ["bash", "-c", pipeline(mb)])
    while True:
        try:
            if not os.read(fd, 65536):
                break
        except OSError:
            break
    os.waitpid(pid, 0)
    return time.perf_counter() - t


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(p * len(values)))]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--boris", default=str(REPO / "target/release/boris"))
    ap.add_argument("--writes", type=int, default=50)
    ap.add_argument("--mb", type=int, default=20)
    ap.add_argument("--yields", default="0,100,500,1000,2000")
    args = ap.parse_args()
    # A relative binary path names the file from here: the server starts in a temp dir.
    args.boris = type(args.boris)(os.path.abspath(args.boris))
    with tempfile.TemporaryDirectory() as work:
        client = Client([args.boris, "--transport", "stdio", "--sandbox", "off"], work)
        client.initialize()

        print("1. yield precision (terminal_read on a working program)")
        by_yield: dict[int, list[float]] = {}
        for y, took in yields(client, [int(v) for v in args.yields.split(",")]):
            by_yield.setdefault(y, []).append(took)
        worst = 0.0
        for y, times in by_yield.items():
            over = max(times) - y
            worst = max(worst, over)
            ratio = f"{max(times) / y:.3f}" if y else "-"
            print(f"   asked {y:5d} ms: answered in {min(times):8.1f}..{max(times):8.1f} ms"
                  f"  overshoot ≤ {over:5.1f} ms  ratio {ratio}")
        print(f"   worst overshoot: {worst:.1f} ms (goal: ≤ 50 ms)")

        print(f"2. write latency after the program's own output ({args.writes} writes)")
        boris = boris_writes(client, args.writes)
        raw = raw_writes(args.writes)
        for name, lat in [("boris terminal_write", boris), ("raw pty, this process", raw)]:
            print(f"   {name:22s}: median {statistics.median(lat):6.2f} ms"
                  f"  p90 {pct(lat, 0.9):6.2f} ms  max {max(lat):6.2f} ms")
        print(f"   ratio of medians boris/raw: "
              f"{statistics.median(boris) / max(statistics.median(raw), 0.001):.1f}"
              f"  (difference {statistics.median(boris) - statistics.median(raw):.2f} ms)")

        print(f"3. throughput: {args.mb} MB of 100-character lines")
        before = client.peak_rss_kb()
        b = boris_throughput(client, args.mb)
        r = raw_throughput(args.mb)
        print(f"   boris terminal_start: {b:6.2f} s ({args.mb / b:5.1f} MB/s)   "
              f"raw pty: {r:6.2f} s ({args.mb / r:5.1f} MB/s)   ratio {b / r:.1f}")
        print(f"   server peak RSS: {client.peak_rss_kb() / 1024:.1f} MB "
              f"(before: {before / 1024:.1f} MB)")
        client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
