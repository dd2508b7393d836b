#!/usr/bin/env python3
"""Load test of Boris's streamable HTTP transport (issue 5's numbers), stdlib only.

On loopback, against one `boris --transport http --port 0` (a fresh temp workdir):

  1. SESSIONS concurrent sessions (one thread and one keep-alive connection each) make
     CALLS `view` calls each of a 4 KB file: errors, latency p50/p90/p99, calls/s, and
     the server's peak RSS (VmHWM from /proc) against a 64 MiB target;
  2. CHURN sessions are opened and closed (DELETE) one after another, each starting one
     background task (`sleep <marker>`, which only the DELETE can end early): the
     server's VmRSS before and after, and processes left with the marker (none allowed).

Everything is bounded: per-request timeouts, and a deadline for the whole run.

Usage: python3 bench/http_load.py [--boris target/release/boris] [--sessions 32]
                                  [--calls 1000] [--churn 200] [--deadline 600]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MARKER = "41.2718"  # `sleep 41.2718`: no other process on the machine sleeps this long
RSS_TARGET_MIB = 64
PROTOCOL = "2025-11-25"
TIMEOUT = 30  # seconds, per request


def proc_status(pid: int) -> dict[str, int]:
    """VmRSS, VmHWM, Threads… from /proc/<pid>/status (kB values as ints)."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, rest = line.partition(":")
            parts = rest.split()
            if parts and parts[0].isdigit():
                out[key] = int(parts[0])
    return out


def marker_processes() -> list[str]:
    """Command lines (other than ours) that contain the marker."""
    found = []
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        if f"sleep {MARKER}" in cmd:
            found.append(f"{entry} {cmd}")
    return found


def sse_messages(body: str) -> list[dict]:
    """JSON messages in an event-stream body (empty priming events skipped)."""
    msgs, data = [], []
    for line in body.replace("\r\n", "\n").split("\n") + [""]:
        if line == "":
            if data and "".join(data).strip():
                msgs.append(json.loads("\n".join(data)))
            data = []
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
    return msgs


