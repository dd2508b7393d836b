//! The paths a git config names that git runs or reads as more config (issue 25 §3):
//! `core.hooksPath = .husky/_`, `core.fsmonitor = ./scripts/watch`, a filter's
//! `clean = ./tools/clean.sh`, `include.path = ../shared.gitconfig`. When one lies in
//! the writable trees, the jail and the file tools protect it as they protect
//! `.git/hooks`. [`named_paths`] reads a config's text (pure); [`config_named`] reads
//! the files and resolves what they name; [`file_tools_refuse`] is what the file tools
//! refuse to write, by both rules.

use super::paths::{git_protection, is_git_protected};
use std::path::{Path, PathBuf};

/// A path a config names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    /// `section.key`, lowercased (`core.hookspath`, `filter.clean`: the subsection left
    /// out).
    pub key: String,
    /// As written (`~/` not expanded).
    pub path: String,
    /// Relative to the config file's directory (`include.path`); otherwise to the work
    /// tree's top, where git runs hooks and filters.
    pub relative_to_config: bool,
}

/// Keys whose whole value is a path: hooks run from it, or config read from it.
const PATH_KEYS: &[&str] = &["core.hookspath", "include.path", "includeif.path"];

/// Keys whose value is a command git runs (through the shell): each word of it that
/// looks like a path may be a script in the work tree.
const COMMAND_KEYS: &[&str] = &[
    "core.fsmonitor",
    "core.sshcommand",
    "core.pager",
    "core.editor",
    "core.askpass",
    "core.gitproxy",
    "filter.clean",
    "filter.smudge",
    "filter.process",
    "diff.textconv",
    "diff.command",
    "diff.external",
    "merge.driver",
    "gpg.program",
    "credential.helper",
    "sequence.editor",
    "uploadpack.packobjectshook",
];

/// Every path `text` (a git config file) names under a key git runs or reads, in order.
pub fn named_paths(text: &str) -> Vec<Named> {
    let mut out = Vec::new();
    let mut section = String::new();
    for raw in text.lines() {
        let mut line = raw.trim();
        if let Some(rest) = line.strip_prefix('[') {
            let Some(end) = rest.find(']') else {
                continue;
            };
            section = section_name(&rest[..end]);
            line = rest[end + 1..].trim();
        }
        if line.is_empty() || line.starts_with(['#', ';']) {
            continue;
        }
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim(), unquote(v)),
            None => continue,
        };
        let key = format!("{section}.{}", key.to_ascii_lowercase());
        if PATH_KEYS.contains(&key.as_str()) {
            let hooks_dir = key == "core.hookspath" && !matches!(value.as_str(), "" | "." | "..");
            if looks_like_path(&value) || hooks_dir {
                out.push(Named {
                    relative_to_config: key != "core.hookspath",
                    key,
                    path: value,
                });
            }
            continue;
        }
        let command = if section == "alias" {
            value.strip_prefix('!').map(str::to_string)
        } else if COMMAND_KEYS.contains(&key.as_str()) {
            Some(value)
        } else {
            None
        };
        for word in command.iter().flat_map(|c| c.split_whitespace()) {
            let word = word.trim_matches(|c| c == '\'' || c == '"' || c == ';' || c == '!');
            if looks_like_path(word) {
                out.push(Named {
                    key: key.clone(),
                    path: word.to_string(),
                    relative_to_config: false,
                });
            }
        }
    }
    out
}

/// What the git config at `config` names that git runs or reads as config
/// ([`named_paths`]), resolved (`~/`, the config's directory for includes, the work
/// tree's top for the rest: the parent of a `.git`), in the writable trees `write`,
/// never the work tree itself nor what [`git_protection`] already covers; and what the
/// files it includes there name, a few levels deep.
pub fn config_named(config: &Path, write: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    named_from(config, write, 0, &mut out);
    out
}

fn named_from(config: &Path, write: &[PathBuf], depth: usize, out: &mut Vec<PathBuf>) {
    use std::io::Read;
    let mut text = String::new();
    let Ok(file) = std::fs::File::open(config) else {
        return;
    };
    if file.take(1 << 20).read_to_string(&mut text).is_err() {
        return;
    }
    let dir = config.parent().unwrap_or(Path::new("/"));
    // Hooks and filters run at the top of the work tree: the parent of a `.git`.
    let top = Some(dir)
        .filter(|d| d.file_name().is_some_and(|n| n == ".git"))
        .and_then(Path::parent);
    let home = std::env::var_os("HOME").map(PathBuf::from);
    for named in named_paths(&text) {
        let written = Path::new(&named.path);
        let base = if let (Ok(rest), Some(home)) = (written.strip_prefix("~"), &home) {
            home.join(rest)
        } else if named.relative_to_config || written.is_absolute() {
            dir.join(written)
        } else if let Some(top) = top {
            top.join(written)
        } else {
            continue;
        };
        let path = crate::scope::normalize(Path::new("/"), &base);
        let writable = write.iter().any(|w| path.starts_with(w));
        let whole_tree = top.is_some_and(|t| t.starts_with(&path));
        if !writable || whole_tree || git_protection(&path).is_some() || out.contains(&path) {
            continue;
        }
        out.push(path.clone());
        if named.relative_to_config && depth < 4 && path.is_file() {
            named_from(&path, write, depth + 1, out);
        }
    }
}

