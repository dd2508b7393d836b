//! `boris-spec hostile`: the generated hostile-input pack (issue 29 §5). Calls every tool a
//! server lists with arguments drawn from its schema by a seeded generator
//! ([`generate`]) and checks what any server owes bad input, whatever its wording:
//!
//! - **answers**: every call gets a response (a result or a JSON-RPC error) in time, and
//!   the server is still running after it; an error with a null id counts (JSON-RPC's
//!   answer to a message the server could not read: nothing else is in flight);
//! - **well-formed**: a result carries a `content` array;
//! - **error changes nothing**: a call answered with an error left the workdir as it was
//!   (not checked for tools that run commands: a command may act, then fail), the files
//!   the server wrote there by starting (its own log, say) left out;
//! - **stays inside**: nothing outside the workdir changed (a sibling directory of
//!   the run's own temporary root stands for the rest of the machine).
//!
//! A failure is shrunk (properties left out, strings and arrays halved, each candidate
//! replayed on a fresh server) and printed as a case to paste into `spec/`.

pub mod corpus;
pub mod generate;
pub mod summary;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use super::bench::Conn;
use super::preflight::list_tools;
use generate::{Attack, Role};

/// The seed and count CI runs (and `boris-spec hostile` defaults to).
pub const DEFAULT_SEED: u64 = 29;
pub const DEFAULT_CASES: usize = 400;
/// Calls per server process before a fresh one (and fresh files) takes over.
const CALLS_PER_SESSION: usize = 50;
/// Arguments longer than this are not printed in a case (the seed reproduces them).
const MAX_PRINTED_ARGS: usize = 2_000;
/// Replays a shrink may spend on one failure.
const SHRINK_REPLAYS: usize = 40;

/// Names that mark a tool the pack never calls, or a property it never sends: hostile
/// numbers sent to a tool that signals processes could reach the machine's own (pid 1, -1).
const NEVER_CALLED: &[&str] = &["kill", "terminate", "signal", "pid", "reboot", "shutdown"];

#[derive(Debug, Clone)]
pub struct Options {
    /// The server's command line; `{workdir}` is replaced by the run's workdir.
    pub server: String,
    pub seed: u64,
    pub cases: usize,
    pub timeout: Duration,
    /// Only these tools (all when empty).
    pub only: Vec<String>,
    /// Never these tools.
    pub skip: Vec<String>,
}

/// Which promise a call broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Broken {
    Answers,
    WellFormed,
    ErrorChangesNothing,
    StaysInside,
}

