//! Pure: what a terminal answers when a program asks it something (cursor position,
//! device attributes, colours). vim, less and readline send such queries and wait for
//! the answer; a terminal emulator that stays silent makes them stall (issue 19 §1).

/// What an xterm-like terminal answers to a query (CSI … `n`, CSI … `c`, XTVERSION),
/// given the cursor (0-based); `None` for anything that is not a query.
pub fn query_reply(
    private: Option<u8>,
    params: &[&[u16]],
    action: char,
    cursor: (u16, u16),
) -> Option<Vec<u8>> {
    let first = params.first().and_then(|p| p.first()).copied().unwrap_or(0);
    let (row, col) = (cursor.0 + 1, cursor.1 + 1);
    let reply = match (private, action, first) {
        // DSR: status, cursor position (DECXCPR with `?`).
        (None, 'n', 5) => "\x1b[0n".to_string(),
        (None, 'n', 6) => format!("\x1b[{row};{col}R"),
        (Some(b'?'), 'n', 6) => format!("\x1b[?{row};{col}R"),
        // DA1: a VT220 with ANSI colour; DA2: a VT220, not an xterm (an xterm version
        // invites more queries).
        (None, 'c', 0) => "\x1b[?62;22c".to_string(),
        (Some(b'>'), 'c', 0) => "\x1b[>1;10;0c".to_string(),
        // XTVERSION.
        (Some(b'>'), 'q', 0) => "\x1bP>|boris\x1b\\".to_string(),
        _ => return None,
    };
    Some(reply.into_bytes())
}

/// The answer to an OSC colour query (10: foreground, 11: background, 12: cursor):
/// light grey on black.
pub fn osc_reply(params: &[&[u8]]) -> Option<Vec<u8>> {
    match params {
        [which @ (b"10" | b"11" | b"12"), b"?"] => {
            let colour = if *which == b"11" {
                "0000/0000/0000"
            } else {
                "c0c0/c0c0/c0c0"
            };
            let which = std::str::from_utf8(which).ok()?;
            Some(format!("\x1b]{which};rgb:{colour}\x1b\\").into_bytes())
        }
        _ => None,
    }
}
