#!/usr/bin/env python3
"""Boris's grep and glob against the ripgrep CLI, on the same tree, in the same run.

Stdlib only (Python 3.9+). Boris runs once as a stdio MCP server (raw newline-delimited
JSON-RPC); every operation is timed from writing the `tools/call` request to reading the
whole response line, so the MCP round trip counts against Boris. `rg` is timed from
spawn to exit with its output read through a pipe (not /dev/null), so its process start
counts against it. Both get the same warm page cache: every operation runs once untimed
first, then the two alternate `--runs` times; the table shows medians.

The rg flags are those that give Boris's rules (DESIGN §8):
  --hidden             hidden files are searched
  --no-require-git     .gitignore applies outside a git repository
  --no-ignore-global   the user's global git excludes do not apply
  -L                   symlinks are followed
  -g '!.git' -g '!node_modules'   never entered
Match counts come from Boris's result header (`Found N files`, `Found N matching lines`)
and from counting rg's output lines; the run fails if they differ.

Usage (bench/search.sh installs rg and the corpus and builds Boris first):

    python3 bench/search.py --boris target/release/boris --corpus DIR [--medium SUBDIR]
        [--runs 5] [--out results.md]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

RG_FLAGS = [
    "--hidden",
    "--no-require-git",
    "--no-ignore-global",
    "-L",
    "-g",
    "!.git",
    "-g",
    "!node_modules",
]

# (label, boris tool, boris arguments, rg arguments, how to read Boris's count)
RARE_LITERAL = "skb_gso_segment"
REGEX = r"static int \w+_probe\("
GLOB = "*_test.c"


def operations() -> list[tuple[str, str, dict, list[str], str]]:
    return [
        (
            f"grep files, rare literal `{RARE_LITERAL}`",
            "grep",
            {"pattern": RARE_LITERAL},
            ["-l", RARE_LITERAL],
            "files",
        ),
        (
            f"grep content, rare literal `{RARE_LITERAL}`",
            "grep",
            {"pattern": RARE_LITERAL, "output_mode": "content"},
            ["-n", RARE_LITERAL],
            "lines",
        ),
        (
            f"grep files, regex `{REGEX}`",
            "grep",
            {"pattern": REGEX},
            ["-l", REGEX],
            "files",
        ),
        (
            f"grep content, regex `{REGEX}`",
            "grep",
            {"pattern": REGEX, "output_mode": "content"},
            ["-n", REGEX],
            "lines",
        ),
        (
            f"grep count, regex `{REGEX}`",
            "grep",
            {"pattern": REGEX, "output_mode": "count"},
            ["-c", REGEX],
            "count",
        ),
        (
            f"glob `**/{GLOB}`",
            "glob",
            {"pattern": f"**/{GLOB}"},
            ["--files", "-g", GLOB],
            "paths",
        ),
    ]


class Server:
    def __init__(self, boris: Path, corpus: Path, log: Path):
        self.log = open(log, "ab")
        self.proc = subprocess.Popen(
            [str(boris), "--transport", "stdio", "--workdir", str(corpus)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            cwd=corpus,
            env={**os.environ, "RUST_BACKTRACE": "0"},
        )
        self.next_id = 0
        self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "boris-search-bench", "version": "1"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg: dict) -> None:
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()

    def request(self, method: str, params: dict) -> tuple[float, dict]:
        self.next_id += 1
        rid = self.next_id
        data = (json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}) + "\n").encode()
        t0 = time.perf_counter()
        self.proc.stdin.write(data)
        self.proc.stdin.flush()
        while True:
            line = self.proc.stdout.readline()
            t1 = time.perf_counter()
            if not line:
                raise SystemExit(f"boris exited (status {self.proc.poll()})")
            msg = json.loads(line)
            if msg.get("id") == rid and "method" not in msg:
                if "error" in msg:
                    raise SystemExit(f"{method}: {msg['error']}")
                return t1 - t0, msg["result"]

    def call(self, tool: str, args: dict) -> tuple[float, str]:
        secs, result = self.request("tools/call", {"name": tool, "arguments": args})
        text = "".join(b.get("text", "") for b in result.get("content", []))
        if result.get("isError"):
            raise SystemExit(f"{tool} {args}: {text}")
        return secs, text

    def status(self) -> dict[str, int]:
        out = {}
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in ("VmHWM", "VmRSS", "Threads"):
                    out[key] = int(rest.split()[0])
        return out

    def close(self) -> None:
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def boris_count(text: str, kind: str) -> int:
    if kind == "files":
        m = re.match(r"Found (\d+) files?\b", text)
    elif kind in ("lines", "count"):
        m = re.match(r"Found (\d+) matching lines?\b", text)
    else:  # glob paths: one a line, or the capped notice
        if text == "No files found":
            return 0
        m = re.search(r"showing \d+ of (\d+) files", text)
        if not m:
            return len(text.splitlines())
    if not m:
        if text.startswith("No matches found"):
            return 0
        raise SystemExit(f"cannot read a count from: {text[:200]!r}")
    return int(m.group(1))


def run_rg(rg: str, args: list[str], cwd: Path, path: str | None, kind: str) -> tuple[float, int]:
    argv = [rg, *RG_FLAGS, *args]
    if path:
        argv.append(path)
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=cwd)
    out = proc.stdout.read()
    proc.wait()
    secs = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}")
    if kind == "count":
        n = sum(int(line.rsplit(b":", 1)[1]) for line in out.splitlines() if line)
    else:
        n = out.count(b"\n")
    return secs, n


def bench(server: Server, rg: str, corpus: Path, path: str | None, runs: int) -> list[dict]:
    rows = []
    for label, tool, args, rg_args, kind in operations():
        args = dict(args)
        if path:
            args["path"] = path
        # Warm-up (page cache, lazy statics), untimed.
        server.call(tool, args)
        run_rg(rg, rg_args, corpus, path, kind)
        b_times, r_times = [], []
        b_n = r_n = None
        for _ in range(runs):
            secs, text = server.call(tool, args)
            b_times.append(secs)
            b_n = boris_count(text, kind)
            secs, r_n = run_rg(rg, rg_args, corpus, path, kind)
            r_times.append(secs)
        b, r = statistics.median(b_times), statistics.median(r_times)
        rows.append(
            {
                "op": label,
                "boris_s": b,
                "rg_s": r,
                "ratio": b / r,
                "boris_n": b_n,
                "rg_n": r_n,
                "same": b_n == r_n,
            }
        )
        print(f"  {label}: boris {b*1000:.0f} ms, rg {r*1000:.0f} ms, x{b/r:.2f}, counts {b_n}/{r_n}", file=sys.stderr)
    return rows


def table(title: str, rows: list[dict]) -> str:
    out = [f"### {title}", "", "| operation | boris | rg | ratio | match counts (boris / rg) |", "| --- | ---: | ---: | ---: | --- |"]
    for r in rows:
        mark = "identical" if r["same"] else "**DIFFERENT**"
        out.append(
            f"| {r['op']} | {r['boris_s']*1000:.0f} ms | {r['rg_s']*1000:.0f} ms | {r['ratio']:.2f} | "
            f"{r['boris_n']} / {r['rg_n']} ({mark}) |"
        )
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--boris", type=Path, default=Path(__file__).resolve().parent.parent / "target/release/boris")
    ap.add_argument("--rg", default=shutil.which("rg") or "rg")
    ap.add_argument("--corpus", type=Path, required=True, help="the large tree (e.g. the unpacked kernel)")
    ap.add_argument("--medium", default="drivers/net", help="a subtree of the corpus used as the medium tree ('' to skip)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    # A relative binary path names the file from here: the server starts in a temp dir.
    a.boris = type(a.boris)(os.path.abspath(a.boris))
    corpus = a.corpus.resolve()
    rg_version = subprocess.run([a.rg, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    files = sum(1 for _ in corpus.rglob("*"))
    log = Path(os.environ.get("TMPDIR", "/tmp")) / "boris-search-bench.log"
    server = Server(a.boris, corpus, log)
    try:
        print(f"large tree: {corpus}", file=sys.stderr)
        large = bench(server, a.rg, corpus, None, a.runs)
        status = server.status()
        medium = []
        if a.medium:
            print(f"medium tree: {corpus / a.medium}", file=sys.stderr)
            medium = bench(server, a.rg, corpus, a.medium, a.runs)
    finally:
        server.close()
    cpus = os.cpu_count()
    lines = [
        f"## Boris grep/glob vs {rg_version}",
        "",
        f"Corpus: `{corpus}` ({files} entries); medium tree: `{a.medium or '-'}`. {cpus} CPUs, "
        f"median of {a.runs} runs after a warm-up, Boris timed over the MCP round trip.",
        f"rg flags: `{' '.join(RG_FLAGS)}`.",
        "",
        table("Large tree", large),
        "",
    ]
    if medium:
        lines += [table(f"Medium tree ({a.medium})", medium), ""]
    lines += [
        f"Peak RSS of the server after the large-tree runs (VmHWM): {status['VmHWM'] / 1024:.1f} MiB "
        f"(VmRSS {status['VmRSS'] / 1024:.1f} MiB, {status['Threads']} threads).",
    ]
    report = "\n".join(lines)
    print(report)
    if a.out:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(report + "\n")
    if not all(r["same"] for r in large + medium):
        sys.exit("match counts differ")


if __name__ == "__main__":
    main()