impl Broken {
    pub fn as_str(self) -> &'static str {
        match self {
            Broken::Answers => "answers",
            Broken::WellFormed => "well-formed",
            Broken::ErrorChangesNothing => "error changes nothing",
            Broken::StaysInside => "stays inside",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Failure {
    /// The call's number in the run (0-based).
    pub call: usize,
    pub tool: String,
    pub attack: Attack,
    pub broken: Broken,
    pub detail: String,
    /// The arguments as drawn, and as shrunk (the same when shrinking found nothing
    /// smaller that still fails).
    pub drawn: Value,
    pub shrunk: Value,
}

#[derive(Debug, Default)]
pub struct Report {
    pub calls: usize,
    /// Tools called, with how many calls each.
    pub tools: BTreeMap<String, usize>,
    /// Tools not called, with why.
    pub not_called: Vec<(String, String)>,
    pub failures: Vec<Failure>,
}

/// The run's directories: `root/work` (the server's workdir, with the files calls aim
/// at), `root/outside` (stands for everything else), `root/home` (its HOME).
struct Ground {
    _dir: tempfile::TempDir,
    work: PathBuf,
    outside: PathBuf,
    home: PathBuf,
    /// What the server wrote in the workdir by starting (its log, its state): its own
    /// files, whose later changes are not a failed call's doing.
    own: Vec<PathBuf>,
}

impl Ground {
    fn new() -> Result<Ground, String> {
        let dir = tempfile::Builder::new()
            .prefix("boris-hostile-")
            .tempdir()
            .map_err(|e| format!("cannot create a temp dir: {e}"))?;
        let root = dir.path().to_path_buf();
        let (work, outside, home) = (root.join("work"), root.join("outside"), root.join("home"));
        let made = (|| -> std::io::Result<()> {
            for d in [&work, &outside, &home, &work.join("sub")] {
                std::fs::create_dir_all(d)?;
            }
            std::fs::write(outside.join("secret.txt"), "outside secret\n")?;
            std::fs::write(work.join("a.txt"), "hello\nworld\n")?;
            std::fs::write(work.join("sub/a.txt"), "nested\n")?;
            std::fs::write(work.join("caf\u{e9}.txt"), "nfc\n")?;
            std::os::unix::fs::symlink("../outside", work.join("link"))?;
            nix::unistd::mkfifo(
                &work.join("fifo"),
                nix::sys::stat::Mode::from_bits_truncate(0o644),
            )
            .map_err(std::io::Error::from)?;
            Ok(())
        })();
        made.map_err(|e| format!("cannot lay out the run's files: {e}"))?;
        Ok(Ground {
            _dir: dir,
            work,
            outside,
            home,
            own: Vec::new(),
        })
    }

    /// `{outside}` in a drawn string names the outside directory.
    fn place(&self, v: &Value) -> Value {
        match v {
            Value::String(s) if s.contains("{outside}") => {
                Value::String(s.replace("{outside}", &self.outside.to_string_lossy()))
            }
            Value::Array(a) => Value::Array(a.iter().map(|x| self.place(x)).collect()),
            Value::Object(m) => {
                Value::Object(m.iter().map(|(k, x)| (k.clone(), self.place(x))).collect())
            }
            other => other.clone(),
        }
    }

    fn start(&mut self, opts: &Options) -> Result<Conn, String> {
        let cmd = opts
            .server
            .replace("{workdir}", &self.work.to_string_lossy());
        let env = BTreeMap::from([("HOME".to_string(), self.home.display().to_string())]);
        let laid_out = snapshot(&self.work);
        let mut conn = Conn::start_with(&cmd, &self.work, &env, opts.timeout)?;
        conn.initialize()?;
        self.own = snapshot(&self.work)
            .into_keys()
            .filter(|p| !laid_out.contains_key(p))
            .collect();
        Ok(conn)
    }

    /// The workdir as a failed call must leave it: the server's own files left out.
    fn users_files(&self) -> BTreeMap<PathBuf, (char, u64, u64)> {
        let mut files = snapshot(&self.work);
        files.retain(|p, _| !self.own.iter().any(|o| p.starts_with(o)));
        files
    }
}

/// What a directory holds: each entry's relative path, kind, size and a hash of its
/// bytes (a FIFO is never opened).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (char, u64, u64)> {
    use std::hash::{Hash, Hasher};
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let path = e.path();
            let rel = path.strip_prefix(dir).unwrap_or(&path).to_path_buf();
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            let ft = meta.file_type();
            let entry = if ft.is_symlink() {
                let target = std::fs::read_link(&path).unwrap_or_default();
                let mut h = std::collections::hash_map::DefaultHasher::new();
                target.hash(&mut h);
                ('l', 0, h.finish())
            } else if ft.is_dir() {
                stack.push(path.clone());
                ('d', 0, 0)
            } else if ft.is_file() {
                let mut h = std::collections::hash_map::DefaultHasher::new();
                std::fs::read(&path).unwrap_or_default().hash(&mut h);
                ('f', meta.len(), h.finish())
            } else {
                ('o', 0, 0)
            };
            out.insert(rel, entry);
        }
    }
    out
}

