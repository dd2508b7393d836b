#!/usr/bin/env python3
"""Code intelligence, Boris against serena (issue 20 §6): the same calls, the same pyright,
the same projects, one run.

  python3 bench/lsp.py --boris target/release/boris --project DIR [--serena DIR] [--runs N]

For each project (a small fixture made here, and DIR: a real Python project, copied to a
temporary directory first so its edits go nowhere) and each server:

- cold: spawn the server, MCP initialize, then the first definition call answered (the
  language server starts inside that time);
- warm definition and references: the p50/p95 of N calls each;
- post-edit diagnostics: an edit that introduces a type error and the one that fixes it,
  N times: Boris's edit result carries the diagnostics (`str_replace`); serena needs an
  edit (`replace_content`) and then `get_diagnostics_for_file`, so its time is both calls;
- peak RSS: the most resident memory the server's process tree (the server and its
  language server, node included) held at once, sampled every 50 ms.

Every timed answer is checked (issue 26): a definition names the definition's file and
line, references name the expected caller, the edit that adds the error names it and
clears nothing, the edit that takes it out names no such error (Boris's says it cleared
it). One wrong answer and the run prints every wrong answer and exits 1: no table, no
time for a wrong answer. --repeat K runs everything K times (a new server each time) and
pools the samples (cold: the median of the K).

serena is run as tests/compat/run.sh installs it (its --serena DIR: a venv with
serena-agent and pyright from the Python registry, and the uvx shim). Prints a markdown
table (peer / boris for times and memory).
"""
import argparse, json, os, shutil, statistics, subprocess, sys, tempfile, threading, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Wrong answers: (server, call, what was wrong, the answer). Any one fails the run.
WRONG = []


def check(server, call, text, must=(), must_not=()):
    """Records a wrong answer: one that lacks a `must` string or has a `must_not` one."""
    lacks = [m for m in must if m not in text]
    has = [m for m in must_not if m in text]
    if lacks or has:
        why = "; ".join([f"lacks {m!r}" for m in lacks] + [f"has {m!r}" for m in has])
        WRONG.append((server, call, why, text))
        print(f"bench: WRONG {server} {call}: {why}: {text[-600:]!r}", file=sys.stderr)


def tree_rss(pid):
    """VmRSS of pid and its descendants, in bytes."""
    children = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(d))
        except (OSError, ValueError, IndexError):
            pass
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
        except OSError:
            pass
        stack.extend(children.get(p, []))
    return total


class Server:
    def __init__(self, argv, cwd, env):
        self.t0 = time.monotonic()
        self.p = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.n = 0
        self.peak = 0
        self.done = False
        threading.Thread(target=self._sample, daemon=True).start()
        self.rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "bench", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _sample(self):
        while not self.done:
            self.peak = max(self.peak, tree_rss(self.p.pid))
            time.sleep(0.05)

    def send(self, m):
        self.p.stdin.write(json.dumps(m) + "\n")
        self.p.stdin.flush()

    def rpc(self, method, params):
        self.n += 1
        self.send({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params})
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError(f"server closed stdout during {method}")
            try:
                m = json.loads(line)
            except ValueError:
                continue
            if m.get("id") == self.n:
                return m

    def call(self, name, args):
        t = time.monotonic()
        r = self.rpc("tools/call", {"name": name, "arguments": args})
        dt = time.monotonic() - t
        res = r.get("result") or {}
        text = "\n".join(c.get("text", "") for c in res.get("content", []))
        if res.get("isError") or "error" in r:
            raise RuntimeError(f"{name} {args}: {text or r}")
        return dt, text

    def close(self):
        self.done = True
        try:
            self.p.stdin.close()
            self.p.wait(timeout=15)
        except Exception:
            self.p.kill()


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


