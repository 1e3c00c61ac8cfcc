#!/usr/bin/env bash
# Provide the Python and JavaScript component toolchains the polyglot tests
# and benchmark build tools with, installed from PyPI and npm and cached
# between runs:
#   - componentize-py                      (Python → component)
#   - @bytecodealliance/componentize-js    (JavaScript → component; its
#     componentize() API, called by the scaffold's build.mjs)
#   - @bytecodealliance/jco                (the WASI WIT files build.mjs uses)
# Versions are pinned: the same as the scaffolds of `toolcell tools new`.
#
# Output: on success exactly two lines on stdout,
#   COMPONENTIZE_PY=/abs/path/bin/componentize-py
#   COMPONENTIZE_JS_NODE_MODULES=/abs/path/node_modules
# and the installers' chatter on stderr. Non-zero exit on any failure.
#
# Cache: ${TOOLCELL_TEST_CACHE:-$HOME/.cache/toolcell-test}/toolchain-<key>,
# where <key> changes with the pinned versions. Installed under a flock; a
# `.complete` marker is written last, so a killed run is redone, never used.
set -Eeuo pipefail
exec 3>&1 1>&2

PY_PACKAGES=(componentize-py==0.25.1)
NPM_PACKAGES=(@bytecodealliance/componentize-js@0.23.0 @bytecodealliance/jco@1.35.0)

command -v python3 >/dev/null || { echo "guest-toolchains.sh: python3 is not installed (apt-get install python3 python3-venv)"; exit 1; }
command -v npm >/dev/null || { echo "guest-toolchains.sh: npm is not installed (apt-get install nodejs npm)"; exit 1; }

cache=${TOOLCELL_TEST_CACHE:-$HOME/.cache/toolcell-test}
key=$(printf '%s\n' "${PY_PACKAGES[@]}" "${NPM_PACKAGES[@]}" | sha256sum | cut -c1-12)
dest="$cache/toolchain-$key"
mkdir -p "$cache"

if [[ ! -f "$dest/.complete" ]]; then
    exec 9>"$cache/toolchain.lock"
    flock -w "${TOOLCELL_LOCK_TIMEOUT:-900}" 9
    if [[ ! -f "$dest/.complete" ]]; then
        rm -rf "$dest"
        mkdir -p "$dest/js"
        # A venv records its own path, so it is made in place (not moved).
        python3 -m venv "$dest/py"
        "$dest/py/bin/pip" install --quiet --disable-pip-version-check "${PY_PACKAGES[@]}"
        echo '{"private": true}' > "$dest/js/package.json"
        npm install --prefix "$dest/js" --no-audit --no-fund --loglevel=error "${NPM_PACKAGES[@]}"
        touch "$dest/.complete"
    fi
fi
echo "COMPONENTIZE_PY=$dest/py/bin/componentize-py" >&3
echo "COMPONENTIZE_JS_NODE_MODULES=$dest/js/node_modules" >&3
