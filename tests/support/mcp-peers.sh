#!/usr/bin/env bash
# Provide the real MCP peers the MCP tests talk to, installed from npm and
# PyPI and cached between runs:
#   - @modelcontextprotocol/server-filesystem  (reference server, stdio)
#   - @modelcontextprotocol/server-everything  (the protocol's corners)
#   - @modelcontextprotocol/inspector          (its --cli mode, as a client)
#   - the official MCP Python SDK (`mcp` on PyPI), in a venv: a client over
#     Streamable HTTP
# Versions are pinned so a test run means the same thing tomorrow; the
# inspector is the last line that runs on Node 20.
#
# Output: on success exactly two lines on stdout,
#   MCP_NODE_MODULES=/abs/path/node_modules
#   MCP_PYTHON=/abs/path/bin/python       (with the SDK installed)
# and npm's and pip's chatter on stderr. Non-zero exit on any failure.
#
# Cache: ${TOOLCELL_TEST_CACHE:-$HOME/.cache/toolcell-test}/mcp-npm-<key>,
# where <key> changes with the pinned versions. It is installed in a scratch
# folder and renamed into place (atomic), under a flock, so a killed or
# concurrent run never leaves a half-installed tree.
set -Eeuo pipefail
exec 3>&1 1>&2

PACKAGES=(
    @modelcontextprotocol/server-filesystem@2026.8.31
    @modelcontextprotocol/server-everything@2026.8.31
    @modelcontextprotocol/inspector@0.15.0
)

command -v node >/dev/null || { echo "mcp-peers.sh: node is not installed (apt-get install nodejs npm)"; exit 1; }
command -v npm >/dev/null || { echo "mcp-peers.sh: npm is not installed (apt-get install npm)"; exit 1; }

cache=${TOOLCELL_TEST_CACHE:-$HOME/.cache/toolcell-test}
key=$(printf '%s\n' "${PACKAGES[@]}" | sha256sum | cut -c1-12)
dest="$cache/mcp-npm-$key"
mkdir -p "$cache"

if [[ ! -d "$dest/node_modules" ]]; then
    exec 9>"$cache/mcp-npm.lock"
    flock -w "${TOOLCELL_LOCK_TIMEOUT:-600}" 9
    if [[ ! -d "$dest/node_modules" ]]; then
        scratch=$(mktemp -d "$cache/.mcp-npm.XXXXXX")
        trap 'rm -rf "$scratch"' EXIT
        echo '{"private": true}' > "$scratch/package.json"
        npm install --prefix "$scratch" --no-audit --no-fund --loglevel=error "${PACKAGES[@]}"
        rm -rf "$dest"
        mv "$scratch" "$dest"
        trap - EXIT
    fi
fi

PYTHON_SDK=mcp==2.3.0
command -v python3 >/dev/null || { echo "mcp-peers.sh: python3 is not installed (apt-get install python3 python3-venv)"; exit 1; }
pykey=$(printf '%s\n' "$PYTHON_SDK" "$(python3 --version)" | sha256sum | cut -c1-12)
venv="$cache/mcp-python-$pykey"
if [[ ! -x "$venv/bin/python" ]]; then
    exec 8>"$cache/mcp-python.lock"
    flock -w "${TOOLCELL_LOCK_TIMEOUT:-600}" 8
    if [[ ! -x "$venv/bin/python" ]]; then
        scratch=$(mktemp -d "$cache/.mcp-python.XXXXXX")
        trap 'rm -rf "$scratch"' EXIT
        python3 -m venv "$scratch"
        "$scratch/bin/pip" install --quiet --disable-pip-version-check "$PYTHON_SDK"
        rm -rf "$venv"
        # Only its python is used, which finds its packages from where it is.
        mv "$scratch" "$venv"
        trap - EXIT
    fi
fi
echo "MCP_NODE_MODULES=$dest/node_modules" >&3
echo "MCP_PYTHON=$venv/bin/python" >&3
