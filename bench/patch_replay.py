"""The real-edit replay through apply_patch (issue 19 §2, §4): `edit_replay.py
--apply-patch`. Each commit of a git history becomes one patch covering all its files
(modified, added, deleted, renamed), in both formats apply_patch reads:

- unified: `git diff -M PARENT COMMIT` itself, as git prints it (`diff --git` headers,
  `/dev/null`, renames, quoted names, `\\ No newline at end of file`, the `\\r` of CRLF
  lines);
- envelope: the same hunks in Codex's `*** Begin Patch` form (a hunk whose context also
  occurs earlier gets more context lines, as a model adds them, until its first match
  after the hunk before is its own place; `*** Move to:` for renames).

Each patch is sent bare or wrapped, in turn (a Markdown code fence with prose around it,
prose alone, the heredoc of Codex's shell form `apply_patch <<'EOF'`), to a Boris that has
viewed the commit's parent files. Every file must then equal the commit byte for byte
(and deleted or renamed-away files be gone). Reported: byte-exact patches per format and
wrapping, ms per apply_patch call, characters returned per hunk.

A commit is skipped when one of its files is binary, not UTF-8, or over --max-bytes.
"""

from __future__ import annotations

import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import edit_replay as er
import file_tools as ft

WRAPPINGS = ["bare", "fence", "prose", "heredoc"]
HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass
class FileChange:
    status: str  # A, M, D, R
    old_path: str | None
    new_path: str | None
    old: bytes | None
    new: bytes | None


@dataclass
class Commit:
    rev: str
    files: list[FileChange]
    diff: str  # git diff -M, paths under the prefix


def commits(repo: Path, rev: str, count: int, max_bytes: int, prefix_of) -> tuple[list[Commit], Counter]:
    """The commits replayed, newest first, and why others were skipped."""
    skipped: Counter = Counter()
    revs = er.git(repo, "rev-list", "--no-merges", f"--max-count={count}", rev).decode().split()
    out = []
    for n, r in enumerate(revs):
        try:
            status = er.git(repo, "diff", "--name-status", "-M", "-z", f"{r}^", r).decode()
        except subprocess.CalledProcessError:
            skipped["root commit"] += 1
            continue
        fields = status.split("\0")
        files: list[FileChange] = []
        i, bad = 0, ""
        while i < len(fields) - 1:
            st = fields[i]
            if st.startswith("R"):
                old_p, new_p = fields[i + 1], fields[i + 2]
                i += 3
            elif st.startswith("C"):
                bad = "a copy"
                break
            else:
                old_p = new_p = fields[i + 1]
                i += 2
            kind = st[0]
            if kind not in "AMDR":
                bad = f"a change of kind {kind}"
                break
            old_b = er.git(repo, "show", f"{r}^:{old_p}") if kind in "MDR" else None
            new_b = er.git(repo, "show", f"{r}:{new_p}") if kind in "AMR" else None
            for b in (old_b, new_b):
                if b is None:
                    continue
                if len(b) > max_bytes:
                    bad = "a file over --max-bytes"
                elif b"\0" in b:
                    bad = "a binary file"
                else:
                    try:
                        b.decode()
                    except UnicodeDecodeError:
                        bad = "a file that is not UTF-8"
            files.append(FileChange(kind, old_p if kind != "A" else None, new_p if kind != "D" else None, old_b, new_b))
        if not bad and all(f.old == f.new for f in files):
            bad = "mode changes only"
        if bad or not files:
            skipped[bad or "no file changes"] += 1
            continue
        prefix = prefix_of(len(out))
        diff = er.git(repo, "-c", "core.quotepath=true", "diff", "-M", "--no-color", "--no-ext-diff",
                      f"--src-prefix=a/{prefix}", f"--dst-prefix=b/{prefix}", f"{r}^", r)
        if b"GIT binary patch" in diff or b"\nBinary files " in diff:
            skipped["a binary file"] += 1
            continue
        try:
            out.append(Commit(r[:12], files, prefix_renames(diff.decode(), prefix)))
        except UnicodeDecodeError:
            skipped["a diff that is not UTF-8"] += 1
    return out, skipped


def prefix_renames(diff: str, prefix: str) -> str:
    """git's `rename from`/`rename to` name repository paths whatever --src-prefix says:
    the replay's directory goes in front of them too, as git would name them there."""
    def fix(m: re.Match) -> str:
        head, path = m.group(1), m.group(2)
        if path.startswith('"'):
            return f'{head}"{prefix}{path[1:]}'
        return f"{head}{prefix}{path}"
    return re.sub(r"(?m)^(rename (?:from|to) )(.*)$", fix, diff)


def text_of(line: str) -> str:
    """A line as apply_patch compares it: without its line break and one CR before it."""
    line = line.removesuffix("\n")
    return line.removesuffix("\r")


def first_match(lines: list[str], pattern: list[str], start: int) -> int | None:
    k = len(pattern)
    for i in range(start, len(lines) - k + 1):
        if lines[i:i + k] == pattern:
            return i
    return None


