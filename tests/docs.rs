//! The documents stay the size their readers finish and keep their promises (issue 28 §4):
//! README and CONTRIBUTING within their line budgets, every relative link (and the
//! `#anchor` it names) in every Markdown file resolving, every decision of
//! docs/decisions.md naming a case or test that exists and every `DEC-N` cited anywhere
//! being a decision, and the README keeping what CI and the compatibility matrix rely on.

use regex::Regex;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// At most this many lines (issue 28 §4).
const BUDGETS: &[(&str, usize)] = &[("README.md", 300), ("CONTRIBUTING.md", 400)];

/// Directories no document of ours lives in (build output, vendored or installed trees).
const SKIP_DIRS: &[&str] = &[
    "target",
    ".git",
    "node_modules",
    "vendor",
    ".cache",
    "golden",
];

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// Every file under `dir` whose name ends with one of `exts`, outside [`SKIP_DIRS`].
fn files(dir: &Path, exts: &[&str], out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            if !SKIP_DIRS.contains(&name.as_str()) {
                files(&path, exts, out);
            }
        } else if exts.iter().any(|e| name.ends_with(e)) {
            out.push(path);
        }
    }
}

/// Every Markdown file of ours, but the drafts in docs/pending/ (written on branches that
/// could not know where their text would land; the merger folds them in and checks them).
fn markdown_files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    files(Path::new(ROOT), &[".md"], &mut out);
    let pending = Path::new(ROOT).join("docs/pending");
    out.retain(|f| !f.starts_with(&pending) || f.ends_with("README.md"));
    out.sort();
    out
}

fn rel(path: &Path) -> String {
    path.strip_prefix(ROOT)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// The lines outside fenced code blocks, with inline code spans blanked, so a link
/// written as an example in code is not taken for one.
fn prose(text: &str) -> Vec<String> {
    let span = Regex::new(r"`[^`]*`").expect("regex");
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            out.push(String::new());
            continue;
        }
        out.push(if fenced {
            String::new()
        } else {
            span.replace_all(line, "``").into_owned()
        });
    }
    out
}

/// GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped,
/// spaces to `-`; a repeated heading gets `-1`, `-2`, ….
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors a Markdown file offers: its headings' slugs and explicit `id="…"`s.
fn anchors(text: &str) -> BTreeSet<String> {
    let id = Regex::new(r#"<a id="([^"]+)"></a>"#).expect("regex");
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        if let Some(heading) = line.strip_prefix('#') {
            let heading = heading.trim_start_matches('#');
            if heading.starts_with(' ') {
                let base = slug(heading);
                let n = seen.entry(base.clone()).or_insert(0);
                out.insert(if *n == 0 {
                    base.clone()
                } else {
                    format!("{base}-{n}")
                });
                *n += 1;
            }
        }
        for cap in id.captures_iter(line) {
            out.insert(cap[1].to_string());
        }
    }
    out
}

#[test]
fn readme_and_contributing_keep_their_budgets() {
    for (file, budget) in BUDGETS {
        let lines = read(&Path::new(ROOT).join(file)).lines().count();
        assert!(
            lines <= *budget,
            "{file} has {lines} lines, over its budget of {budget}: move text to docs/ \
             (CONTRIBUTING.md, 'Where the docs go')"
        );
    }
}

