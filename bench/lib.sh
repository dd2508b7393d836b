# Shared shell helpers for the bench/*.sh scripts (sourced, not run).

# No telemetry, update checks or funding/audit chatter from any tool involved.
export DO_NOT_TRACK=1
export NO_UPDATE_NOTIFIER=1
export npm_config_update_notifier=false
export npm_config_fund=false
export npm_config_audit=false
export NEXT_TELEMETRY_DISABLED=1

# install_pinned SRC CACHE MARKER: installs the npm project pinned by SRC/package.json +
# SRC/package-lock.json into CACHE with `npm ci --ignore-scripts`. It reinstalls only when
# the lockfile changed or MARKER (a file the install must produce) is missing.
install_pinned() {
    local src="$1" cache="$2" marker="$3"
    mkdir -p "$cache"
    if ! cmp -s "$src/package-lock.json" "$cache/package-lock.json" || [ ! -f "$marker" ]; then
        echo "bench: installing $src into $cache" >&2
        rm -rf "$cache/node_modules"
        cp "$src/package.json" "$src/package-lock.json" "$cache/"
        (cd "$cache" && timeout 600 npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
    fi
}
