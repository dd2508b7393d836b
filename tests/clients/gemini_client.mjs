// A model-facing client with Gemini CLI's tool contract, against `boris --tool-profile
// gemini-cli` (issue 19 §4: the argument objects Gemini models emit, validated against
// each tool's inputSchema, results checked as the client reads them).
//
// The argument objects are those Gemini CLI's own tests and behavioural evals hold its
// models to (google-gemini/gemini-cli): read_file {file_path, start_line, end_line}
// (evals/frugalReads.eval.ts: ranged reads with end_line), replace {file_path,
// instruction, old_string, new_string, allow_multiple} (packages/core/src/tools/
// edit.test.ts; an empty old_string creates a file), grep_search {pattern, names_only:
// true} / {include_pattern: "*.js"} / {dir_path: "src"} (evals/
// grep_search_functionality.eval.ts), run_shell_command {command, description,
// dir_path} (shell.test.ts), glob {pattern, dir_path}, list_directory {dir_path, ignore},
// read_many_files {include, exclude}. Each is validated against the tool's inputSchema
// from tools/list with a real JSON Schema validator (Ajv, draft 2020-12) and sent
// unchanged; each answer is read as Gemini CLI's MCP client reads it (the text blocks;
// isError results are tool errors, never JSON-RPC errors).
//
// usage: node gemini_client.mjs (stdio BORIS_BIN | http URL) WORKDIR
// Prints one `ok NAME` / `not ok NAME - why` line per check; exits 1 if any failed.
import fs from "node:fs";
import path from "node:path";
import Ajv2020 from "ajv/dist/2020.js";
import { argumentChecks, modelSession, textOf, toolsChecks, validatedCall } from "./model_client.mjs";

const [kind, target, workdirArg] = process.argv.slice(2);
const W = path.resolve(workdirArg);
const P = (rel) => path.join(W, rel);
// Gemini CLI's tools, and apply_patch, which Boris offers in every profile (issue 19 §2).
const EXPECTED = ["apply_patch", "glob", "grep_search", "list_directory", "read_file", "read_many_files", "replace", "run_shell_command", "write_file"];
const READ_ONLY = ["glob", "grep_search", "list_directory", "read_file", "read_many_files"];
const { report, check, connect, close, exit } = modelSession({
  name: "gemini-client",
  kind,
  target,
  workdir: W,
  profile: "gemini-cli",
  deadlineMs: 120000,
});

// ---- fixtures ------------------------------------------------------------------------------
const write = (rel, data) => {
  fs.mkdirSync(path.dirname(P(rel)), { recursive: true });
  fs.writeFileSync(P(rel), data);
};
const disk = (rel) => fs.readFileSync(P(rel), "utf8");
const exists = (rel) => fs.existsSync(P(rel));
const LOG = Array.from({ length: 2500 }, (_, i) => `line ${i + 1}`);
write("server.log", LOG.join("\n") + "\n");
write("config.py", "DEBUG = False\nPORT = 8080\nHOST = 'localhost'\n");
write("settings.py", "DEBUG = False\n");
write("crlf.txt", "one\r\ntwo\r\n");
write("many.txt", "TODO a\nTODO b\nTODO c\n");
write("keep.txt", "keep me\n");
write("file1.txt", "match me\n");
write("file2.txt", "match me\n");
write("file.js", "my_function();\n");
write("file.ts", "my_function();\n");
write("src/main.js", "unique_string_1\n");
write("lib/main.js", "unique_string_2\n");
write("docs/a.md", "# A\n");
write("docs/b.md", "# B\n");
write("docs/c.log", "noise\n");

