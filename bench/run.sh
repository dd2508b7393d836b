#!/usr/bin/env bash
# Installs the pinned reference server (bench/reference/package*.json) into bench/.cache/,
# builds Boris in release mode, and runs bench/file_tools.py. Extra arguments go to the
# script (e.g. --calls 200 --spawns 10 --only boris --out results.md).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$HERE")"
CACHE="$HERE/.cache"
REF_CACHE="$CACHE/reference"
REF_PKG="$REF_CACHE/node_modules/@modelcontextprotocol/server-filesystem"

# Telemetry / update checks off, and install_pinned.
source "$HERE/lib.sh"

PYTHON="${PYTHON:-python3}"
command -v node >/dev/null || { echo "run.sh: node not found (Node 20+ needed)" >&2; exit 1; }
command -v npm >/dev/null || { echo "run.sh: npm not found" >&2; exit 1; }
command -v cargo >/dev/null || { echo "run.sh: cargo not found" >&2; exit 1; }

# 1. Reference server, pinned by bench/reference/package.json + package-lock.json.
#    Reinstalled only when the lockfile changes.
install_pinned "$HERE/reference" "$REF_CACHE" "$REF_PKG/package.json"
echo "run.sh: reference $(node -p "require('$REF_PKG/package.json').version") installed" >&2

# 2. Boris, release mode.
echo "run.sh: cargo build --release --bin boris" >&2
(cd "$ROOT" && cargo build --release --bin boris >&2)

# 3. The benchmark. --out defaults to bench/.cache/results.md; a later --out wins.
exec "$PYTHON" "$HERE/file_tools.py" \
    --boris "$ROOT/target/release/boris" \
    --ref-dir "$REF_PKG" \
    --out "$CACHE/results.md" \
    "$@"
