// A model-facing client with Claude Code's tool contract, against `boris --tool-profile
// claude-code` (issue 15, "Done when": such a client works against the profile unchanged).
//
// It holds the exact argument objects Claude Code's models emit (Read {file_path, offset,
// limit}, Edit {file_path, old_string, new_string, replace_all}, Bash {command, description,
// timeout, run_in_background}, Grep {pattern, path, glob, output_mode, "-n", "-C",
// head_limit}, …), validates every one of them against the tool's inputSchema from
// tools/list with a real JSON Schema validator (Ajv, draft 2020-12) before sending it
// unchanged, and checks each answer as Claude Code reads it: cat -n numbered Read output,
// exact bytes on disk after Edit/MultiEdit/Write/NotebookEdit, read-before-edit, errors as
// isError results with text (never JSON-RPC errors), Bash output and exit code, background
// tasks through TaskOutput/TaskStop and their output file through Read, images as image
// content.
//
// usage: node cc_client.mjs (stdio BORIS_BIN | http URL) WORKDIR
// (run.sh copies this file next to the cache's node_modules so that imports resolve; for
// http it starts `boris --transport http --tool-profile claude-code`.)
// Prints one `ok NAME` / `not ok NAME - why` line per check; exits 1 if any failed.
import fs from "node:fs";
import path from "node:path";
import Ajv2020 from "ajv/dist/2020.js";
import { argumentChecks, modelSession, textOf, toolsChecks, validatedCall } from "./model_client.mjs";

const [kind, target, workdirArg] = process.argv.slice(2);
// Claude Code's models send absolute paths.
const W = path.resolve(workdirArg);
const P = (rel) => path.join(W, rel);
// Claude Code's tools, and apply_patch, which Boris offers in every profile (issue 19 §2).
const EXPECTED = ["Bash", "Edit", "Glob", "Grep", "LSP", "MultiEdit", "NotebookEdit", "Read", "TaskOutput", "TaskStop", "Write", "apply_patch"];
const { report, check, connect, close, exit } = modelSession({
  name: "cc-client",
  kind,
  target,
  workdir: W,
  profile: "claude-code",
  deadlineMs: 120000,
});

const sleep = (ms) => new Promise((res) => setTimeout(res, ms));

// ---- fixtures (the client and the server share the filesystem) ---------------------------
const write = (rel, data) => {
  fs.mkdirSync(path.dirname(P(rel)), { recursive: true });
  fs.writeFileSync(P(rel), data);
};
const disk = (rel) => fs.readFileSync(P(rel), "utf8");
const LONG = Array.from({ length: 30 }, (_, i) => `row ${i + 1}`).join("\n") + "\n";
const APP = "import os\n\ndef alpha():\n    return 1\n\ndef beta():\n    return alpha() + 1\n";
// A 1x1 PNG.
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);
// A notebook as Jupyter saves it (one-space indent, sorted keys, ids).
const NOTEBOOK =
  JSON.stringify(
    {
      cells: [
        { cell_type: "markdown", id: "intro", metadata: {}, source: ["# Report\n", "Numbers below."] },
        {
          cell_type: "code",
          execution_count: 1,
          id: "calc",
          metadata: {},
          outputs: [{ name: "stdout", output_type: "stream", text: ["42\n"] }],
          source: ["print(6 * 7)"],
        },
      ],
      metadata: { kernelspec: { display_name: "Python 3", language: "python", name: "python3" } },
      nbformat: 4,
      nbformat_minor: 5,
    },
    null,
    1,
  ) + "\n";
write("long.txt", LONG);
const BIG = Array.from({ length: 2500 }, (_, i) => `r${i + 1}`);
write("big.txt", BIG.join("\n") + "\n");
write("wide.txt", "x".repeat(2500) + "\nshort\n");
write("edit.txt", "alpha\nbeta\ngamma\n");
write("crlf.txt", "one\r\ntwo\r\n");
write("all.txt", "a-a-a\nb\n");
write("multi.txt", "one\ntwo\nthree\n");
write("keep.txt", "keep me\n");
write("nb.ipynb", NOTEBOOK);
fs.writeFileSync(P("img.png"), PNG);
write("src/app.py", APP);
write("src/util.py", "# zephyr helpers\nX = 1\n");
write("src/pkg/deep.py", "Y = 2\n");
write("src/readme.md", "zephyr notes\n");
// Glob answers newest first: give the .py files distinct modification times.
const now = Date.now() / 1000;
fs.utimesSync(P("src/app.py"), now - 300, now - 300);
fs.utimesSync(P("src/util.py"), now - 200, now - 200);
fs.utimesSync(P("src/pkg/deep.py"), now - 100, now - 100);

