#!/usr/bin/env python3
"""What Boris's tools cost a model to read: bytes of `tools/list` per tool per profile.

    python3 bench/tool_bytes.py [--boris target/release/boris] [--markdown]

Each profile's server is started with no language server on PATH (PATH is a directory
holding only bash and sh), asked `tools/list`, and the result measured as
compact JSON (`separators=(",", ":")`, the bytes a client forwards to its model), whole
and per tool. The budget of issue 28 §6 is 20,000 bytes for the default profile; every
other profile must stay under its figure before that issue. `--markdown` prints the table
BENCHMARKS.md holds.
"""
import argparse
import json
import os
import shutil
import subprocess
import tempfile

PROFILES = ["default", "anthropic-compat", "claude-code", "gemini-cli", "codex"]
# The compact tools/list size before issue 28 §6, measured by this script at its parent
# commit (every tool was listed then, with or without a language server).
BEFORE = {"default": 32066, "anthropic-compat": 19606, "claude-code": 16705,
          "gemini-cli": 15233, "codex": 7958}


def tools_list(boris: str, profile: str, extra: list[str]) -> list[dict]:
    workdir = tempfile.mkdtemp()
    # No language server: PATH is one directory holding only the shells.
    bindir = tempfile.mkdtemp()
    for b in ("bash", "sh"):
        found = shutil.which(b)
        if found:
            os.symlink(found, os.path.join(bindir, b))
    env = {"PATH": bindir, "HOME": workdir}
    msgs = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": {"name": "tool-bytes", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
    ]
    p = subprocess.Popen(
        [boris, "--transport", "stdio", "--workdir", workdir, "--tool-profile", profile]
        + extra,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert p.stdin is not None and p.stdout is not None
    p.stdin.write("".join(json.dumps(m) + "\n" for m in msgs).encode())
    p.stdin.flush()
    tools = None
    for line in p.stdout:
        msg = json.loads(line)
        if msg.get("id") == 1:
            tools = msg["result"]["tools"]
            break
    p.stdin.close()
    p.wait()
    if tools is None:
        raise SystemExit(f"{profile}: no tools/list answer")
    return tools


def compact(v) -> int:
    return len(json.dumps(v, separators=(",", ":"), ensure_ascii=False).encode())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boris", default="target/release/boris")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("extra", nargs="*", help="more Boris arguments (e.g. --tools core)")
    args = ap.parse_args()
    per_profile = {p: tools_list(args.boris, p, args.extra) for p in PROFILES}
    if args.markdown:
        print("| profile | tools | bytes of tools/list | before issue 28 §6 | largest tools (bytes) |")
        print("|---|---:|---:|---:|---|")
    for profile, tools in per_profile.items():
        total = compact({"tools": tools})
        sizes = sorted(((compact(t), t["name"]) for t in tools), reverse=True)
        if args.markdown:
            top = ", ".join(f"`{n}` {b:,}" for b, n in sizes)
            print(f"| {profile} | {len(tools)} | {total:,} | {BEFORE[profile]:,} | {top} |")
        else:
            print(f"{profile}: {len(tools)} tools, {total} bytes")
            for b, n in sizes:
                print(f"  {b:6d}  {n}")


if __name__ == "__main__":
    main()
