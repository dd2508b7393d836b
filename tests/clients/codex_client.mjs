// A model-facing client with Codex's tools, against `boris --tool-profile codex` (issue 19
// §3, §4): its read, list and search tools, its command sessions and apply_patch.
//
// The argument objects are those openai/codex's handler tests hold the tools to
// (codex-rs/core/src/tools/handlers/read_file.rs, list_dir_tests.rs, grep_files_tests.rs):
// read_file {file_path (absolute), offset, limit} and {mode: "indentation", offset,
// indentation: {anchor_line, max_levels, include_siblings, include_header}}, list_dir
// {dir_path, offset, limit, depth}, grep_files {pattern, include, path, limit}; and those
// Codex models emit in their rollouts: exec_command {cmd, workdir, yield_time_ms,
// max_output_tokens} (and tty: true for a REPL), write_stdin {session_id (a number),
// chars, yield_time_ms}, apply_patch {input: "*** Begin Patch ..."}. Each is
// validated against the tool's inputSchema from tools/list with Ajv (draft 2020-12) and
// sent unchanged; answers are read as Codex reads a function output (the text).
//
// usage: node codex_client.mjs (stdio BORIS_BIN | http URL) WORKDIR
import fs from "node:fs";
import path from "node:path";
import Ajv2020 from "ajv/dist/2020.js";
import { argumentChecks, modelSession, textOf, toolsChecks, validatedCall } from "./model_client.mjs";

const [kind, target, workdirArg] = process.argv.slice(2);
const W = path.resolve(workdirArg);
const P = (rel) => path.join(W, rel);
const EXPECTED = ["apply_patch", "exec_command", "grep_files", "list_dir", "read_file", "write_stdin"];
const READ_ONLY = ["grep_files", "list_dir", "read_file"];
const { report, check, connect, close, exit } = modelSession({
  name: "codex-client",
  kind,
  target,
  workdir: W,
  profile: "codex",
  deadlineMs: 60000,
});

const write = (rel, data, mtimeSecs) => {
  fs.mkdirSync(path.dirname(P(rel)), { recursive: true });
  fs.writeFileSync(P(rel), data);
  if (mtimeSecs) fs.utimesSync(P(rel), mtimeSecs, mtimeSecs);
};
write("notes.txt", "alpha\nbeta\r\ngamma\n");
write(
  "src/runner.cpp",
  "class Runner {\npublic:\n    // Run the code\n    int run() const {\n        switch (mode_) {\n" +
    "            case Mode::Fast:\n                return fast();\n            default:\n" +
    "                return slow();\n        }\n    }\n};\n",
  1000000100,
);
write("src/deep/inner.rs", "fn target() {}\n", 1000000300);
write("src/old.rs", "// target\n", 1000000200);
write("README.md", "target docs\n", 1000000000);

const A = {
  readWhole: ["read_file", { file_path: P("notes.txt") }],
  readSlice: ["read_file", { file_path: P("notes.txt"), offset: 2, limit: 2 }],
  readBlock: [
    "read_file",
    { file_path: P("src/runner.cpp"), offset: 7, mode: "indentation", indentation: { anchor_line: 7, max_levels: 3, include_siblings: false, include_header: true } },
  ],
  listTwo: ["list_dir", { dir_path: W, offset: 1, limit: 25, depth: 2 }],
  listPage: ["list_dir", { dir_path: W, offset: 2, limit: 1, depth: 1 }],
  grep: ["grep_files", { pattern: "target", path: W, limit: 10 }],
  grepInclude: ["grep_files", { pattern: "target", include: "*.rs", path: P("src") }],
  execPipes: ["exec_command", { cmd: "ls; echo done >&2", workdir: P("src"), yield_time_ms: 10000, max_output_tokens: 2000 }],
  execRepl: ["exec_command", { cmd: "python3 -q", tty: true, yield_time_ms: 10000, max_output_tokens: 4000 }],
  writeAssign: ["write_stdin", { session_id: 0, chars: "x = 41\n", yield_time_ms: 5000 }],
  writeAsk: ["write_stdin", { session_id: 0, chars: "x + 1\n", yield_time_ms: 5000 }],
  writeExit: ["write_stdin", { session_id: 0, chars: "exit()\n", yield_time_ms: 5000 }],
  execSlow: ["exec_command", { cmd: "sleep 1; echo finished", yield_time_ms: 250 }],
  poll: ["write_stdin", { session_id: 0, chars: "", yield_time_ms: 10000 }],
  patch: [
    "apply_patch",
    { input: "*** Begin Patch\n*** Add File: patched/new.txt\n+fresh\n*** Update File: notes.txt\n@@\n alpha\n-beta\n+BETA\n*** End Patch\n" },
  ],
};