// ---- the argument objects Claude Code's models emit ----------------------------------------
// Every one is validated against its tool's inputSchema, then sent exactly as is.
const A = {
  readWhole: ["Read", { file_path: P("long.txt") }],
  readRange: ["Read", { file_path: P("long.txt"), offset: 10, limit: 5 }],
  readEdit: ["Read", { file_path: P("edit.txt") }],
  editBeforeRead: ["Edit", { file_path: P("edit.txt"), old_string: "beta", new_string: "BETA" }],
  edit: ["Edit", { file_path: P("edit.txt"), old_string: "beta", new_string: "BETA" }],
  editMissing: ["Edit", { file_path: P("edit.txt"), old_string: "delta", new_string: "x" }],
  editStale: ["Edit", { file_path: P("edit.txt"), old_string: "gamma", new_string: "GAMMA" }],
  readCrlf: ["Read", { file_path: P("crlf.txt") }],
  editCrlf: ["Edit", { file_path: P("crlf.txt"), old_string: "two", new_string: "deux" }],
  readAll: ["Read", { file_path: P("all.txt") }],
  editNotUnique: ["Edit", { file_path: P("all.txt"), old_string: "a", new_string: "z" }],
  editReplaceAll: ["Edit", { file_path: P("all.txt"), old_string: "a", new_string: "z", replace_all: true }],
  readMulti: ["Read", { file_path: P("multi.txt") }],
  multiEdit: [
    "MultiEdit",
    {
      file_path: P("multi.txt"),
      edits: [
        { old_string: "one", new_string: "1" },
        { old_string: "two", new_string: "2" },
      ],
    },
  ],
  multiEditFails: [
    "MultiEdit",
    {
      file_path: P("multi.txt"),
      edits: [
        { old_string: "three", new_string: "3" },
        { old_string: "four", new_string: "4" },
      ],
    },
  ],
  writeNew: ["Write", { file_path: P("made/new.py"), content: "print('hi')\n" }],
  writeOverUnread: ["Write", { file_path: P("keep.txt"), content: "clobbered\n" }],
  readKeep: ["Read", { file_path: P("keep.txt") }],
  writeOver: ["Write", { file_path: P("keep.txt"), content: "replaced\n" }],
  readMissing: ["Read", { file_path: P("nope/missing.txt") }],
  readBig: ["Read", { file_path: P("big.txt") }],
  readBigRest: ["Read", { file_path: P("big.txt"), offset: 2001, limit: 2000 }],
  readWide: ["Read", { file_path: P("wide.txt") }],
  bash: ["Bash", { command: "pwd", description: "Print the working directory", timeout: 10000 }],
  bashFails: ["Bash", { command: "echo out; echo err >&2; exit 3", description: "Fail on purpose", timeout: 10000 }],
  bashTimeout: ["Bash", { command: "sleep 5", description: "Sleep past the timeout", timeout: 1000 }],
  bashBackground: ["Bash", { command: "printf 'bg 1\\nbg 2\\n'; sleep 0.3; echo bg-done", description: "Print three lines slowly", run_in_background: true }],
  bashLong: ["Bash", { command: `echo started; sleep ${kind === "http" ? "61.35" : "61.25"}`, run_in_background: true }],
  grepContent: [
    "Grep",
    { pattern: "alpha", path: P("src"), glob: "*.py", output_mode: "content", "-n": true, "-C": 1, head_limit: 20 },
  ],
  grepHead: ["Grep", { pattern: "alpha", path: P("src"), glob: "*.py", output_mode: "content", "-n": true, head_limit: 1 }],
  grepFiles: ["Grep", { pattern: "zephyr", output_mode: "files_with_matches" }],
  grepCount: ["Grep", { pattern: "alpha", path: P("src"), output_mode: "count" }],
  grepType: ["Grep", { pattern: "ZEPHYR", type: "py", "-i": true }],
  glob: ["Glob", { pattern: "**/*.py", path: P("src") }],
  globNoPath: ["Glob", { pattern: "src/**/*.py" }],
  readNotebook: ["Read", { file_path: P("nb.ipynb") }],
  nbReplace: ["NotebookEdit", { notebook_path: P("nb.ipynb"), cell_id: "calc", new_source: "print(6 * 9)", edit_mode: "replace" }],
  nbInsert: [
    "NotebookEdit",
    { notebook_path: P("nb.ipynb"), cell_id: "intro", new_source: "## Method", cell_type: "markdown", edit_mode: "insert" },
  ],
  nbDelete: ["NotebookEdit", { notebook_path: P("nb.ipynb"), cell_id: "intro", new_source: "", edit_mode: "delete" }],
  readPng: ["Read", { file_path: P("img.png") }],
};
// TaskOutput/TaskStop/Read-of-the-output-file take values from earlier answers; their
// shapes are validated when sent (see cc()).

