// Drive Boris with the official TypeScript SDK (@modelcontextprotocol/sdk) client.
//
// usage: node ts_client.mjs (stdio BORIS_BIN | http URL) WORKDIR
// (run.sh copies this file next to the cache's node_modules so that imports resolve.)
// Prints one `ok NAME` / `not ok NAME - why` line per check; exits 1 if any failed.
import fs from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [kind, target, workdir] = process.argv.slice(2);
const label = `ts-sdk ${kind}:`;
const EXPECTED = ["apply_patch", "bash", "create_file", "definition", "diagnostics", "glob", "grep", "hover", "language_servers", "multi_edit",
  "references", "rename", "str_replace", "symbols", "task_output", "task_stop", "terminal_read", "terminal_resize", "terminal_start",
  "terminal_stop", "terminal_write", "undo_edit", "view"];
const CALL_TIMEOUT = 20000; // ms per request: a hung server fails the check, not the run
let failures = 0;

// Hard cap on the whole client run.
setTimeout(() => {
  console.log(`not ok ${label} session - overall timeout (120 s)`);
  process.exit(1);
}, 120000).unref();

function report(name, ok, why = "") {
  if (ok) console.log(`ok ${label} ${name}`);
  else {
    failures++;
    console.log(`not ok ${label} ${name} - ${String(why).replace(/\n/g, " ").slice(0, 300)}`);
  }
}

const textOf = (r) => (r.content || []).map((c) => c.text || "").join("");
const call = (client, name, args, extra = {}) =>
  client.callTool({ name, arguments: args }, undefined, { timeout: CALL_TIMEOUT, ...extra });

async function check(name, fn) {
  try {
    const [ok, why] = await fn();
    report(name, ok, why);
  } catch (e) {
    report(name, false, `${e && e.name}: ${e && e.message}`);
  }
}

const client = new Client({ name: "boris-ci-ts", version: "1.0.0" });
const transport =
  kind === "stdio"
    ? new StdioClientTransport({ command: target, args: ["--transport", "stdio", "--workdir", workdir], stderr: "inherit" })
    : new StreamableHTTPClientTransport(new URL(target));

try {
  await client.connect(transport, { timeout: CALL_TIMEOUT });
  report("connect", true);
  console.log(`# ${label} server ${JSON.stringify(client.getServerVersion())}`);
} catch (e) {
  report("connect", false, `${e && e.message}`);
  process.exit(1);
}

await check("tools/list", async () => {
  const r = await client.listTools(undefined, { timeout: CALL_TIMEOUT });
  const names = r.tools.map((t) => t.name).sort();
  return [JSON.stringify(names) === JSON.stringify(EXPECTED), `tools ${names}`];
});

await check("view", async () => {
  const r = await call(client, "view", { path: "hello.txt" });
  return [!r.isError && textOf(r).includes("hello world"), textOf(r)];
});

await check("create_file", async () => {
  const r = await call(client, "create_file", { path: "made/new.txt", content: "alpha\nbeta\n" });
  const disk = fs.readFileSync(path.join(workdir, "made/new.txt"), "utf8");
  return [!r.isError && disk === "alpha\nbeta\n", `${textOf(r)} disk=${JSON.stringify(disk)}`];
});

await check("str_replace", async () => {
  const v = await call(client, "view", { path: "made/new.txt" });
  if (v.isError) return [false, `view: ${textOf(v)}`];
  const r = await call(client, "str_replace", { path: "made/new.txt", old_str: "beta", new_str: "gamma" });
  const disk = fs.readFileSync(path.join(workdir, "made/new.txt"), "utf8");
  return [!r.isError && disk === "alpha\ngamma\n", `${textOf(r)} disk=${JSON.stringify(disk)}`];
});

await check("grep", async () => {
  const r = await call(client, "grep", { pattern: "gam+a", output_mode: "content" });
  const t = textOf(r);
  return [!r.isError && t.includes("new.txt") && t.includes("gamma"), t];
});

await check("glob", async () => {
  const r = await call(client, "glob", { pattern: "*.txt" });
  const t = textOf(r);
  return [!r.isError && t.includes("hello.txt") && t.includes("new.txt"), t];
});

await check("bash", async () => {
  const r = await call(client, "bash", { command: "echo boris-$((40+2))" });
  const t = textOf(r);
  return [!r.isError && t.includes("boris-42") && t.includes("exit_code: 0"), t];
});

await check("bash-background+task_output", async () => {
  const r = await call(client, "bash", { command: "sleep 0.3; echo bg-done", run_in_background: true });
  const m = /task_id: (\S+)/.exec(textOf(r));
  if (r.isError || !m) return [false, `no task_id: ${textOf(r)}`];
  const o = await call(client, "task_output", { task_id: m[1], block: true, timeout: 10000 });
  const t = textOf(o);
  return [!o.isError && t.includes("status: completed") && t.includes("bg-done"), t];
});

await check("task_stop", async () => {
  const r = await call(client, "bash", { command: "echo started; sleep 60", run_in_background: true });
  const m = /task_id: (\S+)/.exec(textOf(r));
  if (r.isError || !m) return [false, `no task_id: ${textOf(r)}`];
  const s = await call(client, "task_stop", { task_id: m[1] });
  const o = await call(client, "task_output", { task_id: m[1] });
  return [!s.isError && o.isError === true, `stop=${textOf(s)} after=${textOf(o)}`];
});

await check("progress", async () => {
  const seen = [];
  const r = await call(
    client,
    "bash",
    { command: "for i in 1 2 3; do echo $i; sleep 0.3; done" },
    { onprogress: (p) => seen.push(p.progress) },
  );
  const t = textOf(r);
  const increasing = seen.every((v, i) => i === 0 || v > seen[i - 1]);
  return [!r.isError && t.includes("1\n2\n3") && seen.length >= 1 && increasing, `progress=${JSON.stringify(seen)} text=${t}`];
});

if (kind === "http") {
  await check("terminateSession (DELETE)", async () => {
    await transport.terminateSession();
    return [true, ""];
  });
}

try {
  await Promise.race([client.close(), new Promise((_, rej) => setTimeout(() => rej(new Error("close timed out")), 10000))]);
} catch (e) {
  report("close", false, e.message);
}
process.exit(failures ? 1 : 0);
