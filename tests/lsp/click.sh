#!/usr/bin/env bash
# A mid-size real Python project for the code-intelligence tests and bench (issue 26):
# pallets/click's sources from its pinned wheel in the Python package registry (CI cannot
# reach the project's git host), laid out as a checkout would be:
#
#   tests/lsp/.cache/click/
#     pyproject.toml     written here: the project's pyright settings (basic checking of
#                        src/click), and the marker Boris finds the workspace root by
#     src/click/*.py     the wheel's click/ package, as it is (utils.py holds `def echo(`)
#
# The wheel has no tests, docs or pyproject of its own; nothing else is needed. Verified
# by its sha256, unpacked once (again when the pin changes). Prints the directory.
# Needs python3 with pip (`apt-get install python3-pip` when it is missing and we are root).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VERSION=8.1.8
SHA256=63c132bbbed01578a06712a2d1f497bb62d9c1c0d329b7903a866228027263b2
WHEEL="click-$VERSION-py3-none-any.whl"
CACHE="$HERE/.cache"
OUT="$CACHE/click"
STAMP="$OUT/.unpacked-$VERSION"
if [ -f "$STAMP" ]; then
  echo "$OUT"
  exit 0
fi
mkdir -p "$CACHE/wheels"
if [ ! -f "$CACHE/wheels/$WHEEL" ]; then
  if ! python3 -m pip --version >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 \
    && [ "$(id -u)" = 0 ]; then
    { apt-get install -y -qq python3-pip >/dev/null 2>&1 \
      || { apt-get update -qq && apt-get install -y -qq python3-pip >/dev/null; }; } >&2
  fi
  python3 -m pip download --quiet --no-deps --only-binary :all: \
    --dest "$CACHE/wheels" "click==$VERSION" >&2
fi
echo "$SHA256  $CACHE/wheels/$WHEEL" | sha256sum -c --quiet - >&2
rm -rf "$OUT"
mkdir -p "$OUT/src"
python3 - "$CACHE/wheels/$WHEEL" "$OUT/src" <<'EOF'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    z.extractall(sys.argv[2], [n for n in z.namelist() if n.startswith("click/")])
EOF
cat >"$OUT/pyproject.toml" <<'EOF'
# Written by tests/lsp/click.sh: click's sources from its wheel, checked as the project does.
[project]
name = "click"
version = "8.1.8"

[tool.pyright]
include = ["src/click"]
pythonVersion = "3.8"
typeCheckingMode = "basic"
EOF
touch "$STAMP"
echo "$OUT"
