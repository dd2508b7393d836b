//! Pure: the input notation of terminal sessions (issue 19 §1) and the bytes a terminal
//! would send for it.
//!
//! A write carries `text`, sent byte for byte, and `keys`, a list sent in order after it.
//! Each item of `keys` is a key name when the whole item is one (`Enter`, `Esc`, `Up`,
//! `Ctrl-C`, `C-c`, `^C`, `F5`, `Alt-b`; case does not matter), else text in which
//! `<Name>` is a key (`ihello<Esc>:wq<Enter>`, vim's notation) and `<lt>` a literal `<`;
//! any other `<…>` stays as written (`<div>`). This is tmux's `send-keys` and vim's
//! notation, which models know. An item that looks like a modifier combination but names
//! no key (`Ctrl-1`, `<C-é>`) is an error rather than text typed by surprise.

use std::fmt;

/// A key a terminal has (beyond plain text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    Enter,
    Tab,
    BackTab,
    Backspace,
    Esc,
    Space,
    Up,
    Down,
    Left,
    Right,
    Home,
    End,
    PageUp,
    PageDown,
    Insert,
    Delete,
    /// F1 to F12.
    F(u8),
    /// A control character (`Ctrl-C` is 0x03, `Ctrl-\` 0x1c, `Ctrl-?` 0x7f).
    Ctrl(u8),
    /// Alt (Meta) with a printable ASCII character: ESC then the character.
    Alt(u8),
}

/// One piece of input, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    Text(String),
    Key(Key),
}

/// What a pipe session does for a piece of input: there is no terminal to turn Ctrl-C
/// into a signal or Ctrl-D into an end of file, so Boris does it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PipeAction {
    Bytes(Vec<u8>),
    /// Signal the session's process group (SIGINT for Ctrl-C, SIGQUIT for Ctrl-\).
    Signal(nix::sys::signal::Signal),
    /// Close stdin (Ctrl-D): the program reads end-of-file.
    CloseInput,
}

/// A `keys` item that looks like a key but names none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyError(pub String);

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} is not a key; keys are Enter, Tab, BTab, Backspace, Esc, Space, Up, Down, \
             Left, Right, Home, End, PageUp, PageDown, Insert, Delete, F1-F12, Ctrl-A..Ctrl-Z \
             (also C-a, ^A, Ctrl-\\, Ctrl-], Ctrl-@), Alt-x (M-x); text goes in `text`, or in \
             `keys` as any item that is not a key name",
            self.0
        )
    }
}

/// The key named `name` (a whole item, or the inside of `<…>`), if any; an error for a
/// modifier combination that names no key.
pub fn key_named(name: &str) -> Result<Option<Key>, KeyError> {
    let lower = name.to_ascii_lowercase();
    let plain = match lower.as_str() {
        "enter" | "return" | "cr" | "ret" => Some(Key::Enter),
        "tab" => Some(Key::Tab),
        "btab" | "backtab" | "shift-tab" | "s-tab" => Some(Key::BackTab),
        "backspace" | "bspace" | "bs" => Some(Key::Backspace),
        "esc" | "escape" => Some(Key::Esc),
        "space" | "spc" => Some(Key::Space),
        "up" => Some(Key::Up),
        "down" => Some(Key::Down),
        "left" => Some(Key::Left),
        "right" => Some(Key::Right),
        "home" => Some(Key::Home),
        "end" => Some(Key::End),
        "pageup" | "pgup" | "ppage" | "page_up" => Some(Key::PageUp),
        "pagedown" | "pgdn" | "npage" | "page_down" => Some(Key::PageDown),
        "insert" | "ins" | "ic" => Some(Key::Insert),
        "delete" | "del" | "dc" => Some(Key::Delete),
        _ => None,
    };
    if plain.is_some() {
        return Ok(plain);
    }
    if let Some(n) = lower.strip_prefix('f')
        && let Ok(n) = n.parse::<u8>()
        && (1..=12).contains(&n)
        && !n.to_string().starts_with('0')
        && lower.len() == 1 + n.to_string().len()
    {
        return Ok(Some(Key::F(n)));
    }
    let modified = |prefixes: &[&str]| {
        prefixes
            .iter()
            .find_map(|p| lower.strip_prefix(p).map(|_| &name[p.len()..]))
    };
    if let Some(rest) = modified(&["ctrl-", "control-", "c-", "ctrl+", "^"]) {
        return match ctrl_byte(rest) {
            Some(b) => Ok(Some(Key::Ctrl(b))),
            None if name.starts_with('^') && rest.is_empty() => Ok(None),
            None => Err(KeyError(name.to_string())),
        };
    }
    if let Some(rest) = modified(&["alt-", "meta-", "m-", "alt+"]) {
        let bytes = rest.as_bytes();
        return match bytes {
            [b] if b.is_ascii_graphic() => Ok(Some(Key::Alt(*b))),
            _ => Err(KeyError(name.to_string())),
        };
    }
    Ok(None)
}