// ---- the argument objects Gemini models emit ---------------------------------------------
const A = {
  readWhole: ["read_file", { file_path: P("config.py") }],
  readRange: ["read_file", { file_path: P("server.log"), start_line: 1200, end_line: 1210 }],
  readBig: ["read_file", { file_path: P("server.log") }],
  readBigRest: ["read_file", { file_path: P("server.log"), start_line: 2001 }],
  readMissing: ["read_file", { file_path: P("nope/missing.txt") }],
  replaceBeforeRead: [
    "replace",
    { file_path: P("settings.py"), instruction: "Turn on debug mode by setting DEBUG to True.", old_string: "DEBUG = False", new_string: "DEBUG = True" },
  ],
  replace: [
    "replace",
    { file_path: P("config.py"), instruction: "Turn on debug mode by setting DEBUG to True.", old_string: "DEBUG = False", new_string: "DEBUG = True" },
  ],
  replaceMissing: [
    "replace",
    { file_path: P("config.py"), instruction: "Change the port.", old_string: "PORT = 9999", new_string: "PORT = 80" },
  ],
  readMany: ["read_file", { file_path: P("many.txt") }],
  replaceNotUnique: ["replace", { file_path: P("many.txt"), instruction: "Mark the TODOs done.", old_string: "TODO", new_string: "DONE" }],
  replaceAll: [
    "replace",
    { file_path: P("many.txt"), instruction: "Mark every TODO done.", old_string: "TODO", new_string: "DONE", allow_multiple: true },
  ],
  readCrlf: ["read_file", { file_path: P("crlf.txt") }],
  replaceCrlf: ["replace", { file_path: P("crlf.txt"), instruction: "Translate two.", old_string: "two", new_string: "deux" }],
  createWithReplace: ["replace", { file_path: P("made/new.py"), instruction: "Create a new file", old_string: "", new_string: "print('hi')\n" }],
  writeNew: ["write_file", { file_path: P("out/report.md"), content: "# Report\n\nAll good.\n" }],
  writeOverUnread: ["write_file", { file_path: P("keep.txt"), content: "clobbered\n" }],
  readKeep: ["read_file", { file_path: P("keep.txt") }],
  writeOver: ["write_file", { file_path: P("keep.txt"), content: "replaced\n" }],
  shell: ["run_shell_command", { command: "ls && echo to-stderr >&2", description: "List the files in the project directory." }],
  shellFails: ["run_shell_command", { command: "python3 -c 'import sys; sys.exit(4)'", description: "Exit with status 4." }],
  shellDir: ["run_shell_command", { command: "pwd", description: "Print the working directory.", dir_path: "src" }],
  shellBig: ["run_shell_command", { command: "seq 1 20000", description: "Print many numbers." }],
  namesOnly: ["grep_search", { pattern: "match me", names_only: true }],
  includePattern: ["grep_search", { pattern: "my_function", include_pattern: "*.js" }],
  dirPath: ["grep_search", { pattern: "unique_string", dir_path: "src" }],
  glob: ["glob", { pattern: "**/*.md", dir_path: P("docs") }],
  listDir: ["list_directory", { dir_path: P("docs"), ignore: ["*.log"] }],
  readManyFiles: ["read_many_files", { include: ["docs/*.md"], exclude: ["**/b.md"] }],
};

// Shapes a model might get wrong — among them the earlier Gemini CLI contract
// (absolute_path, offset/limit, directory): the schema must reject each, and the server
// must answer it with an isError result and change nothing.
const WRONG = {
  "read_file {absolute_path} (the contract before 2025-11)": ["read_file", { absolute_path: P("keep.txt") }],
  'read_file {start_line: "10"}': ["read_file", { file_path: P("keep.txt"), start_line: "10" }],
  "read_file {start_line: 0}": ["read_file", { file_path: P("keep.txt"), start_line: 0 }],
  "replace {file_path, old_str, new_str}": ["replace", { file_path: P("keep.txt"), old_str: "keep", new_str: "x" }],
  "write_file {file_path}": ["write_file", { file_path: P("keep.txt") }],
  "run_shell_command {cmd}": ["run_shell_command", { cmd: "echo hi" }],
  "grep_search {query}": ["grep_search", { query: "x" }],
  "grep_search {total_max_matches: 0}": ["grep_search", { pattern: "x", total_max_matches: 0 }],
  "glob {glob}": ["glob", { glob: "**/*.py" }],
  "list_directory {path}": ["list_directory", { path: P("docs") }],
  "read_many_files {include: []}": ["read_many_files", { include: [] }],
  'read_many_files {include: "docs"}': ["read_many_files", { include: "docs" }],
};

// ---- the session ----------------------------------------------------------------------------
const { client, transport } = await connect();

const validators = {};
const ajv = new Ajv2020({ strict: false, allErrors: true });
const tools = await toolsChecks({ check, client, ajv, validators, what: "Gemini CLI's tool names", expected: EXPECTED });

await check("annotations: the read and search tools are read-only, the others not", async () => {
  const ro = Object.fromEntries(tools.map((t) => [t.name, t.annotations && t.annotations.readOnlyHint]));
  const ok = EXPECTED.every((n) => (READ_ONLY.includes(n) ? ro[n] === true : !ro[n]));
  return [ok, JSON.stringify(ro)];
});

