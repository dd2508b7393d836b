//! No function in `src/` outside `#[cfg(test)]` is longer than [`MAX_FUNCTION_LINES`]
//! (issue 28 §3). A function's length is the lines from its `fn` to the brace that closes
//! its body, both included (blank lines, comments and the closures inside it count).
//!
//! The braces are matched on tokens, not characters: Boris holds regexes, JSON and
//! format strings in literals, so a naive count would be wrong. The small lexer below
//! skips string, byte-string and raw-string literals, char and byte literals (told apart
//! from lifetimes and labels) and line, doc and nested block comments; its unit tests
//! are at the end of this file.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::common::source::rust_files;

/// Issue 28 §3: "no function over 150 lines in `src/` outside `#[cfg(test)]`".
const MAX_FUNCTION_LINES: usize = 150;

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Punct(char),
    /// A string, char or number literal, or a lifetime: nothing the structure needs.
    Literal,
}

#[derive(Debug, Clone)]
struct Token {
    tok: Tok,
    /// 1-based line on which the token starts.
    line: usize,
}

fn is_ident_start(c: char) -> bool {
    c == '_' || c.is_alphabetic()
}

fn is_ident_continue(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// Rust source to tokens. Literals and comments are skipped whole, so a brace inside
/// one is never a token; an unterminated literal or comment runs to the end of the
/// text (the compiler has already refused such a file).
fn lex(src: &str) -> Vec<Token> {
    let chars: Vec<char> = src.chars().collect();
    let mut lexer = Lexer {
        chars: &chars,
        at: 0,
        line: 1,
    };
    let mut tokens = Vec::new();
    while let Some(c) = lexer.peek(0) {
        let line = lexer.line;
        let tok = match c {
            _ if c.is_whitespace() => {
                lexer.bump();
                continue;
            }
            '/' if lexer.peek(1) == Some('/') => {
                lexer.skip_line_comment();
                continue;
            }
            '/' if lexer.peek(1) == Some('*') => {
                lexer.skip_block_comment();
                continue;
            }
            '"' => {
                lexer.skip_string();
                Tok::Literal
            }
            '\'' => {
                lexer.skip_char_or_lifetime();
                Tok::Literal
            }
            _ if c.is_ascii_digit() => {
                lexer.skip_number();
                Tok::Literal
            }
            _ if is_ident_start(c) => lexer.ident_or_prefixed_literal(),
            _ => {
                lexer.bump();
                Tok::Punct(c)
            }
        };
        tokens.push(Token { tok, line });
    }
    tokens
}

struct Lexer<'a> {
    chars: &'a [char],
    at: usize,
    line: usize,
}

