#!/usr/bin/env bash
# The fleet test (issue 31 §2): three Boris instances behind HAProxy 2.6 from Debian,
# driven by real MCP sessions and stateless requests while one instance is drained and
# another killed (tests/fleet/fleet.py says what is checked).
#
#   cargo build && bash tests/fleet/run.sh
#   BORIS_BIN=target/release/boris bash tests/fleet/run.sh
#   FLEET_BREAK=affinity bash tests/fleet/run.sh       # must fail: no session affinity
#   FLEET_BREAK=view-anywhere bash tests/fleet/run.sh  # must fail: view round robin
set -euo pipefail
cd "$(dirname "$0")/../.."

# Pinned: the Debian 12 package (the config uses 2.6's syntax).
haproxy_version=2.6.12-1+deb12u3
if [ "$(dpkg-query -W -f '${Version}' haproxy 2>/dev/null || true)" != "$haproxy_version" ]; then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "haproxy=$haproxy_version" >/dev/null
fi
command -v haproxy >/dev/null

export BORIS_BIN="${BORIS_BIN:-target/debug/boris}"
[ -x "$BORIS_BIN" ] || { echo "no $BORIS_BIN: cargo build first" >&2; exit 1; }
exec python3 tests/fleet/fleet.py
