//! `apply_patch` (issue 19 §2): Codex's multi-file patch envelope — or a unified diff —
//! applied all or nothing, in every profile. The pure parts (finding the patch in what
//! was sent, parsing, matching, applying a file's hunks) are `text::patch`; the
//! multi-file commit that survives SIGKILL is `journal`. Here: paths and their scope,
//! the edit locks, view-before-edit, the undo history and the result.

mod plan;

use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::journal::{self, Change};
use crate::text::lines::hash_bytes;
use crate::text::patch::{self, Parsed};
use crate::tool_name::ToolName;
use crate::tools::engine::edit::{bound_diff, diff_label};
use crate::tools::engine::schema::{define, writes};
use crate::tools::{Ctx, text_result};
use plan::{Plan, Summary};
use rmcp::model::{CallToolResult, Tool};
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ApplyPatchArgs {
    /// The patch, from '*** Begin Patch' to '*** End Patch' (or a unified diff).
    #[serde(alias = "patch")]
    pub input: String,
    /// Write nothing; return the unified diff of every file the patch would change.
    #[serde(default)]
    pub dry_run: Option<bool>,
}

pub fn tool() -> Tool {
    define::<ApplyPatchArgs>(
        ToolName::ApplyPatch,
        "Apply a patch to several files",
        "Apply a patch: add, update, move and delete files in one call, all or nothing. \
         The patch (input) is this format:\n\
         *** Begin Patch\n\
         *** Add File: docs/new.md\n\
         +every line of the new file, each starting with +\n\
         *** Update File: src/app.py\n\
         *** Move to: src/main.py   (optional: renames the file)\n\
         @@ def greet():            (optional: a line above the change, to find the place)\n\
         \x20context line (a space, then the line as it is)\n\
         -removed line\n\
         +added line\n\
         *** Delete File: old.txt\n\
         *** End Patch\n\
         Give about 3 lines of context around each change; add @@ lines (a class, a \
         function) when the context is not unique; end a hunk with '*** End of File' to \
         pin it to the end of the file. Context and removed lines must match the file (an \
         exact match first, then one that ignores whitespace). A unified diff (--- a/PATH, \
         +++ b/PATH, @@ -1,3 +1,4 @@) works too. Updating, moving or deleting an existing \
         file needs it read in this session, unchanged since. If any hunk does not \
         match, nothing is written and the error names the file, the hunk and the closest \
         lines. dry_run: true writes nothing and returns the diff. Paths are relative to the working \
         directory, or absolute. Line endings, encoding and file modes are preserved; new \
         lines take the file's line ending.",
        writes("Apply a patch to several files", false),
    )
}

// Codex's function form of the tool (`--tool-profile codex`): the patch as `input`,
// nothing else (a doc comment would become the schema's description).
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(rename = "CodexApplyPatchArgs", deny_unknown_fields)]
pub struct CodexArgs {
    /// The entire contents of the apply_patch command
    #[serde(alias = "patch")]
    pub input: String,
}

/// `apply_patch` as Codex declares it (issue 19 §3): `input` only, Codex's grammar in
/// the description.
pub fn codex_tool() -> Tool {
    define::<CodexArgs>(
        ToolName::CxApplyPatch,
        "apply_patch",
        "Use the `apply_patch` tool to edit files. A patch is an envelope of file \
         operations:\n\
         *** Begin Patch\n\
         [ one or more file sections ]\n\
         *** End Patch\n\
         Each file section starts with a header:\n\
         *** Add File: <path> - create a new file; every following line is a + line (its \
         contents).\n\
         *** Delete File: <path> - remove an existing file; nothing follows.\n\
         *** Update File: <path> - patch an existing file in place, optionally followed by \
         *** Move to: <new path> to rename it; then one or more hunks, each introduced by @@ \
         (optionally followed by a line such as a class or function definition that \
         locates it). In a hunk each line starts with a space (context), - (removed) or + \
         (added). Show about 3 lines of context above and below each change; add @@ lines \
         when that is not unique. *** End of File pins a hunk to the end of the file.\n\
         Example:\n\
         *** Begin Patch\n\
         *** Add File: hello.txt\n\
         +Hello world\n\
         *** Update File: src/app.py\n\
         *** Move to: src/main.py\n\
         @@ def greet():\n\
         -print(\"Hi\")\n\
         +print(\"Hello, world!\")\n\
         *** Delete File: obsolete.txt\n\
         *** End Patch\n\
         File paths are relative to the working directory, or absolute. The patch applies \
         all or nothing.",
        writes("apply_patch", false),
    )
}