// Shapes a model might get wrong: the schema must reject each, and the server must answer
// it with an isError result (not a JSON-RPC error) and change nothing.
const WRONG = {
  "Read {path}": ["Read", { path: P("long.txt") }],
  "Read {offset: 0}": ["Read", { file_path: P("long.txt"), offset: 0 }],
  'Read {offset: "10"}': ["Read", { file_path: P("long.txt"), offset: "10" }],
  "Edit {old_str, new_str}": ["Edit", { file_path: P("keep.txt"), old_str: "replaced", new_str: "x" }],
  "Write {path, content}": ["Write", { path: P("keep.txt"), content: "x\n" }],
  "Bash {cmd}": ["Bash", { cmd: "echo hi" }],
  'Bash {timeout: "10s"}': ["Bash", { command: "echo hi", timeout: "10s" }],
  'Grep {output_mode: "lines"}': ["Grep", { pattern: "x", output_mode: "lines" }],
  'Grep {"-C": "1"}': ["Grep", { pattern: "x", "-C": "1" }],
  "Glob {glob}": ["Glob", { glob: "**/*.py" }],
  "MultiEdit {edits: [{old_str}]}": ["MultiEdit", { file_path: P("keep.txt"), edits: [{ old_str: "a", new_str: "b" }] }],
  'NotebookEdit {edit_mode: "append"}': [
    "NotebookEdit",
    { notebook_path: P("nb.ipynb"), cell_id: "calc", new_source: "x", edit_mode: "append" },
  ],
  "TaskOutput {shell_id}": ["TaskOutput", { shell_id: "task_1" }],
};

// ---- the session ----------------------------------------------------------------------------
const { client, transport } = await connect();

const validators = {};
const ajv = new Ajv2020({ strict: false, allErrors: true });
const tools = await toolsChecks({ check, client, ajv, validators, what: "Claude Code's tool names and apply_patch", expected: EXPECTED });

await check("annotations: Read/Grep/Glob read-only, Edit/Write/Bash not", async () => {
  const ro = Object.fromEntries(tools.map((t) => [t.name, t.annotations && t.annotations.readOnlyHint]));
  const ok = ro.Read === true && ro.Grep === true && ro.Glob === true && !ro.Edit && !ro.Write && !ro.Bash && !ro.MultiEdit;
  return [ok, JSON.stringify(ro)];
});

// The model reads every description in tools/list: none may send it to a tool this profile
// does not have (view, str_replace, create_file, task_output, …).
// (Parameter descriptions too: they came from the default tools' schemas until issue 15's
// fix, and Bash.run_in_background said "follow it with task_output".)
{
  const boris = /\b(view|str_replace|create_file|undo_edit|multi_edit|task_output|task_stop|str_replace_editor)\b/;
  const hits = [];
  const walk = (where, node) => {
    if (node && typeof node === "object") {
      if (typeof node.description === "string" && boris.test(node.description)) {
        hits.push(`${where}: "${node.description.replace(/\s+/g, " ")}"`);
      }
      for (const [k, v] of Object.entries(node)) if (k !== "description") walk(`${where}.${k}`, v);
    }
  };
  for (const t of tools) {
    if (boris.test(t.description || "")) hits.push(`${t.name}: ${t.description}`);
    walk(t.name, t.inputSchema);
  }
  report("descriptions name only the profile's tools", hits.length === 0, hits.join("; "));
}

