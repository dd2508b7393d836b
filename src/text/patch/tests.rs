use super::*;
use proptest::prelude::*;

fn update(patch: &str) -> (Vec<Chunk>, bool) {
    let parsed = parse(patch).unwrap_or_else(|e| panic!("{e}\n{patch}"));
    match &parsed.patch.files[0] {
        op @ FileOp::Update { chunks, .. } => (chunks.clone(), op.ending_aware()),
        other => panic!("not an update: {other:?}"),
    }
}

/// Applies the first file section of `patch` to `content`.
fn apply(patch: &str, content: &str) -> Result<String, HunkFailure> {
    let (chunks, aware) = update(patch);
    apply_chunks(content.as_bytes(), &chunks, aware)
        .map(|e| String::from_utf8(e.content).unwrap_or_default())
}

fn envelope(body: &str) -> String {
    format!("*** Begin Patch\n{body}\n*** End Patch\n")
}

#[test]
fn envelope_operations() {
    let p = parse(&envelope(
        "*** Add File: new.txt\n+hello\n+\n+world\n*** Delete File: gone.txt\n\
         *** Update File: a.py\n*** Move to: b.py\n@@ def f():\n-    pass\n+    return 1",
    ))
    .unwrap();
    assert_eq!(p.format, Format::Envelope);
    assert!(p.wrappings.is_empty());
    assert_eq!(p.patch.files.len(), 3);
    match &p.patch.files[0] {
        FileOp::Add {
            path,
            lines,
            no_eol,
        } => {
            assert_eq!(path, "new.txt");
            let texts: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
            assert_eq!(texts, ["hello", "", "world"]);
            assert!(!no_eol);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        p.patch.files[1],
        FileOp::Delete {
            path: "gone.txt".into()
        }
    );
    match &p.patch.files[2] {
        FileOp::Update {
            path,
            move_to,
            chunks,
        } => {
            assert_eq!((path.as_str(), move_to.as_deref()), ("a.py", Some("b.py")));
            assert_eq!(chunks[0].anchors, ["def f():"]);
            assert_eq!(chunks[0].counts(), (1, 1));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn envelope_errors() {
    let err = |s: &str| parse(s).unwrap_err().to_string();
    assert!(err("*** Begin Patch\n*** Add File: a\n+x\n").contains("cut off"));
    assert!(err("hello").contains("not a patch"));
    assert!(err(&envelope("*** Update File: a")).contains("has no hunks"));
    assert!(err(&envelope("*** Update File: a\n@@\nfoo")).contains("line 4:"));
    assert!(err(&envelope("*** Frobnicate: a")).contains("expected a file header"));
    assert!(
        err(&envelope(
            "*** Update File: a\n@@\n-x\n*** End Patch\n*** Begin Patch"
        ))
        .contains("more than one patch")
    );
    assert!(err("*** Begin Patch\n*** End Patch").contains("no file sections"));
    assert!(err("@@ -1 +1 @@\n-a\n+b").contains("names no file"));
}

#[test]
fn hunks_keep_context_bytes_and_take_the_files_ending() {
    let p = envelope("*** Update File: f\n@@\n a\n-b\n+B\n+B2\n c");
    // Context lines are copied from the file: its trailing spaces stay.
    assert_eq!(apply(&p, "a  \nb\nc\n").unwrap(), "a  \nB\nB2\nc\n");
    // New lines take CRLF in a CRLF file (issue 21 §1).
    assert_eq!(
        apply(&p, "a\r\nb\r\nc\r\n").unwrap(),
        "a\r\nB\r\nB2\r\nc\r\n"
    );
    // A patch that spells CRs (git diff of a mixed file) is written as it says.
    let p = "--- a/f\n+++ b/f\n@@ -1,2 +1,3 @@\n a\r\n-b\n+B\r\n+C\n";
    assert_eq!(apply(p, "a\r\nb\n").unwrap(), "a\r\nB\r\nC\n");
}

#[test]
fn fuzzy_levels() {
    let p = envelope("*** Update File: f\n@@\n-let x = \"a\";\n+let x = 2;");
    assert_eq!(apply(&p, "let x = \"a\";   \n").unwrap(), "let x = 2;\n");
    assert_eq!(apply(&p, "    let x = \"a\";\n").unwrap(), "let x = 2;\n");
    assert_eq!(apply(&p, "let x = “a”;\n").unwrap(), "let x = 2;\n");
    let (chunks, _) = update(&p);
    let e = apply_chunks(b"  let x = \"a\";\n", &chunks, false).unwrap();
    assert_eq!(e.fuzz, [(0, Fuzz::Whitespace)]);
    // An exact match later wins over a loose one earlier.
    let e = apply_chunks(b" let x = \"a\";\nlet x = \"a\";\n", &chunks, false).unwrap();
    assert_eq!(e.content, b" let x = \"a\";\nlet x = 2;\n");
    assert!(e.fuzz.is_empty());
}

#[test]
fn anchors_narrow_the_search() {
    let file =
        "class A:\n    def f():\n        return 1\nclass B:\n    def f():\n        return 1\n";
    let p =
        envelope("*** Update File: f\n@@ class B\n@@ def f\n-        return 1\n+        return 2");
    assert_eq!(
        apply(&p, file).unwrap(),
        file.replace(
            "B:\n    def f():\n        return 1",
            "B:\n    def f():\n        return 2"
        )
    );
    // The anchor repeated as the hunk's first context line.
    let p = envelope(
        "*** Update File: f\n@@ class B:\n class B:\n     def f():\n-        return 1\n+        return 3",
    );
    assert!(
        apply(&p, file)
            .unwrap()
            .ends_with("class B:\n    def f():\n        return 3\n")
    );
    let p = envelope("*** Update File: f\n@@ class C\n-x\n+y");
    let e = apply(&p, file).unwrap_err();
    assert_eq!(e.miss, HunkMiss::Anchor("class C".into()));
    // A pure addition after an anchor goes right after it; without one, at the end.
    let p = envelope("*** Update File: f\n@@ class B:\n+    x = 1");
    assert!(
        apply(&p, file)
            .unwrap()
            .contains("class B:\n    x = 1\n    def f")
    );
    let p = envelope("*** Update File: f\n@@\n+# end");
    assert!(apply(&p, file).unwrap().ends_with("return 1\n# end\n"));
}

#[test]
fn end_of_file_and_final_line_breaks() {
    let p = envelope("*** Update File: f\n@@\n x\n-y\n+z\n*** End of File");
    assert_eq!(apply(&p, "x\ny\nx\ny\n").unwrap(), "x\ny\nx\nz\n");
    // No final line break: kept unless the patch says otherwise.
    let p = envelope("*** Update File: f\n@@\n-b\n+c");
    assert_eq!(apply(&p, "a\nb").unwrap(), "a\nc");
    let p = "--- a/f\n+++ b/f\n@@ -2 +2 @@\n-b\n\\ No newline at end of file\n+c\n";
    assert_eq!(apply(p, "a\nb").unwrap(), "a\nc\n");
    let p = "--- a/f\n+++ b/f\n@@ -2 +2 @@\n-b\n+c\n\\ No newline at end of file\n";
    assert_eq!(apply(p, "a\nb\n").unwrap(), "a\nc");
    // Lines appended to a last line without a break: it gets one.
    let p = envelope("*** Update File: f\n@@\n b\n+c");
    assert_eq!(apply(&p, "a\nb").unwrap(), "a\nb\nc");
    // An empty file gets line breaks.
    let p = envelope("*** Update File: f\n@@\n+a");
    assert_eq!(apply(&p, "").unwrap(), "a\n");
}

#[test]
fn misses_name_the_hunk() {
    let p = envelope("*** Update File: f\n@@\n-a\n+b\n@@\n-zz\n+y");
    let e = apply(&p, "a\nc\n").unwrap_err();
    assert_eq!(e.index, 1);
    assert_eq!(
        e.miss,
        HunkMiss::Lines {
            old: "zz".into(),
            at_end: false
        }
    );
    assert_eq!(e.from_line, 2);
    // Hunks are found in order: the second may not go before the first.
    let p = envelope("*** Update File: f\n@@\n-c\n+C\n@@\n-a\n+A");
    assert_eq!(apply(&p, "a\nc\n").unwrap_err().index, 1);
}

#[test]
fn a_blank_line_ending_a_hunk_is_a_gap() {
    let p = "*** Begin Patch\n*** Update File: f\n@@\n-a\n+b\n\n*** Update File: g\n@@\n-c\n+d\n*** End Patch";
    assert_eq!(apply(p, "a\nz\n").unwrap(), "b\nz\n");
    // A context line written as a bare empty line: still a context line.
    let p = envelope("*** Update File: f\n@@\n a\n\n-b\n+c");
    assert_eq!(apply(&p, "a\n\nb\n").unwrap(), "a\n\nc\n");
}

#[test]
fn unified_diffs() {
    let p = "diff --git a/src/x.rs b/src/x.rs\nindex 1..2 100644\n--- a/src/x.rs\n+++ b/src/x.rs\n\
             @@ -1,3 +1,3 @@ fn main()\n a\n-b\n+B\n c\n@@ -10,2 +10,2 @@\n x\n-y\n+Y\n";
    let parsed = parse(p).unwrap();
    assert_eq!(parsed.format, Format::Unified);
    match &parsed.patch.files[0] {
        FileOp::Update {
            path,
            move_to,
            chunks,
        } => {
            assert_eq!((path.as_str(), move_to), ("src/x.rs", &None));
            assert_eq!(chunks.len(), 2);
            assert_eq!(chunks[0].line_hint, Some(1));
            assert!(chunks[0].anchors.is_empty());
        }
        other => panic!("{other:?}"),
    }
    // The line number picks among repeated blocks.
    let p = "--- a/f\n+++ b/f\n@@ -4,2 +4,2 @@\n x\n-y\n+Y\n";
    assert_eq!(apply(p, "x\ny\n-\nx\ny\n").unwrap(), "x\ny\n-\nx\nY\n");
    // Added, deleted, renamed; git's quoting.
    let p = "diff --git a/n.txt b/n.txt\nnew file mode 100644\n--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n\
             diff --git a/old.txt b/old.txt\ndeleted file mode 100644\n--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n\
             diff --git a/r1 b/r2\nsimilarity index 100%\nrename from r1\nrename to r2\n\
             diff --git \"a/caf\\303\\251.txt\" \"b/caf\\303\\251.txt\"\nnew file mode 100644\nindex 0000000..e69de29\n";
    let files = parse(p).unwrap().patch.files;
    assert!(
        matches!(&files[0], FileOp::Add { path, lines, .. } if path == "n.txt" && lines.len() == 2)
    );
    assert_eq!(
        files[1],
        FileOp::Delete {
            path: "old.txt".into()
        }
    );
    assert_eq!(
        files[2],
        FileOp::Update {
            path: "r1".into(),
            move_to: Some("r2".into()),
            chunks: vec![]
        }
    );
    assert!(
        matches!(&files[3], FileOp::Add { path, lines, .. } if path == "café.txt" && lines.is_empty())
    );
}

#[test]
fn unified_counts_and_their_faults() {
    // A removed line that looks like a header is read by the counts.
    let p = "--- a/f\n+++ b/f\n@@ -1,2 +1 @@\n--- x\n-+++ y\n+z\n";
    assert_eq!(apply(p, "-- x\n+++ y\n").unwrap(), "z\n");
    // Counts too small: the hunk is read line by line.
    let p = "--- a/f\n+++ b/f\n@@ -1,1 +1,1 @@\n a\n-b\n+c\n";
    assert_eq!(apply(p, "a\nb\n").unwrap(), "a\nc\n");
    // Counts too large: the same.
    let p = "--- a/f\n+++ b/f\n@@ -1,9 +1,9 @@\n a\n-b\n+c\n\nSome prose after it.";
    assert_eq!(apply(p, "a\nb\n").unwrap(), "a\nc\n");
    // A header without numbers.
    let p = "--- f\n+++ f\n@@ @@\n-b\n+c\n";
    assert_eq!(apply(p, "a\nb\n").unwrap(), "a\nc\n");
    let e =
        parse("--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\nprose\n@@ -5 +5 @@\n-x\n+y\n").unwrap_err();
    assert_eq!(e.line, Some(7));
    assert!(
        parse("diff --git a/x b/x\nBinary files a/x and b/x differ\n")
            .unwrap_err()
            .message
            .contains("binary")
    );
}

/// Found by fuzzing: a multi-byte character after the middle of a `diff --git` line;
/// a `\ No newline` marker inside a hunk (it says nothing there, and the hunk renders
/// and reads back the same).
#[test]
fn fuzz_findings() {
    let _ = parse("diff --git a/x \u{f9}/y\nrename from x\n");
    let p = parse("--- a/f\n+++ b/f\n@@ -2 +2 @@\n a\n-b\n\\ No newline at end of file\n \n a\r\n")
        .unwrap();
    let again = parse(&render(&p.patch)).unwrap();
    assert_eq!(
        without_positions(again.patch),
        without_positions(p.patch.clone())
    );
    let FileOp::Update { chunks, .. } = &p.patch.files[0] else {
        unreachable!()
    };
    assert!(!chunks[0].old_no_eol && !chunks[0].new_no_eol);
}

#[test]
fn wrappings_are_named() {
    let bare = envelope("*** Add File: a\n+x");
    let fenced = format!("Here is the patch:\n\n```diff\n{bare}```\n\nIt adds a.");
    let p = parse(&fenced).unwrap();
    assert_eq!(p.wrappings, [Wrapping::Fence, Wrapping::Prose]);
    let heredoc = format!("cd sub && apply_patch <<'EOF'\n{bare}EOF\n");
    let p = parse(&heredoc).unwrap();
    assert_eq!(p.wrappings, [Wrapping::Heredoc]);
    assert_eq!(p.workdir.as_deref(), Some("sub"));
    let p = parse(&format!("<<\"PATCH\"\n{bare}PATCH")).unwrap();
    assert_eq!(p.wrappings, [Wrapping::Heredoc]);
    let escaped = bare.replace('\n', "\\n");
    let p = parse(&escaped).unwrap();
    assert_eq!(p.wrappings, [Wrapping::EscapedNewlines]);
    let crlf = bare.replace('\n', "\r\n");
    let p = parse(&crlf).unwrap();
    assert!(p.wrappings.is_empty());
    assert!(matches!(&p.patch.files[0], FileOp::Add { lines, .. } if !lines[0].cr));
    // A unified diff of a file that holds envelope lines is a unified diff.
    let p = parse("--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n *** Begin Patch\n-a\n+b\n").unwrap();
    assert_eq!(p.format, Format::Unified);
    let unified = "I changed f:\n```\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n```\nDone.";
    let p = parse(unified).unwrap();
    assert_eq!(
        (p.format, p.wrappings.as_slice()),
        (Format::Unified, &[Wrapping::Fence, Wrapping::Prose][..])
    );
}

/// Files as lists of lines with random endings and maybe no final break.
fn text_file() -> impl Strategy<Value = String> {
    (
        proptest::collection::vec(("[ab \t–é]{0,5}", any::<bool>()), 0..12),
        any::<bool>(),
    )
        .prop_map(|(lines, last_break)| {
            let mut s = String::new();
            let n = lines.len();
            for (i, (text, crlf)) in lines.into_iter().enumerate() {
                s.push_str(&text);
                if i + 1 < n || last_break {
                    s.push_str(if crlf { "\r\n" } else { "\n" });
                }
            }
            s
        })
}

/// A new version: some lines of the old one changed, dropped, duplicated or added.
fn edited(old: String) -> impl Strategy<Value = (String, String)> {
    let n = old.split_inclusive('\n').count();
    (
        proptest::collection::vec((0..4u8, "[ab\n]{0,4}", any::<bool>()), n + 1),
        any::<bool>(),
    )
        .prop_map(move |(ops, crlf_new)| {
            let mut new = String::new();
            let mut pieces: Vec<&str> = old.split_inclusive('\n').collect();
            pieces.push("");
            for (p, (op, text, _)) in pieces.iter().zip(&ops) {
                match op {
                    0 => new.push_str(p),
                    1 => {}
                    2 => {
                        new.push_str(p);
                        new.push_str(&text.replace('\n', if crlf_new { "\r\n" } else { "\n" }));
                    }
                    _ => {
                        new.push_str(text);
                        new.push_str(p);
                    }
                }
            }
            (old.clone(), new)
        })
}

proptest! {
    /// Issue 19 §2: a patch made from (old, new) turns old into new byte for byte,
    /// whatever the line endings (CRLF, LF, mixed, no final break).
    #[test]
    fn generated_patches_apply_exactly((old, new) in text_file().prop_flat_map(edited)) {
        prop_assume!(old != new);
        let op = file_op_for("f", &old, &new);
        let FileOp::Update { chunks, .. } = &op else { unreachable!() };
        let got = apply_chunks(old.as_bytes(), chunks, op.ending_aware())
            .map_err(|e| TestCaseError::fail(format!("{e:?}\n{}", render(&Patch { files: vec![op.clone()] }))))?;
        prop_assert_eq!(String::from_utf8_lossy(&got.content), new.as_str());
        // And through its text: render, parse, apply.
        let text = render(&Patch { files: vec![op.clone()] });
        let back = parse(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        let FileOp::Update { chunks, .. } = &back.patch.files[0] else { unreachable!() };
        let got = apply_chunks(old.as_bytes(), chunks, back.patch.files[0].ending_aware())
            .map_err(|e| TestCaseError::fail(format!("{e:?}\n{text}")))?;
        prop_assert_eq!(String::from_utf8_lossy(&got.content), new.as_str());
    }

    /// parse(render(patch)) is the patch, for patches of every shape.
    #[test]
    fn render_then_parse_round_trips(files in proptest::collection::vec(file_op(), 1..4)) {
        let patch = Patch { files };
        let text = render(&patch);
        let parsed = parse(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(parsed.format, Format::Envelope);
        prop_assert_eq!(without_positions(parsed.patch), patch);
    }

    /// No input makes the parser or the applier panic.
    #[test]
    fn parse_and_apply_never_panic(lines in proptest::collection::vec(patch_line(), 0..30),
                                   content in "[a-c\n\r]{0,30}") {
        let input = lines.join("\n");
        if let Ok(p) = parse(&input) {
            for op in &p.patch.files {
                if let FileOp::Update { chunks, .. } = op {
                    let _ = apply_chunks(content.as_bytes(), chunks, op.ending_aware());
                }
            }
        }
    }
}

fn patch_line() -> impl Strategy<Value = String> {
    prop_oneof![
        "\\*\\*\\* (Add|Update|Delete) File: [a-c]{0,2}",
        "\\*\\*\\* (Begin Patch|End Patch|End of File|Move to: b)",
        "@@[ \\-+0-9,@]{0,10}[a-c]{0,2}",
        "[\\-+ \\\\]?[a-c]{0,3}\r?",
        "(```|<<'EOF'|EOF|--- a/f|\\+\\+\\+ b/f|diff --git a/f b/f|rename (from|to) f|new file mode 1)",
    ]
}

fn without_positions(mut p: Patch) -> Patch {
    for op in &mut p.files {
        if let FileOp::Update { chunks, .. } = op {
            for c in chunks {
                c.source_line = 0;
            }
        }
    }
    p
}

fn path() -> impl Strategy<Value = String> {
    "[a-z]{1,6}(/[a-z]{1,6}){0,2}(\\.[a-z]{1,3})?"
}

fn some_line(kind: LineKind) -> impl Strategy<Value = Line> {
    ("[a-z \t*@+\\-]{0,8}", any::<bool>()).prop_map(move |(text, cr)| Line { kind, text, cr })
}

fn chunk() -> impl Strategy<Value = Chunk> {
    (
        proptest::collection::vec("[a-z]([a-z (]{0,7}[a-z(])?", 0..3),
        proptest::option::of(1..500usize),
        proptest::collection::vec(
            prop_oneof![
                some_line(LineKind::Context),
                some_line(LineKind::Delete),
                some_line(LineKind::Add)
            ],
            1..6,
        ),
        any::<bool>(),
    )
        .prop_map(|(anchors, line_hint, lines, at_eof)| {
            let old_here = lines.iter().any(|l| l.kind != LineKind::Add);
            Chunk {
                anchors,
                line_hint,
                lines,
                at_eof: at_eof && old_here,
                ..Chunk::default()
            }
        })
}

fn file_op() -> impl Strategy<Value = FileOp> {
    prop_oneof![
        (
            path(),
            proptest::collection::vec(some_line(LineKind::Add), 0..5),
            any::<bool>()
        )
            .prop_map(|(path, lines, no_eol)| FileOp::Add {
                no_eol: no_eol && !lines.is_empty(),
                path,
                lines
            }),
        path().prop_map(|path| FileOp::Delete { path }),
        (
            path(),
            proptest::option::of(path()),
            proptest::collection::vec(chunk(), 1..4)
        )
            .prop_map(|(path, move_to, chunks)| FileOp::Update {
                path,
                move_to,
                chunks
            }),
    ]
}