/// How a successful patch is reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Words {
    /// Boris's summary lines and the diff.
    Boris,
    /// Codex's: `Success. Updated the following files:`, then `A`/`M`/`D` lines.
    Codex,
}

pub fn run(ctx: &Ctx, args: ApplyPatchArgs) -> ToolResult<CallToolResult> {
    run_in(ctx, args, Words::Boris)
}

/// `apply_patch` in Codex's function form and words.
pub fn run_codex(ctx: &Ctx, args: CodexArgs) -> ToolResult<CallToolResult> {
    let args = ApplyPatchArgs {
        input: args.input,
        dry_run: None,
    };
    run_in(ctx, args, Words::Codex)
}

pub fn run_in(ctx: &Ctx, args: ApplyPatchArgs, words: Words) -> ToolResult<CallToolResult> {
    let parsed = patch::parse(&args.input).map_err(|e| {
        patch_error(
            ErrorCode::PatchInvalid,
            format!("the patch cannot be read: {e}. "),
        )
    })?;
    let base = match &parsed.workdir {
        Some(dir) => Some(ctx.resolve(dir)?.shown),
        None => None,
    };
    let resolve = |p: &str| -> ToolResult<crate::scope::ScopedPath> {
        match &base {
            Some(b) if !Path::new(p).is_absolute() => ctx.resolve(&b.join(p).to_string_lossy()),
            _ => ctx.resolve(p),
        }
    };
    let paths = parsed
        .patch
        .files
        .iter()
        .map(|op| {
            let to = match op {
                patch::FileOp::Update {
                    move_to: Some(to), ..
                } => Some(resolve(to)?),
                _ => None,
            };
            Ok((resolve(op.path())?, to))
        })
        .collect::<ToolResult<Vec<plan::Paths>>>()?;
    let reals: Vec<&Path> = paths
        .iter()
        .flat_map(|(p, to)| std::iter::once(&p.real).chain(to.iter().map(|t| &t.real)))
        .map(PathBuf::as_path)
        .collect();
    let locks = ctx.shared.edit_locks.lock_many(reals);
    let plan = plan::build(ctx, &parsed.patch, &paths)?;
    if !plan.files.iter().any(|f| f.changed()) {
        return Err(patch_error(
            ErrorCode::PatchInvalid,
            "the patch changes nothing: every file it names would stay byte for byte as it \
             is (its hunks add back what they remove). "
                .to_string(),
        ));
    }
    if args.dry_run.unwrap_or(false) {
        return Ok(text_result(result_text(ctx, &parsed, &plan, true)));
    }
    commit(ctx, &plan)?;
    let text = match words {
        Words::Boris => result_text(ctx, &parsed, &plan, false),
        Words::Codex => codex_text(ctx, &parsed, &plan),
    };
    let mut written = Vec::new();
    for f in plan.files {
        if !f.changed() {
            continue;
        }
        let before = f.disk.map(|d| d.content);
        match f.now {
            plan::Now::Bytes(after) => {
                ctx.ws.record_write(&f.path.real, before.clone(), &after);
                written.push((f.path, before, after));
            }
            plan::Now::Gone => ctx
                .ws
                .record_removal(&f.path.real, before.unwrap_or_default()),
            plan::Now::AsOnDisk => {}
        }
    }
    // Recorded under the files' locks; their language servers are waited for without
    // them (issue 20 §3: every edit tells what it broke).
    drop(locks);
    // One file after another: a server that publishes without versions (pyright) can
    // answer one file's check with what it published for another's open when they are
    // checked at once. The patch as a whole waits about one `--diagnostics-wait`: files
    // left when it has passed are named, not checked.
    let started = std::time::Instant::now();
    let wait = ctx.shared.config.diagnostics_wait;
    let mut notes: Vec<String> = Vec::new();
    for (i, (path, before, after)) in written.iter().enumerate() {
        if started.elapsed() >= wait {
            let rest: Vec<String> = written[i..]
                .iter()
                .filter(|(p, _, _)| crate::tools::engine::code::covered(ctx, p))
                .map(|(p, _, _)| p.shown.display().to_string())
                .collect();
            if !rest.is_empty() {
                notes.push(format!(
                    "Diagnostics: not checked within {} s: {}; the diagnostics tool shows them.",
                    wait.as_secs_f64(),
                    rest.join(", ")
                ));
            }
            break;
        }
        notes.extend(crate::tools::engine::code::after_write(
            ctx,
            path,
            before.as_deref(),
            after,
        ));
    }
    let note = (!notes.is_empty()).then(|| notes.join("\n"));
    Ok(crate::tools::engine::code::with_diagnostics(
        text_result(text),
        note,
    ))
}