fn changes(
    before: &BTreeMap<PathBuf, (char, u64, u64)>,
    after: &BTreeMap<PathBuf, (char, u64, u64)>,
) -> Option<String> {
    let mut said = Vec::new();
    for (p, v) in after {
        match before.get(p) {
            None => said.push(format!("{} appeared", p.display())),
            Some(b) if b != v => said.push(format!("{} changed", p.display())),
            _ => {}
        }
    }
    for p in before.keys().filter(|p| !after.contains_key(*p)) {
        said.push(format!("{} disappeared", p.display()));
    }
    (!said.is_empty()).then(|| {
        let more = said.len().saturating_sub(3);
        let mut s = said.into_iter().take(3).collect::<Vec<_>>().join(", ");
        if more > 0 {
            s.push_str(&format!(" and {more} more"));
        }
        s
    })
}

/// Whether a tool runs commands (an error from it may follow what the command did).
fn runs_commands(tool: &Value) -> bool {
    tool.pointer("/inputSchema/properties")
        .and_then(Value::as_object)
        .is_some_and(|p| p.keys().any(|k| generate::role_of(k) == Role::Shell))
}

/// One call against `conn` in `ground`, checked; `None` when it kept every promise.
fn check_call(
    conn: &mut Conn,
    ground: &Ground,
    tool: &Value,
    args: &Value,
) -> Option<(Broken, String)> {
    let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
    let work_before = ground.users_files();
    let outside_before = snapshot(&ground.outside);
    let answer = match conn.call_tool_alone(name, &ground.place(args)) {
        Ok(a) => a,
        Err(e) => return Some((Broken::Answers, e)),
    };
    if let Some(st) = conn.server.poll_exit() {
        return Some((
            Broken::Answers,
            format!(
                "the server ended after answering ({})",
                super::process::describe_status(st)
            ),
        ));
    }
    if let Some(what) = changes(&outside_before, &snapshot(&ground.outside)) {
        return Some((Broken::StaysInside, what));
    }
    let failed = match (answer.get("result"), answer.get("error")) {
        (_, Some(_)) => true,
        (Some(r), None) => {
            if !r.get("content").is_some_and(Value::is_array) {
                return Some((
                    Broken::WellFormed,
                    format!(
                        "the result has no content array: {}",
                        super::display::show(r)
                    ),
                ));
            }
            r.get("isError").and_then(Value::as_bool) == Some(true)
        }
        (None, None) => {
            return Some((
                Broken::WellFormed,
                "the response has neither result nor error".into(),
            ));
        }
    };
    if failed
        && !runs_commands(tool)
        && let Some(what) = changes(&work_before, &ground.users_files())
    {
        return Some((Broken::ErrorChangesNothing, what));
    }
    None
}

/// Replays one call on a fresh server and files: the promise it broke, if any.
fn replay(opts: &Options, tool: &Value, args: &Value) -> Option<(Broken, String)> {
    let mut ground = Ground::new().ok()?;
    let mut conn = ground.start(opts).ok()?;
    check_call(&mut conn, &ground, tool, args)
}

/// The smallest arguments found that still break `broken`.
fn shrink(opts: &Options, tool: &Value, args: &Value, broken: Broken) -> Value {
    // A call that got no answer cost a whole timeout; replaying it forty times would
    // cost forty.
    if broken == Broken::Answers {
        return args.clone();
    }
    let mut best = args.clone();
    let mut replays = 0;
    'outer: while replays < SHRINK_REPLAYS {
        for candidate in generate::smaller(&best) {
            replays += 1;
            if replays > SHRINK_REPLAYS {
                break 'outer;
            }
            if replay(opts, tool, &candidate).is_some_and(|(b, _)| b == broken) {
                best = candidate;
                continue 'outer;
            }
        }
        break;
    }
    best
}

