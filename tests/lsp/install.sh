#!/usr/bin/env bash
# Installs the language servers the `lsp` spec cases run against (issue 20), pinned by
# tests/lsp/package-lock.json, into tests/lsp/.cache (npm ci, no install scripts), and
# clangd from Debian when apt can install it, and click's sources from its pinned wheel
# (tests/lsp/click.sh: the mid-size project of spec/lsp/click-*.yaml, tests/lsp_edits.rs
# and bench/lsp.py). Prints the directory to put on PATH.
# Reinstalls only when the lockfile changed. Used by .ci/run and bench/lsp.py.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$HERE/../../bench/lib.sh"
CACHE="$HERE/.cache"
install_pinned "$HERE" "$CACHE" "$CACHE/node_modules/.bin/pyright-langserver" >&2
if [ "${LSP_CLANGD:-1}" = 1 ] && ! command -v clangd >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 \
  && [ "$(id -u)" = 0 ]; then
  { apt-get install -y -qq clangd >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq clangd >/dev/null; }; } \
    >&2 || echo "lsp: clangd could not be installed; its cases will say so" >&2
fi
bash "$HERE/click.sh" >/dev/null || echo "lsp: click could not be unpacked; its cases will fail" >&2
echo "$CACHE/node_modules/.bin"
