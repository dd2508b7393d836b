"""Drive Boris's MCP tasks (io.modelcontextprotocol/tasks, SEP-2663) with the Python `mcp` 2.x SDK.

usage: py_tasks_client.py (stdio BORIS_BIN | http URL) WORKDIR
Prints one `ok NAME` / `not ok NAME - why` line per check; exit 1 if any failed.

`mcp` 2.3 ships no tasks client, only the hooks for one (SEP-2133 client extensions): an
extension is advertised in every request's capabilities, and a `ResultClaim` takes over
`tools/call` results of its `resultType`, so that `Client.call_tool` hands back the plain
`CallToolResult`. The extension below uses those hooks; what it does with a task (poll
`tasks/get` until the task ends) is written here, after the extension's specification,
with the SDK's `send_request` for the extension's methods. Claims are active in the
2026-07-28 era only, which the default "auto" mode negotiates with Boris (server/discover).
"""

import asyncio
import sys
import time
import traceback
from typing import Any, Literal

from mcp import Client
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, Request, RequestParams, Result
from pydantic import ConfigDict

TASKS = "io.modelcontextprotocol/tasks"
CALL_TIMEOUT = 20.0  # seconds, per request
TERMINAL = {"completed", "failed", "cancelled"}

failures = 0
label = ""


def report(name, ok, why=""):
    global failures
    if ok:
        print(f"ok {label} {name}", flush=True)
        if why:
            print(f"# {label} {why}"[:400], flush=True)
    else:
        failures += 1
        print(f"not ok {label} {name} - {why}"[:500], flush=True)


async def check(name, coro_fn):
    try:
        ok, why = await coro_fn()
        report(name, ok, why)
    except BaseException as e:  # noqa: BLE001 - any exception is a failed check
        report(name, False, f"{type(e).__name__}: {e}".replace("\n", " ")[:300])


def text_of(result):
    return "".join(getattr(c, "text", "") for c in result.content)


# ---- the extension's wire shapes -------------------------------------------------------------
class CreateTaskResult(Result):
    """`resultType: "task"`: a Task in lieu of the CallToolResult."""

    model_config = ConfigDict(extra="allow")
    result_type: Literal["task"]
    task_id: str
    status: str
    status_message: str | None = None
    created_at: str
    last_updated_at: str
    ttl_ms: int | None
    poll_interval_ms: int | None = None


class DetailedTask(Result):
    """A `tasks/get` answer: the Task, with `result` once completed and `error` once failed."""

    model_config = ConfigDict(extra="allow")
    result_type: Literal["complete"]
    task_id: str
    status: str
    poll_interval_ms: int | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


class TaskIdParams(RequestParams):
    task_id: str