// The model reads every description: none may name a tool this profile does not have.
{
  const boris = /\b(view|str_replace|create_file|undo_edit|multi_edit|task_output|task_stop|str_replace_editor|view_range|old_str|new_str)\b/;
  const hits = [];
  const walk = (where, node) => {
    if (node && typeof node === "object") {
      if (typeof node.description === "string" && boris.test(node.description)) hits.push(`${where}: "${node.description}"`);
      for (const [k, v] of Object.entries(node)) if (k !== "description") walk(`${where}.${k}`, v);
    }
  };
  for (const t of tools) {
    if (boris.test(t.description || "")) hits.push(`${t.name}: ${t.description}`);
    walk(t.name, t.inputSchema);
  }
  report("descriptions name only the profile's tools and parameters", hits.length === 0, hits.join("; "));
}

await argumentChecks({
  check,
  client,
  ajv,
  validators,
  model: "Gemini CLI",
  args: A,
  wrong: WRONG,
  untouched: () => disk("keep.txt") === "keep me\n",
});

const call = validatedCall(client, ajv, validators);
const run = (key) => call(A[key][0], A[key][1]);

// ---- read_file -----------------------------------------------------------------------------
await check("read_file {file_path}: the text as it is, no line numbers", async () => {
  const r = await run("readWhole");
  return [!r.isError && textOf(r) === disk("config.py"), JSON.stringify(textOf(r))];
});

await check("read_file {file_path, start_line, end_line}: exactly those lines", async () => {
  const r = await run("readRange");
  const want = LOG.slice(1199, 1210).join("\n") + "\n";
  return [!r.isError && textOf(r) === want, JSON.stringify(textOf(r).slice(0, 200))];
});

await check("read_file of a 2500-line file: Gemini CLI's truncation header, then lines 1-2000", async () => {
  const r = await run("readBig");
  const t = textOf(r);
  const head =
    "\nIMPORTANT: The file content has been truncated.\nStatus: Showing lines 1-2000 of 2500 total lines.\n" +
    "Action: To read more of the file, you can use the 'start_line' and 'end_line' parameters in a subsequent 'read_file' call. " +
    "For example, to read the next section of the file, use start_line: 2001.\n\n--- FILE CONTENT (truncated) ---\n";
  return [!r.isError && t === head + LOG.slice(0, 2000).join("\n") + "\n", JSON.stringify(t.slice(0, 400))];
});

await check("read_file {start_line: 2001} (as the header says): the rest", async () => {
  const r = await run("readBigRest");
  return [!r.isError && textOf(r) === LOG.slice(2000).join("\n") + "\n", JSON.stringify(textOf(r).slice(0, 100))];
});

await check("read_file of a missing file: isError naming the path", async () => {
  const r = await run("readMissing");
  return [r.isError === true && textOf(r).includes(P("nope/missing.txt")), textOf(r)];
});

// ---- replace / write_file ------------------------------------------------------------------
await check("replace before read_file: refused (read it with read_file), file unchanged", async () => {
  const r = await run("replaceBeforeRead");
  return [r.isError === true && /read_file/.test(textOf(r)) && disk("settings.py") === "DEBUG = False\n", textOf(r)];
});

await check("read_file then replace {instruction, old_string, new_string}: exact bytes, the updated code", async () => {
  await run("readWhole");
  const r = await run("replace");
  const t = textOf(r);
  const ok =
    !r.isError &&
    disk("config.py") === "DEBUG = True\nPORT = 8080\nHOST = 'localhost'\n" &&
    t.startsWith(`Successfully modified file: ${P("config.py")} (1 replacements). Here is the updated code:\nDEBUG = True\n`);
  return [ok, t];
});

await check("replace with an old_string not in the file: isError naming old_string, file unchanged", async () => {
  const r = await run("replaceMissing");
  return [r.isError === true && /old_string/.test(textOf(r)) && disk("config.py").includes("PORT = 8080"), textOf(r)];
});

await check("replace of a string found 3 times: refused (allow_multiple); allow_multiple: true replaces all", async () => {
  await run("readMany");
  const r = await run("replaceNotUnique");
  const refused = r.isError === true && /allow_multiple/.test(textOf(r)) && disk("many.txt") === "TODO a\nTODO b\nTODO c\n";
  const r2 = await run("replaceAll");
  const ok = refused && !r2.isError && /\(3 replacements\)/.test(textOf(r2)) && disk("many.txt") === "DONE a\nDONE b\nDONE c\n";
  return [ok, `first=${textOf(r)} second=${textOf(r2)}`];
});

await check("replace keeps CRLF line endings", async () => {
  await run("readCrlf");
  const r = await run("replaceCrlf");
  return [!r.isError && disk("crlf.txt") === "one\r\ndeux\r\n", `${textOf(r)} disk=${JSON.stringify(disk("crlf.txt"))}`];
});

