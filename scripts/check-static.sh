#!/usr/bin/env bash
# Checks that a static `boris` runs where nothing else exists: an empty root holding only
# the binary, a static shell (busybox), /dev/null and /tmp. Runs `boris --version`, a
# stdio session (initialize, bash `echo hi`, a file written by the shell, view,
# str_replace, grep) with boris-spec over the chroot's pipes, and an HTTP server on
# `--host localhost` (no resolver, no /etc/hosts in there) whose /health must answer.
#
#   scripts/check-static.sh dist/boris [path/to/boris-spec]
#
# Needs root (chroot, mknod) or unprivileged user namespaces (`unshare -rm`), and a
# statically linked busybox (Debian: the busybox-static package); BUSYBOX=path picks one.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=${1:?usage: scripts/check-static.sh BORIS [BORIS_SPEC]}
spec=${2:-${CARGO_TARGET_DIR:-target}/debug/boris-spec}
busybox=${BUSYBOX:-$(command -v busybox || true)}
if [ -z "$busybox" ] || ! file -b "$busybox" | grep -q 'statically linked'; then
  echo "check-static.sh: need a statically linked busybox (apt-get install busybox-static, or BUSYBOX=path)" >&2
  exit 1
fi

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/bin" "$root/dev" "$root/tmp" "$root/project"
chmod 1777 "$root/tmp"
cp "$bin" "$root/bin/boris"
cp "$busybox" "$root/bin/busybox"
ln -s busybox "$root/bin/sh"
# Commands run with stdin from /dev/null, as in any container.
if [ "$(id -u)" = 0 ] && mknod -m 666 "$root/dev/null" c 1 3 2>/dev/null; then
  enter=(chroot "$root")
else
  # No device nodes without root: bind /dev/null in a private mount namespace.
  touch "$root/dev/null"
  enter=(unshare -rm sh -c 'mount --bind /dev/null "$0/dev/null" && exec chroot "$@"' "$root" "$root")
fi
echo "check-static.sh: root $root holds: $(cd "$root" && find . -mindepth 1 | sort | tr '\n' ' ')"

version=$("${enter[@]}" /bin/boris --version)
echo "check-static.sh: $version"
case "$version" in boris\ *) ;; *) echo "check-static.sh: unexpected --version output" >&2; exit 1 ;; esac

"$spec" run --server "$(printf '%q ' "${enter[@]}") /bin/boris --transport stdio --workdir /project" \
  scripts/static-smoke.yaml

log="$root.http.log"
"${enter[@]}" /bin/boris --host localhost --port 0 --workdir /project 2>"$log" &
server=$!
# `|| true`: under errexit a failing command in an EXIT trap becomes the script's exit
# status, and by the normal end the server has already been reaped.
trap 'kill "$server" 2>/dev/null || true; rm -rf "$root" "$log"' EXIT
addr=""
for _ in $(seq 100); do
  addr=$(sed -n 's/.*bound=\([0-9.]*:[0-9]*\).*/\1/p' "$log" | head -n 1)
  [ -n "$addr" ] && break
  sleep 0.1
done
if [ -z "$addr" ]; then
  echo "check-static.sh: the HTTP server on --host localhost did not start:" >&2
  cat "$log" >&2
  exit 1
fi
exec 3<>"/dev/tcp/${addr%:*}/${addr##*:}"
printf 'GET /health HTTP/1.0\r\nHost: localhost\r\n\r\n' >&3
health=$(cat <&3)
exec 3<&-
case "$health" in
  *'"status":"ok"'*) echo "check-static.sh: HTTP on localhost ($addr): /health ok" ;;
  *) echo "check-static.sh: /health did not answer ok: $health" >&2; exit 1 ;;
esac
kill -TERM "$server"
wait "$server"
echo "check-static.sh: the static binary passed in an empty root"