def envelope_hunks(body: list[str], old: str) -> list[str]:
    """A file's git hunks as envelope hunks: each `@@` and its lines, with context grown
    above (or below) until the first exact match of its old lines after the previous
    hunk is its own place, as apply_patch looks for it."""
    raw = old.splitlines(keepends=True)
    texts = [text_of(x) for x in raw]
    hunks: list[tuple[int, list[str]]] = []  # (old start, lines)
    for line in body:
        m = HUNK.match(line)
        if m:
            start = int(m.group(1)) - (1 if (m.group(2) or "1") != "0" else 0)
            hunks.append((start, []))
        elif hunks:
            hunks[-1][1].append(line)
    out = []
    cursor = 0
    for h, (lo, lines) in enumerate(hunks):
        lines = list(lines)
        old_len = sum(1 for x in lines if x[:1] in (" ", "-"))
        hi = lo + old_len
        next_lo = hunks[h + 1][0] if h + 1 < len(hunks) else len(raw)
        at_end = any(x.startswith("\\") for x in lines)
        while True:
            pattern = [text_of(x[1:]) for x in lines if x[:1] in (" ", "-")]
            if not pattern:
                placed = lo == len(raw)  # a hunk of + lines alone goes at the end
            else:
                placed = first_match(texts, pattern, cursor) == lo
            if placed:
                break
            if lo > cursor:
                lo -= 1
                lines.insert(0, " " + raw[lo].removesuffix("\n"))
            elif hi < next_lo and not at_end:
                lines.append(" " + raw[hi].removesuffix("\n"))
                hi += 1
            else:
                raise ValueError("a hunk that cannot be placed")
        out.append("@@\n" + "".join(x + "\n" for x in lines))
        cursor = hi
    return out


def envelope(c: Commit, prefix: str) -> str:
    """The commit's changes in Codex's envelope, from git's own hunks."""
    sections = split_diff(c.diff)
    out = ["*** Begin Patch\n"]
    by_path = {}
    for f in c.files:
        by_path[(f.old_path or f.new_path)] = f
    for f in c.files:
        key = f.new_path if f.status != "D" else f.old_path
        body = sections.get(key, [])
        if f.status == "A":
            out.append(f"*** Add File: {prefix}{f.new_path}\n")
            out.extend(x + "\n" for x in body if x[:1] in ("+", "\\"))
        elif f.status == "D":
            out.append(f"*** Delete File: {prefix}{f.old_path}\n")
        elif f.status == "M" and f.old == f.new:
            continue  # a mode change: nothing for a patch to say
        else:
            out.append(f"*** Update File: {prefix}{f.old_path}\n")
            if f.status == "R":
                out.append(f"*** Move to: {prefix}{f.new_path}\n")
            out.extend(envelope_hunks(body, f.old.decode()))
    out.append("*** End Patch\n")
    return "".join(out)


def split_diff(diff: str) -> dict[str, list[str]]:
    """Each file's hunk lines (from its first `@@`), by its path in the commit (the new
    path; the old one for a deletion)."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    lines = diff.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    paths: list[str] = []
    for line in lines:
        if line.startswith("diff --git "):
            current = []
            paths.append("")
            sections_key = len(paths) - 1
            sections[str(sections_key)] = current
        elif current is not None and not current and line.startswith(("--- ", "+++ ", "rename to ", "rename from ")):
            # remember the path on the side that names the file
            if line.startswith("+++ ") and line != "+++ /dev/null":
                paths[-1] = unprefix(line[4:])
            elif line.startswith("--- ") and line != "--- /dev/null" and not paths[-1]:
                paths[-1] = unprefix(line[4:])
            elif line.startswith("rename to "):
                paths[-1] = unprefix(line[len("rename to "):])
        elif current is not None and (current or line.startswith("@@")):
            current.append(line)
    return {p: sections[str(i)] for i, p in enumerate(paths) if p}


def unprefix(p: str) -> str:
    """A `---`/`+++` path of the replay's diff back to the path in the commit."""
    p = p.split("\t", 1)[0]
    if p.startswith('"'):
        p = bytes(p[1:-1], "utf-8").decode("unicode_escape").encode("latin-1").decode()
    p = p[2:] if p[:2] in ("a/", "b/") else p
    return p.split("/", 1)[1]  # the replay's prefix directory


def wrap(patch: str, how: str) -> str:
    if how == "fence":
        return f"Here is the patch:\n\n```diff\n{patch}```\n\nIt makes the change described above.\n"
    if how == "prose":
        return f"I changed the files as follows.\n\n{patch}\nThat should do it.\n"
    if how == "heredoc":
        return f"apply_patch <<'EOF'\n{patch}EOF\n"
    return patch


@dataclass
class Tally:
    exact: Counter = field(default_factory=Counter)
    total: Counter = field(default_factory=Counter)
    ns: list[int] = field(default_factory=list)
    chars: list[float] = field(default_factory=list)
    hunks: int = 0
    failures: list[str] = field(default_factory=list)


