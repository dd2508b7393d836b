#!/usr/bin/env bash
# Validates the manifests under deploy/ offline (issue 31 §1): core kinds against the
# Kubernetes API schemas of PyPI's kubernetes-validate, agent-sandbox's kinds against its
# vendored CRDs, every Boris container's flags through `boris --check-config`; a self-test
# first checks that each kind of break is caught. The Python packages are pinned in
# requirements.txt and installed into tests/deploy/.cache/venv.
#   BORIS_BIN=target/debug/boris bash tests/deploy/run.sh
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CACHE="$HERE/.cache"
BORIS="${BORIS_BIN:-$ROOT/target/debug/boris}"
[ -x "$BORIS" ] || { echo "tests/deploy/run.sh: $BORIS is not built (cargo build, or set BORIS_BIN)" >&2; exit 2; }
export PIP_CACHE_DIR="$CACHE/pip-cache" PIP_DISABLE_PIP_VERSION_CHECK=1
VENV="$CACHE/venv"
STAMP=$(sha256sum "$HERE/requirements.txt" | cut -d' ' -f1)
if [ "$(cat "$VENV/.stamp" 2>/dev/null)" != "$STAMP" ]; then
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  timeout 600 "$VENV/bin/pip" install -q -r "$HERE/requirements.txt" >&2
  echo "$STAMP" > "$VENV/.stamp"
fi
exec "$VENV/bin/python" -u "$HERE/validate.py" "$BORIS" --self-test