impl Lexer<'_> {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.at + ahead).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek(0)?;
        self.at += 1;
        if c == '\n' {
            self.line += 1;
        }
        Some(c)
    }

    fn skip_line_comment(&mut self) {
        while self.peek(0).is_some_and(|c| c != '\n') {
            self.bump();
        }
    }

    /// `/* … */`, which nests in Rust.
    fn skip_block_comment(&mut self) {
        self.at += 2;
        let mut depth = 1;
        while depth > 0 {
            match (self.peek(0), self.peek(1)) {
                (None, _) => return,
                (Some('/'), Some('*')) => {
                    self.at += 2;
                    depth += 1;
                }
                (Some('*'), Some('/')) => {
                    self.at += 2;
                    depth -= 1;
                }
                _ => {
                    self.bump();
                }
            }
        }
    }

    /// From an opening `"` to its closing one; a backslash escapes the next char.
    fn skip_string(&mut self) {
        self.bump();
        while let Some(c) = self.bump() {
            match c {
                '\\' => {
                    self.bump();
                }
                '"' => return,
                _ => {}
            }
        }
    }

    /// `r"…"`, `r#"…"#`, …: from `hashes` hashes and the `"` to a `"` followed by as
    /// many hashes. The prefix (`r`, `br`, `cr`) is already consumed.
    fn skip_raw_string(&mut self, hashes: usize) {
        self.at += hashes + 1;
        while let Some(c) = self.bump() {
            if c == '"' && (0..hashes).all(|i| self.peek(i) == Some('#')) {
                self.at += hashes;
                return;
            }
        }
    }

    /// A char literal (`'x'`, `'\''`, `'\u{7b}'`) or a lifetime or label (`'a`,
    /// `'static`, `'outer:`): a char literal is an escape, or one char then `'`.
    fn skip_char_or_lifetime(&mut self) {
        self.bump();
        if self.peek(0) == Some('\\') {
            self.at += 2;
            while self.bump().is_some_and(|c| c != '\'') {}
        } else if self.peek(1) == Some('\'') {
            self.at += 2;
        } else {
            while self.peek(0).is_some_and(is_ident_continue) {
                self.at += 1;
            }
        }
    }

    /// Digits, suffixes and a fractional part (`1_000u64`, `0xff`, `2.5e3`); not the
    /// `.` of a range or a method call.
    fn skip_number(&mut self) {
        while let Some(c) = self.peek(0) {
            let fraction = c == '.' && self.peek(1).is_some_and(|d| d.is_ascii_digit());
            if !(is_ident_continue(c) || fraction) {
                return;
            }
            self.at += 1;
        }
    }

    /// An identifier, or the literal it prefixes: `b"…"`, `c"…"`, `b'x'`, `r"…"`,
    /// `br#"…"#`, and the raw identifier `r#type`.
    fn ident_or_prefixed_literal(&mut self) -> Tok {
        let start = self.at;
        while self.peek(0).is_some_and(is_ident_continue) {
            self.at += 1;
        }
        let word: String = self.chars[start..self.at].iter().collect();
        let next = self.peek(0);
        match (word.as_str(), next) {
            ("b" | "c", Some('"')) => {
                self.skip_string();
                Tok::Literal
            }
            ("b", Some('\'')) => {
                self.skip_char_or_lifetime();
                Tok::Literal
            }
            ("r" | "br" | "cr", Some('"' | '#')) => {
                let hashes = (0..).take_while(|&i| self.peek(i) == Some('#')).count();
                if self.peek(hashes) == Some('"') {
                    self.skip_raw_string(hashes);
                    Tok::Literal
                } else {
                    // `r#type`: a raw identifier.
                    self.at += 1;
                    let start = self.at;
                    while self.peek(0).is_some_and(is_ident_continue) {
                        self.at += 1;
                    }
                    Tok::Ident(self.chars[start..self.at].iter().collect())
                }
            }
            _ => Tok::Ident(word),
        }
    }
}

/// A function with a body: its path (`Type::method`, `outer::inner`) and its lines.
#[derive(Debug, Clone, PartialEq)]
struct Function {
    name: String,
    first_line: usize,
    last_line: usize,
}

impl Function {
    fn lines(&self) -> usize {
        self.last_line - self.first_line + 1
    }
}

/// What an open brace belongs to.
enum Frame {
    /// An `impl` or `trait` block: its path, ending in its type or trait.
    Owner(String),
    /// A function's body: the function's path and its first line.
    Body(String, usize),
    Block,
}

/// What a file declares: its functions with bodies, and the modules it declares
/// `#[cfg(test)] mod name;` (whose files are test code).
#[derive(Debug, Default)]
struct Outline {
    functions: Vec<Function>,
    test_modules: Vec<String>,
}

/// The index just past the `close` that matches the `open` at `tokens[at]`.
fn past_matching(tokens: &[Token], at: usize, open: char, close: char) -> usize {
    let mut depth = 0usize;
    for (i, token) in tokens.iter().enumerate().skip(at) {
        if token.tok == Tok::Punct(open) {
            depth += 1;
        } else if token.tok == Tok::Punct(close) {
            depth -= 1;
            if depth == 0 {
                return i + 1;
            }
        }
    }
    tokens.len()
}

/// From `at`, the index of the first `{` or `;` outside parentheses and brackets: where
/// an item's header ends (`[u8; 4]` in a signature is not its end).
fn header_end(tokens: &[Token], at: usize) -> usize {
    let mut depth = 0i32;
    for (i, token) in tokens.iter().enumerate().skip(at) {
        match token.tok {
            Tok::Punct('(' | '[') => depth += 1,
            Tok::Punct(')' | ']') => depth -= 1,
            Tok::Punct('{' | ';') if depth <= 0 => return i,
            _ => {}
        }
    }
    tokens.len()
}