def hunk_count(diff: str) -> int:
    return sum(1 for line in diff.split("\n") if HUNK.match(line))


def replay(server: er.Server, work: Path, c: Commit, n: int, prefix: str, fmt: str, how: str, tally: Tally) -> None:
    root = work / server.key / prefix.rstrip("/")
    for f in c.files:
        if f.old is not None:
            p = root / f.old_path
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(f.old)
    for f in c.files:
        if f.old is not None:
            server.call(server.read[0], server.read[1](f"{prefix}{f.old_path}"))
    text = c.diff if fmt == "unified" else envelope(c, prefix)
    key = (fmt, how)
    tally.total[key] += 1
    ns, err, out = server.call("apply_patch", {"input": wrap(text, how)})
    if err:
        tally.failures.append(f"{c.rev} ({fmt}, {how}): {out[:300]}")
        return
    hunks = max(hunk_count(c.diff), 1)
    tally.ns.append(ns)
    tally.chars.append(len(out) / hunks)
    tally.hunks += hunks
    bad = []
    for f in c.files:
        if f.new is not None and (root / f.new_path).read_bytes() != f.new:
            bad.append(f"{f.new_path}: {er.how_differs((root / f.new_path).read_bytes(), f.new)}")
        if f.status in "DR" and not (f.status == "R" and f.old_path == f.new_path) and (root / f.old_path).exists():
            bad.append(f"{f.old_path} is still there")
    if bad:
        tally.failures.append(f"{c.rev} ({fmt}, {how}): " + "; ".join(bad[:3]))
    else:
        tally.exact[key] += 1


def main(args) -> int:
    repo = Path(args.repo)
    work = Path(tempfile.mkdtemp(prefix="boris-patch-replay-"))
    boris = str(Path(args.boris).resolve())
    server = er.Server("s0", "boris (default profile)", [boris, "--transport", "stdio"],
                       read=("view", lambda p: {"path": p}),
                       single=("apply_patch", lambda p, o, n: {}), multi=None, absolute=False, ours=True)
    er.start(server, work)
    cs, skipped = commits(repo, args.rev, args.commits, args.max_bytes, lambda k: f"c{k:04d}/")
    tally = Tally()
    for k, c in enumerate(cs):
        for j, fmt in enumerate(("envelope", "unified")):
            how = WRAPPINGS[(k + j) % len(WRAPPINGS)]
            # Each format gets its own copy of the parent files.
            prefix = f"c{k:04d}/" if fmt == "unified" else f"e{k:04d}/"
            if fmt == "envelope":
                try:
                    envelope(c, prefix)
                except ValueError as e:
                    tally.failures.append(f"{c.rev} (envelope): not made: {e}")
                    continue
            replay(server, work, c, k, prefix, fmt, how, tally)
    server.client.close()

    head = er.git(repo, "rev-parse", "--short=12", args.rev).decode().strip()
    patches = sum(tally.total.values())
    exact = sum(tally.exact.values())
    skip = ", ".join(f"{v} with {k}" for k, v in skipped.most_common()) or "none"
    kinds = Counter(f.status for c in cs for f in c.files)
    crlf = sum(1 for c in cs for f in c.files if b"\r\n" in (f.old or b"") + (f.new or b""))
    no_eol = sum(1 for c in cs for f in c.files
                 if any(b and not b.endswith(b"\n") for b in (f.old, f.new)))
    names = {"M": "modified", "A": "added", "D": "deleted", "R": "renamed"}
    print(f"Commits: the last {args.commits} (at most) up to {head}: {len(cs)} replayed as patches "
          f"(skipped: {skip}); {patches} patches, {tally.hunks} hunks. Per format, "
          f"{sum(kinds.values())} file changes ("
          + ", ".join(f"{v} {names[k]}" for k, v in kinds.most_common())
          + f"); {crlf} in files with CRLF line endings, {no_eol} where a version has no final line break.\n")
    print("| format | " + " | ".join(WRAPPINGS) + " | all |")
    print("|---|" + "---:|" * (len(WRAPPINGS) + 1))
    for fmt in ("envelope", "unified"):
        cells = [f"{tally.exact[(fmt, w)]}/{tally.total[(fmt, w)]}" for w in WRAPPINGS]
        e = sum(tally.exact[(fmt, w)] for w in WRAPPINGS)
        t = sum(tally.total[(fmt, w)] for w in WRAPPINGS)
        print(f"| {fmt} | " + " | ".join(cells) + f" | {e}/{t} |")
    print()
    print("| | apply_patch (one call per commit, all its files) |")
    print("|---|---:|")
    print(f"| byte-exact patches | {exact}/{patches} |")
    if tally.ns:
        print(f"| ms per call (median) | {statistics.median(tally.ns) / 1e6:.3f} |")
        print(f"| characters returned per hunk | {er.stats(tally.chars)} |")
    for f in tally.failures[:20]:
        print(f"FAIL {f}")
    if tally.failures:
        print(f"patch_replay: files and server log kept in {work}", file=sys.stderr)
        return 1
    shutil.rmtree(work, ignore_errors=True)
    return 0
