// What the model-facing clients (cc_client.mjs, gemini_client.mjs, codex_client.mjs) share:
// the `ok` / `not ok` lines run.sh counts, a check that turns a throw into a failure, the
// whole session's deadline, connecting to Boris with a tool profile over stdio or HTTP,
// and closing. Each client keeps what is its model's own: the argument objects, the
// expected tools and how it reads an answer.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

/** Milliseconds per request: a hung server fails the check, not the run. */
export const CALL_TIMEOUT = 20000;

/** A tool result's text, as a model reads it. */
export const textOf = (r) => (r.content || []).map((c) => c.text || "").join("");

/**
 * One client session: `name` labels its lines (`ok NAME KIND: check`), `profile` is the
 * `--tool-profile` Boris is started with on stdio (over HTTP, `target` is the URL of a
 * Boris already started so), `deadlineMs` bounds the whole session.
 */
export function modelSession({ name, kind, target, workdir, profile, deadlineMs }) {
  const label = `${name} ${kind}:`;
  let failures = 0;

  setTimeout(() => {
    console.log(`not ok ${label} session - overall timeout (${deadlineMs / 1000} s)`);
    process.exit(1);
  }, deadlineMs).unref();

  function report(check, ok, why = "") {
    if (ok) console.log(`ok ${label} ${check}`);
    else {
      failures++;
      console.log(`not ok ${label} ${check} - ${String(why).replace(/\n/g, "\\n").slice(0, 400)}`);
    }
  }

  async function check(checkName, fn) {
    try {
      const [ok, why] = await fn();
      report(checkName, ok, why);
    } catch (e) {
      report(checkName, false, `${e && e.name}: ${e && e.message}`);
    }
  }

  /** Connects (the client and its transport), or reports the failure and exits: nothing
   * else can be checked. */
  async function connect() {
    const client = new Client({ name: `boris-ci-${profile}`, version: "1.0.0" });
    const transport =
      kind === "stdio"
        ? new StdioClientTransport({
            command: target,
            args: ["--transport", "stdio", "--tool-profile", profile, "--workdir", workdir],
            stderr: "inherit",
          })
        : new StreamableHTTPClientTransport(new URL(target));
    try {
      await client.connect(transport, { timeout: CALL_TIMEOUT });
      report("connect", true);
    } catch (e) {
      report("connect", false, `${e && e.message}`);
      process.exit(1);
    }
    return { client, transport };
  }

  /** Closes the session within 10 s (a close that hangs is a failure). */
  async function close(client) {
    try {
      await Promise.race([
        client.close(),
        new Promise((_, rej) => setTimeout(() => rej(new Error("close timed out")), 10000)),
      ]);
    } catch (e) {
      report("close", false, e.message);
    }
  }

  /** Exits 1 if any check failed. */
  function exit() {
    process.exit(failures ? 1 : 0);
  }

  return { report, check, connect, close, exit };
}

/**
 * A call as the model's client sends it: validated against the tool's own inputSchema,
 * then sent unchanged. A JSON-RPC error throws (the check fails: the clients expect tool
 * errors as results).
 */
export function validatedCall(client, ajv, validators) {
  return async (tool, args, opts = {}) => {
    const v = validators[tool];
    if (v && !v(args)) throw new Error(`${tool} ${JSON.stringify(args)} fails its own schema: ${ajv.errorsText(v.errors)}`);
    return client.callTool({ name: tool, arguments: args }, undefined, { timeout: CALL_TIMEOUT, ...opts });
  };
}

/**
 * The checks every model client makes of its argument objects: each of `args` (the
 * objects the model emits, `{key: [tool, args]}`) passes its tool's schema unchanged, each
 * of `wrong` (shapes of another contract) fails it, and the server answers every wrong
 * shape with an isError result; `untouched()`, where given, says whether the disk is as
 * the wrong shapes found it (the check's name then says "and writes nothing").
 */
export async function argumentChecks({ check, client, ajv, validators, model, args, wrong, untouched }) {
  await check(`the schemas accept every ${model} argument object unchanged`, async () => {
    const bad = [];
    for (const [key, [tool, a]] of Object.entries(args)) {
      const v = validators[tool];
      if (!v) bad.push(`${key}: no tool ${tool}`);
      else if (!v(a)) bad.push(`${key}: ${ajv.errorsText(v.errors)}`);
    }
    return [bad.length === 0, bad.join("; ")];
  });

  await check("the schemas reject the wrong shapes", async () => {
    const accepted = Object.entries(wrong)
      .filter(([, [tool, a]]) => !validators[tool] || validators[tool](a))
      .map(([key]) => key);
    return [accepted.length === 0, `accepted: ${accepted.join(", ")}`];
  });

  const writesNothing = untouched ? " and writes nothing" : "";
  await check(`the server answers every wrong shape with an isError result${writesNothing}`, async () => {
    const bad = [];
    for (const [key, [tool, a]] of Object.entries(wrong)) {
      try {
        const r = await client.callTool({ name: tool, arguments: a }, undefined, { timeout: CALL_TIMEOUT });
        if (r.isError !== true || !textOf(r)) bad.push(`${key}: isError=${r.isError} ${textOf(r)}`);
      } catch (e) {
        bad.push(`${key}: JSON-RPC error ${e.message}`);
      }
    }
    const same = untouched ? untouched() : true;
    return [bad.length === 0 && same, `${bad.join("; ")}${untouched ? ` untouched=${same}` : ""}`];
  });
}

/**
 * The tools/list checks every model client starts with: the names are exactly `expected`
 * (`what` names them in the check), and every inputSchema compiles as JSON Schema 2020-12
 * and holds no `$ref` (clients and model APIs that do not resolve references exist).
 * Fills `validators` by tool name; returns the tools.
 */
export async function toolsChecks({ check, client, ajv, validators, what, expected }) {
  let tools = [];
  await check(`tools/list is exactly ${what}`, async () => {
    tools = (await client.listTools(undefined, { timeout: CALL_TIMEOUT })).tools;
    const names = tools.map((t) => t.name).sort();
    return [JSON.stringify(names) === JSON.stringify(expected), `tools ${names}`];
  });
  await check("every inputSchema compiles (JSON Schema 2020-12) and holds no $ref", async () => {
    const bad = [];
    for (const t of tools) {
      if (JSON.stringify(t.inputSchema).includes('"$ref"')) bad.push(`${t.name}: $ref`);
      try {
        validators[t.name] = ajv.compile(t.inputSchema);
      } catch (e) {
        bad.push(`${t.name}: ${e.message}`);
      }
    }
    return [bad.length === 0 && tools.length > 0, bad.join("; ")];
  });
  return tools;
}
