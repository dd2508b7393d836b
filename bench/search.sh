#!/usr/bin/env bash
# Benchmarks Boris's grep and glob against the ripgrep CLI on the Linux kernel source
# (Debian's linux-source package, ~80k files) and a medium subtree of it (drivers/net).
#
#   bench/search.sh                       # install, unpack, build, run (5 runs each)
#   bench/search.sh --runs 9 --out bench/.cache/search.md
#
# 1. Installs ripgrep and linux-source with apt-get (needs root or sudo) unless `rg` and
#    the tarball are already there.
# 2. Unpacks the tarball once into $BORIS_BENCH_DIR (default /tmp/boris-bench-corpus),
#    outside the repository. Debian appends "/*" and "!/debian/" to the kernel's top
#    .gitignore (its packaging ignores everything at the top level); with .gitignore
#    honoured outside git repositories (DESIGN §8, rg --no-require-git) that would hide
#    the whole tree, so those lines are removed: the tree is then the upstream kernel's.
# 3. Builds Boris in release mode and runs bench/search.py, which prints the markdown
#    table (operation | boris | rg | ratio | match counts) and the server's peak RSS.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$HERE")"
CORPUS_DIR="${BORIS_BENCH_DIR:-/tmp/boris-bench-corpus}"
PYTHON="${PYTHON:-python3}"

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

tarball() { ls /usr/src/linux-source-*.tar.xz 2>/dev/null | sort -V | tail -n 1; }

if ! command -v rg >/dev/null || [ -z "$(tarball)" ]; then
    echo "search.sh: apt-get install ripgrep linux-source" >&2
    $SUDO apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends ripgrep linux-source >&2
fi
TARBALL="$(tarball)"
[ -n "$TARBALL" ] || { echo "search.sh: no /usr/src/linux-source-*.tar.xz after install" >&2; exit 1; }

NAME="$(basename "$TARBALL" .tar.xz)"
CORPUS="$CORPUS_DIR/$NAME"
if [ ! -f "$CORPUS_DIR/.$NAME.unpacked" ]; then
    echo "search.sh: unpacking $TARBALL into $CORPUS_DIR" >&2
    rm -rf "$CORPUS"
    mkdir -p "$CORPUS_DIR"
    tar -xJf "$TARBALL" -C "$CORPUS_DIR"
    "$PYTHON" - "$CORPUS/.gitignore" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
cut = s.find("#\n# Debian packaging")
if cut >= 0:
    open(p, "w").write(s[:cut])
PY
    touch "$CORPUS_DIR/.$NAME.unpacked"
fi

echo "search.sh: cargo build --release --bin boris" >&2
(cd "$ROOT" && cargo build --release --bin boris >&2)

# bench/peers.sh only wants the corpus, rg and the build.
if [ -n "${SEARCH_SETUP_ONLY:-}" ]; then echo "$CORPUS"; exit 0; fi

exec "$PYTHON" "$HERE/search.py" --boris "$ROOT/target/release/boris" --corpus "$CORPUS" "$@"
