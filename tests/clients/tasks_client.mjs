// Drive Boris's MCP tasks (the io.modelcontextprotocol/tasks extension, SEP-2663, 2026-07-28
// form) with the official TypeScript packages: @modelcontextprotocol/client 2.x (connect,
// version negotiation, tools/list, plain calls) and @modelcontextprotocol/ext-tasks (the
// task-augmented tools/call, tasks/get polling, tasks/cancel).
//
// usage: node tasks_client.mjs (stdio BORIS_BIN | http URL) WORKDIR
// (run.sh copies this file next to the cache's node_modules so that imports resolve.)
// Prints one `ok NAME` / `not ok NAME - why` line per check; exits 1 if any failed.
//
// ext-tasks needs one piece of glue from its host for the 2026-07-28 generation: a
// `rawDispatch` that sends a JSON-RPC request and hands back the raw response, because the
// SDK Client's response funnel rejects `resultType: "task"` (it only knows `complete` and
// `input_required`). `rawDispatch` below sends over the Client's own transport with ids of
// its own and takes the matching responses before the Client sees them; ext-tasks builds
// every request (and its `_meta` framing) itself.
import { Client } from "@modelcontextprotocol/client";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { createTaskSessionFromClient, JsonRpcResponseError } from "@modelcontextprotocol/ext-tasks/client";

const [kind, target, workdir] = process.argv.slice(2);
const label = `ts-ext-tasks ${kind}:`;
const TASKS = "io.modelcontextprotocol/tasks";
const VERSION = "2026-07-28";
const CAPS_META = "io.modelcontextprotocol/clientCapabilities";
const CALL_TIMEOUT = 20000; // ms per request: a hung server fails the check, not the run
let failures = 0;

setTimeout(() => {
  console.log(`not ok ${label} session - overall timeout (60 s)`);
  process.exit(1);
}, 60000).unref();

// A passing check prints its details as a `#` line (run.sh shows those too).
function report(name, ok, why = "") {
  if (ok) {
    console.log(`ok ${label} ${name}`);
    if (why) console.log(`# ${label} ${String(why).replace(/\n/g, "\\n").slice(0, 400)}`);
  } else {
    failures++;
    console.log(`not ok ${label} ${name} - ${String(why).replace(/\n/g, " ").slice(0, 400)}`);
  }
}
async function check(name, fn) {
  try {
    const [ok, why] = await fn();
    report(name, ok, why);
  } catch (e) {
    report(name, false, `${e && e.name}: ${e && e.message}${e && e.code !== undefined ? ` (code ${e.code})` : ""}`);
  }
}
const textOf = (r) => ((r && r.content) || []).map((c) => c.text || "").join("");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const show = (v) => JSON.stringify(v);

const clientInfo = { name: "boris-ci-ext-tasks", version: "1.0.0" };
const clientCapabilities = { extensions: { [TASKS]: {} } };
const client = new Client(clientInfo, {
  capabilities: clientCapabilities,
  // The tasks extension's 2026-07-28 form needs the 2026-07-28 era (server/discover).
  versionNegotiation: { mode: { pin: VERSION } },
});
const transport =
  kind === "stdio"
    ? new StdioClientTransport({ command: target, args: ["--transport", "stdio", "--workdir", workdir], stderr: "inherit" })
    : new StreamableHTTPClientTransport(new URL(target));

try {
  await client.connect(transport, { timeout: CALL_TIMEOUT });
  const ext = client.getServerCapabilities()?.extensions?.[TASKS];
  report(
    "connect (2026-07-28, server declares the tasks extension)",
    client.getProtocolEra() === "modern" && ext !== undefined,
    `era ${client.getProtocolEra()} version ${client.getNegotiatedProtocolVersion()} extensions ${show(client.getServerCapabilities()?.extensions)}`,
  );
} catch (e) {
  report("connect", false, `${e && e.name}: ${e && e.message}`);
  process.exit(1);
}

