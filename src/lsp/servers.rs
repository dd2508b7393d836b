//! Which language server covers which file, pure (issue 20 §1): the built-in table
//! (pyright or basedpyright, typescript-language-server, gopls, rust-analyzer, clangd),
//! `--lsp` entries over it, and the workspace root of a file.

use std::path::{Path, PathBuf};

/// A language Boris can start a server for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Language {
    /// Its key: `python`, `typescript`, `go`, `rust`, `c`, or a `--lsp` name.
    pub name: String,
    /// File extensions it covers, without the dot.
    pub extensions: Vec<String>,
    /// Command lines to try, in order: the first whose program is found runs (a `--lsp`
    /// entry has one). Empty: the language is turned off.
    pub commands: Vec<String>,
    /// Files that mark a project root for it (nearest wins).
    pub root_markers: Vec<String>,
    /// What to install when no command is found.
    pub install_hint: String,
}

impl Language {
    /// The LSP `languageId` of a file with extension `ext`.
    pub fn language_id(&self, ext: &str) -> String {
        let id = match (self.name.as_str(), ext) {
            ("typescript", "tsx") => "typescriptreact",
            ("typescript", "js" | "mjs" | "cjs") => "javascript",
            ("typescript", "jsx") => "javascriptreact",
            ("c", "c" | "h") => "c",
            ("c", _) => "cpp",
            (name, _) => name,
        };
        id.to_string()
    }
}

fn lang(name: &str, ext: &[&str], cmds: &[&str], markers: &[&str], hint: &str) -> Language {
    let own = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
    Language {
        name: name.to_string(),
        extensions: own(ext),
        commands: own(cmds),
        root_markers: own(markers),
        install_hint: hint.to_string(),
    }
}

/// The built-in languages, in the order `--check-config` lists them.
pub fn builtin() -> Vec<Language> {
    vec![
        lang(
            "python",
            &["py", "pyi"],
            &[
                "pyright-langserver --stdio",
                "basedpyright-langserver --stdio",
            ],
            &[
                "pyrightconfig.json",
                "pyproject.toml",
                "setup.py",
                "setup.cfg",
            ],
            "install pyright (npm install -g pyright, or pip install pyright) or basedpyright, \
             or name a server with --lsp python=COMMAND",
        ),
        lang(
            "typescript",
            &["ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs"],
            &["typescript-language-server --stdio"],
            &["tsconfig.json", "jsconfig.json", "package.json"],
            "install typescript-language-server and typescript (npm install -g \
             typescript-language-server typescript), or name a server with --lsp \
             typescript=COMMAND",
        ),
        lang(
            "go",
            &["go"],
            &["gopls"],
            &["go.work", "go.mod"],
            "install gopls (go install golang.org/x/tools/gopls@latest), or name a server \
             with --lsp go=COMMAND",
        ),
        lang(
            "rust",
            &["rs"],
            &["rust-analyzer"],
            &["Cargo.toml"],
            "install rust-analyzer (rustup component add rust-analyzer), or name a server \
             with --lsp rust=COMMAND",
        ),
        lang(
            "c",
            &["c", "h", "cc", "cpp", "cxx", "c++", "hh", "hpp", "hxx"],
            &["clangd"],
            &["compile_commands.json", "compile_flags.txt", ".clangd"],
            "install clangd (apt install clangd, or your system's package), or name a server \
             with --lsp c=COMMAND",
        ),
    ]
}

/// Other names a built-in language answers to in `--lsp`.
fn canonical(name: &str) -> &str {
    match name {
        "py" => "python",
        "ts" | "javascript" | "js" => "typescript",
        "golang" => "go",
        "rs" => "rust",
        "cpp" | "c++" => "c",
        other => other,
    }
}

/// One `--lsp` entry: `NAME=COMMAND` replaces a built-in language's server (`off`: no
/// server for it); `NAME:EXT[:EXT…]=COMMAND` also sets the extensions it covers, which a
/// language Boris does not know needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Override {
    pub name: String,
    pub extensions: Vec<String>,
    /// `None`: `off`.
    pub command: Option<String>,
}

/// Parses one `--lsp` value.
pub fn parse_override(value: &str) -> Result<Override, String> {
    let (key, command) = value.split_once('=').ok_or_else(|| {
        format!(
            "{value:?} is not LANG=COMMAND (e.g. python=pylsp, or zig:zig:zon=zls for a \
             language with its extensions)"
        )
    })?;
    let mut parts = key.trim().split(':');
    let name = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '+'))
    {
        return Err(format!(
            "{value:?}: the language name must be letters, digits, - or _"
        ));
    }
    let extensions: Vec<String> = parts
        .map(|e| e.trim().trim_start_matches('.').to_string())
        .collect();
    if extensions.iter().any(|e| e.is_empty() || e.contains('/')) {
        return Err(format!("{value:?}: an empty or invalid extension"));
    }
    let command = command.trim();
    if command.is_empty() {
        return Err(format!(
            "{value:?}: the command is empty (use {name}=off to turn the language off)"
        ));
    }
    let known = builtin().iter().any(|l| l.name == canonical(&name));
    if !known && extensions.is_empty() {
        return Err(format!(
            "{value:?}: {name} is not a built-in language (python, typescript, go, rust, c); \
             name its file extensions: {name}:EXT[:EXT…]=COMMAND"
        ));
    }
    Ok(Override {
        name: canonical(&name).to_string(),
        extensions,
        command: (!command.eq_ignore_ascii_case("off")).then(|| command.to_string()),
    })
}

