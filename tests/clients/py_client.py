"""Drive Boris with the official Python MCP SDK (`mcp` 2.x, high-level `Client`).

usage: py_client.py (stdio BORIS_BIN | http URL) MODE WORKDIR
  MODE: auto (the SDK default: probes server/discover, falls back to initialize) or legacy
        (initialize handshake). With stdio, WORKDIR is passed as --workdir; with http the
        server was started on WORKDIR by run.sh.
Prints one `ok NAME` / `not ok NAME - why` line per check; exit 1 if any failed.
"""

import asyncio
import os
import re
import sys
import traceback

from mcp import Client
from mcp.client.stdio import StdioServerParameters

EXPECTED_TOOLS = {"apply_patch", "bash", "task_output", "task_stop", "view", "str_replace", "multi_edit", "undo_edit", "create_file", "grep", "glob",
                  "diagnostics", "definition", "references", "hover", "symbols", "rename", "language_servers",
                  "terminal_start", "terminal_write", "terminal_read", "terminal_resize", "terminal_stop"}
CALL_TIMEOUT = 20.0  # seconds, per call; a hung server fails the check instead of the run

failures = 0
label = ""


def report(name, ok, why=""):
    global failures
    if ok:
        print(f"ok {label} {name}", flush=True)
    else:
        failures += 1
        print(f"not ok {label} {name} - {why}", flush=True)


def text_of(result):
    return "".join(getattr(c, "text", "") for c in result.content)


async def call(client, name, args, progress_callback=None):
    return await asyncio.wait_for(
        client.call_tool(name, args, read_timeout_seconds=CALL_TIMEOUT, progress_callback=progress_callback),
        CALL_TIMEOUT + 5,
    )


async def check(name, coro_fn):
    try:
        ok, why = await coro_fn()
        report(name, ok, why)
    except BaseException as e:  # noqa: BLE001 - any exception is a failed check
        report(name, False, f"{type(e).__name__}: {e}".replace("\n", " ")[:300])


async def run(client, workdir):
    async def tools_list():
        res = await asyncio.wait_for(client.list_tools(), CALL_TIMEOUT)
        names = {t.name for t in res.tools}
        return names == EXPECTED_TOOLS, f"tools {sorted(names)}"

    async def view():
        r = await call(client, "view", {"path": "hello.txt"})
        t = text_of(r)
        return (not r.is_error and "hello world" in t), f"isError={r.is_error} text={t!r}"

    async def create_file():
        r = await call(client, "create_file", {"path": "made/new.txt", "content": "alpha\nbeta\n"})
        disk = open(os.path.join(workdir, "made/new.txt")).read()
        return (not r.is_error and disk == "alpha\nbeta\n"), f"isError={r.is_error} disk={disk!r} {text_of(r)!r}"

    async def str_replace():
        v = await call(client, "view", {"path": "made/new.txt"})
        if v.is_error:
            return False, f"view failed: {text_of(v)!r}"
        r = await call(client, "str_replace", {"path": "made/new.txt", "old_str": "beta", "new_str": "gamma"})
        disk = open(os.path.join(workdir, "made/new.txt")).read()
        return (not r.is_error and disk == "alpha\ngamma\n"), f"isError={r.is_error} disk={disk!r} {text_of(r)!r}"

    async def grep():
        r = await call(client, "grep", {"pattern": "gam+a", "output_mode": "content"})
        t = text_of(r)
        return (not r.is_error and "new.txt" in t and "gamma" in t), f"text={t!r}"

    async def glob():
        r = await call(client, "glob", {"pattern": "*.txt"})
        t = text_of(r)
        return (not r.is_error and "hello.txt" in t and "new.txt" in t), f"text={t!r}"

    async def bash_echo():
        r = await call(client, "bash", {"command": "echo boris-$((40+2))"})
        t = text_of(r)
        return (not r.is_error and "boris-42" in t and "exit_code: 0" in t), f"text={t!r}"

    async def bash_background_task_output():
        r = await call(client, "bash", {"command": "sleep 0.3; echo bg-done", "run_in_background": True})
        m = re.search(r"task_id: (\S+)", text_of(r))
        if r.is_error or not m:
            return False, f"no task_id in {text_of(r)!r}"
        o = await call(client, "task_output", {"task_id": m.group(1), "block": True, "timeout": 10000})
        t = text_of(o)
        return (not o.is_error and "status: completed" in t and "bg-done" in t), f"text={t!r}"

    async def task_stop():
        r = await call(client, "bash", {"command": "echo started; sleep 60", "run_in_background": True})
        m = re.search(r"task_id: (\S+)", text_of(r))
        if r.is_error or not m:
            return False, f"no task_id in {text_of(r)!r}"
        s = await call(client, "task_stop", {"task_id": m.group(1)})
        # the task is gone afterwards: task_output on it is an error
        o = await call(client, "task_output", {"task_id": m.group(1)})
        return (not s.is_error and o.is_error), f"stop={text_of(s)!r} after={text_of(o)!r}"

    async def terminal_session():
        # issue 19 §1: a prompt answered across two calls.
        r = await call(client, "terminal_start", {"command": "read -p 'name? ' n; echo \"hi $n\""})
        t = text_of(r)
        m = re.search(r"session_id: (\S+)", t)
        if r.is_error or not m or "status: waiting for input" not in t or "name? " not in t:
            return False, f"start={t!r}"
        w = await call(client, "terminal_write", {"session_id": m.group(1), "text": "py\n"})
        u = text_of(w)
        return (not w.is_error and "hi py" in u and "status: exited" in u), f"write={u!r}"

    async def progress():
        seen = []

        async def on_progress(p, total, message):
            seen.append(p)

        r = await call(client, "bash", {"command": "for i in 1 2 3; do echo $i; sleep 0.3; done"}, on_progress)
        t = text_of(r)
        ok = not r.is_error and "1\n2\n3" in t and len(seen) >= 1 and seen == sorted(set(seen))
        return ok, f"progress={seen} text={t!r}"

    for name, fn in [
        ("tools/list", tools_list),
        ("view", view),
        ("create_file", create_file),
        ("str_replace", str_replace),
        ("grep", grep),
        ("glob", glob),
        ("bash", bash_echo),
        ("bash-background+task_output", bash_background_task_output),
        ("task_stop", task_stop),
        ("terminal_start+terminal_write", terminal_session),
        ("progress", progress),
    ]:
        await check(name, fn)


async def main():
    global label
    kind, target, mode, workdir = sys.argv[1:5]
    label = f"python-mcp {kind} mode={mode}:"
    if kind == "stdio":
        server = StdioServerParameters(command=target, args=["--transport", "stdio", "--workdir", workdir])
    else:
        server = target
    try:
        async with asyncio.timeout(CALL_TIMEOUT) as deadline:  # connect within 20 s, whole run within 120 s
            async with Client(server, mode=mode) as client:
                deadline.reschedule(asyncio.get_running_loop().time() + 100)
                report("connect", True)
                print(f"# {label} negotiated protocol {client.protocol_version}", flush=True)
                await run(client, workdir)
    except BaseException as e:  # noqa: BLE001
        traceback.print_exc(file=sys.stderr)
        report("session", False, f"{type(e).__name__}: {e}".replace("\n", " ")[:300])
    sys.exit(1 if failures else 0)


asyncio.run(main())
