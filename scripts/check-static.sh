#!/usr/bin/env bash
# Checks that a static `boris` runs where nothing else exists: an empty root holding only
# the binary, a static shell (busybox), /dev/null and /tmp. Runs `boris --version` and a
# stdio session (initialize, bash `echo hi`, a file written by the shell, view,
# str_replace, grep) with boris-spec over the chroot's pipes.
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