/// An error of a patch: nothing was written.
fn patch_error(code: ErrorCode, message: String) -> ToolError {
    ToolError::new(
        code,
        format!("{message}Nothing was written: no file was changed."),
    )
}

/// Writes every changed file, all or nothing (`journal::commit`), after making the
/// directories new files need (and checking once more where they really are, as
/// `create_file` does).
fn commit(ctx: &Ctx, plan: &Plan) -> ToolResult<()> {
    let changed: Vec<usize> = (0..plan.files.len())
        .filter(|&i| plan.files[i].changed())
        .collect();
    for &i in &changed {
        let f = &plan.files[i];
        if f.now().is_none() || f.disk.is_some() {
            continue;
        }
        if let Some(parent) = f.path.real.parent()
            && std::fs::symlink_metadata(parent).is_err()
        {
            // Made beneath the allowed root, no symlink followed (issue 25 §2).
            crate::beneath::create_dir_all(parent)
                .map_err(|e| e.into_tool(&f.path.shown, "create the parent directories of"))?;
            let canon = std::fs::canonicalize(parent)
                .map_err(|e| ToolError::io(&f.path.shown, "write", &e))?;
            ctx.shared.scope.check(
                &f.path.shown,
                &canon.join(f.path.real.file_name().unwrap_or_default()),
            )?;
        }
    }
    let changes: Vec<Change<'_>> = changed
        .iter()
        .map(|&i| {
            let f = &plan.files[i];
            let before = f.disk.as_ref().map(|d| hash_bytes(&d.content));
            match f.now() {
                Some(bytes) => Change::Write {
                    real: &f.path.real,
                    shown: &f.path.shown,
                    bytes,
                    mode_of: plan.mode_of(i),
                    before,
                },
                None => Change::Remove {
                    real: &f.path.real,
                    shown: &f.path.shown,
                    before: before.unwrap_or_default(),
                },
            }
        })
        .collect();
    let home = journal::common_dir(changed.iter().map(|&i| plan.files[i].path.real.as_path()))
        .unwrap_or_else(|| PathBuf::from("/"));
    if changes.len() > 1 && !ctx.shared.scope.is_allowed(&home) {
        return Err(patch_error(
            ErrorCode::AccessDenied,
            format!(
                "the patch changes files in more than one allowed directory; its journal (what \
                 makes several files change all or nothing) would go in {}, which is outside \
                 them. Send one patch per allowed directory. ",
                home.display()
            ),
        ));
    }
    journal::commit(&changes, &home)
}