/// The control byte for `Ctrl-<rest>`: a letter (either case), `@ [ \ ] ^ _ ?` or
/// `Space`.
fn ctrl_byte(rest: &str) -> Option<u8> {
    if rest.eq_ignore_ascii_case("space") {
        return Some(0);
    }
    let &[c] = rest.as_bytes() else {
        return None;
    };
    match c {
        b'a'..=b'z' => Some(c - b'a' + 1),
        b'A'..=b'Z' => Some(c - b'A' + 1),
        b'@' | b' ' | b'2' => Some(0),
        b'[' | b'3' => Some(0x1b),
        b'\\' | b'4' => Some(0x1c),
        b']' | b'5' => Some(0x1d),
        b'^' | b'6' => Some(0x1e),
        b'_' | b'7' | b'/' => Some(0x1f),
        b'?' | b'8' => Some(0x7f),
        _ => None,
    }
}

/// Parses `keys` items into input, in order (adjacent text merged).
pub fn parse_keys(items: &[String]) -> Result<Vec<Input>, KeyError> {
    let mut out: Vec<Input> = Vec::new();
    let push_text = |out: &mut Vec<Input>, t: &str| {
        if t.is_empty() {
            return;
        }
        if let Some(Input::Text(prev)) = out.last_mut() {
            prev.push_str(t);
        } else {
            out.push(Input::Text(t.to_string()));
        }
    };
    for item in items {
        if let Some(key) = key_named(item)? {
            out.push(Input::Key(key));
            continue;
        }
        // Text with `<Name>` keys inside.
        let mut rest = item.as_str();
        while let Some(open) = rest.find('<') {
            push_text(&mut out, &rest[..open]);
            let after = &rest[open + 1..];
            let Some(close) = after.find('>') else {
                push_text(&mut out, &rest[open..]);
                rest = "";
                break;
            };
            let name = &after[..close];
            if name.eq_ignore_ascii_case("lt") {
                push_text(&mut out, "<");
                rest = &after[close + 1..];
            } else if !name.is_empty()
                && !name.contains(['<', ' '])
                && let Some(key) = key_named(name)?
            {
                out.push(Input::Key(key));
                rest = &after[close + 1..];
            } else {
                push_text(&mut out, "<");
                rest = after;
            }
        }
        push_text(&mut out, rest);
    }
    Ok(out)
}

/// The terminal's modes that change what a key sends.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Modes {
    /// DECCKM: arrows and Home/End send `ESC O x` (vim, less set it).
    pub application_cursor: bool,
}

