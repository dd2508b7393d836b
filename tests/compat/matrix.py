#!/usr/bin/env python3
"""Builds the README's compatibility matrix from the JSON results of tests/compat/run.sh.

  matrix.py OUT_DIR BASELINE_DIR NAME...      print the matrix (markdown)
  matrix.py --embed README MATRIX [--check]   put it between the README's markers, or
                                              only check that it is there unchanged
"""
import json, os, sys

BEGIN, END = "<!-- compat-matrix:begin -->", "<!-- compat-matrix:end -->"
TITLES = {
    "boris": "boris",
    "boris-anthropic-compat": "boris `--anthropic-compat`",
    "boris-pipe": "boris `--bash-profile pipe`",
}
CAPS = ["read_file", "read_range", "read_from", "read_tail", "list_dir", "write_file",
        "replace", "replace_all", "multi_edit", "run", "run_background", "task_output",
        "task_stop", "search", "search_files", "search_count", "find_files",
        "diagnostics", "definition", "references", "rename"]
OTHER = "(other: protocol, Claude Code's contract, Boris's own tools)"
# The escape suite (issue 18 §4): every case under spec/sandbox/ also counts here.
CONFINED = "shell confined to its scope (spec/sandbox/)"

def cell(c):
    p, f, u = c
    if p + f + u == 0:
        return "–"
    parts = []
    if p: parts.append(f"{p} pass")
    if f: parts.append(f"**{f} fail**")
    if u: parts.append(f"{u} n/s")
    return ", ".join(parts)

def build(out_dir, names):
    results = {n: json.load(open(os.path.join(out_dir, f"{n}.json"))) for n in names}
    rows = {}
    fails = {n: [] for n in names}
    unsupported = {n: {} for n in names}
    for n, r in results.items():
        for c in r["cases"]:
            st = c["status"]
            if st == "skipped":
                continue
            col = 0 if st == "pass" else 1 if st.startswith("fail") else 2
            for cap in (c["capabilities"] or [OTHER]):
                rows.setdefault(cap, {}).setdefault(n, [0, 0, 0])[col] += 1
            if c["path"].lstrip("./").startswith(("sandbox/", "spec/sandbox/")):
                rows.setdefault(CONFINED, {}).setdefault(n, [0, 0, 0])[col] += 1
            if col == 1:
                fails[n].append((c["path"], c["why"]))
            if col == 2:
                unsupported[n][c["why"]] = unsupported[n].get(c["why"], 0) + 1
    head = "| capability | " + " | ".join(TITLES.get(n, n) for n in names) + " |"
    out = [head, "|---|" + "---|" * len(names)]
    for cap in CAPS + [CONFINED, OTHER]:
        if cap in rows:
            out.append(f"| {cap} | " + " | ".join(cell(rows[cap].get(n, [0, 0, 0])) for n in names) + " |")
    out.append("")
    out.append("Cases count once per capability they use; n/s = not supported by the server "
               "(its adapter says why), never counted as a failure.")
    # The portable share: cases some server other than Boris runs (passing or failing).
    ran = {}
    for n, r in results.items():
        for c in r["cases"]:
            if not n.startswith("boris") and c["status"] not in ("not supported", "skipped"):
                ran.setdefault(n, set()).add(c["path"])
    total = max(len(r["cases"]) for r in results.values())
    peers = [n for n in names if not n.startswith("boris")]
    # Written portably: run through some adapter other than Boris's own default one
    # (a capability, or a public tool contract such as Anthropic's text editor).
    portable = set()
    for n, r in results.items():
        if n != "boris":
            portable |= {c["path"] for c in r["cases"] if c["status"] not in ("not supported", "skipped")}
    if peers:
        union = set().union(*(ran.get(n, set()) for n in peers))
        each = ", ".join(f"{TITLES.get(n, n)} {len(ran.get(n, set()))}" for n in peers)
        out.append("")
        out.append(f"Portable: {len(portable)} of the {total} cases ({100 * len(portable) / total:.0f}%) "
                   f"run through an adapter other than Boris's default one; {len(union)} "
                   f"({100 * len(union) / total:.0f}%) run against at least one peer ({each}). "
                   "The rest are about Boris's own flags, profiles and tools.")
    for n in names:
        if not fails[n]:
            continue
        out.append("")
        out.append(f"**{TITLES.get(n, n)}** fails, each checked by hand to be the server's own behaviour:")
        out.append("")
        for path, why in sorted(fails[n]):
            out.append(f"- `{path}`: {why}")
    return "\n".join(out) + "\n"

def embed(readme, matrix, check):
    text = open(readme).read()
    body = open(matrix).read()
    if BEGIN not in text or END not in text:
        sys.exit(f"{readme}: no {BEGIN} … {END} markers")
    start = text.index(BEGIN) + len(BEGIN)
    end = text.index(END)
    new = text[:start] + "\n" + body + text[end:]
    if check:
        sys.exit(0 if new == text else 1)
    open(readme, "w").write(new)

if __name__ == "__main__":
    if sys.argv[1] == "--embed":
        embed(sys.argv[2], sys.argv[3], "--check" in sys.argv)
    else:
        sys.stdout.write(build(sys.argv[1], sys.argv[3:]))