/// Whether the attribute starting at `tokens[at]` (`#`) is exactly `#[cfg(test)]`, and
/// the index just past it.
fn attribute(tokens: &[Token], at: usize) -> Option<(bool, usize)> {
    let bracket = if tokens.get(at + 1)?.tok == Tok::Punct('!') {
        at + 2
    } else {
        at + 1
    };
    if tokens.get(bracket)?.tok != Tok::Punct('[') {
        return None;
    }
    let end = past_matching(tokens, bracket, '[', ']');
    let inside: Vec<&Tok> = tokens[bracket + 1..end - 1]
        .iter()
        .map(|t| &t.tok)
        .collect();
    let cfg_test = [
        Tok::Ident("cfg".into()),
        Tok::Punct('('),
        Tok::Ident("test".into()),
        Tok::Punct(')'),
    ];
    Some((inside.iter().copied().eq(cfg_test.iter()), end))
}

/// The name of an `impl` or `trait` block from its header's tokens: the type after
/// `for` if any, else the first name after `impl`/`trait` outside generics.
fn owner_name(header: &[Token]) -> String {
    let words = match header
        .iter()
        .position(|t| t.tok == Tok::Ident("for".into()))
    {
        Some(f) => &header[f + 1..],
        None => &header[1..],
    };
    let mut angle = 0i32;
    let mut name = None;
    for token in words {
        match &token.tok {
            Tok::Punct('<') => angle += 1,
            Tok::Punct('>') => angle -= 1,
            Tok::Ident(w) if angle == 0 && w == "where" => break,
            Tok::Ident(w) if angle == 0 && w != "dyn" && w != "unsafe" => {
                name = Some(w.clone());
            }
            _ if angle == 0 && name.is_some() && token.tok != Tok::Punct(':') => break,
            _ => {}
        }
    }
    name.unwrap_or_else(|| "?".into())
}

/// `name` under the innermost named frame (each frame holds its whole path).
fn path_of(stack: &[Frame], name: &str) -> String {
    let outer = stack.iter().rev().find_map(|f| match f {
        Frame::Owner(path) | Frame::Body(path, _) => Some(path.as_str()),
        Frame::Block => None,
    });
    match outer {
        Some(outer) => format!("{outer}::{name}"),
        None => name.to_string(),
    }
}

