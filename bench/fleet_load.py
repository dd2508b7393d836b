#!/usr/bin/env python3
"""The load table of issue 31 §4: what one Boris holds on this machine, and through the
three-instance fleet of tests/fleet (HAProxy 2.6). Prints Markdown on stdout.

1. Memory: a fresh server, then IDLE sessions opened (initialize, initialized) and the
   server's VmRSS read; a fresh server, then TASKED sessions each with a background
   `sleep` running; a fresh server, then TERMS sessions each with a terminal (`bash
   --norc`). Per session = (RSS after - RSS with one session) / (sessions - 1). The
   server's own RSS; its helpers (the sandbox's jail, the terminals' shells, the
   commands) are counted apart as the PSS of everything under it.
2. Latency: `boris-spec bench --transport http` — a 4 KB `view`, session era, C
   concurrent clients with no think time (closed loop: the throughput curve), and at
   100 and more clients also paced (--think-ms between a client's calls), the (one thread and one session each, a fresh connection a
   call) for C in --clients; p50/p99 and calls/s, what share of the 2 cores the load
   generator took (its user+system CPU over its wall time, session set-up included),
   and CPU per call of the generator and of the server(s) (from /proc).
3. The same through the fleet at the largest two C (closed loop and paced): three instances on the same cores
   behind HAProxy; sessions balanced round robin and sticky.

Every server: --sandbox auto (the default), limits raised past the clients
(--max-sessions, --max-connections-per-ip: the defaults cap one instance at 256 sessions
and 64 connections an address), --session-idle-timeout 3600.

Usage: python3 bench/fleet_load.py [--boris target/release/boris]
         [--spec target/release/boris-spec] [--idle 500] [--tasked 100] [--terms 100]
         [--clients 1,10,100,500] [--calls 2000]
"""

import argparse
import json
import os
import re
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "fleet"))
import fleet  # noqa: E402  (the fleet test's client, instances and proxy config)

LIMITS = ["--max-sessions", "5000", "--max-connections", "5000",
          "--max-connections-per-ip", "5000", "--session-idle-timeout", "3600"]