/// The bytes an xterm sends for `key`.
pub fn encode(key: Key, modes: Modes) -> Vec<u8> {
    let cursor = |c: u8| {
        if modes.application_cursor {
            vec![0x1b, b'O', c]
        } else {
            vec![0x1b, b'[', c]
        }
    };
    let tilde = |n: &str| format!("\x1b[{n}~").into_bytes();
    match key {
        Key::Enter => b"\r".to_vec(),
        Key::Tab => b"\t".to_vec(),
        Key::BackTab => b"\x1b[Z".to_vec(),
        Key::Backspace => vec![0x7f],
        Key::Esc => vec![0x1b],
        Key::Space => b" ".to_vec(),
        Key::Up => cursor(b'A'),
        Key::Down => cursor(b'B'),
        Key::Right => cursor(b'C'),
        Key::Left => cursor(b'D'),
        Key::Home => cursor(b'H'),
        Key::End => cursor(b'F'),
        Key::PageUp => tilde("5"),
        Key::PageDown => tilde("6"),
        Key::Insert => tilde("2"),
        Key::Delete => tilde("3"),
        Key::F(n @ 1..=4) => vec![0x1b, b'O', b'P' + (n - 1)],
        Key::F(n) => tilde(match n {
            5 => "15",
            6 => "17",
            7 => "18",
            8 => "19",
            9 => "20",
            10 => "21",
            11 => "23",
            _ => "24",
        }),
        Key::Ctrl(b) => vec![b],
        Key::Alt(c) => vec![0x1b, c],
    }
}

/// Whether the input holds an Escape that does not begin a complete key sequence (a bare
/// Esc, Alt-x, an ESC typed in text): a program has to wait a moment to tell what it is.
pub fn holds_lone_escape(input: &[Input]) -> bool {
    input.iter().any(|piece| match piece {
        Input::Key(Key::Esc | Key::Alt(_) | Key::Ctrl(0x1b)) => true,
        Input::Key(_) => false,
        Input::Text(t) => t.contains('\x1b'),
    })
}

/// The bytes for a terminal session: text as it is, keys as an xterm sends them.
pub fn terminal_bytes(input: &[Input], modes: Modes) -> Vec<u8> {
    let mut out = Vec::new();
    for piece in input {
        match piece {
            Input::Text(t) => out.extend_from_slice(t.as_bytes()),
            Input::Key(k) => out.extend(encode(*k, modes)),
        }
    }
    out
}