await argumentChecks({
  check,
  client,
  ajv,
  validators,
  model: "Claude Code",
  args: A,
  wrong: WRONG,
  untouched: () => disk("keep.txt") === "keep me\n" && disk("nb.ipynb") === NOTEBOOK,
});

const cc = validatedCall(client, ajv, validators);
const run = (key, opts) => cc(A[key][0], A[key][1], opts);
const numbered = (first, lines) => lines.map((l, i) => `${String(first + i).padStart(6)}\t${l}\n`).join("");

// ---- Read ----------------------------------------------------------------------------------
await check("Read {file_path}: cat -n numbered, whole file", async () => {
  const r = await run("readWhole");
  const want = numbered(1, LONG.trimEnd().split("\n"));
  return [!r.isError && textOf(r) === want, JSON.stringify(textOf(r).slice(0, 200))];
});

await check("Read {file_path, offset: 10, limit: 5}: exactly lines 10-14", async () => {
  const r = await run("readRange");
  const t = textOf(r);
  const lines = t.split("\n").filter((l) => /^\s*\d+\t/.test(l)).join("\n") + "\n";
  const want = numbered(10, ["row 10", "row 11", "row 12", "row 13", "row 14"]);
  return [!r.isError && lines === want && !t.includes("row 9\n") && !t.includes("row 15"), JSON.stringify(t)];
});

await check("Read of a missing file: isError with the path", async () => {
  const r = await run("readMissing");
  return [r.isError === true && textOf(r).includes(P("nope/missing.txt")), textOf(r)];
});

let bigText = "";
await check("Read {file_path} of a 2500-line file: lines 1-2000, numbered", async () => {
  const r = await run("readBig");
  bigText = textOf(r);
  const lines = bigText.split("\n").filter((l) => /^\s*\d+\t/.test(l)).join("\n") + "\n";
  return [!r.isError && lines === numbered(1, BIG.slice(0, 2000)), JSON.stringify(bigText.slice(-300))];
});

// The notice under a Read cut at 2000 lines must name Read's own parameters: a model that
// follows "view with view_range" would get lines 1-2000 again (Read ignores view_range).
{
  const notice = bigText.split("\n").filter((l) => l && !/^\s*\d+\t/.test(l)).join(" ");
  report("a cut Read's notice names Read's own parameters (offset, limit)", !/\bview(_range)?\b/.test(notice) && /offset/.test(notice), notice);
}

await check("Read {file_path, offset: 2001, limit: 2000}: the rest, lines 2001-2500", async () => {
  const r = await run("readBigRest");
  const lines = textOf(r).split("\n").filter((l) => /^\s*\d+\t/.test(l)).join("\n") + "\n";
  return [!r.isError && lines === numbered(2001, BIG.slice(2000)), JSON.stringify(textOf(r).slice(-300))];
});

await check("Read cuts a 2500-character line to about 2000 characters", async () => {
  const r = await run("readWide");
  const [first, second] = textOf(r).split("\n");
  const ok = !r.isError && first.startsWith(`     1\t${"x".repeat(2000)}`) && !first.includes("x".repeat(2001)) && second === "     2\tshort";
  return [ok, JSON.stringify(textOf(r).slice(1990, 2100))];
});

await check("Read of a PNG: image content with the file's bytes", async () => {
  const r = await run("readPng");
  const img = (r.content || []).find((c) => c.type === "image");
  const ok = !r.isError && img && img.mimeType === "image/png" && Buffer.from(img.data, "base64").equals(PNG);
  return [ok, JSON.stringify(r).slice(0, 300)];
});

// ---- Edit / MultiEdit / Write ----------------------------------------------------------------
await check("Edit before Read: refused, file unchanged", async () => {
  const r = await run("editBeforeRead");
  const t = textOf(r);
  return [r.isError === true && /Read/.test(t) && disk("edit.txt") === "alpha\nbeta\ngamma\n", t];
});

await check("Read then Edit {file_path, old_string, new_string}: exact bytes", async () => {
  const v = await run("readEdit");
  if (v.isError) return [false, `Read: ${textOf(v)}`];
  const r = await run("edit");
  return [!r.isError && disk("edit.txt") === "alpha\nBETA\ngamma\n", `${textOf(r)} disk=${JSON.stringify(disk("edit.txt"))}`];
});

