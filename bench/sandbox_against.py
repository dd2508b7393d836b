#!/usr/bin/env python3
"""A confined command on this build against an earlier one (issue 25 §4: "a confined
`bash true` no slower than today"), side by side in one run.

Two Boris servers, both `--sandbox on --deny-dir .env`, one per binary, each in its own
work directory holding the same tree (N directories, some of them git repositories with
worktrees and submodules, so the jail has git metadata to protect), each call
alternating between them:

  1. `true`: median and p90 of N calls;
  2. a command that makes and removes 5000 files in 50 directories (what the jail now
     handles as it happens, where it used to look before the next command).

Ratios are this build / the other (1.00 = no cost). Usage:
  python3 bench/sandbox_against.py --boris target/release/boris --other OLD/boris
      [--n 300] [--tree 2000] [--reps 15]
Stdlib only; reuses bench/sandbox.py and bench/file_tools.py.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sandbox as sb  # noqa: E402

REPO = Path(__file__).resolve().parent.parent

CHURN = "mkdir -p churn && cd churn && for d in $(seq 50); do mkdir $d && (cd $d && touch $(seq 100)); done && cd .. && rm -rf churn"


def make_tree(root: Path, dirs: int) -> None:
    sb.make_tree(root, dirs)
    for i in range(0, 20):
        repo = root / f"d{i}" / "repo"
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        subprocess.run(["git", "-C", str(repo), "-c", "user.name=b", "-c", "user.email=b@e",
                        "commit", "-q", "--allow-empty", "-m", "one"], check=True)
        subprocess.run(["git", "-C", str(repo), "worktree", "add", "-q", str(root / f"d{i}" / "wt")],
                       check=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--boris", default=str(REPO / "target/release/boris"))
    ap.add_argument("--other", required=True, help="the earlier build to compare with")
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--tree", type=int, default=2000)
    ap.add_argument("--reps", type=int, default=15, help="runs of the file-making command")
    args = ap.parse_args()
    this, other = Path(args.boris).resolve(), Path(args.other).resolve()
    rows: list[tuple[str, str, str, str]] = []
    with tempfile.TemporaryDirectory(prefix="boris-sandbox-against-") as tmp:
        tmp = Path(tmp)
        log = tmp / "stderr.log"
        for name in ("this", "other"):
            make_tree(tmp / name, args.tree)
        a_srv = sb.start(this, tmp / "this", "on", None, log)
        b_srv = sb.start(other, tmp / "other", "on", None, log)
        try:
            sb.bash(a_srv, "true")
            sb.bash(b_srv, "true")
            a, b = [], []
            for _ in range(args.n):
                b.append(sb.bash(b_srv, "true")[0] / 1e6)
                a.append(sb.bash(a_srv, "true")[0] / 1e6)
            a.sort()
            b.sort()
            ma, mb = statistics.median(a), statistics.median(b)
            rows.append((f"`true`, median of {args.n}", f"{mb:.3f} ms", f"{ma:.3f} ms", f"{ma / mb:.2f}× ({ma - mb:+.3f} ms)"))
            rows.append((f"`true`, p90 of {args.n}", f"{sb.pct(b, .9):.3f} ms", f"{sb.pct(a, .9):.3f} ms",
                         f"{sb.pct(a, .9) / sb.pct(b, .9):.2f}×"))
            ca, cb = [], []
            for _ in range(args.reps):
                cb.append(sb.bash(b_srv, CHURN)[0] / 1e6)
                ca.append(sb.bash(a_srv, CHURN)[0] / 1e6)
                # The next `true` pays for what the other build left to the next command.
                cb[-1] += sb.bash(b_srv, "true")[0] / 1e6
                ca[-1] += sb.bash(a_srv, "true")[0] / 1e6
            ma, mb = statistics.median(ca), statistics.median(cb)
            rows.append((f"make and remove 5000 files, then `true`, median of {args.reps}", f"{mb:.1f} ms", f"{ma:.1f} ms",
                         f"{ma / mb:.2f}×"))
        finally:
            a_srv.close()
            b_srv.close()
    print(f"Tree: {args.tree} directories, 20 repositories with a linked worktree each.")
    print("| what | earlier build | this build | this / earlier |")
    print("|---|---:|---:|---:|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