const WRONG = {
  "read_file {path}": ["read_file", { path: P("notes.txt") }],
  "read_file {offset: 0}": ["read_file", { file_path: P("notes.txt"), offset: 0 }],
  'read_file {mode: "outline"}': ["read_file", { file_path: P("notes.txt"), mode: "outline" }],
  "read_file {indentation: {anchor: 3}}": ["read_file", { file_path: P("notes.txt"), mode: "indentation", indentation: { anchor: 3 } }],
  "list_dir {path}": ["list_dir", { path: W }],
  "list_dir {depth: 0}": ["list_dir", { dir_path: W, depth: 0 }],
  "grep_files {query}": ["grep_files", { query: "x" }],
  'grep_files {limit: "5"}': ["grep_files", { pattern: "x", limit: "5" }],
  "exec_command {command}": ["exec_command", { command: "ls" }],
  'exec_command {cmd, yield_time_ms: "5"}': ["exec_command", { cmd: "ls", yield_time_ms: "5" }],
  'write_stdin {session_id: "1"}': ["write_stdin", { session_id: "1", chars: "" }],
  "apply_patch {patch_text}": ["apply_patch", { patch_text: "*** Begin Patch\n*** End Patch" }],
};

const { client, transport } = await connect();

const validators = {};
const ajv = new Ajv2020({ strict: false, allErrors: true });
const tools = await toolsChecks({ check, client, ajv, validators, what: "Codex's tools", expected: EXPECTED });

await check("annotations: the read tools are read-only, the others not", async () => {
  const bad = tools
    .filter((t) => (t.annotations && t.annotations.readOnlyHint === true) !== READ_ONLY.includes(t.name))
    .map((t) => `${t.name}: readOnlyHint ${t.annotations && t.annotations.readOnlyHint}`);
  return [bad.length === 0, bad.join("; ")];
});

await argumentChecks({
  check,
  client,
  ajv,
  validators,
  model: "Codex",
  args: A,
  wrong: WRONG,
});

const call = validatedCall(client, ajv, validators);
const run = (key) => call(A[key][0], A[key][1]);

await check("read_file {file_path}: 'L<n>: text' lines, CRLF trimmed", async () => {
  const r = await run("readWhole");
  return [!r.isError && textOf(r) === "L1: alpha\nL2: beta\nL3: gamma", JSON.stringify(textOf(r))];
});

await check("read_file {offset: 2, limit: 2}: those lines", async () => {
  const r = await run("readSlice");
  return [!r.isError && textOf(r) === "L2: beta\nL3: gamma", JSON.stringify(textOf(r))];
});

await check("read_file {mode: indentation}: the enclosing block with its header comment", async () => {
  const r = await run("readBlock");
  const want = [
    "L3:     // Run the code",
    "L4:     int run() const {",
    "L5:         switch (mode_) {",
    "L6:             case Mode::Fast:",
    "L7:                 return fast();",
    "L8:             default:",
    "L9:                 return slow();",
    "L10:         }",
    "L11:     }",
  ].join("\n");
  return [!r.isError && textOf(r) === want, JSON.stringify(textOf(r))];
});

await check("list_dir {dir_path, depth: 2}: 'Absolute path:' then the tree, sorted by path", async () => {
  const r = await run("listTwo");
  // hello.txt: run.sh's fresh workdir has it.
  const want = [`Absolute path: ${W}`, "README.md", "hello.txt", "notes.txt", "src/", "  deep/", "  old.rs", "  runner.cpp"].join("\n");
  return [!r.isError && textOf(r) === want, JSON.stringify(textOf(r))];
});

await check("list_dir {offset: 2, limit: 1, depth: 1}: one entry and 'More than'", async () => {
  const r = await run("listPage");
  return [!r.isError && textOf(r) === `Absolute path: ${W}\nhello.txt\nMore than 1 entries found`, JSON.stringify(textOf(r))];
});

