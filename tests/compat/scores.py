"""SCORES.md (issue 29 §4): per server and capability group, the pass rate, what the
server does not support, and each failure with its baseline's hand-checked line.
Called by `matrix.py --scores OUT_DIR NAME...` on the JSON results of tests/compat/run.sh.

Every case lands in exactly one group: the first rule of RULES that matches it. A case
no rule matches stops the run (exit 1, naming it), so a new directory or file-name
pattern under spec/ is grouped on purpose rather than dropped from the scores.
"""
import fnmatch, json, os, sys

GROUPS = ["shell", "run outcome honesty", "background", "read", "edit", "patch", "search",
          "confinement", "code intelligence", "protocol", "sign-in", "teardown"]

READ = {"read_file", "read_range", "read_from", "read_tail", "list_dir"}
EDIT = {"write_file", "replace", "multi_edit", "replace_all"}
SHELL = {"run", "concurrency"}
BACKGROUND = {"run_background", "task_output", "task_stop"}
SEARCH = {"search", "search_files", "search_count", "find_files"}
CODE = {"diagnostics", "definition", "references", "rename"}

# (group, directories under spec/, file-name patterns, capabilities): a case matches a rule
# when its directory is one of the rule's, or its file name (or, for a pattern with a
# `/`, its path under spec/) matches one of the patterns,
# or it uses one of the capabilities (in any server's result: a server that does not
# support a case records none, Boris's adapter records them all). The directories and
# names of every rule are tried first, in order, then the capabilities, in order: where a
# case is and what it is called say its subject (a grep case that runs a command is
# search, a background case under spec/bash/ is background); what it uses places the
# rest (a case of a client profile's tools, of spec/errors/).
RULES = [
    ("sign-in", ["auth"], [], set()),
    ("run outcome honesty", ["outcome"], ["cancel-*", "exit-code-*", "timeout-sig*"], set()),
    ("teardown", [], ["shutdown-*", "stdin-eof-*", "sigterm-*", "*session-end*",
                      "delete-kills-*"], set()),
    ("confinement", ["sandbox", "scope", "adversarial"],
     ["sandbox-*", "scope.yaml", "access-denied-*", "unconfined-*"], set()),
    ("code intelligence", ["lsp"], [], CODE),
    ("protocol", ["protocol", "robustness", "http", "harness", "cli"],
     ["tools-list*", "disable-*", "no-bash-*", "*-profile.yaml", "listed-in-*",
      "unknown-tool-*", "error-is-single-text-block.yaml", "invalid-input-*",
      "long-argument-*"], set()),
    ("patch", ["apply_patch"], ["apply-patch*"], set()),
    ("background", ["mcp_tasks"], ["background-*", "task-*", "hand-off-*", "mcp-task*",
                                   "claude_code/bash-tasks-search.yaml"], BACKGROUND),
    ("shell", ["bash", "bash_pipe", "terminal"],
     ["exec-command-*", "shell*", "ctrl-c-*", "codex/empty-poll-*", "codex/output-truncated*",
      "codex/unknown-session*", "gemini_cli/big-output*"], SHELL),
    ("search", ["grep", "glob"], ["grep-*", "search-*", "glob-*"], SEARCH),
    ("edit", ["create_file", "str_replace", "multi_edit", "undo_edit", "view_before_edit",
              "compat"],
     ["*edit*", "line-endings-*", "notebook*", "file-too-large-create*",
      "file-too-large-overwrite*"], EDIT),
    ("read", ["view"], ["read-*", "list-dir*", "file-too-large-view*"], READ),
]


def rules_text():
    """RULES in words, for the top of SCORES.md."""
    out = []
    for i, (group, dirs, names, caps) in enumerate(RULES, 1):
        parts = []
        if dirs:
            parts.append("under " + ", ".join(f"`spec/{d}/`" for d in dirs))
        if names:
            parts.append("a file named " + ", ".join(f"`{n}`" for n in names))
        if caps:
            parts.append("using " + ", ".join(f"`{c}`" for c in sorted(caps)))
        out.append(f"{i}. **{group}**: " + "; or ".join(parts) + ".")
    return out


