#!/usr/bin/env bash
# The generated hostile-input pack (issue 29 §5) against every server of the score table:
# `boris-spec hostile` with a fixed seed and call count, each server started as its adapter
# starts it (spec/adapters/<name>.yaml: env and args, {root} its workdir) and inside
# bubblewrap, so that a shell tool fed text hostile to quoting can write only the run's
# own directories: the machine read-only, a private /tmp, no network, no capabilities.
#
#   tests/compat/hostile.sh [NAME…]   run the named servers (default: every server of
#                                     run.sh that is installed), store each run in
#                                     tests/compat/hostile.result.json and rewrite
#                                     HOSTILE.md from it (every failure needs its
#                                     hand-checked line in tests/compat/hostile.notes.yml)
#
# Install the peers first (`COMPAT_ONLY=NAME tests/compat/run.sh --check`, COMPAT_ALL=1 for
# a slow one). Env: COMPAT_CACHE (where the peers are installed, default tests/compat/.cache),
# BORIS_BIN / BORIS_SPEC_BIN (default target/debug/…, built if missing), HOSTILE_TIMEOUT_MS
# (longest wait for one answer, default 20000). A server's failures are expected (they are
# its results); the script fails only when a run cannot be made or a failure is unexplained.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CACHE="${COMPAT_CACHE:-$HERE/.cache}"
RESULTS="$HERE/hostile.result.json"
NOTES="$HERE/hostile.notes.yml"
SEED=29
CASES=400
BORIS="${BORIS_BIN:-$ROOT/target/debug/boris}"
SPEC="${BORIS_SPEC_BIN:-$ROOT/target/debug/boris-spec}"
if [ ! -x "$BORIS" ] || [ ! -x "$SPEC" ]; then
  (cd "$ROOT" && cargo build --bins) >&2 || { echo "hostile: build failed"; exit 1; }
fi
command -v bwrap > /dev/null || { echo "hostile: bubblewrap (bwrap) is needed: shell tools run hostile text"; exit 1; }
. "$HERE/servers.sh"
ALL=("${ORDER[@]}")
# serena starts Python, then pyright, for its project: a minute's wait, as in run.sh.
declare -A TIMEOUT_MS=([serena]=60000)
[ $# -gt 0 ] && ORDER=("$@")

# The run's directory (hostile's workdir's parent: work/, outside/, home/) writable, so
# that a write outside the workdir is seen by the pack ("stays inside"), not refused here.
BOX="bwrap --ro-bind / / --tmpfs /tmp --bind {workdir}/.. {workdir}/.. --dev /dev --proc /proc \
--unshare-all --die-with-parent --new-session --cap-drop ALL --chdir {workdir} --"

# installed NAME: the program its command names last is there.
installed() {
  local program
  program=$(grep -o "'/[^']*'" <<< "${SERVER[$1]}" | tail -n 1 | tr -d "'")
  [ -n "$program" ] && [ -e "$program" ]
}

# The box must hold before hostile text goes through it: a write outside the run's
# directory fails, one inside works.
probe=$(mktemp -d) && mkdir "$probe/work" || exit 1
box=${BOX//\{workdir\}/$probe/work}
$box sh -c "echo x > '$ROOT/.hostile-box-probe'; echo x > '$HOME/.hostile-box-probe'; echo x > ok" 2> /dev/null
if [ -e "$ROOT/.hostile-box-probe" ] || [ -e "$HOME/.hostile-box-probe" ] || [ ! -e "$probe/work/ok" ]; then
  rm -f "$ROOT/.hostile-box-probe" "$HOME/.hostile-box-probe"
  echo "hostile: bubblewrap does not confine here (a write outside the run's directory worked, or none inside did)"
  exit 1
fi
rm -rf "$probe"

status=0
for name in "${ORDER[@]}"; do
  if [ -z "${SERVER[$name]:-}" ]; then
    echo "hostile: no server $name (known: ${ALL[*]})"; status=1; continue
  fi
  if ! installed "$name"; then
    echo "=== $name: not installed (COMPAT_ONLY=$name tests/compat/run.sh --check installs it): its stored result stays" >&2
    continue
  fi
  { read -r env; read -r args; } < <(python3 "$HERE/hostile.py" start "$ROOT/spec/adapters/$name.yaml")
  cmd="$BOX env $env ${SERVER[$name]} $args"
  echo "=== $name" >&2
  out=$(mktemp -d)
  start=$SECONDS
  (cd "$out" && "$SPEC" hostile --server "$cmd" --seed "$SEED" --cases "$CASES" \
    --timeout-ms "${TIMEOUT_MS[$name]:-${HOSTILE_TIMEOUT_MS:-20000}}" --json "$out/run.json") > "$out/run.log" 2>&1
  rc=$?
  if [ $rc -gt 1 ] || [ ! -s "$out/run.json" ]; then
    echo "not ok hostile: $name: the run failed (exit $rc):" >&2
    tail -n 20 "$out/run.log" >&2
    status=1
  else
    python3 "$HERE/hostile.py" store "$RESULTS" "$name" "$out/run.json" || status=1
    grep -E '^(FAIL|[0-9]+ calls)' "$out/run.log" | cut -c1-300 >&2
    echo "($name: $((SECONDS - start)) s)" >&2
  fi
  rm -rf "$out"
done
python3 "$HERE/hostile.py" table "$RESULTS" "$NOTES" "${ALL[@]}" > "$ROOT/HOSTILE.md.new" \
  && mv "$ROOT/HOSTILE.md.new" "$ROOT/HOSTILE.md" || { rm -f "$ROOT/HOSTILE.md.new"; status=1; }
exit $status
