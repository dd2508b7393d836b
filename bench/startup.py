#!/usr/bin/env python3
"""Startup time of one or more stdio MCP servers: spawn -> `initialize` answered.

    python3 bench/startup.py [-n 300] BINARY [BINARY ...]

Each binary is started as `BINARY --transport stdio --workdir <empty temp dir>`; the
clock runs from just before the spawn to reading the answer's line. The binaries take
turns (A B A B ...) so a drift in the machine's speed hits them alike; the medians are
printed side by side with their ratio to the first. Used to choose the release profile
(issue 11; figures in docs/install.md).
"""
import argparse
import json
import statistics
import subprocess
import tempfile
import time

INIT = (json.dumps({
    "jsonrpc": "2.0", "id": 0, "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "startup", "version": "1"}},
}) + "\n").encode()


def once(binary: str, workdir: str) -> float:
    t0 = time.perf_counter()
    p = subprocess.Popen([binary, "--transport", "stdio", "--workdir", workdir],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
    assert p.stdin is not None and p.stdout is not None
    p.stdin.write(INIT)
    p.stdin.flush()
    line = p.stdout.readline()
    t1 = time.perf_counter()
    p.stdin.close()
    p.wait()
    if b'"result"' not in line:
        raise SystemExit(f"{binary}: no initialize result: {line!r}")
    return (t1 - t0) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=300)
    ap.add_argument("binaries", nargs="+")
    args = ap.parse_args()
    workdir = tempfile.mkdtemp()
    times: dict[str, list[float]] = {b: [] for b in args.binaries}
    for b in args.binaries:  # warm-up: page cache, dynamic loader
        once(b, workdir)
    for _ in range(args.n):
        for b in args.binaries:
            times[b].append(once(b, workdir))
    base = statistics.median(times[args.binaries[0]])
    for b in args.binaries:
        t = sorted(times[b])
        med = statistics.median(t)
        print(f"{b}: p50 {med:.2f} ms  p90 {t[int(len(t) * 0.9)]:.2f} ms  "
              f"min {t[0]:.2f} ms  ratio {med / base:.2f}")


if __name__ == "__main__":
    main()