def group_of(path, caps):
    """The group of a case (its path as boris-spec reports it, the union of the
    capabilities any server recorded for it), or None when no rule matches."""
    parts = path.lstrip("./").split("/")
    if parts[0] == "spec":
        parts = parts[1:]
    directory, name = (parts[0] if len(parts) > 1 else ""), parts[-1]
    named = lambda n: fnmatch.fnmatch("/".join(parts) if "/" in n else name, n)
    for group, dirs, names, _ in RULES:
        if directory in dirs or any(map(named, names)):
            return group
    for group, _, _, wanted in RULES:
        if caps & wanted:
            return group
    return None


def baseline(name, compat_dir):
    """A server's baseline: case path (or finding key) -> its hand-checked line."""
    lines = {}
    try:
        text = open(os.path.join(compat_dir, f"{name}.baseline.yml")).read()
    except OSError:
        return lines
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, value = line.partition(": ")
        value = value.strip()
        if sep and value.startswith('"'):
            # The baselines are written double-quoted (render_baseline writes JSON strings).
            try:
                lines[key.strip()] = json.loads(value)
            except ValueError:
                lines[key.strip()] = value.strip('"')
        elif sep:
            lines[key.strip()] = value
    return lines


def outcome(status):
    """pass, fail, n/s (not supported) or skip (a need the machine lacks)."""
    if status == "pass":
        return "pass"
    if status.startswith("fail"):
        return "fail"
    return "skip" if status == "skipped" else "n/s"


def group_cases(results):
    """{path: group} over every case of every result; exits naming any case no rule maps."""
    caps = {}
    for r in results.values():
        for c in r["cases"]:
            caps.setdefault(c["path"], set()).update(c["capabilities"] or [])
    groups = {p: group_of(p, cs) for p, cs in caps.items()}
    lost = sorted(p for p, g in groups.items() if g is None)
    if lost:
        sys.exit("matrix.py --scores: no rule of tests/compat/scores.py groups "
                 + ", ".join(lost))
    return groups


def tally(result, groups):
    """{group: {pass, fail, n/s, skip: count, failures: [path]}} for one server."""
    out = {g: {"pass": 0, "fail": 0, "n/s": 0, "skip": 0, "failures": []} for g in GROUPS}
    for c in result["cases"]:
        t = out[groups[c["path"]]]
        o = outcome(c["status"])
        t[o] += 1
        if o == "fail":
            t["failures"].append(c["path"])
    return out


def rate(t):
    ran = t["pass"] + t["fail"]
    # Rounded down: 199 of 200 is 99%, never 100%.
    return f"{t['pass']}/{ran} ({100 * t['pass'] // ran}%)" if ran else "–"


def cell(t):
    extra = [f"{t['n/s']} n/s"] if t["n/s"] else []
    if t["skip"]:
        extra.append(f"{t['skip']} skipped")
    return ", ".join([rate(t)] + extra) if t["pass"] + t["fail"] else ", ".join(extra) or "–"


def overall(tallies):
    return {k: sum(t[k] for t in tallies.values()) for k in ("pass", "fail", "n/s", "skip")}