class Session:
    """One MCP session over one keep-alive HTTP/1.1 connection."""

    def __init__(self, host: str, port: int):
        self.conn = http.client.HTTPConnection(host, port, timeout=TIMEOUT)
        self.sid: str | None = None
        self.next_id = 0

    def post(self, msg: dict) -> tuple[int, dict[str, str], str]:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        if self.sid:
            headers["Mcp-Session-Id"] = self.sid
            headers["MCP-Protocol-Version"] = PROTOCOL
        self.conn.request("POST", "/mcp", body=json.dumps(msg), headers=headers)
        r = self.conn.getresponse()
        body = r.read().decode()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, body

    def request(self, method: str, params: dict) -> dict:
        self.next_id += 1
        rid = self.next_id
        status, headers, body = self.post(
            {"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        if status != 200:
            raise RuntimeError(f"{method}: HTTP {status}: {body[:200]}")
        if "event-stream" in headers.get("content-type", ""):
            msgs = sse_messages(body)
        else:
            msgs = [json.loads(body)]
        for m in msgs:
            if m.get("id") == rid and "method" not in m:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                if method == "initialize":
                    self.sid = headers.get("mcp-session-id")
                return m["result"]
        raise RuntimeError(f"{method}: no response in {body[:200]!r}")

    def initialize(self) -> None:
        self.request("initialize", {
            "protocolVersion": PROTOCOL, "capabilities": {},
            "clientInfo": {"name": "http_load", "version": "1"}})
        if not self.sid:
            raise RuntimeError("initialize: no Mcp-Session-Id")
        status, _, body = self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        if status != 202:
            raise RuntimeError(f"initialized: HTTP {status}: {body[:200]}")

    def call(self, tool: str, args: dict) -> str:
        r = self.request("tools/call", {"name": tool, "arguments": args})
        text = "".join(c.get("text", "") for c in r.get("content", []))
        if r.get("isError"):
            raise RuntimeError(f"{tool}: {text[:200]}")
        return text

    def delete(self) -> int:
        self.conn.request("DELETE", "/mcp", headers={
            "Mcp-Session-Id": self.sid or "", "MCP-Protocol-Version": PROTOCOL})
        r = self.conn.getresponse()
        r.read()
        return r.status

    def close(self) -> None:
        self.conn.close()


def start_server(boris: str, workdir: str) -> tuple[subprocess.Popen, str, int, Path]:
    log = Path(workdir).parent / "boris-stderr.log"
    err = open(log, "wb")
    proc = subprocess.Popen(
        [boris, "--transport", "http", "--host", "127.0.0.1", "--port", "0",
         "--workdir", workdir],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
    err.close()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        m = re.search(r"bound=(\S+):(\d+)", log.read_text(errors="replace"))
        if m:
            return proc, m.group(1), int(m.group(2)), log
        if proc.poll() is not None:
            break
        time.sleep(0.02)
    proc.kill()
    raise RuntimeError(f"boris did not report its address: {log.read_text()[-2000:]}")


def percentile(sorted_vals: list[float], p: float) -> float:
    if not sorted_vals:
        return float("nan")
    k = (len(sorted_vals) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(sorted_vals) - 1)
    return sorted_vals[lo] + (sorted_vals[hi] - sorted_vals[lo]) * (k - lo)


def phase_views(host: str, port: int, sessions: int, calls: int, path: str,
                deadline: float) -> dict:
    latencies: list[list[float]] = [[] for _ in range(sessions)]
    errors: list[str] = []
    lock = threading.Lock()
    barrier = threading.Barrier(sessions + 1)

    def worker(i: int) -> None:
        s = Session(host, port)
        try:
            s.initialize()
            s.call("view", {"path": path})  # warm-up, unmeasured
        except Exception as e:  # noqa: BLE001
            with lock:
                errors.append(f"session {i} setup: {e}")
            barrier.wait()
            return
        barrier.wait()
        out = latencies[i]
        for _ in range(calls):
            if time.monotonic() > deadline:
                with lock:
                    errors.append(f"session {i}: deadline reached after {len(out)} calls")
                break
            t0 = time.perf_counter()
            try:
                text = s.call("view", {"path": path})
                if "\t" not in text:
                    raise RuntimeError(f"unexpected view text {text[:80]!r}")
            except Exception as e:  # noqa: BLE001
                with lock:
                    errors.append(f"session {i}: {e}")
                s.close()
                s = Session(host, port)  # a broken connection: stop this session
                break
            out.append(time.perf_counter() - t0)
        try:
            s.delete()
        except Exception:  # noqa: BLE001
            pass
        s.close()

    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(sessions)]
    for t in threads:
        t.start()
    barrier.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join(max(1.0, deadline - time.monotonic()))
    wall = time.perf_counter() - t0
    flat = sorted(x for l in latencies for x in l)
    return {"calls": len(flat), "errors": errors, "wall": wall, "lat": flat}


def phase_churn(host: str, port: int, n: int, deadline: float) -> dict:
    errors: list[str] = []
    done = 0
    t0 = time.perf_counter()
    for i in range(n):
        if time.monotonic() > deadline:
            errors.append(f"deadline reached after {done} sessions")
            break
        s = Session(host, port)
        try:
            s.initialize()
            text = s.call("bash", {"command": f"sleep {MARKER}", "run_in_background": True})
            if "task_id:" not in text:
                raise RuntimeError(f"no task id: {text[:80]!r}")
            status = s.delete()
            if status not in (200, 202, 204):
                raise RuntimeError(f"DELETE: HTTP {status}")
            done += 1
        except Exception as e:  # noqa: BLE001
            errors.append(f"session {i}: {e}")
        finally:
            s.close()
    return {"sessions": done, "errors": errors, "wall": time.perf_counter() - t0}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--boris", default=str(REPO / "target/release/boris"))
    ap.add_argument("--sessions", type=int, default=32)
    ap.add_argument("--calls", type=int, default=1000)
    ap.add_argument("--churn", type=int, default=200)
    ap.add_argument("--deadline", type=float, default=600, help="seconds for the whole run")
    a = ap.parse_args()
    # A relative binary path names the file from here: the server starts in a temp dir.
    a.boris = type(a.boris)(os.path.abspath(a.boris))
    if not (1 <= a.sessions <= 256 and 1 <= a.calls <= 100_000 and 0 <= a.churn <= 10_000):
        ap.error("keep --sessions ≤ 256, --calls ≤ 100000, --churn ≤ 10000")
    deadline = time.monotonic() + a.deadline
    if marker_processes():
        print(f"processes with the marker exist before the run: {marker_processes()}",
              file=sys.stderr)
        return 2

    tmp = tempfile.TemporaryDirectory(prefix="boris-http-load-")
    workdir = os.path.join(tmp.name, "w")
    os.mkdir(workdir)
    line = "0123456789abcdef" * 4 + "\n"  # 65 bytes
    text = (line * 64)[:4096]
    Path(workdir, "file.txt").write_text(text)

    proc, host, port, log = start_server(a.boris, workdir)
    ok = True
    try:
        time.sleep(0.2)
        idle = proc_status(proc.pid)
        v = phase_views(host, port, a.sessions, a.calls, "file.txt", deadline)
        after_views = proc_status(proc.pid)
        time.sleep(1.0)
        before_churn = proc_status(proc.pid)
        c = phase_churn(host, port, a.churn, deadline)
        # Killed tasks are reaped by Boris's threads: give them a moment.
        leftovers = marker_processes()
        settle = time.monotonic() + 5
        while leftovers and time.monotonic() < settle:
            time.sleep(0.1)
            leftovers = marker_processes()
        time.sleep(1.0)
        after_churn = proc_status(proc.pid)
    finally:
        proc.terminate()
        try:
            code = proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
    after_exit = marker_processes()

    lat_ms = [x * 1000 for x in v["lat"]]
    calls_s = v["calls"] / v["wall"] if v["wall"] > 0 else 0
    hwm_mib = after_churn.get("VmHWM", 0) / 1024
    hwm_views_mib = after_views.get("VmHWM", 0) / 1024
    rss = lambda s: f"{s.get('VmRSS', 0) / 1024:.1f} MiB"  # noqa: E731
    rss_delta = (after_churn.get("VmRSS", 0) - before_churn.get("VmRSS", 0)) / 1024
    want = a.sessions * a.calls

    cmd = "python3 bench/http_load.py " + " ".join(
        f"--{k} {getattr(a, k)}" for k in ("sessions", "calls", "churn"))
    print(f"`{cmd}` (boris {a.boris}, {os.cpu_count()} CPUs, loopback)\n")
    print("| measure | value |")
    print("|---|---|")
    print(f"| view calls ({a.sessions} sessions × {a.calls}, 4 KB file) | {v['calls']} of {want} |")
    print(f"| errors | {len(v['errors'])} |")
    print(f"| latency p50 / p90 / p99 | {percentile(lat_ms, 50):.2f} / "
          f"{percentile(lat_ms, 90):.2f} / {percentile(lat_ms, 99):.2f} ms |")
    print(f"| throughput | {calls_s:,.0f} calls/s ({v['wall']:.1f} s) |")
    print(f"| server peak RSS (VmHWM) after the views | {hwm_views_mib:.1f} MiB "
          f"(target ≤ {RSS_TARGET_MIB} MiB) |")
    print(f"| server VmRSS: idle / after views / before churn | {rss(idle)} / "
          f"{rss(after_views)} / {rss(before_churn)} |")
    print(f"| churn: sessions opened + background task + DELETE | {c['sessions']} of "
          f"{a.churn} ({c['wall']:.1f} s), {len(c['errors'])} errors |")
    print(f"| server VmRSS before → after churn | {rss(before_churn)} → {rss(after_churn)} "
          f"({rss_delta:+.1f} MiB) |")
    print(f"| server threads before → after churn | {before_churn.get('Threads')} → "
          f"{after_churn.get('Threads')} |")
    print(f"| leftover `sleep {MARKER}` after churn / after exit | {len(leftovers)} / "
          f"{len(after_exit)} |")
    print(f"| server exit code after SIGTERM | {code} |")

    for e in (v["errors"] + c["errors"])[:20]:
        print(f"error: {e}", file=sys.stderr)
    for p in leftovers + after_exit:
        print(f"leftover: {p}", file=sys.stderr)
    if v["errors"] or c["errors"] or v["calls"] != want or c["sessions"] != a.churn:
        ok = False
    if leftovers or after_exit or code != 0:
        ok = False
    if hwm_views_mib > RSS_TARGET_MIB:
        print(f"peak RSS {hwm_views_mib:.1f} MiB is over the {RSS_TARGET_MIB} MiB target",
              file=sys.stderr)
        ok = False
    if not ok:
        print(f"server stderr tail:\n{log.read_text(errors='replace')[-3000:]}", file=sys.stderr)
    tmp.cleanup()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
