#!/usr/bin/env bash
# Boris against peer MCP servers (server-filesystem, desktop-commander, litecode) and the rg CLI, in
# one run; writes BENCHMARKS.md at the repository root. Extra arguments go to bench/peers.py
# (e.g. --reads 200 --search-runs 1 --out /tmp/b.md).
#
# 1. Installs the pinned servers into bench/.cache/ (npm ci --ignore-scripts):
#    server-filesystem from bench/reference/, desktop-commander from bench/peers/, and
#    litecode (a Rust crate) with `cargo install --locked` at a pinned version.
# 2. Installs ripgrep + linux-source and unpacks the kernel tree (bench/search.sh's logic,
#    with SEARCH_SETUP_ONLY=1 so it stops before its own benchmark).
# 3. Builds Boris and runs bench/peers.py, bounded by `timeout` (default 900 s).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$HERE")"
CACHE="$HERE/.cache"
PYTHON="${PYTHON:-python3}"
source "$HERE/lib.sh"

command -v node >/dev/null || { echo "peers.sh: node not found (Node 20+ needed)" >&2; exit 1; }
command -v npm >/dev/null || { echo "peers.sh: npm not found" >&2; exit 1; }

FS_PKG="$CACHE/reference/node_modules/@modelcontextprotocol/server-filesystem"
DC_PKG="$CACHE/peers/node_modules/@wonderwhy-er/desktop-commander"
install_pinned "$HERE/reference" "$CACHE/reference" "$FS_PKG/package.json"
install_pinned "$HERE/peers" "$CACHE/peers" "$DC_PKG/package.json"
LC_VERSION=0.1.2
LC_BIN="$CACHE/litecode/bin/litecode"
if [ ! -x "$LC_BIN" ] || [ "$("$LC_BIN" --version)" != "litecode $LC_VERSION" ]; then
    echo "peers.sh: cargo install litecode $LC_VERSION" >&2
    cargo install --locked --version "$LC_VERSION" --root "$CACHE/litecode" litecode >&2
fi

# Corpus + rg + cargo build: search.sh prints the corpus path and stops.
CORPUS="$(SEARCH_SETUP_ONLY=1 "$HERE/search.sh")"

exec env PEERS_CMD="bench/peers.sh $*" timeout "${PEERS_TIMEOUT:-900}" "$PYTHON" "$HERE/peers.py" \
    --boris "${CARGO_TARGET_DIR:-$ROOT/target}/release/boris" --fs-dir "$FS_PKG" --dc-dir "$DC_PKG" --lc-bin "$LC_BIN" \
    --corpus "$CORPUS" "$@"