await check("grep_files {pattern, path, limit}: matching files, newest first", async () => {
  const r = await run("grep");
  const want = [P("src/deep/inner.rs"), P("src/old.rs"), P("README.md")].join("\n");
  return [!r.isError && textOf(r) === want, JSON.stringify(textOf(r))];
});

await check('grep_files {include: "*.rs"}: only Rust files', async () => {
  const r = await run("grepInclude");
  const want = [P("src/deep/inner.rs"), P("src/old.rs")].join("\n");
  return [!r.isError && textOf(r) === want, JSON.stringify(textOf(r))];
});

// An answer as Codex reads a unified exec output: the header lines, then the output.
// Commands run in a login shell (Codex's default), whose profile may print first: the
// checks look at how the output ends.
const HEADER = /^Chunk ID: [0-9a-f]{6}\nWall time: \d+\.\d{4} seconds\n(Process exited with code (-?\d+)|Process running with session ID (\d+))\nOriginal token count: (\d+)\nOutput:\n([\s\S]*)$/;
const execAnswer = (r) => {
  const m = HEADER.exec(textOf(r));
  return m && { exit: m[2] === undefined ? null : Number(m[2]), session: m[3] === undefined ? null : Number(m[3]), tokens: Number(m[4]), output: m[5] };
};
const withSession = (key, id) => [A[key][0], { ...A[key][1], session_id: id }];

await check("exec_command {cmd, workdir, yield_time_ms, max_output_tokens}: exit code and both streams", async () => {
  const r = await run("execPipes");
  const a = execAnswer(r);
  return [!r.isError && a && a.exit === 0 && a.session === null && a.output.endsWith("deep\nold.rs\nrunner.cpp\ndone\n"), JSON.stringify(textOf(r))];
});

let repl = null;
await check("exec_command {tty: true}: a python3 REPL answers with a session ID at its prompt", async () => {
  const r = await run("execRepl");
  const a = execAnswer(r);
  repl = a && a.session;
  return [!r.isError && a && a.exit === null && Number.isInteger(repl) && a.output.endsWith(">>> "), JSON.stringify(textOf(r))];
});

await check("write_stdin {session_id: number, chars}: the REPL keeps state (x = 41, x + 1 → 42), then exits", async () => {
  const [tool, assign] = withSession("writeAssign", repl);
  const r1 = await call(tool, assign);
  const r2 = await call(...withSession("writeAsk", repl));
  const r3 = await call(...withSession("writeExit", repl));
  const [a2, a3] = [execAnswer(r2), execAnswer(r3)];
  const ok = !r1.isError && a2 && a2.session === repl && a2.output === ">>> x + 1\n42\n>>> " && a3 && a3.exit === 0;
  return [ok, JSON.stringify([textOf(r1), textOf(r2), textOf(r3)])];
});

await check("write_stdin {chars: \"\"}: a poll collects a running command's end", async () => {
  const r = await run("execSlow");
  const a = execAnswer(r);
  if (!a || a.session === null) return [false, JSON.stringify(textOf(r))];
  const p = await call(...withSession("poll", a.session));
  const b = execAnswer(p);
  return [!p.isError && b && b.exit === 0 && b.output.endsWith("finished\n"), JSON.stringify(textOf(p))];
});

await check("write_stdin to an ended session: isError naming the unknown process id", async () => {
  const r = await call(...withSession("poll", 424242));
  return [r.isError === true && textOf(r).includes("Unknown process id 424242"), JSON.stringify(textOf(r))];
});

await check("apply_patch {input}: 'Success. Updated the following files:' with A and M lines", async () => {
  await run("readWhole");
  const r = await run("patch");
  const ok =
    !r.isError &&
    textOf(r) === "Success. Updated the following files:\nA patched/new.txt\nM notes.txt\n" &&
    /^alpha\nBETA\r?\ngamma\n$/.test(fs.readFileSync(P("notes.txt"), "utf8")) &&
    fs.readFileSync(P("patched/new.txt"), "utf8") === "fresh\n";
  return [ok, JSON.stringify(textOf(r))];
});

if (kind === "http") {
  await check("terminateSession (DELETE)", async () => {
    await transport.terminateSession();
    return [true, ""];
  });
}

await close(client);
exit();