// ---- rawDispatch: the host request coordinator ext-tasks asks for --------------------------
const pending = new Map();
let rawSeq = 0;
const rawLog = []; // every {method, params, response} that went through rawDispatch
const clientOnMessage = transport.onmessage;
transport.onmessage = (message, extra) => {
  const waiter = message && typeof message.id === "string" ? pending.get(message.id) : undefined;
  if (waiter === undefined) return clientOnMessage?.(message, extra);
  pending.delete(message.id);
  waiter(message);
};
async function rawDispatch(request, options = {}) {
  const id = `ext-tasks-${++rawSeq}`;
  const timeout = options.context?.requestTimeoutMs ?? CALL_TIMEOUT;
  const response = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      pending.delete(id);
      reject(new Error(`${request.method}: no response in ${timeout} ms`));
    }, timeout);
    pending.set(id, (m) => {
      clearTimeout(timer);
      resolve(m);
    });
    options.signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      pending.delete(id);
      reject(options.signal.reason);
    }, { once: true });
    transport.send({ ...request, jsonrpc: "2.0", id }, options.context?.headers ? { headers: options.context.headers } : undefined).catch(reject);
  });
  rawLog.push({ method: request.method, params: request.params, response });
  return "error" in response ? { kind: "error", error: response.error } : { kind: "result", result: response.result };
}

const session = createTaskSessionFromClient(client, {
  endpointId: `boris-ci-${kind}`,
  rawDispatch,
  v2RequestFraming: { protocolVersion: client.getNegotiatedProtocolVersion(), clientInfo, clientCapabilities },
});
const callOptions = (preference) => ({ task: { preference }, requestTimeoutMs: CALL_TIMEOUT });
const lastRaw = (method) => [...rawLog].reverse().find((e) => e.method === method);

await check("session negotiated the 2026-07-28 tasks generation", async () => [
  session.capabilities.execution === true && session.capabilities.cancellation === true,
  show(session.capabilities),
]);

// (a) tools/list still works in a tasks-declaring session.
await check("tools/list", async () => {
  const { tools } = await client.listTools();
  const bash = tools.find((t) => t.name === "bash");
  return [bash !== undefined, `tools ${show(tools.map((t) => t.name))}`];
});

// A request that does not declare the extension (its per-request `_meta` capabilities, which
// Client.callTool lets the caller override) must not get a task, however long the call runs.
// Its result is also the plain shape that (b) compares the task's result with.
let plain;
await check("a long call whose request does not declare the extension answers plainly", async () => {
  const t0 = Date.now();
  plain = await client.callTool(
    { name: "bash", arguments: { command: "sleep 1.5; echo done" }, _meta: { [CAPS_META]: {} } },
    { timeout: CALL_TIMEOUT },
  );
  return [textOf(plain) === "exit_code: 0\nstdout:\ndone" && plain.isError === false, `plain ${show(plain)} in ${Date.now() - t0} ms`];
});

let doneTaskId;
// (b) a long command becomes a task; polling reaches completed with the plain call's result.
await check("bash 'sleep 2; echo done' becomes a task and completes with the plain result", async () => {
  const t0 = Date.now();
  const execution = await session.callTool("bash", { command: "sleep 2; echo done" }, callOptions("require"));
  const created = lastRaw("tools/call")?.response?.result;
  if (execution.kind !== "task") return [false, `execution kind ${execution.kind}`];
  doneTaskId = execution.handle.taskId;
  if (created?.resultType !== "task" || created?.status !== "working" || typeof created?.taskId !== "string")
    return [false, `CreateTaskResult ${show(created)}`];
  for (const field of ["createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"])
    if (created[field] === undefined) return [false, `CreateTaskResult without ${field}: ${show(created)}`];
  const statuses = [];
  const { outcome } = await execution.settle({ onEvent: (e) => e.type === "task" && statuses.push(e.task.status) });
  const gets = rawLog.filter((e) => e.method === "tasks/get").length;
  if (outcome.status !== "completed") return [false, `outcome ${show(outcome)}`];
  const result = outcome.result;
  const { resultType: _rt, ...taskResult } = result;
  const { resultType: _rp, ...plainResult } = plain ?? {};
  const sameShape = show(Object.keys(taskResult).sort()) === show(Object.keys(plainResult).sort());
  const ok = textOf(result).includes("done") && result.isError === false && textOf(result) === textOf(plain) && sameShape;
  const summary = `created ${show(created)}; polled ${gets} tasks/get, statuses ${show(statuses)}; ${Date.now() - t0} ms`;
  return [ok, ok ? summary : `result ${show(result)} vs plain ${show(plain)}; ${summary}`];
});

