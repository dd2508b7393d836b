#!/usr/bin/env bash
# Builds a fully static Linux `boris` (no dynamic loader, no shared libraries) that can be
# copied into any container or machine of the same architecture, and checks that it is
# static. Prints the path of the binary it leaves in the output directory.
#
#   scripts/build-static.sh [--profile release] [--out dist] [--libc auto|musl|gnu]
#
# With --libc auto (the default) it uses the musl target when its standard library is
# installed (`rustup target add x86_64-unknown-linux-musl`), and otherwise links glibc
# statically (`-C target-feature=+crt-static`). A static glibc cannot load NSS modules: Boris
# binds IP literals and `localhost` without the resolver, and looks up no user names;
# other host names given to --host need a resolver the binary may not have, and the
# random numbers come from the getrandom() system call, not /dev/urandom.
set -euo pipefail
cd "$(dirname "$0")/.."

profile=release
out=dist
libc=auto
while [ $# -gt 0 ]; do
  case "$1" in
    --profile) profile=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --libc) libc=$2; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-static.sh: unknown argument $1 (try --help)" >&2; exit 2 ;;
  esac
done

arch=$(uname -m)
musl="$arch-unknown-linux-musl"
if [ "$libc" = auto ]; then
  libc=gnu
  [ -d "$(rustc --print sysroot)/lib/rustlib/$musl/lib" ] && libc=musl
fi
case "$libc" in
  musl) target=$musl; flags="" ;;   # the musl target links statically by default
  # getrandom finds glibc's getrandom() with dlsym, which a static binary cannot do; it
  # would then need /dev/urandom, absent from an empty root. Link the call directly.
  gnu) target="$arch-unknown-linux-gnu"
       flags='-C target-feature=+crt-static --cfg getrandom_backend="linux_getrandom"' ;;
  *) echo "build-static.sh: --libc takes auto, musl or gnu" >&2; exit 2 ;;
esac
echo "build-static.sh: building boris for $target, profile $profile" >&2

# With --target, RUSTFLAGS reach only the target's crates, not build scripts and proc
# macros (which must stay dynamic to be loaded by the compiler).
RUSTFLAGS="${RUSTFLAGS:+$RUSTFLAGS }$flags" \
  cargo build --locked --profile "$profile" --target "$target" --bin boris >&2

dir=$profile
[ "$profile" = dev ] && dir=debug
bin="${CARGO_TARGET_DIR:-target}/$target/$dir/boris"

# Static means: no program interpreter and no needed shared library.
if command -v file >/dev/null 2>&1; then
  description=$(file -b "$bin")
  if printf '%s' "$description" | grep -Eq 'dynamically linked|interpreter'; then
    echo "build-static.sh: $bin is not static: $description" >&2
    exit 1
  fi
else
  description="static (file(1) not installed; checked with ldd)"
fi
if ldd "$bin" 2>&1 | grep -q '=>'; then
  echo "build-static.sh: ldd lists shared libraries for $bin:" >&2
  ldd "$bin" >&2
  exit 1
fi

mkdir -p "$out"
cp "$bin" "$out/boris"
echo "build-static.sh: $(wc -c < "$out/boris") bytes, $description" >&2
echo "$out/boris"
