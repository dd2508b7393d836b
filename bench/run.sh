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

# No telemetry, update checks or funding/audit chatter from any tool involved.
export DO_NOT_TRACK=1
export NO_UPDATE_NOTIFIER=1
export npm_config_update_notifier=false
export npm_config_fund=false
export npm_config_audit=false
export NEXT_TELEMETRY_DISABLED=1

PYTHON="${PYTHON:-python3}"
command -v node >/dev/null || { echo "run.sh: node not found (Node 20+ needed)" >&2; exit 1; }
command -v npm >/dev/null || { echo "run.sh: npm not found" >&2; exit 1; }
command -v cargo >/dev/null || { echo "run.sh: cargo not found" >&2; exit 1; }

# 1. Reference server, pinned by bench/reference/package.json + package-lock.json.
#    Reinstalled only when the lockfile changes.
mkdir -p "$REF_CACHE"
if ! cmp -s "$HERE/reference/package-lock.json" "$REF_CACHE/package-lock.json" || [ ! -f "$REF_PKG/package.json" ]; then
    echo "run.sh: installing the reference server into $REF_CACHE" >&2
    rm -rf "$REF_CACHE/node_modules"
    cp "$HERE/reference/package.json" "$HERE/reference/package-lock.json" "$REF_CACHE/"
    (cd "$REF_CACHE" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
fi
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
