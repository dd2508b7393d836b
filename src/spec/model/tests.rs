//! Tests of the case format.

use super::*;
use serde_json::json;

const MINIMAL: &str = "source: test\nsteps:\n  - call: view\n    args: {path: a}\n";

#[test]
fn parses_minimal_case() {
    let c = parse_case(MINIMAL).unwrap();
    assert_eq!(c.source, "test");
    assert!(c.handshake);
    assert!(!c.golden);
    assert_eq!(c.steps.len(), 1);
    assert_eq!(
        c.steps[0].action,
        Action::Call {
            name: "view".into(),
            args: Some(json!({"path": "a"})),
            meta: None,
            id: None,
            wait: true
        }
    );
}

#[test]
fn unknown_top_level_key_is_an_error_with_location() {
    let e = parse_case("source: x\nstepz: []\n").unwrap_err();
    assert!(e.contains("unknown field `stepz`"), "{e}");
    assert!(e.contains("line 2"), "{e}");
}

#[test]
fn unknown_expect_key_is_an_error() {
    let e =
        parse_case("source: x\nsteps:\n  - call: view\n    expect: {is_eror: true}\n").unwrap_err();
    assert!(e.contains("is_eror"), "{e}");
    assert!(e.contains("line 4"), "{e}");
}

#[test]
fn step_with_two_actions_is_an_error() {
    let e = parse_case("source: x\nsteps:\n  - call: view\n    send: hi\n").unwrap_err();
    assert!(e.contains("exactly one of"), "{e}");
    assert!(e.contains("call, send"), "{e}");
}

#[test]
fn step_with_misplaced_key_is_an_error() {
    let e = parse_case("source: x\nsteps:\n  - sleep_ms: 1\n    expect: {text: x}\n").unwrap_err();
    assert!(
        e.contains("`expect` is not allowed in a `sleep_ms` step"),
        "{e}"
    );
    let e =
        parse_case("source: x\nsteps:\n  - request: {method: ping}\n    args: {}\n").unwrap_err();
    assert!(e.contains("`args`"), "{e}");
}

#[test]
fn null_initialize_and_expect_count_as_present() {
    let c = parse_case("source: x\nsteps:\n  - initialize:\n    expect:\n").unwrap();
    assert_eq!(c.steps[0].action, Action::Initialize { params: json!({}) });
    assert!(c.steps[0].expect.is_some());
    let c = parse_case("source: x\nexpect_startup_failure:\n").unwrap();
    assert!(c.expect_startup_failure.is_some());
}

#[test]
fn startup_failure_case_has_no_steps() {
    let e =
        parse_case("source: x\nexpect_startup_failure: {}\nsteps:\n  - sleep_ms: 1\n").unwrap_err();
    assert!(e.contains("runs no steps"), "{e}");
    assert!(
        parse_case("source: x\n")
            .unwrap_err()
            .contains("no `steps`")
    );
}

#[test]
fn strings_accept_one_or_many() {
    let c = parse_case(
            "source: x\nstderr_contains: shell\nsteps:\n  - call: v\n    expect: {contains: [a, b], regex: '^x'}\n",
        )
        .unwrap();
    assert_eq!(c.stderr_contains, Strings(vec!["shell".into()]));
    let e = c.steps[0].expect.as_ref().unwrap();
    assert_eq!(e.contains, Strings(vec!["a".into(), "b".into()]));
    assert_eq!(e.regex, Strings(vec!["^x".into()]));
}

