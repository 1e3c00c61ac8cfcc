#!/usr/bin/env bash
# Builds `run_js` (tool.js, with the SpiderMonkey engine inside, about
# 13 MB) with a pinned ComponentizeJS from npm and installs it with
# `toolcell tools add`. Arguments go to `tools add`:
#
#   bash tools-code/run_js/install.sh            # into the workspace here
#   bash tools-code/run_js/install.sh --user     # for every workspace
#
# Needs node and npm. The toolchain is cached under
# ${XDG_CACHE_HOME:-~/.cache}/toolcell/; COMPONENTIZE_JS_NODE_MODULES names
# another one (a node_modules with both packages), TOOLCELL another
# toolcell binary.
set -Eeuo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
packages=(@bytecodealliance/componentize-js@0.23.0 @bytecodealliance/jco@1.35.0)

command -v node >/dev/null || { echo "install.sh: node is not installed (Debian: apt-get install nodejs npm)" >&2; exit 1; }
if [[ -z ${COMPONENTIZE_JS_NODE_MODULES:-} ]]; then
    command -v npm >/dev/null || { echo "install.sh: npm is not installed (Debian: apt-get install npm)" >&2; exit 1; }
    key=$(printf '%s\n' "${packages[@]}" | sha256sum | cut -c1-12)
    toolchain="${XDG_CACHE_HOME:-$HOME/.cache}/toolcell/componentize-js-$key"
    if [[ ! -f $toolchain/.complete ]]; then
        rm -rf "$toolchain"
        mkdir -p "$toolchain"
        echo '{"private": true}' > "$toolchain/package.json"
        npm install --prefix "$toolchain" --no-audit --no-fund --loglevel=error "${packages[@]}" >&2
        touch "$toolchain/.complete"
    fi
    COMPONENTIZE_JS_NODE_MODULES="$toolchain/node_modules"
fi

toolcell=${TOOLCELL:-toolcell}
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
# The JavaScript scaffold of `toolcell tools new` (its build.mjs and the
# tool contract), with this tool's code and manifest in place of its example.
"$toolcell" tools new run_js --lang js --dir "$build" >/dev/null
cp "$here/tool.toml" "$here/tool.js" "$build/"
ln -s "$COMPONENTIZE_JS_NODE_MODULES" "$build/node_modules"
(cd "$build" && node build.mjs >&2)
rm "$build/node_modules"
"$toolcell" tools add "$build" --yes "$@"
