//! No import circle between the parts of `src/` (issue 28 §2–§3: "no back edge between
//! folders"). A part is a top-level module: a file `src/x.rs` or a folder `src/x/`. Part
//! A depends on part B when code of A (outside `#[cfg(test)]`) names `crate::b`; the
//! parts must then form a layered graph, with no path from a part back to itself. A
//! circle found is printed with the file and line of each of its imports, so the edge to
//! cut is plain.
//!
//! The binaries (`src/bin/`, `src/main.rs`) are outside the library and never imported.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::common::source::rust_files;

/// The part a `src/` file belongs to: `tools` for `src/tools/boris/view.rs`, `scope` for
/// `src/scope.rs`; `None` for the crate root and the binaries.
fn part_of(rel: &Path) -> Option<String> {
    let mut parts = rel.components().map(|c| c.as_os_str().to_string_lossy());
    let first = parts.next()?.into_owned();
    if first == "bin" || first == "main.rs" || first == "lib.rs" {
        return None;
    }
    Some(first.trim_end_matches(".rs").to_string())
}

/// The code of `text` before its test module (`#[cfg(test)]` then `mod …`), without comments (a doc comment may name
/// `crate::x` in a link without depending on it).
fn code_lines(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().copied().enumerate() {
        let trimmed = line.trim_start();
        let next = lines.get(i + 1).map_or("", |l| l.trim_start());
        if trimmed.starts_with("#[cfg(test)]") && next.starts_with("mod ") {
            break;
        }
        if trimmed.starts_with("//") {
            continue;
        }
        let code = line.split_once("//").map_or(line, |(c, _)| c);
        out.push((i + 1, code));
    }
    out
}

/// The parts `code` names as `crate::part`.
fn named_parts(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().next_back();
        let after = &rest[at + "crate::".len()..];
        rest = after;
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue; // `$crate::` or an identifier ending in `crate`
        }
        let name: String = after
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            found.push(name);
        }
    }
    found
}

/// Part → part it imports → where (file:line), for the first import seen.
type Edges = BTreeMap<String, BTreeMap<String, String>>;

fn edges(src: &Path) -> Edges {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let parts: BTreeSet<String> = files
        .iter()
        .filter_map(|f| part_of(f.strip_prefix(src).ok()?))
        .collect();
    let mut edges = Edges::new();
    for file in &files {
        let rel = file.strip_prefix(src).expect("under src");
        let Some(from) = part_of(rel) else {
            continue;
        };
        let text = std::fs::read_to_string(file).expect("readable source");
        for (line, code) in code_lines(&text) {
            for to in named_parts(code) {
                if to != from && parts.contains(&to) {
                    edges
                        .entry(from.clone())
                        .or_default()
                        .entry(to)
                        .or_insert_with(|| format!("src/{}:{line}", rel.display()));
                }
            }
        }
    }
    edges
}

/// A circle of parts (the first part repeated at the end), if there is one.
fn find_circle(edges: &Edges) -> Option<Vec<String>> {
    fn visit(
        part: &str,
        edges: &Edges,
        done: &mut BTreeSet<String>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| p == part) {
            let mut circle = path[at..].to_vec();
            circle.push(part.to_string());
            return Some(circle);
        }
        if done.contains(part) {
            return None;
        }
        path.push(part.to_string());
        for next in edges.get(part).into_iter().flat_map(|m| m.keys()) {
            if let Some(circle) = visit(next, edges, done, path) {
                return Some(circle);
            }
        }
        path.pop();
        done.insert(part.to_string());
        None
    }
    let mut done = BTreeSet::new();
    edges
        .keys()
        .find_map(|part| visit(part, edges, &mut done, &mut Vec::new()))
}

#[test]
fn the_parts_of_src_import_each_other_in_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let edges = edges(&src);
    let imports: usize = edges.values().map(BTreeMap::len).sum();
    assert!(
        imports >= 40,
        "only {imports} imports between parts found: the scan is broken"
    );
    if let Some(circle) = find_circle(&edges) {
        let steps: Vec<String> = circle
            .windows(2)
            .map(|w| format!("  {} → {} ({})", w[0], w[1], edges[&w[0]][&w[1]]))
            .collect();
        panic!(
            "the parts of src/ import each other in a circle; cut one of these imports:\n{}",
            steps.join("\n")
        );
    }
}

#[test]
fn a_circle_is_found_and_a_layered_graph_passes() {
    fn add(edges: &mut Edges, a: &str, b: &str) {
        edges
            .entry(a.into())
            .or_default()
            .insert(b.into(), "x".into());
    }
    let mut edges = Edges::new();
    add(&mut edges, "server", "tools");
    add(&mut edges, "tools", "scope");
    add(&mut edges, "transport", "server");
    assert_eq!(find_circle(&edges), None);
    add(&mut edges, "scope", "transport");
    let circle = find_circle(&edges).expect("a circle");
    assert_eq!(circle.first(), circle.last());
    assert_eq!(circle.len(), 5, "{circle:?}");
}

#[test]
fn imports_are_read_from_code_only() {
    assert_eq!(
        named_parts("use crate::tools::{Ctx}; let x = crate::scope::resolve(p);"),
        vec!["tools", "scope"]
    );
    assert_eq!(
        named_parts("$crate::foo; mycrate::bar"),
        Vec::<String>::new()
    );
    let text = "use crate::a;\n// crate::b\nlet y = 1; // crate::c\n#[cfg(test)]\nuse crate::e;\n#[cfg(test)]\nmod tests {\nuse crate::d;\n";
    let names: Vec<String> = code_lines(text)
        .into_iter()
        .flat_map(|(_, c)| named_parts(c))
        .collect();
    assert_eq!(names, vec!["a", "e"]);
    assert_eq!(
        part_of(Path::new("tools/boris/view.rs")).as_deref(),
        Some("tools")
    );
    assert_eq!(part_of(Path::new("scope.rs")).as_deref(), Some("scope"));
    assert_eq!(part_of(Path::new("bin/boris-spec/main.rs")), None);
}