def render(results, names, title, server_of, compat_dir):
    groups = group_cases(results)
    tallies = {n: tally(results[n], groups) for n in names}
    per_group = {g: sum(1 for x in groups.values() if x == g) for g in GROUPS}
    out = ["# Scores", "",
           "<!-- Generated by tests/compat/run.sh (tests/compat/matrix.py --scores) from a run",
           "     of the suite and the baselines in tests/compat/<adapter>.baseline.yml: edit",
           "     those, not this file. -->", "",
           "The spec suite against each server of the [compatibility matrix]"
           "(README.md#compatibility-matrix), by capability group. A cell is the pass rate "
           "(passed / run), then how many of the group's cases the server does not support "
           "(n/s: its adapter says why; never counted as run) and how many were skipped for a "
           "need the machine lacked; a group's (cases) counts its cases in any server's result. Every failure is listed below its server with the line "
           "of its baseline that explains it, each checked by hand to be the server's own "
           "behaviour (\"(adapter)\" marks what the suite cannot reach through it). Run on "
           "stdio, protocol 2025-11-25; per case, COMPATIBILITY.md says the same.", "",
           "## How cases are grouped", "",
           "Each case counts in exactly one group (a case no rule places fails the run): the "
           "first rule whose directories or file names match it, else the first rule whose "
           "capabilities it uses (those boris-spec records for the case in any server's run: "
           "a server that does not support a case records none).", "",
           *rules_text(), "",
           "## By group", "",
           "| group (cases) | " + " | ".join(title(n) for n in names) + " |",
           "|---|" + "---|" * len(names)]
    for g in GROUPS:
        out.append(f"| {g} ({per_group[g]}) | " + " | ".join(cell(tallies[n][g]) for n in names) + " |")
    out.append(f"| **all** ({len(groups)}) | "
               + " | ".join(f"**{cell(overall(tallies[n]))}**" for n in names) + " |")
    suite_size = max(len(results[n]["cases"]) for n in names)
    for n in names:
        out += server_section(n, results[n], tallies[n], suite_size, title, server_of,
                              compat_dir)
    return "\n".join(out) + "\n"


def server_section(name, result, tallies, suite_size, title, server_of, compat_dir):
    lines = baseline(name, compat_dir)
    server = server_of(name)
    total = overall(tallies)
    out = ["", f"## {title(name)}", ""]
    head = f"{rate(total)} of the cases it runs pass; {total['n/s']} not supported"
    if total["skip"]:
        head += f", {total['skip']} skipped"
    if len(result["cases"]) < suite_size:
        # A slow server's stored result (run.sh --check does not rerun it) predates cases.
        head += (f"; its result holds {len(result['cases'])} of the {suite_size} cases "
                 f"(a stored run, tests/compat/{name}.result.json)")
    out.append((f"`{server}`: " if server and not name.startswith("boris") else "") + head + ".")
    failing = [g for g in GROUPS if tallies[g]["failures"]]
    findings = result.get("findings", [])
    if not failing and not findings:
        return out
    out.append("")
    for g in GROUPS:
        if g == "teardown":
            for f in findings:
                why = lines.get(f["key"], f["why"])
                out.append(f"- teardown, a finding of the run (`{f['key']}`, not a case): {why}")
        for path in sorted(tallies[g]["failures"]):
            why = lines.get(path) or "(not in the baseline) " + next(
                c["why"] for c in result["cases"] if c["path"] == path)
            out.append(f"- {g}: `{path}`: {why}")
    return out


def summary(results, names, title):
    """The README's short table: per server, its overall pass rate and its strongest and
    weakest groups (among those where it ran at least 3 cases)."""
    groups = group_cases(results)
    out = ["| server | passes, of the cases it runs | strongest group | weakest group |",
           "|---|---|---|---|"]
    for n in names:
        t = tally(results[n], groups)
        ran = [(g, t[g]) for g in GROUPS if t[g]["pass"] + t[g]["fail"] >= 3]

        def share(gt):
            g, x = gt
            return x["pass"] / (x["pass"] + x["fail"])

        best = max(ran, key=share) if ran else None
        worst = min(ran, key=share) if ran else None
        fmt = (lambda gt: f"{gt[0]} {rate(gt[1]).split(' ', 1)[1].strip('()')}") if ran else None
        same = best is not None and share(best) == share(worst)
        out.append(f"| {title(n)} | {rate(overall(t))} | "
                   + (f"{fmt(best)} |" if ran and not same else "every group it runs |" if ran else "– |")
                   + (f" {fmt(worst)} |" if ran and not same else " – |"))
    return out