// (c) tasks/cancel on a running task: the task ends cancelled (seen by polling) well before 30 s.
await check("tasks/cancel on 'sleep 30' ends cancelled within 10 s", async () => {
  const t0 = Date.now();
  const execution = await session.callTool("bash", { command: "sleep 30" }, callOptions("require"));
  if (execution.kind !== "task") return [false, `execution kind ${execution.kind}`];
  const taskId = execution.handle.taskId;
  await execution.cancel();
  const ack = lastRaw("tasks/cancel")?.response;
  if (!ack || "error" in ack) return [false, `tasks/cancel answered ${show(ack)}`];
  // Follow the task with the session's own controller (tasks/get) until the server says cancelled.
  const controller = session.task(taskId, { requestTimeoutMs: CALL_TIMEOUT });
  let view;
  while (Date.now() - t0 < 10000) {
    view = await controller.snapshot();
    if (view.status !== "working") break;
    await sleep(200);
  }
  const { outcome } = await execution.settle();
  const ms = Date.now() - t0;
  return [
    view?.status === "cancelled" && outcome.status === "cancelled" && ms < 10000,
    `status ${view?.status}, outcome ${outcome.status}, ack ${show(ack.result)}, ${ms} ms`,
  ];
});

// (d) tasks/get of an unknown task is a JSON-RPC error (-32602 Invalid params).
await check("tasks/get of an unknown task id is an error", async () => {
  try {
    const view = await session.task("no-such-task", { requestTimeoutMs: CALL_TIMEOUT }).snapshot();
    return [false, `got ${show(view.raw)}`];
  } catch (e) {
    return [e instanceof JsonRpcResponseError && e.code === -32602, `${e && e.name}: ${e && e.message} (code ${e && e.code})`];
  }
});

// tasks/cancel of an unknown task: -32602 too (a SHOULD).
await check("tasks/cancel of an unknown task id is an error", async () => {
  try {
    await session.cancelTask("no-such-task");
    return [false, `acknowledged: ${show(lastRaw("tasks/cancel")?.response)}`];
  } catch (e) {
    return [e instanceof JsonRpcResponseError && e.code === -32602, `${e && e.name}: ${e && e.message} (code ${e && e.code})`];
  }
});

// tasks/get and tasks/cancel of a request that does not declare the extension: -32021 (a MUST),
// even for a task that exists. Sent with the Client's generic request() and its own envelope,
// whose capabilities this request overrides.
const passThrough = { "~standard": { version: 1, vendor: "boris-ci", validate: (value) => ({ value }) } };
for (const method of ["tasks/get", "tasks/cancel"]) {
  await check(`${method} of a request that does not declare the extension is -32021`, async () => {
    try {
      const r = await client.request({ method, params: { taskId: doneTaskId ?? "no-such-task", _meta: { [CAPS_META]: {} } } }, passThrough, { timeout: CALL_TIMEOUT });
      return [false, `answered ${show(r)}`];
    } catch (e) {
      return [e && e.code === -32021, `${e && e.name}: ${e && e.message} (code ${e && e.code}, data ${show(e && e.data)})`];
    }
  });
}

// (e) a quick command: a plain answer (within the grace period) or a task, either way its text.
await check("quick 'echo hi' answers (plainly or as a task) with its output", async () => {
  const execution = await session.callTool("bash", { command: "echo hi" }, callOptions("allow"));
  const { outcome } = await execution.settle();
  return [
    outcome.status === "completed" && textOf(outcome.result) === "exit_code: 0\nstdout:\nhi",
    `${execution.kind}: ${show(outcome)}`,
  ];
});

await session.close();
await client.close();
process.exit(failures ? 1 : 0);