await check("Edit with an old_string not in the file: isError, file unchanged", async () => {
  const r = await run("editMissing");
  return [r.isError === true && /old_string/.test(textOf(r)) && disk("edit.txt") === "alpha\nBETA\ngamma\n", textOf(r)];
});

await check("Edit after the file changed on disk: refused until Read again", async () => {
  write("edit.txt", "alpha\nBETA\ngamma\nmore\n");
  const r = await run("editStale");
  const refused = r.isError === true && disk("edit.txt") === "alpha\nBETA\ngamma\nmore\n";
  const v = await run("readEdit");
  const r2 = await run("editStale");
  const ok = refused && !v.isError && !r2.isError && disk("edit.txt") === "alpha\nBETA\nGAMMA\nmore\n";
  return [ok, `first=${textOf(r)} second=${textOf(r2)} disk=${JSON.stringify(disk("edit.txt"))}`];
});

await check("Edit keeps CRLF line endings", async () => {
  await run("readCrlf");
  const r = await run("editCrlf");
  return [!r.isError && disk("crlf.txt") === "one\r\ndeux\r\n", `${textOf(r)} disk=${JSON.stringify(disk("crlf.txt"))}`];
});

await check("Edit of a non-unique old_string: isError; replace_all: true replaces every one", async () => {
  await run("readAll");
  const r = await run("editNotUnique");
  const refused = r.isError === true && disk("all.txt") === "a-a-a\nb\n";
  const r2 = await run("editReplaceAll");
  const ok = refused && !r2.isError && disk("all.txt") === "z-z-z\nb\n";
  return [ok, `first=${textOf(r)} second=${textOf(r2)} disk=${JSON.stringify(disk("all.txt"))}`];
});

await check("MultiEdit {file_path, edits}: all applied, exact bytes", async () => {
  await run("readMulti");
  const r = await run("multiEdit");
  return [!r.isError && disk("multi.txt") === "1\n2\nthree\n", `${textOf(r)} disk=${JSON.stringify(disk("multi.txt"))}`];
});

await check("MultiEdit with a failing edit: isError, nothing written", async () => {
  const r = await run("multiEditFails");
  return [r.isError === true && disk("multi.txt") === "1\n2\nthree\n", `${textOf(r)} disk=${JSON.stringify(disk("multi.txt"))}`];
});

await check("Write {file_path, content}: a new file (parents made), exact bytes", async () => {
  const r = await run("writeNew");
  return [!r.isError && disk("made/new.py") === "print('hi')\n", textOf(r)];
});

await check("Write over an unread file: refused; after Read: written", async () => {
  const r = await run("writeOverUnread");
  const refused = r.isError === true && disk("keep.txt") === "keep me\n";
  await run("readKeep");
  const r2 = await run("writeOver");
  const ok = refused && !r2.isError && disk("keep.txt") === "replaced\n";
  return [ok, `first=${textOf(r)} second=${textOf(r2)} disk=${JSON.stringify(disk("keep.txt"))}`];
});

// ---- Bash and background tasks ------------------------------------------------------------------
await check("Bash {command, description, timeout}: output and exit code 0", async () => {
  const r = await run("bash");
  const t = textOf(r);
  return [!r.isError && t.includes("exit_code: 0") && t.includes(W), t];
});

await check("Bash: a failing command's exit code, stdout and stderr", async () => {
  const r = await run("bashFails");
  const t = textOf(r);
  return [t.includes("exit_code: 3") && /stdout:\nout/.test(t) && /stderr:\nerr/.test(t), t];
});

await check("Bash timeout is in milliseconds (1000 ms stops a 5 s sleep)", async () => {
  const t0 = Date.now();
  const r = await run("bashTimeout");
  const took = Date.now() - t0;
  return [took < 4000 && /timed out/i.test(textOf(r)), `${took} ms: ${textOf(r)}`];
});

let bg = null;
await check("Bash {run_in_background: true}: a task_id and its output file", async () => {
  const r = await run("bashBackground");
  const t = textOf(r);
  const id = /task_id: (\S+)/.exec(t);
  const out = /stdout: (\S+?),? /.exec(t);
  if (!r.isError && id && out) bg = { id: id[1], stdout: out[1] };
  return [bg !== null && /TaskOutput/.test(t) && /TaskStop/.test(t), t];
});