class GetTaskRequest(Request[TaskIdParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskIdParams
    name_param = "taskId"  # the extension asks for Mcp-Name: <taskId> over HTTP


class CancelTaskRequest(Request[TaskIdParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskIdParams
    name_param = "taskId"


class AnyResult(Result):
    model_config = ConfigDict(extra="allow")


async def get_task(session, task_id):
    return await session.send_request(GetTaskRequest(params=TaskIdParams(task_id=task_id)), DetailedTask, CALL_TIMEOUT)


class Tasks(ClientExtension):
    """The tasks extension on the SDK's hooks: resolve a task into its CallToolResult by polling."""

    identifier = TASKS

    def __init__(self):
        self.resolved = []  # (CreateTaskResult, statuses seen) per task resolved

    def claims(self):
        return [ResultClaim(result_type="task", model=CreateTaskResult, resolve=self.resolve)]

    async def resolve(self, created: CreateTaskResult, ctx: ClaimContext) -> CallToolResult:
        statuses = [created.status]
        task = None
        while statuses[-1] not in TERMINAL:
            interval = (task or created).poll_interval_ms or 500
            await asyncio.sleep(min(interval, 2000) / 1000)
            task = await get_task(ctx.session, created.task_id)
            statuses.append(task.status)
        self.resolved.append((created, statuses))
        if task is None or task.status != "completed":
            raise RuntimeError(f"task {created.task_id} ended {statuses[-1]}: {task and task.error}")
        return CallToolResult.model_validate(task.result)


async def run(client, tasks):
    async def capabilities():
        ext = (client.server_capabilities.extensions or {}).get(TASKS)
        return (
            client.protocol_version == "2026-07-28" and ext is not None,
            f"protocol {client.protocol_version}, server extensions {client.server_capabilities.extensions}",
        )

    async def tools_list():
        res = await client.list_tools()
        names = sorted(t.name for t in res.tools)
        return "bash" in names, f"tools {names}"

    async def transparent_task():
        t0 = time.monotonic()
        r = await client.call_tool("bash", {"command": "sleep 2; echo done"}, read_timeout_seconds=CALL_TIMEOUT)
        if not tasks.resolved:
            return False, f"answered without a task: {r}"
        created, statuses = tasks.resolved[-1]
        ok = text_of(r) == "exit_code: 0\nstdout:\ndone" and r.is_error is False and statuses[-1] == "completed"
        return ok, f"task {created.task_id} statuses {statuses}; {text_of(r)!r} in {time.monotonic() - t0:.1f} s"

    async def cancel():
        t0 = time.monotonic()
        created = await client.session.call_tool(
            "bash", {"command": "sleep 30"}, read_timeout_seconds=CALL_TIMEOUT, allow_claimed=True
        )
        if not isinstance(created, CreateTaskResult):
            return False, f"not a task: {created}"
        ack = await client.session.send_request(
            CancelTaskRequest(params=TaskIdParams(task_id=created.task_id)), AnyResult, CALL_TIMEOUT
        )
        task = await get_task(client.session, created.task_id)
        while task.status == "working" and time.monotonic() - t0 < 10:
            await asyncio.sleep(0.2)
            task = await get_task(client.session, created.task_id)
        elapsed = time.monotonic() - t0
        return task.status == "cancelled" and elapsed < 10, f"status {task.status}, ack {ack}, {elapsed:.1f} s"

    async def unknown():
        try:
            task = await get_task(client.session, "no-such-task")
            return False, f"got {task}"
        except MCPError as e:
            return e.error.code == -32602, f"MCPError {e.error.code}: {e.error.message}"

    async def quick():
        before = len(tasks.resolved)
        r = await client.call_tool("bash", {"command": "echo hi"}, read_timeout_seconds=CALL_TIMEOUT)
        how = "as a task" if len(tasks.resolved) > before else "plainly"
        return text_of(r) == "exit_code: 0\nstdout:\nhi", f"answered {how}: {text_of(r)!r}"

    for name, fn in [
        ("server declares the tasks extension (2026-07-28)", capabilities),
        ("tools/list", tools_list),
        ("call_tool 'sleep 2; echo done' resolves a task (claim polls tasks/get) to the plain result", transparent_task),
        ("tasks/cancel on 'sleep 30' ends cancelled within 10 s", cancel),
        ("tasks/get of an unknown task id is -32602", unknown),
        ("quick 'echo hi' answers (plainly or as a task) with its output", quick),
    ]:
        await check(name, fn)


async def main():
    global label
    kind, target, workdir = sys.argv[1:4]
    label = f"python-mcp-tasks {kind}:"
    if kind == "stdio":
        server = StdioServerParameters(command=target, args=["--transport", "stdio", "--workdir", workdir])
    else:
        server = target
    tasks = Tasks()
    try:
        async with asyncio.timeout(60):
            async with Client(server, mode="auto", extensions=[tasks]) as client:
                report("connect", True)
                await run(client, tasks)
    except BaseException as e:  # noqa: BLE001
        traceback.print_exc(file=sys.stderr)
        report("session", False, f"{type(e).__name__}: {e}".replace("\n", " ")[:300])
    sys.exit(1 if failures else 0)


asyncio.run(main())