/// One line per section, the notes, and the diff (every file for a dry run; updated and
/// moved files otherwise: an added file's lines are the patch's own).
fn result_text(ctx: &Ctx, parsed: &Parsed, plan: &Plan, dry_run: bool) -> String {
    let label = |i: usize| diff_label(ctx, &plan.files[i].path.shown);
    let mut out = if dry_run {
        "Dry run: nothing was written. Applied, the patch would make these changes:\n"
    } else {
        "Applied the patch:\n"
    }
    .to_string();
    for s in &plan.summaries {
        let line = match s {
            Summary::Added {
                file,
                lines,
                replaced,
            } => format!(
                "added {} ({lines} line{}){}",
                label(*file),
                plural(*lines),
                if *replaced {
                    ", replacing the file that was there"
                } else {
                    ""
                }
            ),
            Summary::Updated {
                file,
                hunks,
                added,
                removed,
            } => format!(
                "updated {}: {hunks} hunk{}, +{added} -{removed}",
                label(*file),
                plural(*hunks)
            ),
            Summary::Moved {
                from,
                to,
                hunks,
                added,
                removed,
                replaced,
            } => {
                let changes = if *hunks > 0 {
                    format!(": {hunks} hunk{}, +{added} -{removed}", plural(*hunks))
                } else {
                    String::new()
                };
                let replacing = if *replaced {
                    " (replacing the file that was there)"
                } else {
                    ""
                };
                format!(
                    "moved {} to {}{replacing}{changes}",
                    label(*from),
                    label(*to)
                )
            }
            Summary::Deleted { file, lines } => {
                format!("deleted {} ({lines} line{})", label(*file), plural(*lines))
            }
        };
        out.push_str("  ");
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str(&notes(parsed, plan, &label));
    out.push_str(&bound_diff(diffs(plan, &label, dry_run)));
    out
}

/// Boris's notes on a patch applied: a wrapper taken off (a code fence, prose, a
/// heredoc), and each hunk that matched only loosely; both reports end with them.
fn notes(parsed: &Parsed, plan: &Plan, label: &dyn Fn(usize) -> String) -> String {
    let mut out = String::new();
    if !parsed.wrappings.is_empty() {
        out.push_str(&format!(
            "Note: the patch was {}; applied what it held.\n",
            join_and(parsed.wrappings.iter().map(|w| w.describe()))
        ));
    }
    for &(file, hunk, n, how) in &plan.fuzz {
        let which = if n == 1 {
            "the hunk".to_string()
        } else {
            format!("hunk {} of {n}", hunk + 1)
        };
        out.push_str(&format!(
            "Note: {which} for {} matched {}.\n",
            label(file),
            how.describe()
        ));
    }
    out
}

/// Codex's report (codex-rs `apply-patch`, `print_summary`): the files added, then
/// modified (a moved file under its new name), then deleted, as the patch named them
/// (relative to the working directory when inside it); Boris's notes (a wrapper taken
/// off, a loose match) follow.
fn codex_text(ctx: &Ctx, parsed: &Parsed, plan: &Plan) -> String {
    let name = |i: usize| {
        let shown = &plan.files[i].path.shown;
        shown
            .strip_prefix(ctx.ws.cwd())
            .unwrap_or(shown)
            .display()
            .to_string()
    };
    let (mut added, mut modified, mut deleted) = (Vec::new(), Vec::new(), Vec::new());
    for s in &plan.summaries {
        match s {
            Summary::Added { file, .. } => added.push(name(*file)),
            Summary::Updated { file, .. } => modified.push(name(*file)),
            Summary::Moved { to, .. } => modified.push(name(*to)),
            Summary::Deleted { file, .. } => deleted.push(name(*file)),
        }
    }
    let mut out = "Success. Updated the following files:\n".to_string();
    for (letter, paths) in [("A", added), ("M", modified), ("D", deleted)] {
        for p in paths {
            out.push_str(&format!("{letter} {p}\n"));
        }
    }
    out.push_str(&notes(parsed, plan, &name));
    out
}

fn diffs(plan: &Plan, label: &dyn Fn(usize) -> String, dry_run: bool) -> String {
    use crate::text::diff::unified;
    let moved_away: Vec<usize> = plan.files.iter().filter_map(|f| f.moved_from).collect();
    let mut out = String::new();
    for (i, f) in plan.files.iter().enumerate() {
        if !f.changed() {
            continue;
        }
        let old = f.disk.as_ref().map(|d| d.content.as_slice());
        match (old, f.now(), f.moved_from) {
            (_, Some(new), Some(from)) if plan.files[from].disk.is_some() && old.is_none() => {
                let src = plan.files[from].disk.as_ref().map(|d| d.content.as_slice());
                let d = unified(src, new, &label(i));
                out.push_str(&d.replacen(
                    &format!("--- a/{}\n", label(i)),
                    &format!("--- a/{}\n", label(from)),
                    1,
                ));
            }
            (Some(old), Some(new), _) => out.push_str(&unified(Some(old), new, &label(i))),
            (None, Some(new), _) if dry_run => out.push_str(&unified(None, new, &label(i))),
            (Some(old), None, _) if dry_run && !moved_away.contains(&i) => {
                let d = unified(Some(old), b"", &label(i));
                out.push_str(&d.replacen(&format!("+++ b/{}\n", label(i)), "+++ /dev/null\n", 1));
            }
            _ => {}
        }
    }
    out
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn join_and<'a>(parts: impl Iterator<Item = &'a str>) -> String {
    let parts: Vec<&str> = parts.collect();
    match parts.as_slice() {
        [] => String::new(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}