// Claude Code's models follow a background command by Reading the output file it names
// (TaskOutput is deprecated there): Read it until the last line is out, then once more.
let bgRead = null;
await check("Read of the output file a background Bash names: its lines, numbered", async () => {
  if (!bg) return [false, "no background task"];
  for (let i = 0; i < 50; i++) {
    bgRead = await cc("Read", { file_path: bg.stdout });
    if (!bgRead.isError && textOf(bgRead).includes("bg-done")) break;
    await sleep(100);
  }
  await sleep(500); // the command has ended by now
  bgRead = await cc("Read", { file_path: bg.stdout });
  const want = numbered(1, ["bg 1", "bg 2", "bg-done"]);
  return [!bgRead.isError && textOf(bgRead).startsWith(want), JSON.stringify(textOf(bgRead))];
});

// The file holds the output and nothing else (Boris's cwd sentinel once landed in it).
if (bgRead && !bgRead.isError) {
  const t = textOf(bgRead);
  report("the output file holds only the command's output", t === numbered(1, ["bg 1", "bg 2", "bg-done"]), JSON.stringify(t));
}

await check("TaskOutput {task_id, block: true, timeout}: completed, whole output", async () => {
  if (!bg) return [false, "no background task"];
  const r = await cc("TaskOutput", { task_id: bg.id, block: true, timeout: 10000 });
  const t = textOf(r);
  return [!r.isError && t.includes("status: completed") && t.includes("exit_code: 0") && /stdout:\nbg 1\nbg 2\nbg-done$/.test(t), t];
});

// As in Claude Code, the file named at the start stays for the session, also after
// TaskOutput reported the end of a short output.
if (bg) {
  const r = await cc("Read", { file_path: bg.stdout });
  report("the output file stays readable after TaskOutput", !r.isError && textOf(r).includes("bg-done"), textOf(r));
}