/// What a pipe session does, in order: Enter is a newline, Ctrl-C and Ctrl-\ signal the
/// process group, Ctrl-D closes stdin, other keys send what a terminal would.
pub fn pipe_actions(input: &[Input]) -> Vec<PipeAction> {
    use nix::sys::signal::Signal;
    let mut out: Vec<PipeAction> = Vec::new();
    let bytes = |out: &mut Vec<PipeAction>, b: &[u8]| {
        if let Some(PipeAction::Bytes(prev)) = out.last_mut() {
            prev.extend_from_slice(b);
        } else if !b.is_empty() {
            out.push(PipeAction::Bytes(b.to_vec()));
        }
    };
    for piece in input {
        match piece {
            Input::Text(t) => bytes(&mut out, t.as_bytes()),
            Input::Key(Key::Enter) => bytes(&mut out, b"\n"),
            Input::Key(Key::Ctrl(0x03)) => out.push(PipeAction::Signal(Signal::SIGINT)),
            Input::Key(Key::Ctrl(0x1c)) => out.push(PipeAction::Signal(Signal::SIGQUIT)),
            Input::Key(Key::Ctrl(0x04)) => out.push(PipeAction::CloseInput),
            Input::Key(k) => bytes(&mut out, &encode(*k, Modes::default())),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn keys(items: &[&str]) -> Result<Vec<Input>, KeyError> {
        parse_keys(&items.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    fn bytes(items: &[&str]) -> Vec<u8> {
        terminal_bytes(&keys(items).unwrap(), Modes::default())
    }

    #[test]
    fn names_in_every_spelling() {
        for (name, key) in [
            ("Enter", Key::Enter),
            ("RETURN", Key::Enter),
            ("esc", Key::Esc),
            ("Escape", Key::Esc),
            ("C-c", Key::Ctrl(3)),
            ("Ctrl-C", Key::Ctrl(3)),
            ("ctrl-c", Key::Ctrl(3)),
            ("^C", Key::Ctrl(3)),
            ("^c", Key::Ctrl(3)),
            ("Ctrl-\\", Key::Ctrl(0x1c)),
            ("Ctrl-D", Key::Ctrl(4)),
            ("Ctrl-Z", Key::Ctrl(26)),
            ("Ctrl-A", Key::Ctrl(1)),
            ("Ctrl-@", Key::Ctrl(0)),
            ("Ctrl-Space", Key::Ctrl(0)),
            ("PageDown", Key::PageDown),
            ("PgUp", Key::PageUp),
            ("F1", Key::F(1)),
            ("f12", Key::F(12)),
            ("M-b", Key::Alt(b'b')),
            ("Alt-B", Key::Alt(b'B')),
            ("BTab", Key::BackTab),
            ("BSpace", Key::Backspace),
        ] {
            assert_eq!(key_named(name), Ok(Some(key)), "{name}");
        }
        for text in [
            "q",
            "y",
            "ls -la",
            "F13",
            "F0",
            "F01",
            "^",
            "hello",
            "c",
            "Enterprise",
        ] {
            assert_eq!(key_named(text), Ok(None), "{text}");
        }
        for bad in ["Ctrl-1", "C-é", "Alt-", "M-ab", "Ctrl-"] {
            assert!(key_named(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn vim_notation_inside_text() {
        assert_eq!(bytes(&["ihello<Esc>:wq<Enter>"]), b"ihello\x1b:wq\r");
        assert_eq!(
            bytes(&["ihello", "Esc", ":wq", "Enter"]),
            b"ihello\x1b:wq\r"
        );
        assert_eq!(bytes(&["<div>a</div>"]), b"<div>a</div>");
        assert_eq!(bytes(&["a<lt>b>"]), b"a<b>");
        assert_eq!(bytes(&["x <", "<C-c>"]), b"x <\x03");
        assert_eq!(bytes(&["1 < 2 > 0"]), b"1 < 2 > 0");
        assert!(keys(&["<Ctrl-1>"]).is_err());
    }

    #[test]
    fn cursor_keys_follow_the_mode() {
        let app = Modes {
            application_cursor: true,
        };
        assert_eq!(encode(Key::Up, Modes::default()), b"\x1b[A");
        assert_eq!(encode(Key::Up, app), b"\x1bOA");
        assert_eq!(encode(Key::End, app), b"\x1bOF");
        assert_eq!(encode(Key::PageDown, app), b"\x1b[6~");
        assert_eq!(encode(Key::F(1), app), b"\x1bOP");
        assert_eq!(encode(Key::F(5), app), b"\x1b[15~");
    }

    #[test]
    fn pipes_turn_control_keys_into_actions() {
        use nix::sys::signal::Signal;
        let input = keys(&["x = 1", "Enter", "C-c", "Ctrl-D"]).unwrap();
        assert_eq!(
            pipe_actions(&input),
            vec![
                PipeAction::Bytes(b"x = 1\n".to_vec()),
                PipeAction::Signal(Signal::SIGINT),
                PipeAction::CloseInput
            ]
        );
    }

    proptest! {
        /// Items that are no key name and hold no `<`: the bytes are the items joined.
        #[test]
        fn plain_items_are_text(items in proptest::collection::vec("[a-z0-9 .=:]{2,8}", 0..5)) {
            let refs: Vec<&str> = items.iter().map(|s| s.as_str()).collect();
            prop_assume!(refs.iter().all(|i| key_named(i) == Ok(None)));
            let expected: String = items.concat();
            prop_assert_eq!(bytes(&refs), expected.into_bytes());
        }

        /// Any items: input or an error, never a panic; text survives byte for byte
        /// around keys.
        #[test]
        fn any_items_parse_or_fail(items in proptest::collection::vec(".{0,12}", 0..6)) {
            if let Ok(input) = parse_keys(&items) {
                let _ = terminal_bytes(&input, Modes::default());
                let _ = pipe_actions(&input);
            }
        }
    }
}