/// The built-in table with `overrides` applied in order.
pub fn table(overrides: &[Override]) -> Vec<Language> {
    let mut langs = builtin();
    for o in overrides {
        let commands = o.command.iter().cloned().collect::<Vec<_>>();
        match langs.iter_mut().find(|l| l.name == o.name) {
            Some(l) => {
                l.commands = commands;
                if !o.extensions.is_empty() {
                    l.extensions = o.extensions.clone();
                }
                l.install_hint = format!("check the command given to --lsp {}=…", o.name);
            }
            None => langs.push(Language {
                name: o.name.clone(),
                extensions: o.extensions.clone(),
                commands,
                root_markers: Vec::new(),
                install_hint: format!("check the command given to --lsp {}:…", o.name),
            }),
        }
        // An extension belongs to the last language that claimed it.
        let (name, exts) = (o.name.clone(), o.extensions.clone());
        for l in langs.iter_mut().filter(|l| l.name != name) {
            l.extensions.retain(|e| !exts.contains(e));
        }
    }
    langs
}

/// The language that covers `path`, by its extension (case-insensitive).
pub fn language_of<'a>(langs: &'a [Language], path: &Path) -> Option<(&'a Language, String)> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    langs
        .iter()
        .find(|l| l.extensions.iter().any(|e| e.eq_ignore_ascii_case(&ext)))
        .map(|l| (l, ext))
}

/// The program a command line runs (its first word).
pub fn program(command: &str) -> &str {
    command.split_whitespace().next().unwrap_or_default()
}

/// The workspace root for `file`: the nearest directory at or above it, and within
/// `limit`, that holds one of `markers`; else `limit`. `exists` answers whether a path
/// exists (the filesystem, or a test's set).
pub fn root_for(
    file: &Path,
    limit: &Path,
    markers: &[String],
    exists: impl Fn(&Path) -> bool,
) -> PathBuf {
    let mut dir = file.parent();
    while let Some(d) = dir {
        if !d.starts_with(limit) {
            break;
        }
        if markers.iter().any(|m| exists(&d.join(m))) {
            return d.to_path_buf();
        }
        if d == limit {
            break;
        }
        dir = d.parent();
    }
    limit.to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides() {
        let o = parse_override("python=pylsp").unwrap();
        assert_eq!(o.command.as_deref(), Some("pylsp"));
        assert_eq!(parse_override("cpp=off").unwrap().command, None);
        assert_eq!(parse_override("cpp=off").unwrap().name, "c");
        let z = parse_override("zig:zig:.zon=zls --stdio").unwrap();
        assert_eq!(z.extensions, vec!["zig", "zon"]);
        assert!(
            parse_override("zig=zls").is_err(),
            "unknown without extensions"
        );
        assert!(parse_override("python").is_err());
        assert!(parse_override("python= ").is_err());
        assert!(parse_override("=x").is_err());
        let t = table(&[z, parse_override("python=off").unwrap()]);
        let (l, ext) = language_of(&t, Path::new("/p/a.ZON")).unwrap();
        assert_eq!((l.name.as_str(), ext.as_str()), ("zig", "zon"));
        assert!(
            language_of(&t, Path::new("a.py"))
                .unwrap()
                .0
                .commands
                .is_empty()
        );
        let t = table(&[parse_override("mine:py=my-ls").unwrap()]);
        assert_eq!(language_of(&t, Path::new("a.py")).unwrap().0.name, "mine");
        assert_eq!(
            language_of(&t, Path::new("a.pyi")).unwrap().0.name,
            "python"
        );
    }

    #[test]
    fn roots() {
        let markers = vec!["pyproject.toml".to_string()];
        let has = |p: &Path| p == Path::new("/w/pkg/pyproject.toml");
        assert_eq!(
            root_for(Path::new("/w/pkg/src/a.py"), Path::new("/w"), &markers, has),
            PathBuf::from("/w/pkg")
        );
        assert_eq!(
            root_for(Path::new("/w/other/a.py"), Path::new("/w"), &markers, has),
            PathBuf::from("/w")
        );
        let above = |p: &Path| p == Path::new("/pyproject.toml");
        assert_eq!(
            root_for(Path::new("/w/a.py"), Path::new("/w"), &markers, above),
            PathBuf::from("/w"),
            "never above the limit"
        );
    }

    proptest::proptest! {
        #[test]
        fn parsing_never_panics(s in "\\PC{0,40}") {
            let _ = parse_override(&s);
        }
    }
}