#[test]
fn fixtures_parse_every_kind() {
    let c = parse_case(
        r##"
source: x
files:
  - {path: a.txt, text: "hello\n"}
  - {path: img.png, base64: "iVBORw0KGgo="}
  - {path: big.txt, repeat: {text: "line\n", count: 3}}
  - {path: run.sh, text: "#!/bin/sh\n", mode: "0755", mtime: 1700000000}
  - {path: link, symlink: "{workdir}/a.txt"}
  - {path: emptydir, dir: true}
  - {path: pipe, fifo: true}
steps:
  - sleep_ms: 1
"##,
    )
    .unwrap();
    let kinds: Vec<_> = c.files.iter().map(|f| f.content.clone()).collect();
    assert_eq!(kinds[0], FileContent::Text("hello\n".into()));
    assert_eq!(
        kinds[1],
        FileContent::Bytes(vec![0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n'])
    );
    assert_eq!(
        kinds[2],
        FileContent::Repeat {
            text: "line\n".into(),
            count: 3
        }
    );
    assert_eq!(c.files[3].mode, Some(0o755));
    assert_eq!(c.files[3].mtime, Some(1_700_000_000));
    assert_eq!(kinds[4], FileContent::Symlink("{workdir}/a.txt".into()));
    assert_eq!(kinds[5], FileContent::Dir);
    assert_eq!(kinds[6], FileContent::Fifo);
}

#[test]
fn bad_fixtures_are_errors() {
    for (yaml, needle) in [
        ("{path: a}", "exactly one of"),
        ("{path: a, text: x, dir: true}", "text, dir"),
        ("{path: a, text: x, mode: \"0999\"}", "octal"),
        ("{path: a, base64: \"!!!\"}", "base64"),
        ("{path: ../a, text: x}", "`..`"),
        ("{path: a, symlink: b, mode: \"0644\"}", "symlink"),
        ("{path: a, txt: x}", "unknown field"),
    ] {
        let e = parse_case(&format!(
            "source: x\nfiles:\n  - {yaml}\nsteps: [{{sleep_ms: 1}}]\n"
        ))
        .unwrap_err();
        assert!(e.contains(needle), "{yaml}: {e}");
    }
}

#[test]
fn parse_mode_accepts_octal_strings() {
    assert_eq!(parse_mode("0755"), Ok(0o755));
    assert_eq!(parse_mode("644"), Ok(0o644));
    assert_eq!(parse_mode("0o600"), Ok(0o600));
    assert!(parse_mode("").is_err());
    assert!(parse_mode("rwx").is_err());
    assert!(parse_mode("77777").is_err());
}

#[test]
fn invalid_regex_is_a_load_error() {
    let e = parse_case("source: x\nsteps:\n  - call: v\n    expect: {regex: '('}\n").unwrap_err();
    assert!(e.contains("invalid regex"), "{e}");
    // A placeholder inside a regex is fine.
    parse_case("source: x\nsteps:\n  - call: v\n    expect: {regex: '^{workdir}/a$'}\n").unwrap();
}

#[test]
fn placeholders_expand_known_names_only() {
    let p = Placeholders::for_workdir(Path::new("/tmp/w.1"));
    assert_eq!(p.expand("{workdir}/a"), "/tmp/w.1/a");
    assert_eq!(p.expand("*.{ts,tsx} {other}"), "*.{ts,tsx} {other}");
    assert_eq!(p.expand_regex("^{workdir}/a$"), r"^/tmp/w\.1/a$");
    assert_eq!(
        p.expand_value(&json!({"path": "{workdir}", "list": ["{workdir}/x", 1, null]})),
        json!({"path": "/tmp/w.1", "list": ["/tmp/w.1/x", 1, null]})
    );
}

#[test]
fn case_expansion_reaches_every_part() {
    let c = parse_case(
        r#"
source: x
args: ["--allow-dir={workdir}/src"]
env: {A: "{workdir}/a,{workdir}/b"}
files:
  - {path: "{workdir}/f", symlink: "{workdir}/t"}
stderr_contains: ["{workdir}"]
steps:
  - call: view
    args: {path: "{workdir}/a.txt"}
    expect: {text: "{workdir}", regex: "{workdir}$", match: {x: "{workdir}"}}
  - send: '{"p":"{workdir}"}'
  - check_files: [{path: "{workdir}/a", text: "{workdir}"}]
"#,
    )
    .unwrap();
    let e = c.expanded(&Placeholders::for_workdir(Path::new("/w")));
    assert_eq!(e.args, vec!["--allow-dir=/w/src"]);
    assert_eq!(e.env["A"], "/w/a,/w/b");
    assert_eq!(e.files[0].path, "/w/f");
    assert_eq!(e.files[0].content, FileContent::Symlink("/w/t".into()));
    assert_eq!(e.stderr_contains, Strings(vec!["/w".into()]));
    match &e.steps[0].action {
        Action::Call { args, .. } => assert_eq!(args, &Some(json!({"path": "/w/a.txt"}))),
        other => panic!("{other:?}"),
    }
    let ex = e.steps[0].expect.as_ref().unwrap();
    assert_eq!(ex.text.as_deref(), Some("/w"));
    assert_eq!(ex.regex, Strings(vec!["/w$".into()]));
    assert_eq!(ex.match_, Some(json!({"x": "/w"})));
    assert_eq!(
        e.steps[1].action,
        Action::Send {
            line: r#"{"p":"/w"}"#.into()
        }
    );
    match &e.steps[2].action {
        Action::CheckFiles(c) => {
            assert_eq!(c[0].path, "/w/a");
            assert_eq!(c[0].text.as_deref(), Some("/w"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn http_case_parses() {
    let c = parse_case(
            r#"
source: x
transport: http
steps:
  - http_initialize: {save_session: a}
  - http_initialize:
  - http:
      method: DELETE
      headers: {Mcp-Session-Id: "{session:a}", Accept: null}
    expect:
      status: 202
      headers: {content-type: [text, event-stream], x: ""}
      headers_absent: [www-authenticate]
      messages: [{match: {id: 1}}]
      body_contains: ok
      save_session: other
  - http: {method: POST, body_repeat: {text: " ", count: 3}}
    wait: false
  - http_call: {session: a, tool: bash, args: {command: pwd}, expect: {is_error: false, status: 200}}
  - http_call: {stateless: true, tool: view, args: {}, meta: {progressToken: 1}, id: 9}
    expect: {notifications: [{method: notifications/progress}]}
  - signal: sigterm
    expect_exit: {within_ms: 5000}
  - assert_no_process: 'sleep 1\.5 {workdir}'
    timeout_ms: 100
"#,
        )
        .unwrap();
    assert_eq!(c.transport, CaseTransport::Http);
    let Action::HttpInitialize(i) = &c.steps[0].action else {
        panic!("{:?}", c.steps[0].action)
    };
    assert_eq!(i.save_session, Some(SaveSession(Some("a".into()))));
    assert_eq!(
        c.steps[1].action,
        Action::HttpInitialize(HttpInitSpec::default())
    );
    let Action::Http(h) = &c.steps[2].action else {
        panic!()
    };
    assert_eq!(h.method, "DELETE");
    assert_eq!(h.path, "/mcp");
    assert_eq!(h.headers["Accept"], None);
    assert!(h.wait);
    let e = c.steps[2].expect.as_ref().unwrap();
    assert_eq!(
        e.headers["content-type"],
        Strings(vec!["text".into(), "event-stream".into()])
    );
    assert_eq!(e.save_session, Some(SaveSession(Some("other".into()))));
    let Action::Http(h) = &c.steps[3].action else {
        panic!()
    };
    assert!(!h.wait);
    // `expect` inside http_call moves to the step.
    let Action::HttpCall(call) = &c.steps[4].action else {
        panic!()
    };
    assert!(call.expect.is_none());
    let e = c.steps[4].expect.as_ref().unwrap();
    assert_eq!((e.is_error, e.status), (Some(false), Some(200)));
    assert_eq!(
        c.steps[6].action,
        Action::Signal {
            name: "TERM".into(),
            expect_exit: Some(ExpectExit {
                code: 0,
                within_ms: Some(5000)
            })
        }
    );
    let x = c.expanded(&Placeholders::for_workdir(Path::new("/w.1")));
    assert_eq!(
        x.steps[7].action,
        Action::AssertNoProcess(r"sleep 1\.5 /w\.1".into())
    );
    // Run-time placeholders survive the case expansion, then expand.
    let Action::Http(h) = &x.steps[2].action else {
        panic!()
    };
    assert_eq!(h.headers["Mcp-Session-Id"].as_deref(), Some("{session:a}"));
    let mut step = x.steps[2].clone();
    step.expand(&Placeholders::default().with(&session_placeholder("a"), "uuid-1"));
    let Action::Http(h) = &step.action else {
        panic!()
    };
    assert_eq!(h.headers["Mcp-Session-Id"].as_deref(), Some("uuid-1"));
}

#[test]
fn http_case_errors() {
    for (yaml, needle) in [
        (
            "transport: http\nsteps: [{call: view}]",
            "not available in a `transport: http` case",
        ),
        ("steps: [{http: {method: GET}}]", "add `transport: http`"),
        (
            "transport: http\nhandshake: false\nsteps: [{sleep_ms: 1}]",
            "handshake",
        ),
        ("transport: grpc\nsteps: [{sleep_ms: 1}]", "unknown variant"),
        (
            "transport: http\nsteps: [{http: {method: get}}]",
            "upper-case",
        ),
        (
            "transport: http\nsteps: [{http: {path: mcp}}]",
            "start with `/`",
        ),
        (
            "transport: http\nsteps: [{http: {json: {}, body: x}}]",
            "at most one",
        ),
        (
            "transport: http\nsteps: [{http: {headers: {\"a b\": x}}}]",
            "header name",
        ),
        (
            "transport: http\nsteps: [{http: {}, expect: {is_error: true}}]",
            "messages",
        ),
        (
            "transport: http\nsteps: [{http_call: {tool: x}, expect: {save_session: true}}]",
            "only for `http` steps",
        ),
        (
            "steps: [{call: x, expect: {status: 200}}]",
            "only for HTTP steps",
        ),
        (
            "transport: http\nsteps: [{http_call: {tool: x, stateless: true, session: a}}]",
            "stateless",
        ),
        (
            "transport: http\nsteps: [{http_call: {tool: x, expect: {}}, expect: {}}]",
            "both inside",
        ),
        (
            "transport: http\nsteps: [{http_call: {tool: x, do: read_file}}]",
            "not both",
        ),
        (
            "transport: http\nsteps: [{http_call: {}}]",
            "needs a `tool`",
        ),
        (
            "transport: http\nsteps: [{http_call: {do: read_file, args: {}}}]",
            "takes `with`",
        ),
        (
            "transport: http\nsteps: [{http_call: {do: nope}}]",
            "unknown capability",
        ),
        (
            "transport: http\nsteps: [{http: {}, wait: false, expect: {status: 200}}]",
            "never read",
        ),
        (
            "transport: http\nsteps: [{http_initialize: {save_session: \"a b\"}}]",
            "session name",
        ),
        (
            "transport: http\nsteps: [{http: {}, expect: {messages: [{match: 1}]}}]",
            "JSON object",
        ),
        ("steps: [{signal: WINCH}]", "unknown signal"),
        (
            "steps: [{sleep_ms: 1, expect_exit: {code: 0}}]",
            "`expect_exit` is not allowed",
        ),
        ("steps: [{assert_no_process: \"(\"}]", "invalid regex"),
    ] {
        let e = parse_case(&format!("source: x\n{yaml}\n")).unwrap_err();
        assert!(e.contains(needle), "{yaml}: {e}");
    }
}

#[test]
fn wait_false_and_await() {
    let c = parse_case(
            "source: x\nsteps:\n  - call: bash\n    id: 7\n    wait: false\n  - await: 7\n    expect: {is_error: false}\n",
        )
        .unwrap();
    assert!(matches!(
        c.steps[0].action,
        Action::Call { wait: false, .. }
    ));
    assert_eq!(c.steps[1].action, Action::Await { id: json!(7) });
    let e = parse_case(
        "source: x\nsteps:\n  - call: bash\n    wait: false\n    expect: {is_error: false}\n",
    )
    .unwrap_err();
    assert!(e.contains("await"), "{e}");
}

#[test]
fn save_and_until_ms_are_checked() {
    let ok = parse_case(
        "source: x\nsteps:\n  - call: bash\n    args: {command: x}\n    until_ms: 500\n    expect: {match: {result: {}}, save: {task: /result/taskId}}\n",
    )
    .unwrap();
    assert_eq!(ok.steps[0].until_ms, Some(500));
    let save = &ok.steps[0].expect.as_ref().unwrap().save;
    assert_eq!(save.get("task").map(String::as_str), Some("/result/taskId"));
    for (yaml, needle) in [
        ("  - call: view\n    until_ms: 500\n", "add one"),
        (
            "  - sleep_ms: 5\n    until_ms: 500\n",
            "`until_ms` is not allowed",
        ),
        (
            "  - call: view\n    expect: {save: {t: result/x}}\n",
            "neither a JSON pointer",
        ),
        (
            "  - call: view\n    expect: {save: {t: \"text:(\"}}\n",
            "invalid regex",
        ),
        (
            "  - call: view\n    expect: {save: {\"a b\": /x}}\n",
            "saved name",
        ),
    ] {
        let e = parse_case(&format!("source: x\nsteps:\n{yaml}")).unwrap_err();
        assert!(e.contains(needle), "{yaml}: {e}");
    }
}