def status_kb(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def descendants(pid):
    out = subprocess.run(["ps", "-e", "-o", "pid=,ppid="], capture_output=True, text=True).stdout
    children = {}
    pairs = [tuple(map(int, l.split())) for l in out.splitlines() if l.strip()]
    for p, pp in pairs:
        children.setdefault(pp, []).append(p)
    found, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            found.append(c)
            todo.append(c)
    return found


def pss_kb(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class Server:
    def __init__(self, boris, workdir):
        fleet.BORIS = boris
        self.inst = fleet.Instance("bench", workdir, workdir.parent, LIMITS)
        self.port = self.inst.port
        self.pid = self.inst.proc.pid

    def memory(self):
        time.sleep(1.0)  # let answers and spawns settle
        helpers = sum(pss_kb(p) for p in descendants(self.pid))
        return status_kb(self.pid, "VmRSS"), helpers

    def stop(self):
        self.inst.proc.terminate()
        try:
            self.inst.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.inst.proc.kill()


def start(boris, tmp, name):
    work = tmp / name / "work"
    work.mkdir(parents=True)
    (work / "four.txt").write_text("x" * 4095 + "\n")
    return Server(boris, work)


def memory_row(boris, tmp, label, n, setup):
    s = start(boris, tmp, label.replace(" ", "-"))
    try:
        first = fleet.Session(s.port, "m0")
        setup(first, 0)
        base, base_helpers = s.memory()
        for k in range(1, n):
            setup(fleet.Session(s.port, f"m{k}"), k)
        rss, helpers = s.memory()
    finally:
        s.stop()
    per = (rss - base) / (n - 1)
    per_helpers = (helpers - base_helpers) / (n - 1)
    return (f"| {label} | {n} | {base / 1024:.1f} MiB | {rss / 1024:.1f} MiB | "
            f"{per:.0f} KiB | {helpers / 1024:.1f} MiB | {per_helpers:.0f} KiB |")


def idle(_s, _k):
    pass


def tasked(s, k):
    r = s.call("bash", {"command": f"sleep 3600.{k}", "run_in_background": True})
    assert "task_" in r.text, r.seen()


def terminal(s, _k):
    r = s.call("terminal_start", {"command": "bash --norc", "yield_time_ms": 100})
    assert "term_" in r.text, r.seen()


def cpu_s(pids):
    """User + system CPU seconds of these processes so far."""
    total = 0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def bench(spec, target, clients, calls, think_ms=0):
    """boris-spec bench; `target` is ["--server", CMD] or ["--url", ADDR]."""
    cmd = [spec, "bench", "--transport", "http", *target, "--call", "view",
           '{"path":"four.txt"}', "-n", str(calls), "-c", str(clients),
           "--think-ms", str(think_ms),
           "--warmup", str(min(clients, 50)), "--timeout-ms", "60000", "--json"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        raise RuntimeError(f"{shlex.join(cmd)}: {out.stderr[-2000:]}")
    report = json.loads(out.stdout)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return report, cpu, wall


def latency_row(label, clients, think_ms, report, cpu, wall, server_cpu):
    lat = report["latency_ms"]
    calls = report["ok_calls"] + report["failed_calls"]
    rate = report["ok_calls"] / report["elapsed_s"] if report["elapsed_s"] else 0
    share = f"{cpu / wall / 2 * 100:.0f} %"
    per_call = lambda seconds: f"{seconds / calls * 1e3:.2f}" if calls else "-"  # noqa: E731
    return (f"| {label} | {clients} | {think_ms} | {lat['p50']} | {lat['p99']} | {lat['max']} | "
            f"{rate:.0f} | {report['ok_calls']} / {report['failed_calls']} | {share} | "
            f"{per_call(cpu)} | {per_call(server_cpu)} |")


def main():
    fleet.TOKEN = None  # boris-spec bench sends none
    ap = argparse.ArgumentParser()
    ap.add_argument("--boris", default=str(REPO / "target/release/boris"))
    ap.add_argument("--spec", default=str(REPO / "target/release/boris-spec"))
    ap.add_argument("--idle", type=int, default=500)
    ap.add_argument("--tasked", type=int, default=100)
    ap.add_argument("--terms", type=int, default=100)
    ap.add_argument("--clients", default="1,10,100,500")
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--think-ms", type=int, default=100,
                    help="the paced rows' pause of each client between calls")
    ap.add_argument("--skip-memory", action="store_true")
    args = ap.parse_args()
    boris, spec = os.path.realpath(args.boris), os.path.realpath(args.spec)
    tmp = Path(tempfile.mkdtemp(prefix="boris-fleet-load-"))
    load = os.getloadavg()
    print(f"<!-- load average at start: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; "
          f"{os.cpu_count()} cores -->")

    if not args.skip_memory:
        print("| sessions | count | server RSS, one session | server RSS, all | per session (server) | helpers' PSS, all | per session (helpers) |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
        print(memory_row(boris, tmp, "idle", args.idle, idle), flush=True)
        print(memory_row(boris, tmp, "with a background task", args.tasked, tasked), flush=True)
        print(memory_row(boris, tmp, "with a terminal", args.terms, terminal), flush=True)
        print()

    clients = [int(c) for c in args.clients.split(",")]
    print("| where | clients | think ms | p50 ms | p99 ms | max ms | calls/s | answered / failed "
          "| load generator's share of 2 cores | generator CPU ms a call | servers' CPU ms a call |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    runs = [(c, 0) for c in clients] + [(c, args.think_ms) for c in clients if c >= 100]
    for c, think in runs:
        # Started here, not by boris-spec, so that the generator's CPU time is its own.
        s = start(boris, tmp, f"latency-{c}-{think}")
        try:
            before = cpu_s([s.pid])
            report, cpu, wall = bench(spec, ["--url", f"127.0.0.1:{s.port}"], c,
                                      max(args.calls, c * 2), think)
            server_cpu = cpu_s([s.pid]) - before
        finally:
            s.stop()
        print(latency_row("one instance", c, think, report, cpu, wall, server_cpu), flush=True)

    work = tmp / "fleet" / "work"
    work.mkdir(parents=True)
    (work / "four.txt").write_text("x" * 4095 + "\n")
    fleet.BORIS = boris
    instances = [fleet.Instance(f"b{i}", work, tmp, LIMITS) for i in (1, 2, 3)]
    port = fleet.free_port()
    cfg = tmp / "haproxy.cfg"
    cfg.write_text(fleet.haproxy_config(port, instances))
    proxy = subprocess.Popen(["haproxy", "-db", "-f", str(cfg)],
                             stdout=open(tmp / "haproxy.log", "w"), stderr=subprocess.STDOUT)
    try:
        time.sleep(1.5)
        pids = [i.proc.pid for i in instances]
        for c, think in [(c, t) for c in clients[-2:] for t in (0, args.think_ms)]:
            before = cpu_s(pids)
            report, cpu, wall = bench(spec, ["--url", f"127.0.0.1:{port}"], c,
                                      max(args.calls, c * 2), think)
            server_cpu = cpu_s(pids) - before
            print(latency_row("fleet of 3 (HAProxy)", c, think, report, cpu, wall, server_cpu),
                  flush=True)
    finally:
        proxy.terminate()
        for i in instances:
            i.proc.terminate()
        for i in instances:
            i.proc.wait(timeout=15)
        proxy.wait()
    subprocess.run(["rm", "-rf", str(tmp)])


if __name__ == "__main__":
    main()