// Processes whose command line carries this exact sleep argument (Linux /proc).
function sleepers(arg) {
  const found = [];
  for (const pid of fs.readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const argv = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
      if (argv[0].endsWith("sleep") && argv[1] === arg && !/\) Z /.test(stat)) found.push(pid);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

await check("TaskStop {task_id}: the task ends, its process is gone", async () => {
  const arg = kind === "http" ? "61.35" : "61.25";
  const r = await run("bashLong");
  const id = /task_id: (\S+)/.exec(textOf(r));
  if (r.isError || !id) return [false, `no task_id: ${textOf(r)}`];
  // Wait until it has started (its first line is out), as a model would.
  let running = "";
  for (let i = 0; i < 50 && !running.includes("started"); i++) {
    running = textOf(await cc("TaskOutput", { task_id: id[1], block: false }));
    if (!running.includes("started")) await sleep(100);
  }
  const before = sleepers(arg).length;
  const s = await cc("TaskStop", { task_id: id[1] });
  let after = sleepers(arg);
  for (let i = 0; i < 70 && after.length; i++) {
    await sleep(100);
    after = sleepers(arg);
  }
  const ok = !s.isError && /status: killed/.test(textOf(s)) && before === 1 && after.length === 0;
  return [ok, `before=${before} after=${after} running=${running} stop=${textOf(s)}`];
});

await check("TaskOutput of an unknown task: isError with text", async () => {
  const r = await cc("TaskOutput", { task_id: "task_999" });
  return [r.isError === true && textOf(r).length > 0, textOf(r)];
});

// ---- Grep / Glob -------------------------------------------------------------------------------
await check('Grep {pattern, path, glob, output_mode: "content", "-n", "-C": 1, head_limit}', async () => {
  const r = await run("grepContent");
  const app = P("src/app.py");
  const want = [
    "Found 2 matching lines in 1 file",
    `${app}-2-`,
    `${app}:3:def alpha():`,
    `${app}-4-    return 1`,
    "--",
    `${app}-6-def beta():`,
    `${app}:7:    return alpha() + 1`,
  ].join("\n");
  return [!r.isError && textOf(r).trimEnd() === want, JSON.stringify(textOf(r))];
});

// Boris counts head_limit in content mode in matching lines, not output lines (seed 002
// decision 5, spec/grep/head-limit-content-counts-matching-lines.yaml): 1 → the first match.
await check("Grep head_limit: 1 shows only the first match", async () => {
  const r = await run("grepHead");
  const t = textOf(r);
  return [!r.isError && t.includes(`${P("src/app.py")}:3:def alpha():`) && !t.includes(":7:"), t];
});

await check('Grep {pattern, output_mode: "files_with_matches"}: paths only', async () => {
  const r = await run("grepFiles");
  const paths = textOf(r).split("\n").filter((l) => l.startsWith("/")).sort();
  const want = [P("src/readme.md"), P("src/util.py")].sort();
  return [!r.isError && JSON.stringify(paths) === JSON.stringify(want) && !textOf(r).includes("helpers"), textOf(r)];
});

await check('Grep {output_mode: "count"}: a count per file', async () => {
  const r = await run("grepCount");
  return [!r.isError && textOf(r).includes(`${P("src/app.py")}:2`), textOf(r)];
});

await check('Grep {pattern, type: "py", "-i": true}: case-insensitive, .py files only', async () => {
  const r = await run("grepType");
  const paths = textOf(r).split("\n").filter((l) => l.startsWith("/"));
  return [!r.isError && JSON.stringify(paths) === JSON.stringify([P("src/util.py")]), textOf(r)];
});

await check('Glob {pattern: "**/*.py", path}: the .py files, newest first', async () => {
  const r = await run("glob");
  const got = textOf(r).split("\n").filter((l) => l.startsWith("/"));
  const want = [P("src/pkg/deep.py"), P("src/util.py"), P("src/app.py")];
  return [!r.isError && JSON.stringify(got) === JSON.stringify(want), textOf(r)];
});

await check('Glob {pattern: "src/**/*.py"} without path: from the working directory', async () => {
  const r = await run("globNoPath");
  const got = textOf(r).split("\n").filter((l) => l.startsWith("/"));
  const want = [P("src/pkg/deep.py"), P("src/util.py"), P("src/app.py")];
  return [!r.isError && JSON.stringify(got) === JSON.stringify(want), textOf(r)];
});

// ---- Notebooks -----------------------------------------------------------------------------------
await check("Read of a .ipynb: cells with ids, sources and outputs", async () => {
  const r = await run("readNotebook");
  const want =
    '<cell id="intro" type="markdown">\n# Report\nNumbers below.\n</cell>\n' +
    '<cell id="calc" type="code">\nprint(6 * 7)\n</cell>\n<output>\n42\n</output>\n';
  return [!r.isError && textOf(r) === want, JSON.stringify(textOf(r))];
});

const cells = () => JSON.parse(disk("nb.ipynb")).cells;
const src = (c) => (Array.isArray(c.source) ? c.source.join("") : c.source);

await check('NotebookEdit {cell_id, new_source, edit_mode: "replace"}: the cell, outputs cleared', async () => {
  const r = await run("nbReplace");
  const c = cells();
  const ok =
    !r.isError && c.length === 2 && c[1].id === "calc" && src(c[1]) === "print(6 * 9)" && c[1].outputs.length === 0 &&
    c[1].execution_count === null && src(c[0]) === "# Report\nNumbers below." && disk("nb.ipynb").startsWith('{\n "cells": [\n  {\n   "cell_type": "markdown",\n   "id": "intro",');
  return [ok, `${textOf(r)} ${JSON.stringify(c)}`];
});

await check('NotebookEdit {edit_mode: "insert", cell_type}: a new cell after cell_id', async () => {
  const r = await run("nbInsert");
  const c = cells();
  const ok = !r.isError && c.length === 3 && c[1].cell_type === "markdown" && src(c[1]) === "## Method" && typeof c[1].id === "string" && c[2].id === "calc";
  return [ok, `${textOf(r)} ${JSON.stringify(c)}`];
});

await check('NotebookEdit {edit_mode: "delete"}: the cell is gone', async () => {
  const r = await run("nbDelete");
  const c = cells();
  return [!r.isError && c.length === 2 && !c.some((x) => x.id === "intro") && c[1].id === "calc", `${textOf(r)} ${JSON.stringify(c)}`];
});

if (kind === "http") {
  await check("terminateSession (DELETE)", async () => {
    await transport.terminateSession();
    return [true, ""];
  });
}

await close(client);
exit();