/// The tool as the pack calls it, or why it never does: a tool named for signalling
/// processes, or needing a property that names one, is never called; an optional such
/// property is left out of its schema, so the rest of the tool is still tried (Boris's
/// pipe `bash` with its `kill_pid`).
fn callable(tool: &Value, opts: &Options) -> Result<Value, String> {
    let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
    if !opts.only.is_empty() && !opts.only.iter().any(|o| o == name) {
        return Err("not selected".into());
    }
    if opts.skip.iter().any(|s| s == name) {
        return Err("skipped by --skip-tool".into());
    }
    let refuse = |word: &str| {
        Err(format!(
            "it signals or names processes (`{word}`): a hostile number could reach the machine's own"
        ))
    };
    let lower = name.to_ascii_lowercase();
    if let Some(word) = NEVER_CALLED.iter().find(|w| lower.contains(*w)) {
        return refuse(word);
    }
    let names_a_process = |param: &str| {
        let p = param.to_ascii_lowercase();
        NEVER_CALLED
            .iter()
            .find(|w| p == **w || p.ends_with(&format!("_{w}")))
    };
    let required: Vec<&str> = tool
        .pointer("/inputSchema/required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if let Some(word) = required.iter().find_map(|r| names_a_process(r)) {
        return refuse(word);
    }
    let mut called = tool.clone();
    if let Some(props) = called
        .pointer_mut("/inputSchema/properties")
        .and_then(Value::as_object_mut)
    {
        props.retain(|k, _| names_a_process(k).is_none());
    }
    Ok(called)
}

/// Runs the pack, on a thread of its own with room on its stack: arguments nested
/// thousands deep are built, written and dropped recursively.
pub fn run(opts: &Options) -> Result<Report, String> {
    let opts = opts.clone();
    std::thread::Builder::new()
        .name("boris-spec-hostile".into())
        .stack_size(256 << 20)
        .spawn(move || run_here(&opts))
        .map_err(|e| format!("cannot start the run's thread: {e}"))?
        .join()
        .map_err(|_| "the run's thread panicked".to_string())?
}

fn run_here(opts: &Options) -> Result<Report, String> {
    let mut report = Report::default();
    let mut rng = generate::rng(opts.seed);
    let mut ground = Ground::new()?;
    let mut conn = ground.start(opts)?;
    let listed = list_tools(&mut conn)?;
    let mut tools = Vec::new();
    for t in listed {
        let name = t
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        match callable(&t, opts) {
            Ok(called) => tools.push(called),
            Err(why) => report.not_called.push((name, why)),
        }
    }
    if tools.is_empty() {
        return Ok(report);
    }
    let mut in_session = 0;
    for call in 0..opts.cases {
        if in_session == CALLS_PER_SESSION {
            conn.server.close_stdin();
            ground = Ground::new()?;
            conn = ground.start(opts)?;
            in_session = 0;
        }
        in_session += 1;
        let tool = &tools[call % tools.len()];
        let name = tool
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let schema = tool.get("inputSchema").cloned().unwrap_or(Value::Null);
        let drawn = generate::draw(&schema, &mut rng);
        report.calls += 1;
        *report.tools.entry(name.clone()).or_default() += 1;
        if let Some((broken, detail)) = check_call(&mut conn, &ground, tool, &drawn.args) {
            let shrunk = shrink(opts, tool, &drawn.args, broken);
            report.failures.push(Failure {
                call,
                tool: name,
                attack: drawn.attack,
                broken,
                detail,
                drawn: drawn.args,
                shrunk,
            });
            // The server may be wedged or gone: the next call starts afresh.
            conn.server.close_stdin();
            ground = Ground::new()?;
            conn = ground.start(opts)?;
            in_session = 0;
        }
    }
    conn.server.close_stdin();
    Ok(report)
}