class Boris:
    name = "boris"

    def __init__(self, binary, lsp_path):
        self.binary, self.lsp_path = binary, lsp_path

    def start(self, cwd):
        env = dict(os.environ, PATH=self.lsp_path + ":" + os.environ["PATH"])
        return Server([self.binary, "--transport", "stdio", "--lsp-timeout", "300",
                       "--diagnostics-wait", "60"], cwd, env)

    def definition(self, s, t):
        dt, text = s.call("definition", {"path": t["def_path"], "line": t["def_line"], "symbol": t["symbol"]})
        check(self.name, "definition", text, must=[t["def_at"]])
        return dt

    def references(self, s, t):
        dt, text = s.call("references", {"path": t["ref_path"], "line": t["ref_line"], "symbol": t["symbol"]})
        check(self.name, "references", text, must=[t["ref_has"]])
        return dt

    def prepare_edit(self, s, t):
        s.call("view", {"path": t["edit_path"]})

    def edit(self, s, t, bad):
        old, new = (t["edit_old"], t["edit_bad"]) if bad else (t["edit_bad"], t["edit_old"])
        dt, text = s.call("str_replace", {"path": t["edit_path"], "old_str": old, "new_str": new})
        if bad:  # names the error it made, and clears nothing
            check(self.name, "the edit adding the error", text, must=[t["expect"], "The edit introduced 1 error"],
                  must_not=["cleared"])
        else:  # clears it, and introduces nothing (the previous edit's error least of all)
            check(self.name, "the edit removing the error", text, must=["The edit cleared 1 error"],
                  must_not=[t["expect"], "introduced"])
        return dt


class Serena:
    name = "serena"

    def __init__(self, home):
        self.home = home

    def start(self, cwd):
        env = dict(os.environ, PATH=f"{self.home}/shim:{self.home}/venv/bin:" + os.environ["PATH"],
                   PYRIGHT_PYTHON_CACHE_DIR=f"{self.home}/pyright", PYRIGHT_PYTHON_IGNORE_WARNINGS="1",
                   HOME=tempfile.mkdtemp(prefix="serena-home-"))
        return Server([f"{self.home}/venv/bin/serena", "start-mcp-server", "--project", cwd,
                       "--agent-interface", "tools", "--enable-web-dashboard", "false",
                       "--open-web-dashboard", "false"], cwd, env)

    def definition(self, s, t):
        dt, text = s.call("find_declaration", {"relative_path": t["def_path"], "regex": t["def_regex"]})
        check(self.name, "find_declaration", text, must=[os.path.basename(t["ref_path"])])
        return dt

    def references(self, s, t):
        dt, text = s.call("find_referencing_symbols", {"name_path": t["symbol"], "relative_path": t["ref_path"]})
        check(self.name, "find_referencing_symbols", text, must=[t["ref_has"].split(":")[0]])
        return dt

    def prepare_edit(self, s, t):
        pass

    def edit(self, s, t, bad):
        old, new = (t["edit_old"], t["edit_bad"]) if bad else (t["edit_bad"], t["edit_old"])
        a, _ = s.call("replace_content", {"relative_path": t["edit_path"], "needle": old, "repl": new, "mode": "literal"})
        b, text = s.call("get_diagnostics_for_file", {"relative_path": t["edit_path"]})
        if bad:
            check(self.name, "diagnostics after the edit adding the error", text, must=[t["expect"]])
        else:
            check(self.name, "diagnostics after the edit removing the error", text, must_not=[t["expect"]])
        return a + b


def measure(server, target, project, runs):
    work = tempfile.mkdtemp(prefix=f"lsp-bench-{server.name}-")
    shutil.copytree(project, work, dirs_exist_ok=True)
    out = {}
    t0 = time.monotonic()
    s = server.start(work)
    try:
        server.definition(s, target)
        out["cold"] = time.monotonic() - t0
        defs = [server.definition(s, target) for _ in range(runs)]
        refs = [server.references(s, target) for _ in range(runs)]
        server.prepare_edit(s, target)
        edits = []
        for _ in range(runs):
            edits.append(server.edit(s, target, True))
            edits.append(server.edit(s, target, False))
        out.update(defs=defs, refs=refs, edits=edits)
    finally:
        s.close()
        out["rss"] = s.peak
        shutil.rmtree(work, ignore_errors=True)
    return out


def fixture():
    d = tempfile.mkdtemp(prefix="lsp-fixture-")
    with open(f"{d}/lib.py", "w") as f:
        f.write("def helper(x: int) -> int:\n    return x + 1\n")
    with open(f"{d}/main.py", "w") as f:
        f.write("from lib import helper\n\n\ndef run() -> int:\n    return helper(2)\n")
    return d, {
        "symbol": "helper", "def_path": "main.py", "def_line": 5, "def_regex": r"return (helper)\(",
        "ref_path": "lib.py", "ref_line": 1,
        # What a right answer names: the definition's place, a caller.
        "def_at": "lib.py:1:5", "ref_has": "main.py:5",
        "edit_path": "main.py", "edit_old": "helper(2)", "edit_bad": 'helper("two")',
        "expect": "reportArgumentType",
    }