/// `core`, `filter "lfs"` → `filter`, `branch.main` → `branch`: the section, lowercased.
fn section_name(header: &str) -> String {
    let name = header
        .trim()
        .split(|c: char| c.is_whitespace() || c == '.' || c == '"')
        .next()
        .unwrap_or("");
    name.to_ascii_lowercase()
}

/// A value as git reads it: quotes removed, `\"` `\\` `\t` `\n` unescaped, a comment
/// (`#`, `;` outside quotes) cut off, surrounding blanks trimmed.
fn unquote(value: &str) -> String {
    let mut out = String::new();
    let mut quoted = false;
    let mut chars = value.trim().chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => quoted = !quoted,
            '\\' => match chars.next() {
                Some('t') => out.push('\t'),
                Some('n') => out.push('\n'),
                Some(other) => out.push(other),
                None => {}
            },
            '#' | ';' if !quoted => break,
            c => out.push(c),
        }
    }
    out.trim().to_string()
}

/// A word that names a file rather than a program on `PATH`: it has a `/` or starts
/// with `.` (not `.` or `..` alone, which would be the whole tree).
fn looks_like_path(word: &str) -> bool {
    !word.is_empty()
        && word != "."
        && word != ".."
        && !word.starts_with('-')
        && (word.contains('/') || word.starts_with('.'))
}

/// What the file tools refuse to write with git protected: [`is_git_protected`], and what
/// the config of a repository holding `path` names in the writable trees `write`
/// ([`config_named`]), which the jail keeps read-only as well.
pub fn file_tools_refuse(path: &Path, write: &[PathBuf]) -> bool {
    if is_git_protected(path) {
        return true;
    }
    path.ancestors()
        .skip(1)
        .take_while(|a| write.iter().any(|w| a.starts_with(w)))
        .map(|a| a.join(".git"))
        .filter(|g| g.is_dir())
        .flat_map(|g| [g.join("config"), g.join("config.worktree")])
        .any(|config| {
            config_named(&config, write)
                .iter()
                .any(|n| path.starts_with(n))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn paths(text: &str) -> Vec<(String, String, bool)> {
        named_paths(text)
            .into_iter()
            .map(|n| (n.key, n.path, n.relative_to_config))
            .collect()
    }

    #[test]
    fn finds_what_git_runs_or_reads() {
        let text = r#"
[core]
	repositoryformatversion = 0
	hooksPath = .husky/_
	fsmonitor = "./scripts/watch --fast" ; a comment
	pager = less
[include]
	path = ../shared.gitconfig
[includeIf "gitdir:~/work/"]
	path = ~/work.gitconfig
[filter "lfs"]
	clean = git-lfs clean -- %f
[filter "fmt"]
	clean = sh ./tools/fmt.sh
[alias]
	st = status
	x = !./bin/x.sh --all
[remote "origin"]
	url = ../other
[core] sshCommand = ssh -F ./ssh_config
"#;
        assert_eq!(
            paths(text),
            vec![
                ("core.hookspath".into(), ".husky/_".into(), false),
                ("core.fsmonitor".into(), "./scripts/watch".into(), false),
                ("include.path".into(), "../shared.gitconfig".into(), true),
                ("includeif.path".into(), "~/work.gitconfig".into(), true),
                ("filter.clean".into(), "./tools/fmt.sh".into(), false),
                ("alias.x".into(), "./bin/x.sh".into(), false),
                ("core.sshcommand".into(), "./ssh_config".into(), false),
            ]
        );
        // A hooks path without a slash is a directory in the work tree all the same.
        assert_eq!(
            paths("[core]\n\thookspath = hooks\n"),
            vec![("core.hookspath".into(), "hooks".into(), false)]
        );
        assert_eq!(paths("[core]\n\tfsmonitor = true\n\tpager = .\n"), vec![]);
    }

    proptest! {
        #[test]
        fn never_panics(text in "(\\PC|\n|\t|\\[|\\]|\"|=|\\\\){0,300}") {
            for named in named_paths(&text) {
                prop_assert!(!named.path.is_empty() && named.path != "." && named.path != "..");
            }
        }

        /// A path-valued key gives back exactly the path written, however quoted.
        #[test]
        fn a_hooks_path_comes_back(dir in "[a-z_][a-z_./]{0,20}", quoted in any::<bool>()) {
            let value = if quoted { format!("\"{dir}\"") } else { dir.clone() };
            let got = paths(&format!("[core]\n\thooksPath = {value}\n"));
            prop_assert_eq!(got, vec![("core.hookspath".to_string(), dir, false)]);
        }
    }
}