/// A failure as a case to paste into `spec/` (its files are the run's own; `{outside}`
/// is the run's stand-in for the rest of the machine).
pub fn as_case(f: &Failure, seed: u64) -> String {
    let mut args = serde_json::to_string(&f.shrunk).unwrap_or_default();
    if args.len() > MAX_PRINTED_ARGS {
        // Megabytes of `[` help nobody: the seed draws them again.
        args = format!(
            "{{}}  # {} bytes of arguments for `{}`, not printed: the same --seed and \
             --cases draw them again as call {}",
            args.len(),
            f.tool,
            f.call
        );
    }
    format!(
        "# boris-spec hostile: `{tool}` broke \"{broken}\": {detail}\n\
         source: \"boris-spec hostile --seed {seed}, call {call}: {attack} (issue 29 §5)\"\n\
         tags: [hostile]\n\
         files:\n\
         \x20 - {{path: a.txt, text: \"hello\\nworld\\n\"}}\n\
         \x20 - {{path: sub/a.txt, text: \"nested\\n\"}}\n\
         \x20 - {{path: \"caf\u{e9}.txt\", text: \"nfc\\n\"}}\n\
         \x20 - {{path: fifo, fifo: true}}\n\
         steps:\n\
         \x20 - call: {tool}\n\
         \x20   args: {args}\n",
        tool = f.tool,
        broken = f.broken.as_str(),
        detail = f.detail.replace('\n', " "),
        call = f.call,
        attack = f.attack,
    )
}

/// The report as text: one line per tool, then each failure with its case.
pub fn render(report: &Report, opts: &Options) -> String {
    let mut out = format!(
        "hostile input: {} calls (seed {}) to {} tools\n",
        report.calls,
        opts.seed,
        report.tools.len()
    );
    for (name, why) in &report.not_called {
        out.push_str(&format!("not called: {name}: {why}\n"));
    }
    for f in &report.failures {
        out.push_str(&format!(
            "\nFAIL {} (call {}, {}): broke \"{}\": {}\n",
            f.tool,
            f.call,
            f.attack,
            f.broken.as_str(),
            f.detail
        ));
        out.push_str(&as_case(f, opts.seed));
    }
    out.push_str(&format!(
        "\n{} calls, {} failed\n",
        report.calls,
        report.failures.len()
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_printed_failure_is_a_case_the_harness_reads() {
        let f = Failure {
            call: 3,
            tool: "view".into(),
            attack: Attack::Hostile {
                property: "path".into(),
            },
            broken: Broken::ErrorChangesNothing,
            detail: "a.txt changed".into(),
            drawn: json!({"path": "a\u{0}b\u{202e}"}),
            shrunk: json!({"path": "a\u{0}b\u{202e}"}),
        };
        let text = as_case(&f, 7);
        let case = crate::spec::parse_case(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(case.steps.len(), 1);
    }

    #[test]
    fn tools_that_signal_processes_are_never_called() {
        let opts = Options {
            server: String::new(),
            seed: 0,
            cases: 0,
            timeout: Duration::from_secs(1),
            only: vec![],
            skip: vec![],
        };
        let kill = json!({"name": "kill_process", "inputSchema": {"properties": {"pid": {}}}});
        let by_param = json!({"name": "stop",
            "inputSchema": {"properties": {"pid": {}}, "required": ["pid"]}});
        let view = json!({"name": "view", "inputSchema": {"properties": {"path": {}}}});
        assert!(callable(&kill, &opts).is_err());
        assert!(callable(&by_param, &opts).is_err());
        assert_eq!(callable(&view, &opts), Ok(view));
        // Boris's pipe `bash`: called, never with the properties that name a process.
        let bash = json!({"name": "bash", "inputSchema": {"properties":
            {"command": {}, "kill_pid": {}, "check_pid": {}}, "required": ["command"]}});
        let called = callable(&bash, &opts).unwrap_or_default();
        let props = called.pointer("/inputSchema/properties");
        assert_eq!(props, Some(&json!({"command": {}})));
    }

    #[test]
    fn changes_name_what_appeared_changed_and_went() {
        let a = BTreeMap::from([
            (PathBuf::from("x"), ('f', 1, 1)),
            (PathBuf::from("y"), ('f', 1, 1)),
        ]);
        let b = BTreeMap::from([
            (PathBuf::from("x"), ('f', 2, 2)),
            (PathBuf::from("z"), ('f', 1, 1)),
        ]);
        let said = changes(&a, &b).unwrap_or_default();
        assert!(
            said.contains("x changed")
                && said.contains("z appeared")
                && said.contains("y disappeared"),
            "{said}"
        );
        assert_eq!(changes(&a, &a), None);
    }
}
