//! How the harness shows what it found: texts quoted and cut to size for failure
//! messages, the first line of a failure, the tail of a server's stderr. Pure; every
//! part of the harness that words a failure uses these, so they import nothing of it.

use serde_json::Value;

/// How long a quoted text may be in a failure message.
pub const MAX_SHOWN: usize = 500;

/// Cuts `s` to at most `max` characters (on a char boundary) and says how much was cut.
pub fn truncate(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_string(),
        Some((i, _)) => format!("{}…[{} more chars]", &s[..i], s[i..].chars().count()),
    }
}

/// A text quoted for a failure message: JSON-escaped (so newlines and control bytes
/// are visible) and truncated.
pub fn quote(s: &str) -> String {
    let q = serde_json::to_string(s).unwrap_or_else(|_| format!("{s:?}"));
    truncate(&q, MAX_SHOWN)
}

/// A JSON value rendered compactly for a failure message, truncated.
pub fn show(v: &Value) -> String {
    truncate(&v.to_string(), MAX_SHOWN)
}

/// The first line of a failure, cut to 200 characters.
pub fn first_line(s: &str) -> String {
    let line = s.lines().next().unwrap_or("");
    let cut: String = line.chars().take(200).collect();
    if cut.len() < line.len() {
        format!("{cut}…")
    } else {
        cut
    }
}

/// `server stderr (last N of M lines):` followed by the lines, indented.
pub fn stderr_tail(stderr: &str, n: usize) -> String {
    let lines: Vec<&str> = stderr.lines().collect();
    if lines.is_empty() {
        return "server stderr: (empty)".into();
    }
    let from = lines.len().saturating_sub(n);
    let mut out = format!(
        "server stderr (last {} of {} lines):",
        lines.len() - from,
        lines.len()
    );
    for l in &lines[from..] {
        out.push_str("\n  ");
        out.push_str(&truncate(l, 500));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stderr_tail_keeps_last_lines() {
        assert_eq!(stderr_tail("", 20), "server stderr: (empty)");
        let s: String = (1..=30).map(|i| format!("l{i}\n")).collect();
        let t = stderr_tail(&s, 20);
        assert!(
            t.starts_with("server stderr (last 20 of 30 lines):\n  l11\n"),
            "{t}"
        );
        assert!(t.ends_with("  l30"), "{t}");
    }

    #[test]
    fn long_texts_are_cut_on_char_boundaries_and_say_so() {
        assert_eq!(truncate("abc", 5), "abc");
        assert_eq!(truncate("héllo", 2), "hé…[3 more chars]");
        assert_eq!(truncate("", 0), "");
        assert_eq!(quote("a\nb"), "\"a\\nb\"");
        assert_eq!(first_line("one\ntwo"), "one");
        assert_eq!(first_line(&"x".repeat(300)).chars().count(), 201);
    }
}
