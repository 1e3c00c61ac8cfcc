#!/usr/bin/env bash
# Builds `run_python` (app.py, with the Python interpreter and standard
# library inside, about 22 MB) with a pinned componentize-py from PyPI and
# installs it with `toolcell tools add`. Arguments go to `tools add`:
#
#   bash tools-code/run_python/install.sh            # into the workspace here
#   bash tools-code/run_python/install.sh --user     # for every workspace
#
# Needs python3 with venv. The toolchain is cached under
# ${XDG_CACHE_HOME:-~/.cache}/toolcell/; COMPONENTIZE_PY names another one,
# TOOLCELL another toolcell binary.
set -Eeuo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
version=0.25.1

if [[ -z ${COMPONENTIZE_PY:-} ]]; then
    command -v python3 >/dev/null || { echo "install.sh: python3 is not installed (Debian: apt-get install python3 python3-venv)" >&2; exit 1; }
    venv="${XDG_CACHE_HOME:-$HOME/.cache}/toolcell/componentize-py-$version"
    if [[ ! -f $venv/.complete ]]; then
        rm -rf "$venv"
        python3 -m venv "$venv"
        "$venv/bin/pip" install --quiet --disable-pip-version-check "componentize-py==$version"
        touch "$venv/.complete"
    fi
    COMPONENTIZE_PY="$venv/bin/componentize-py"
fi

toolcell=${TOOLCELL:-toolcell}
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
# The Python scaffold of `toolcell tools new` (the tool contract and its
# build command), with this tool's code and manifest in place of its example.
"$toolcell" tools new run_python --lang python --dir "$build" >/dev/null
cp "$here/app.py" "$here/tool.toml" "$build/"
(cd "$build" && "$COMPONENTIZE_PY" -d wit -w tool-component componentize app -o run_python.wasm >&2)
"$toolcell" tools add "$build" --yes "$@"