def click_target(project):
    """Targets in pallets/click: echo, defined in utils.py and called all over."""
    utils = open(f"{project}/src/click/utils.py").read().splitlines()
    ref_line = next(i for i, l in enumerate(utils) if l.startswith("def echo(")) + 1
    termui = open(f"{project}/src/click/termui.py").read().splitlines()
    def_line = next(i for i, l in enumerate(termui) if "echo(" in l and "def " not in l and "import" not in l) + 1
    line = termui[def_line - 1]
    return {
        "symbol": "echo", "def_path": "src/click/termui.py", "def_line": def_line,
        # serena's find_declaration takes a regex whose one group is the symbol, matching once.
        "def_regex": "(echo)" + __import__("re").escape(line.strip()[line.strip().index("echo") + 4:]),
        "ref_path": "src/click/utils.py", "ref_line": ref_line,
        "def_at": f"utils.py:{ref_line}:5", "ref_has": "termui.py:",
        "edit_path": "src/click/utils.py",
        "edit_old": utils[ref_line - 1] + "\n",
        "edit_bad": "_bench_value: int = 'text'\n\n\n" + utils[ref_line - 1] + "\n",
        "expect": "Literal['text']",
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--boris", default=f"{ROOT}/target/release/boris")
    ap.add_argument("--serena", default=f"{ROOT}/tests/compat/.cache/serena")
    ap.add_argument("--lsp-path", default=f"{ROOT}/tests/lsp/.cache/node_modules/.bin")
    ap.add_argument("--project", help="pallets/click: a checkout, or tests/lsp/click.sh's layout of its wheel")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=1, help="whole runs per server and project, pooled")
    a = ap.parse_args()
    servers = [Boris(os.path.abspath(a.boris), a.lsp_path)]
    if os.path.exists(f"{a.serena}/venv/bin/serena"):
        servers.append(Serena(a.serena))
    else:
        print(f"(no serena at {a.serena}: run tests/compat/run.sh once)", file=sys.stderr)
    projects = [("fixture (2 files)", *fixture())]
    if a.project:
        n = sum(1 for r, _, fs in os.walk(a.project) for f in fs if f.endswith(".py"))
        projects.append((f"pallets/click ({n} Python files)", a.project, click_target(a.project)))
    rows = []
    for pname, path, target in projects:
        res = {}
        for s in servers:
            print(f"bench: {s.name} on {pname}", file=sys.stderr)
            runs = [measure(s, target, path, a.runs) for _ in range(a.repeat)]
            res[s.name] = {
                "cold": statistics.median(r["cold"] for r in runs),
                "rss": max(r["rss"] for r in runs),
                **{k: [x for r in runs for x in r[k]] for k in ("defs", "refs", "edits")},
            }
        rows.append((pname, res))
        if WRONG:
            break
    if WRONG:
        print(f"{len(WRONG)} wrong answers; no figures for a run that answered wrongly:")
        for server, call, why, text in WRONG:
            print(f"- {server} {call}: {why}\n    {text[-600:]!r}")
        sys.exit(1)
    names = [s.name for s in servers]
    print("| project | metric | " + " | ".join(names) + " |")
    print("|---|---|" + "---:|" * len(names))
    for pname, res in rows:
        def line(metric, f, unit):
            b = f(res["boris"])
            cells = [f"{b:.{2 if unit == 's' else 1}f} {unit}" if unit else str(b)]
            for n in names[1:]:
                v = f(res[n])
                cells.append(f"{v:.{2 if unit == 's' else 1}f} {unit} ({v / b:.2f}×)" if b else str(v))
            print(f"| {pname} | {metric} | " + " | ".join(cells) + " |")
        ms = lambda xs, q: pct(xs, q) * 1000
        line("cold: spawn to first definition answered", lambda r: r["cold"], "s")
        n = a.runs * a.repeat
        line(f"warm definition p50 (of {n})", lambda r: ms(r["defs"], 0.5), "ms")
        line(f"warm definition p95", lambda r: ms(r["defs"], 0.95), "ms")
        line(f"warm references p50 (of {n})", lambda r: ms(r["refs"], 0.5), "ms")
        line(f"warm references p95", lambda r: ms(r["refs"], 0.95), "ms")
        line(f"edit + its diagnostics p50 (of {2 * n})", lambda r: ms(r["edits"], 0.5), "ms")
        line(f"edit + its diagnostics p95", lambda r: ms(r["edits"], 0.95), "ms")
        line("peak RSS, server + language server", lambda r: r["rss"] / 2**20, "MiB")
    print(f"\nEvery timed answer was checked and right ({', '.join(names)}; --repeat {a.repeat}, "
          f"--runs {a.runs}).")


if __name__ == "__main__":
    main()
