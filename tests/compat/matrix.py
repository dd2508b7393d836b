#!/usr/bin/env python3
"""Builds the compatibility matrix from the JSON results of tests/compat/run.sh: the
table for README.md, and COMPATIBILITY.md with every failure and finding explained.

  matrix.py OUT_DIR NAME...                  print the table (markdown, for the README)
  matrix.py --details OUT_DIR NAME...        print COMPATIBILITY.md
  matrix.py --scores OUT_DIR NAME...         print SCORES.md (per capability group; the
                                             grouping rules are in scores.py)
  matrix.py --embed README TABLE [--check]   put the table between the README's markers,
                                             or only check that it is there unchanged
"""
import json, os, re, sys, textwrap

import scores  # the SCORES.md groups, and the summary under the matrix

BEGIN, END = "<!-- compat-matrix:begin -->", "<!-- compat-matrix:end -->"
TITLES = {
    "boris": "boris",
    "boris-anthropic-compat": "boris `--anthropic-compat`",
    "boris-pipe": "boris `--bash-profile pipe`",
}
OTHER = "(other: protocol, the tool contracts, Boris's own tools)"
# The escape suite (issue 18 §4): every case under spec/sandbox/ also counts here.
CONFINED = "shell confined to its scope (spec/sandbox/)"
# The outcome-honesty pack (issue 29 §5): every case under spec/outcome/ also counts here.
HONEST = "run outcome honesty (spec/outcome/)"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def title(n):
    return TITLES.get(n, n)


def cell(c):
    p, f, u = c
    if p + f + u == 0:
        return "–"
    parts = []
    if p: parts.append(f"{p} pass")
    if f: parts.append(f"**{f} fail**")
    if u: parts.append(f"{u} n/s")
    return ", ".join(parts)


def load(out_dir, names):
    return {n: json.load(open(os.path.join(out_dir, f"{n}.json"))) for n in names}


def column(status):
    """0 pass, 1 fail, 2 not supported, None skipped."""
    if status == "skipped":
        return None
    return 0 if status == "pass" else 1 if status.startswith("fail") else 2


def table(results, names):
    rows = {}
    for n, r in results.items():
        for c in r["cases"]:
            col = column(c["status"])
            if col is None:
                continue
            for cap in (c["capabilities"] or [OTHER]):
                rows.setdefault(cap, {}).setdefault(n, [0, 0, 0])[col] += 1
            if c["path"].lstrip("./").startswith(("sandbox/", "spec/sandbox/")):
                rows.setdefault(CONFINED, {}).setdefault(n, [0, 0, 0])[col] += 1
            if c["path"].lstrip("./").startswith(("outcome/", "spec/outcome/")):
                rows.setdefault(HONEST, {}).setdefault(n, [0, 0, 0])[col] += 1
    # The capabilities in the order boris-spec documents them (its JSON says).
    caps = next(iter(results.values()))["capabilities"]
    out = ["| capability | " + " | ".join(title(n) for n in names) + " |",
           "|---|" + "---|" * len(names)]
    for cap in caps + [CONFINED, HONEST, OTHER]:
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
        each = ", ".join(f"{title(n)} {len(ran.get(n, set()))}" for n in peers)
        out.append("")
        out.append(f"Portable: {len(portable)} of the {total} cases ({100 * len(portable) / total:.0f}%) "
                   f"run through an adapter other than Boris's default one; {len(union)} "
                   f"({100 * len(union) / total:.0f}%) run against at least one peer ({each}). "
                   "The rest are about Boris's own flags, profiles and tools.")
    explained = [n for n in names if failures(results[n]) or results[n].get("findings")]
    if explained:
        out.append("")
        out.append("Why each server fails what it fails, case by case (each checked by hand to be "
                   "the server's own behaviour), and how it ends a session: "
                   "[COMPATIBILITY.md](COMPATIBILITY.md).")
    out.append("")
    out.append("By capability group (" + ", ".join(scores.GROUPS) + "), with what each server "
               "does not support and every failure explained: [SCORES.md](SCORES.md). In short "
               "(strongest and weakest among the groups where a server runs at least 3 cases):")
    out.append("")
    out += scores.summary(results, names, title)
    out.append("")
    out.append("Hostile input generated from each tool's schema (`boris-spec hostile`, seed 29, "
               "400 calls), every server boxed in bubblewrap, each failure checked by hand: "
               "[HOSTILE.md](HOSTILE.md).")
    return "\n".join(out) + "\n"


def failures(result):
    return sorted((c["path"], c["why"]) for c in result["cases"] if column(c["status"]) == 1)


def counts(result):
    n = [0, 0, 0]
    for c in result["cases"]:
        col = column(c["status"])
        if col is not None:
            n[col] += 1
    return n


def server_of(name):
    """The package an adapter was written against (its `server:` line)."""
    path = os.path.join(ROOT, "spec", "adapters", f"{name}.yaml")
    try:
        text = open(path).read()
    except OSError:
        return None
    m = re.search(r'^server:\s*"?(.*?)"?\s*$', text, re.M)
    return m.group(1) if m else None


def details(results, names):
    intro = ("Why each server of the [compatibility matrix](README.md#compatibility-matrix) "
             "fails what it fails. Every line was checked by hand to be the server's own "
             "behaviour, not an adapter's mistake, and is its baseline's reason for that case. "
             "A fault of how a server ends a session (it keeps running after stdin closes, or "
             "leaves processes behind) is one finding of the run, listed first, not a failure "
             "of every case it ended: those cases are judged on their subject. Boris's own "
             "adapters fail a case on it instead (`teardown: strict`).")
    out = ["# Compatibility", "",
           "<!-- Generated by tests/compat/run.sh from a run of the suite and the baselines in",
           "     tests/compat/<adapter>.baseline.yml: edit those, not this file. -->", "",
           *textwrap.wrap(intro, 90, break_on_hyphens=False)]
    for n in names:
        r = results[n]
        p, f, u = counts(r)
        fails = failures(r)
        found = r.get("findings", [])
        server = server_of(n)
        out += ["", f"## {title(n)}", ""]
        line = f"{p} pass, {f} fail, {u} not supported"
        out.append(f"`{server}`: {line}." if server and not n.startswith("boris") else f"{line}.")
        if not fails and not found:
            continue
        out.append("")
        for x in found:
            n_cases = len(x["cases"])
            seen = f"{n_cases} case" + ("" if n_cases == 1 else "s")
            out.append(f"- how it ends (`{x['key']}`, seen in {seen}): {x['why']}")
        for path, why in fails:
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
    elif sys.argv[1] == "--scores":
        sys.stdout.write(scores.render(load(sys.argv[2], sys.argv[3:]), sys.argv[3:], title,
                                       server_of, os.path.dirname(os.path.abspath(__file__))))
    elif sys.argv[1] == "--details":
        sys.stdout.write(details(load(sys.argv[2], sys.argv[3:]), sys.argv[3:]))
    else:
        sys.stdout.write(table(load(sys.argv[1], sys.argv[2:]), sys.argv[2:]))