await check('replace {old_string: ""} of a new file: created, parents made', async () => {
  const r = await run("createWithReplace");
  return [!r.isError && disk("made/new.py") === "print('hi')\n" && /Created new file/.test(textOf(r)), textOf(r)];
});

await check("write_file {file_path, content}: a new file, exact bytes", async () => {
  const r = await run("writeNew");
  return [
    !r.isError && disk("out/report.md") === "# Report\n\nAll good.\n" && textOf(r).startsWith(`Successfully created and wrote to new file: ${P("out/report.md")}`),
    textOf(r),
  ];
});

await check("write_file over an unread file: refused; after read_file: overwritten", async () => {
  const r = await run("writeOverUnread");
  const refused = r.isError === true && disk("keep.txt") === "keep me\n";
  await run("readKeep");
  const r2 = await run("writeOver");
  const ok = refused && !r2.isError && disk("keep.txt") === "replaced\n" && textOf(r2).startsWith("Successfully overwrote file:");
  return [ok, `first=${textOf(r)} second=${textOf(r2)}`];
});

// ---- run_shell_command ---------------------------------------------------------------------
await check("run_shell_command {command, description}: 'Output:' with stdout and stderr", async () => {
  const r = await run("shell");
  const t = textOf(r);
  return [!r.isError && t.startsWith("Output: ") && t.includes("config.py") && t.includes("to-stderr") && !/Exit Code/.test(t), t];
});

await check("run_shell_command: a failing command is data, with 'Exit Code: 4'", async () => {
  const r = await run("shellFails");
  return [!r.isError && textOf(r) === "Output: (empty)\nExit Code: 4", textOf(r)];
});

await check("run_shell_command {dir_path}: runs there", async () => {
  const r = await run("shellDir");
  return [!r.isError && textOf(r) === `Output: ${P("src")}`, textOf(r)];
});

await check("run_shell_command with 108,894 characters of output: head, tail and the full-output file", async () => {
  const r = await run("shellBig");
  const t = textOf(r);
  const file = /For full output see: (\S+)/.exec(t);
  const ok =
    !r.isError &&
    t.startsWith("Output too large. Showing first 8,000 and last 32,000 characters.") &&
    t.includes("characters omitted] ...") &&
    t.includes("\n20000") &&
    file;
  if (!ok) return [false, t.slice(0, 300)];
  const page = await call("read_file", { file_path: file[1], start_line: 10000, end_line: 10001 });
  return [!page.isError && textOf(page) === "10000\n10001\n", textOf(page)];
});

// ---- grep_search / glob / list_directory / read_many_files ---------------------------------
await check("grep_search {pattern, names_only: true}: the file names only", async () => {
  const r = await run("namesOnly");
  const t = textOf(r);
  return [!r.isError && t.includes("file1.txt") && t.includes("file2.txt") && !/L1:/.test(t), t];
});

await check('grep_search {include_pattern: "*.js"}: .js files only, lines as L1:', async () => {
  const r = await run("includePattern");
  const t = textOf(r);
  return [!r.isError && t.includes("File: file.js") && t.includes("L1: my_function();") && !t.includes("file.ts"), t];
});

await check('grep_search {dir_path: "src"}: only under src', async () => {
  const r = await run("dirPath");
  const t = textOf(r);
  return [!r.isError && t.includes("unique_string_1") && !t.includes("unique_string_2"), t];
});

await check("glob {pattern, dir_path}: absolute paths", async () => {
  const r = await run("glob");
  const paths = textOf(r).split("\n").filter((l) => l.startsWith("/")).sort();
  return [!r.isError && JSON.stringify(paths) === JSON.stringify([P("docs/a.md"), P("docs/b.md")]), textOf(r)];
});

await check("list_directory {dir_path, ignore}: entries with sizes, ignored ones left out", async () => {
  const r = await run("listDir");
  return [!r.isError && textOf(r) === `Directory listing for ${P("docs")}:\na.md (4 bytes)\nb.md (4 bytes)`, textOf(r)];
});

await check("read_many_files {include, exclude}: each file under its separator, then the end marker", async () => {
  const r = await run("readManyFiles");
  const want = `--- ${P("docs/a.md")} ---\n\n# A\n\n\n--- End of content ---`;
  return [!r.isError && textOf(r) === want, JSON.stringify(textOf(r))];
});

if (kind === "http") {
  await check("terminateSession (DELETE)", async () => {
    await transport.terminateSession();
    return [true, ""];
  });
}

await close(client);
// Nothing the wrong shapes could have created.
report("no stray files from the wrong shapes", !exists("undefined") && !exists("null"), "");
exit();
