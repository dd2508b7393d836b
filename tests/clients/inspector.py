"""Drive Boris with the MCP Inspector CLI (`inspector --cli`), one process per request.

usage: inspector.py NODE INSPECTOR_JS (stdio BORIS_BIN | http URL) WORKDIR
The CLI opens a new connection (so a new Boris session, or a new Boris process over stdio)
for every invocation, so nothing carries over between calls: the server must run with
`--require-view-before-edit false` for str_replace, and task_output/task_stop can only be
checked against a task id the new session does not know ([BASH_TASK_NOT_FOUND], exit 5).
Prints `ok NAME` / `not ok NAME - why` per check; exit 1 if any failed.
"""

import json
import os
import subprocess
import sys

node, inspector, kind, target, workdir = sys.argv[1:6]
label = f"inspector-cli {kind}:"
EXPECTED_TOOLS = {"apply_patch", "bash", "task_output", "task_stop", "view", "str_replace", "multi_edit", "undo_edit", "create_file", "grep", "glob",
                  "diagnostics", "definition", "references", "hover", "symbols", "rename", "language_servers",
                  "terminal_start", "terminal_write", "terminal_read", "terminal_resize", "terminal_stop"}
failures = 0
timeouts = 0


def report(name, ok, why=""):
    global failures
    if ok:
        print(f"ok {label} {name}", flush=True)
    else:
        failures += 1
        print(f"not ok {label} {name} - {str(why)[:300]!s}".replace("\n", " "), flush=True)


def cli(*args):
    cmd = [node, inspector, "--cli"]
    if kind == "http":
        cmd += [target, *args]
    else:
        # `--` so that Boris's own flags (--transport …) are not taken as the inspector's.
        cmd += [*args, "--", target, "--transport", "stdio", "--workdir", workdir, "--require-view-before-edit", "false"]
    global timeouts
    if timeouts >= 2:
        raise RuntimeError("skipped after two timed-out calls")
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        timeouts += 1
        raise
    if p.returncode == 4 and "unreachable" in p.stdout + p.stderr:
        timeouts += 1  # the CLI's own 15 s connection timeout: the server is not answering
    try:
        out = json.loads(p.stdout)
    except ValueError:
        out = None
    return p.returncode, out, p


def text_of(out):
    return "".join(c.get("text", "") for c in (out or {}).get("content", []))


def tool(name, **kw):
    args = [f"{k}={json.dumps(v) if not isinstance(v, str) else v}" for k, v in kw.items()]
    return cli("--method", "tools/call", "--tool-name", name, *(["--tool-arg", *args] if args else []))


def check(name, fn):
    try:
        ok, why = fn()
        report(name, ok, why)
    except Exception as e:  # noqa: BLE001
        report(name, False, f"{type(e).__name__}: {e}")


def tools_list():
    rc, out, p = cli("--method", "tools/list")
    names = {t["name"] for t in (out or {}).get("tools", [])}
    return rc == 0 and names == EXPECTED_TOOLS, f"rc={rc} tools={sorted(names)} stderr={p.stderr[-200:]}"


def ok_call(name, want, **kw):
    def fn():
        rc, out, p = tool(name, **kw)
        t = text_of(out)
        good = rc == 0 and out is not None and out.get("isError") is False and all(w in t for w in want)
        return good, f"rc={rc} out={p.stdout[-300:]!r} stderr={p.stderr[-200:]!r}"

    return fn


def disk_is(fn, rel, expected):
    def wrapped():
        ok, why = fn()
        disk = open(os.path.join(workdir, rel)).read()
        return ok and disk == expected, f"{why} disk={disk!r}"

    return wrapped


def unknown_task(name):
    def fn():
        rc, out, p = tool(name, task_id="task_999")
        t = text_of(out)
        return rc == 5 and out.get("isError") is True and "[BASH_TASK_NOT_FOUND]" in t, f"rc={rc} out={p.stdout[-300:]!r}"

    return fn


check("tools/list", tools_list)
check("view", ok_call("view", ["hello world"], path="hello.txt"))
check("create_file", disk_is(ok_call("create_file", [], path="made/new.txt", content="alpha beta"), "made/new.txt", "alpha beta"))
check("str_replace", disk_is(ok_call("str_replace", [], path="made/new.txt", old_str="beta", new_str="gamma"), "made/new.txt", "alpha gamma"))
check("grep", ok_call("grep", ["new.txt", "gamma"], pattern="gam+a", output_mode="content"))
check("glob", ok_call("glob", ["hello.txt", "new.txt"], pattern="**/*.txt"))
check("bash", ok_call("bash", ["boris-42", "exit_code: 0"], command="echo boris-$((40+2))"))
check("bash run_in_background", ok_call("bash", ["task_id: ", "status: running"], command="sleep 0.2", run_in_background=True))
check("task_output (unknown id)", unknown_task("task_output"))
check("task_stop (unknown id)", unknown_task("task_stop"))
sys.exit(1 if failures else 0)