/// The functions of one file outside `#[cfg(test)]` items.
fn outline(src: &str) -> Outline {
    let tokens = lex(src);
    let mut out = Outline::default();
    let mut stack: Vec<Frame> = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i].tok {
            Tok::Punct('#') => {
                let Some((cfg_test, after)) = attribute(&tokens, i) else {
                    i += 1;
                    continue;
                };
                i = after;
                if cfg_test {
                    i = skip_item(&tokens, i, &mut out);
                }
            }
            Tok::Ident(kw) if kw == "fn" => {
                let Some(Tok::Ident(name)) = tokens.get(i + 1).map(|t| &t.tok) else {
                    i += 1; // `fn(u8) -> u8`: a type, not a function
                    continue;
                };
                let end = header_end(&tokens, i);
                if tokens.get(end).is_some_and(|t| t.tok == Tok::Punct('{')) {
                    stack.push(Frame::Body(path_of(&stack, name), tokens[i].line));
                }
                i = end + 1;
            }
            Tok::Ident(kw) if kw == "impl" || kw == "trait" => {
                let end = header_end(&tokens, i);
                if tokens.get(end).is_some_and(|t| t.tok == Tok::Punct('{')) {
                    stack.push(Frame::Owner(path_of(&stack, &owner_name(&tokens[i..end]))));
                }
                i = end + 1;
            }
            Tok::Punct('{') => {
                stack.push(Frame::Block);
                i += 1;
            }
            Tok::Punct('}') => {
                if let Some(Frame::Body(name, first_line)) = stack.pop() {
                    out.functions.push(Function {
                        name,
                        first_line,
                        last_line: tokens[i].line,
                    });
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    out
}

/// Past the item that follows a `#[cfg(test)]` (its other attributes, then up to its
/// `;` or its closing brace); a `mod name;` is remembered as a test module.
fn skip_item(tokens: &[Token], mut at: usize, out: &mut Outline) -> usize {
    while tokens.get(at).is_some_and(|t| t.tok == Tok::Punct('#')) {
        match attribute(tokens, at) {
            Some((_, after)) => at = after,
            None => break,
        }
    }
    let end = header_end(tokens, at);
    match tokens.get(end).map(|t| &t.tok) {
        Some(Tok::Punct('{')) => past_matching(tokens, end, '{', '}'),
        Some(_) => {
            if let [.., a, b] = &tokens[at..end]
                && a.tok == Tok::Ident("mod".into())
                && let Tok::Ident(name) = &b.tok
            {
                out.test_modules.push(name.clone());
            }
            end + 1
        }
        None => end,
    }
}

/// Where the module `name` declared in `file` lives: `dir/name.rs` or `dir/name/`,
/// with `dir` the file's folder for `mod.rs`, `lib.rs` and `main.rs`, else the folder
/// named after the file.
fn module_paths(file: &Path, name: &str) -> [PathBuf; 2] {
    let parent = file.parent().expect("a file in a folder");
    let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    let dir = if matches!(stem, "mod" | "lib" | "main") {
        parent.to_path_buf()
    } else {
        parent.join(stem)
    };
    [dir.join(format!("{name}.rs")), dir.join(name)]
}

#[test]
fn no_function_in_src_is_over_the_limit() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    let mut outlines = Vec::new();
    let mut test_only: BTreeSet<PathBuf> = BTreeSet::new();
    for file in &files {
        let src = std::fs::read_to_string(file)
            .unwrap_or_else(|e| panic!("reading {}: {e}", file.display()));
        let outline = outline(&src);
        for name in &outline.test_modules {
            test_only.extend(module_paths(file, name));
        }
        outlines.push((file, outline));
    }
    let mut counted = 0;
    let mut offenders = Vec::new();
    for (file, outline) in outlines {
        if test_only.iter().any(|t| file.starts_with(t)) {
            continue;
        }
        let rel = file
            .strip_prefix(root)
            .unwrap_or(file)
            .display()
            .to_string();
        for function in outline.functions {
            counted += 1;
            if function.lines() > MAX_FUNCTION_LINES {
                offenders.push(format!(
                    "{rel}:{} {} is {} lines",
                    function.first_line,
                    function.name,
                    function.lines()
                ));
            }
        }
    }
    // A floor, so that a lexer gone wrong (everything one literal) cannot pass quietly.
    assert!(counted > 1000, "only {counted} functions found under src/");
    assert!(
        offenders.is_empty(),
        "functions over {MAX_FUNCTION_LINES} lines (issue 28 §3; split them into helpers):\n{}",
        offenders.join("\n")
    );
}

#[cfg(test)]
mod lexer {
    use super::*;

    fn idents(src: &str) -> Vec<String> {
        lex(src)
            .into_iter()
            .filter_map(|t| match t.tok {
                Tok::Ident(w) => Some(w),
                _ => None,
            })
            .collect()
    }

    fn braces(src: &str) -> String {
        lex(src)
            .into_iter()
            .filter_map(|t| match t.tok {
                Tok::Punct(c @ ('{' | '}')) => Some(c),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn braces_in_strings_are_not_tokens() {
        assert_eq!(braces(r#"{ let s = "{"; let t = "\"{\\"; }"#), "{}");
        assert_eq!(braces(r#"{ let s = b"}"; let t = c"{"; }"#), "{}");
        assert_eq!(braces(r#"{ format!("{{x}} {}", "}") }"#), "{}");
        // A string spanning lines keeps the line count right.
        let tokens = lex("\"a\n{\nb\" x");
        assert_eq!(tokens.last().map(|t| t.line), Some(3));
    }

    #[test]
    fn raw_strings_end_at_their_own_hashes() {
        assert_eq!(braces(r###"{ r"{\" }"###), "{}");
        assert_eq!(braces(r###"{ r#"a"{"b"# }"###), "{}");
        assert_eq!(braces(r####"{ r##"x"#}"##; br#"{"# }"####), "{}");
        assert_eq!(braces(r###"{ cr#"}"# }"###), "{}");
    }

    #[test]
    fn raw_identifiers_are_identifiers() {
        assert_eq!(idents("r#type r#match"), ["type", "match"]);
        assert_eq!(braces("fn r#fn() { r#loop }"), "{}");
    }

    #[test]
    fn char_literals_and_lifetimes_are_told_apart() {
        assert_eq!(braces("{ '{' }"), "{}");
        assert_eq!(braces(r"{ '\'' '}' }"), "{}");
        assert_eq!(braces(r"{ '\\' '{' }"), "{}");
        assert_eq!(braces(r"{ '\u{7b}' b'{' b'\'' }"), "{}");
        assert_eq!(braces("{ 'é' '}' }"), "{}");
        // Lifetimes and labels are not char literals: the braces after them count.
        assert_eq!(braces("impl<'a> S<'a> { fn f(&'a self) {} }"), "{{}}");
        assert_eq!(braces("{ 'outer: loop { break 'outer; } }"), "{{}}");
        assert_eq!(braces("fn f(x: &'static str) -> &'static str { x }"), "{}");
    }

    #[test]
    fn comments_hide_braces_and_nest() {
        assert_eq!(braces("{ // }\n }"), "{}");
        assert_eq!(braces("{ /// { doc\n //! }\n }"), "{}");
        assert_eq!(braces("{ /* { /* } */ { */ }"), "{}");
        assert_eq!(braces("{ /* \"*/ } "), "{}");
        assert_eq!(braces("{ \"/*\" } \"*/\""), "{}");
    }

    #[test]
    fn numbers_do_not_swallow_ranges_or_fields() {
        assert_eq!(idents("0..n x.0.len() 1.5e3 0xffu8"), ["n", "x", "len"]);
    }

    fn lengths(src: &str) -> Vec<(String, usize)> {
        outline(src)
            .functions
            .into_iter()
            .map(|f| {
                let lines = f.lines();
                (f.name, lines)
            })
            .collect()
    }

    #[test]
    fn functions_are_found_with_their_paths_and_lengths() {
        let src = "\
fn free() {
    let s = \"}\";
}
impl<'a, T: Clone> Wrapper<'a, T> where T: Default {
    pub fn method(&self) -> [u8; 2] {
        let c = |x: u8| { x };
        [0; 2]
    }
}
impl std::fmt::Display for Shown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result { Ok(()) }
}
trait Speak {
    fn declared(&self);
    fn defaulted(&self) {
        fn inner() {}
    }
}
";
        assert_eq!(
            lengths(src),
            [
                ("free".to_string(), 3),
                ("Wrapper::method".to_string(), 4),
                ("Shown::fmt".to_string(), 1),
                ("Speak::defaulted::inner".to_string(), 1),
                ("Speak::defaulted".to_string(), 3),
            ]
        );
    }

    #[test]
    fn function_pointer_types_and_strings_are_not_functions() {
        let src = "fn apply(f: fn(u8) -> u8) -> u8 {\n let s = \"fn fake() {\";\n f(1)\n}\n";
        assert_eq!(lengths(src), [("apply".to_string(), 4)]);
    }

    #[test]
    fn cfg_test_items_are_skipped_and_test_modules_remembered() {
        let src = "\
fn kept() {}
#[cfg(test)]
mod tests {
    fn helper() { let s = \"}\"; }
}
#[cfg(test)]
#[allow(dead_code)]
fn test_only() {}
#[cfg(test)]
mod more;
#[cfg(not(test))]
fn not_test() {}
";
        let outline = outline(src);
        let names: Vec<&str> = outline.functions.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["kept", "not_test"]);
        assert_eq!(outline.test_modules, ["more"]);
    }

    #[test]
    fn test_module_files_are_found_beside_their_parent() {
        let [file, dir] = module_paths(Path::new("src/spec/model/mod.rs"), "tests");
        assert_eq!(file, Path::new("src/spec/model/tests.rs"));
        assert_eq!(dir, Path::new("src/spec/model/tests"));
        let [file, _] = module_paths(Path::new("src/spec/matcher.rs"), "tests");
        assert_eq!(file, Path::new("src/spec/matcher/tests.rs"));
    }
}
