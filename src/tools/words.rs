//! One contract's words for Boris's error messages (issue 28 §1): each outside profile
//! (claude-code, gemini-cli, codex) names parameters and tools its own way (`old_string`,
//! `Read`), and its tools' errors are reworded so the model reads the names it has, not
//! the engine's. A profile declares its table as a `static` [`Words`]; the registry
//! row of each of its tools says which table applies, and the dispatcher applies it.

use crate::error::ToolResult;
use regex::Regex;
use rmcp::model::CallToolResult;
use std::sync::OnceLock;

/// A word table: (pattern, replacement) pairs applied in order, compiled once.
#[derive(Debug)]
pub struct Words {
    table: &'static [(&'static str, &'static str)],
    compiled: OnceLock<Vec<(Regex, &'static str)>>,
}

impl Words {
    /// A table of `(regex, replacement)` pairs, applied in order (put longer phrases
    /// before the words they contain: `view_range start` before `view_range`).
    pub const fn new(table: &'static [(&'static str, &'static str)]) -> Self {
        Words {
            table,
            compiled: OnceLock::new(),
        }
    }

    /// The table applied to one message; paths keep their words (`/src/view/a.rs`
    /// keeps its `view`).
    pub fn rephrase(&self, message: &str) -> String {
        let table = self.compiled.get_or_init(|| {
            self.table
                .iter()
                .filter_map(|(re, to)| Regex::new(re).ok().map(|r| (r, *to)))
                .collect()
        });
        reword_outside_paths(message, table)
    }

    /// An error in these words; results that are not errors pass.
    pub fn reword(&self, result: ToolResult<CallToolResult>) -> ToolResult<CallToolResult> {
        result.map_err(|e| e.map_message(|m| self.rephrase(m)))
    }
}

/// Applies a compiled table to a message, in order, leaving paths as they are.
fn reword_outside_paths(message: &str, table: &[(Regex, &'static str)]) -> String {
    // Paths keep their words: set them aside while rewording.
    static PATH: OnceLock<Option<Regex>> = OnceLock::new();
    let mut paths = Vec::new();
    let mut out = match PATH.get_or_init(|| Regex::new(r"\S*/\S*").ok()) {
        Some(path) => path
            .replace_all(message, |c: &regex::Captures| {
                paths.push(c[0].to_string());
                format!("\u{0}{}\u{0}", paths.len() - 1)
            })
            .into_owned(),
        None => message.to_string(),
    };
    for (re, to) in table {
        out = re.replace_all(&out, *to).into_owned();
    }
    for (i, p) in paths.iter().enumerate() {
        out = out.replacen(&format!("\u{0}{i}\u{0}"), p, 1);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    static SAMPLE: Words = Words::new(&[(r"\bview it\b", "Read it"), (r"\bview\b", "Read")]);

    #[test]
    fn rewords_in_order_and_spares_paths() {
        assert_eq!(
            SAMPLE.rephrase("/w/view/a.txt changed; view it again with view"),
            "/w/view/a.txt changed; Read it again with Read"
        );
        assert_eq!(SAMPLE.rephrase("a review"), "a review");
        let ok = SAMPLE.reword(Ok(CallToolResult::success(vec![])));
        assert!(ok.is_ok());
        let err = SAMPLE.reword(Err(crate::error::ToolError::invalid("view it")));
        assert_eq!(err.map_err(|e| e.message), Err("Read it".to_string()));
    }
}