#[test]
fn every_relative_link_in_the_docs_resolves() {
    let link = Regex::new(r"\]\(([^)\s]+)\)").expect("regex");
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in markdown_files() {
        let text = read(&file);
        let own = anchors(&text);
        let dir = file.parent().expect("a file has a directory");
        for (n, line) in prose(&text).iter().enumerate() {
            for cap in link.captures_iter(line) {
                let target = &cap[1];
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                checked += 1;
                let (path, anchor) = match target.split_once('#') {
                    Some((p, a)) => (p, Some(a)),
                    None => (target, None),
                };
                let where_ = format!("{}:{}: {target}", rel(&file), n + 1);
                let offered = if path.is_empty() {
                    own.clone()
                } else {
                    let resolved = dir.join(path);
                    if !resolved.exists() {
                        broken.push(format!("{where_} (no such file)"));
                        continue;
                    }
                    if anchor.is_none() || !path.ends_with(".md") {
                        continue;
                    }
                    anchors(&read(&resolved))
                };
                if let Some(anchor) = anchor
                    && !offered.contains(anchor)
                {
                    broken.push(format!("{where_} (no such anchor)"));
                }
            }
        }
    }
    assert!(
        checked > 50,
        "only {checked} links found: is the scan broken?"
    );
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// Each decision of docs/decisions.md: its id and its text (the bullet, continuation
/// lines included).
fn decisions() -> Vec<(u32, String)> {
    let text = read(&Path::new(ROOT).join("docs/decisions.md"));
    let head = Regex::new(r#"^- <a id="dec-(\d+)"></a>\*\*DEC-(\d+)\.\*\* "#).expect("regex");
    let mut out: Vec<(u32, String)> = Vec::new();
    for line in text.lines() {
        if let Some(cap) = head.captures(line) {
            assert_eq!(&cap[1], &cap[2], "anchor and id differ: {line}");
            out.push((cap[1].parse().expect("an id is a number"), line.to_string()));
        } else if line.starts_with("- ") {
            panic!("docs/decisions.md: a bullet without an id: {line}");
        } else if let Some((_, body)) = out.last_mut()
            && (line.starts_with(' ') || line.is_empty())
        {
            body.push('\n');
            body.push_str(line);
        }
    }
    out
}

/// What a decision names as its evidence.
#[derive(Default)]
struct Evidence {
    /// Case files named exactly (a `spec/…yaml` path, or a file name only one case has).
    cases: Vec<PathBuf>,
    /// Other evidence that exists: globs and folders of cases, `tests/…` and `scripts/…`
    /// files (CI runs them), unit tests as `src/…rs::test_name`.
    other: Vec<String>,
    /// Named but not there.
    missing: Vec<String>,
}

/// Compiled once: a debug build compiles a Unicode `\w` slowly, and this runs per decision.
static PATH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:^|[^\w/.])((?:spec|tests|scripts)/[\w./*{},-]+)").expect("regex")
});
static BARE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\b[\w-]+\.yaml\b").expect("regex"));
static UNIT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b(src/[\w/]+\.rs)::(\w+)").expect("regex"));

fn named_evidence(text: &str, by_name: &BTreeMap<String, Vec<PathBuf>>) -> Evidence {
    let (path, bare, unit) = (&*PATH, &*BARE, &*UNIT);
    let mut found = Evidence::default();
    for cap in unit.captures_iter(text) {
        let file = Path::new(ROOT).join(&cap[1]);
        let defined = std::fs::read_to_string(&file)
            .is_ok_and(|src| src.contains(&format!("fn {}(", &cap[2])));
        let list = if defined {
            &mut found.other
        } else {
            &mut found.missing
        };
        list.push(cap[0].to_string());
    }
    for cap in path.captures_iter(text) {
        let p = cap[1].trim_end_matches(['.', ',']);
        if !(p.ends_with(".yaml") || p.ends_with(".rs") || p.ends_with(".sh") || p.ends_with('/')) {
            continue;
        }
        let full = Path::new(ROOT).join(p);
        if p.contains(['*', '{']) {
            let glob = globset::Glob::new(p).expect("a glob").compile_matcher();
            let mut all = Vec::new();
            files(
                &Path::new(ROOT).join(p.split('/').next().unwrap_or("spec")),
                &[""],
                &mut all,
            );
            let list = if all.iter().any(|f| glob.is_match(rel(f))) {
                &mut found.other
            } else {
                &mut found.missing
            };
            list.push(p.to_string());
        } else if !full.exists() {
            found.missing.push(p.to_string());
        } else if p.starts_with("spec/") && p.ends_with(".yaml") && !p.starts_with("spec/adapters/")
        {
            found.cases.push(full);
        } else {
            found.other.push(p.to_string());
        }
    }
    for m in bare.find_iter(text) {
        if let Some([only]) = by_name.get(m.as_str()).map(Vec::as_slice)
            && !found.cases.contains(only)
        {
            found.cases.push(only.clone());
        }
    }
    found
}

/// Whether `text` cites `DEC-id` (not `DEC-id0`).
fn cites(text: &str, id: u32) -> bool {
    let tag = format!("DEC-{id}");
    text.match_indices(&tag).any(|(at, _)| {
        !text[at + tag.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit())
    })
}

/// A case's `source:` line.
fn source_line(case: &Path) -> String {
    read(case)
        .lines()
        .find(|l| l.starts_with("source:"))
        .unwrap_or_default()
        .to_string()
}

#[test]
fn every_decision_has_an_id_and_a_case_and_every_citation_a_decision() {
    let decisions = decisions();
    assert!(decisions.len() > 50, "decisions not found");
    let mut ids = BTreeSet::new();
    for (id, _) in &decisions {
        assert!(ids.insert(*id), "DEC-{id} is used twice");
    }
    let mut specs = Vec::new();
    files(&Path::new(ROOT).join("spec"), &[".yaml"], &mut specs);
    let mut by_name: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for spec in specs
        .iter()
        .filter(|p| !rel(p).starts_with("spec/adapters/"))
    {
        if let Some(name) = spec.file_name() {
            let entry = by_name.entry(name.to_string_lossy().into_owned());
            entry.or_default().push(spec.clone());
        }
    }
    let mut problems = Vec::new();
    let index = read(&Path::new(ROOT).join("docs/decisions.md"));
    for (id, _) in &decisions {
        if !index.contains(&format!("[{id}](#dec-{id})")) {
            problems.push(format!("DEC-{id} is in no row of the topic table"));
        }
    }
    for (id, text) in &decisions {
        if text.contains(&format!("**DEC-{id}.** ~~")) {
            continue; // struck through whole: replaced, and says by what
        }
        let evidence = named_evidence(text, &by_name);
        if evidence.cases.is_empty() && evidence.other.is_empty() {
            problems.push(format!("DEC-{id} names no case or test that exists"));
        }
        for m in evidence.missing {
            problems.push(format!("DEC-{id} names {m}, which does not exist"));
        }
        // Both ways: a case the decision names cites it in its source.
        for case in evidence.cases {
            if !cites(&source_line(&case), *id) {
                problems.push(format!(
                    "DEC-{id} names {}, whose source: does not cite DEC-{id}",
                    rel(&case)
                ));
            }
        }
    }
    // Citations: spec sources, code comments, tests, documents.
    let cite = Regex::new(r"\bDEC-(\d+)\b").expect("regex");
    let mut citing = specs;
    files(Path::new(ROOT), &[".rs", ".md", ".py", ".sh"], &mut citing);
    for file in citing {
        let text = read(&file);
        for cap in cite.captures_iter(&text) {
            let id: u32 = cap[1].parse().expect("digits");
            if !ids.contains(&id) {
                problems.push(format!(
                    "{} cites DEC-{id}, which is no decision",
                    rel(&file)
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The README keeps what others rely on: the two commands (`.ci/run` runs the test
/// command as "the README's"), the quick start's server command (checked with the
/// client configs by tests/readme_configs.rs), and one pair of the markers that
/// `tests/compat/matrix.py --embed` rewrites between.
#[test]
fn readme_keeps_the_two_commands_and_the_matrix_markers() {
    let readme = read(&Path::new(ROOT).join("README.md"));
    let commands: Vec<&str> = readme.lines().map(str::trim).collect();
    for command in ["cargo test", "cargo install --locked --path ."] {
        assert!(commands.contains(&command), "README lost `{command}`");
    }
    assert!(
        readme.contains("<!-- readme-config: quick-start -->"),
        "README lost the command that runs the server"
    );
    let ci = read(&Path::new(ROOT).join(".ci/run"));
    assert!(
        ci.contains("cargo test --locked"),
        ".ci/run no longer runs the README's tests"
    );
    for marker in ["<!-- compat-matrix:begin -->", "<!-- compat-matrix:end -->"] {
        assert_eq!(readme.matches(marker).count(), 1, "README: {marker}");
    }
    let matrix = read(&Path::new(ROOT).join("tests/compat/matrix.py"));
    assert!(
        matrix.contains("compat-matrix:begin"),
        "matrix.py's markers changed"
    );
}

/// ARCHITECTURE.md's code map stays true to the tree: every path it names exists, and
/// every source file under `src/` has its line (a `mod.rs` is covered by its folder's
/// other lines, a folder named with a trailing `/` covers its files).
#[test]
fn the_code_map_names_every_source_file_and_nothing_gone() {
    let text = read(&Path::new(ROOT).join("ARCHITECTURE.md"));
    let start = text.find("## Code map").expect("a code map");
    let end = text[start..]
        .find("\n## ")
        .map_or(text.len(), |e| start + e);
    let mut named = BTreeSet::new();
    let mut fenced = false;
    for line in text[start..end].lines() {
        if line.starts_with("```") {
            fenced = !fenced;
        } else if fenced && !line.starts_with(' ') && !line.is_empty() {
            for word in line.split_whitespace().take(2) {
                let word = word.trim_end_matches(',');
                if word.contains(['/', '.']) && !word.contains('<') {
                    named.insert(word.to_string());
                }
                if !word.ends_with(',') {
                    break;
                }
            }
        }
    }
    let mut problems: Vec<String> = named
        .iter()
        .filter(|p| !Path::new(ROOT).join(p).exists())
        .map(|p| format!("the code map names {p}, which does not exist"))
        .collect();
    let mut sources = Vec::new();
    files(&Path::new(ROOT).join("src"), &[".rs"], &mut sources);
    for source in sources {
        let path = rel(&source);
        let covered = named.contains(&path)
            || path.ends_with("/mod.rs")
            || named
                .iter()
                .any(|n| n.ends_with('/') && path.starts_with(n.as_str()));
        if !covered {
            problems.push(format!("{path} has no line in ARCHITECTURE.md's code map"));
        }
    }
    assert!(
        named.len() > 100,
        "only {} paths found in the code map",
        named.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
