#!/usr/bin/env bash
# What a legitimate client's 4 KB view costs over HTTP while each attack of issue 27 runs,
# and the server's memory before, during and after (`boris-spec bench --transport http`).
# Prints two Markdown tables on stdout.
#
#   bench/http_attacks.sh            # release builds of boris and boris-spec
#   BORIS=dist/boris bench/http_attacks.sh --memory-only   # e.g. the static build
#
# Every run: a fresh server (`--session-idle-timeout 5`), CLIENTS session-era clients
# (opened before the attack) making CALLS views of a 4,096-byte file with THINK_MS
# between calls, the attack from 127.0.0.2, and the "after" memory read AFTER_WAIT s
# after the calls and the attack ended (65 s: sessions reaped at 5 s, then 60 s).
# The memory table floods sessions with no cap (--max-sessions 100000, the attack as
# filed) with the fix switched off (a no-op malloc_trim preloaded) and on.
set -euo pipefail
cd "$(dirname "$0")/.."

boris=$(realpath "${BORIS:-target/release/boris}")
spec=$(realpath "${BORIS_SPEC:-target/release/boris-spec}")
calls=${CALLS:-400}
clients=${CLIENTS:-2}
think=${THINK_MS:-20}
after=${AFTER_WAIT:-65}
server="$boris --transport http --port 0 --sandbox off --session-idle-timeout 5"

bench() { # attack count server-prefix extra-server-args...
  local attack=$1 count=$2 prefix=$3
  shift 3
  "$spec" bench --transport http --server "$prefix $server $*" \
    --call view '{"path":"four.txt"}' -n "$calls" -c "$clients" --think-ms "$think" \
    --after-wait "$after" --attack "$attack" --attack-count "$count" --json
}

if [ "${1:-}" != --memory-only ]; then
  echo "| attack | view p50 / p99 | views answered / failed | attack connections made / refused | RSS before | RSS during | RSS after |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
  for spec_row in "none 0 none" "silent 300 300 silent connections" \
    "h2-preface 300 300 HTTP/2 prefaces" "sessions 0 session flood (4 threads)" \
    "slow-bodies 100 100 bodies of 30 MiB, one byte short"; do
    set -- $spec_row
    attack=$1 count=$2
    shift 2
    label="$*"
    bench "$attack" "$count" "" | jq -r --arg name "$label" \
      '"| \($name) | \(.latency_ms.p50) / \(.latency_ms.p99) ms | \(.ok_calls) / \(.failed_calls) | \(.attack_connections) / \(.attack_refused) | \(.rss_mib.before) MiB | \(.rss_mib.during) MiB | \(.rss_mib.after) MiB |"'
  done
  echo
fi

shim_dir=$(mktemp -d)
trap 'rm -rf "$shim_dir"' EXIT
printf 'int malloc_trim(unsigned long pad) { (void)pad; return 0; }\n' >"$shim_dir/notrim.c"
cc -shared -fPIC -o "$shim_dir/notrim.so" "$shim_dir/notrim.c"
echo "| session flood, no cap | sessions made | RSS before | RSS during | RSS 60 s after reaping |"
echo "| --- | ---: | ---: | ---: | ---: |"
for mode in off on; do
  prefix=""
  [ "$mode" = off ] && prefix="env LD_PRELOAD=$shim_dir/notrim.so"
  if [ "$mode" = off ] && file -b "$boris" | grep -qE 'statically linked|static-pie linked'; then
    continue # a static binary cannot have malloc_trim preloaded away
  fi
  bench sessions 0 "$prefix" --max-sessions 100000 | jq -r --arg mode "$mode" \
    '"| malloc_trim after reaping \($mode) | \(.attack_connections) | \(.rss_mib.before) MiB | \(.rss_mib.during) MiB | \(.rss_mib.after) MiB |"'
done
