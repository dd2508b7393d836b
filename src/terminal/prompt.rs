//! Pure: whether the line a terminal's cursor sits on looks like a prompt (issue 19 §1).
//!
//! The kernel says most of the time whether a program waits for input (`probe`); this is
//! the fallback for programs that wait in `poll`/`select` on several descriptors or where
//! /proc cannot be read: a prompt-like last line after a short quiet period.

/// Whether `line` (the cursor's row, left of the cursor) looks like a prompt: a shell's
/// `$ `/`# `/`% `, a REPL's `>>> `/`... `/`> `, a question (`name? `), a `Password:`,
/// a debugger's `(Pdb)`/`(gdb)`, a choice (`[y/N]`, `(yes/no)`).
pub fn looks_like_prompt(line: &str) -> bool {
    let t = line.trim_end();
    let Some(last) = t.chars().last() else {
        return false;
    };
    // Python's continuation prompt is the whole line.
    if t.trim_start() == "..." {
        return true;
    }
    match last {
        '$' | '#' | '>' | '%' | '?' | ':' => true,
        ')' | ']' => {
            let open = if last == ')' { '(' } else { '[' };
            let Some(start) = t.rfind(open) else {
                return false;
            };
            let inside = t[start + 1..t.len() - 1].to_ascii_lowercase();
            inside.contains('/') || matches!(inside.as_str(), "pdb" | "gdb" | "lldb" | "y" | "n")
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts() {
        for line in [
            "$ ",
            "user@host:~/src$ ",
            "# ",
            ">>> ",
            "... ",
            "> ",
            "mysql> ",
            "name? ",
            "Password:",
            "Password: ",
            "Enter passphrase for key '/k': ",
            "(Pdb) ",
            "(gdb) ",
            "Continue? [y/N] ",
            "Overwrite (yes/no)? ",
            "Proceed ([y]/n)? ",
            "zsh% ",
            "[Y/n]",
        ] {
            assert!(looks_like_prompt(line), "{line:?}");
        }
    }

    #[test]
    fn not_prompts() {
        for line in [
            "",
            "   ",
            "Downloading 45%|#### | 12/30",
            "Loading...",
            "Compiling boris v0.1.0",
            "total 48",
            "[INFO] build done",
            "(3 files)",
            "hello world",
        ] {
            assert!(!looks_like_prompt(line), "{line:?}");
        }
    }

    proptest::proptest! {
        /// Any line: an answer, never a panic; trailing blanks never change it.
        #[test]
        fn trailing_blanks_do_not_matter(line in ".{0,40}", pad in " {0,3}") {
            proptest::prop_assert_eq!(
                looks_like_prompt(&line),
                looks_like_prompt(&format!("{line}{pad}"))
            );
        }
    }
}
