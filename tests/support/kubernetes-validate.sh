#!/usr/bin/env bash
# Provide kubernetes-validate (PyPI), which checks manifests against the
# Kubernetes OpenAPI schemas it ships: offline, for a pinned Kubernetes
# version. The tests of `toolcell schedule export kubernetes` run it on what
# the exporter writes.
#
# Output: on success exactly one line on stdout,
#   KUBERNETES_VALIDATE_PYTHON=/abs/path/bin/python   (run it as
#   `python -m kubernetes_validate --strict --kubernetes-version X FILE`)
# and pip's chatter on stderr. Non-zero exit on any failure.
#
# Cache: ${TOOLCELL_TEST_CACHE:-$HOME/.cache/toolcell-test}/kubernetes-validate-<key>,
# where <key> changes with the pinned version and the Python. Installed in a
# scratch folder and renamed into place (atomic), under a flock.
set -Eeuo pipefail
exec 3>&1 1>&2

PACKAGE=kubernetes-validate==1.34.1

command -v python3 >/dev/null || { echo "kubernetes-validate.sh: python3 is not installed (apt-get install python3 python3-venv)"; exit 1; }
cache=${TOOLCELL_TEST_CACHE:-$HOME/.cache/toolcell-test}
key=$(printf '%s\n' "$PACKAGE" "$(python3 --version)" | sha256sum | cut -c1-12)
venv="$cache/kubernetes-validate-$key"
mkdir -p "$cache"
if [[ ! -x "$venv/bin/python" ]]; then
    exec 9>"$cache/kubernetes-validate.lock"
    flock -w "${TOOLCELL_LOCK_TIMEOUT:-600}" 9
    if [[ ! -x "$venv/bin/python" ]]; then
        scratch=$(mktemp -d "$cache/.kubernetes-validate.XXXXXX")
        trap 'rm -rf "$scratch"' EXIT
        python3 -m venv "$scratch"
        "$scratch/bin/pip" install --quiet --disable-pip-version-check "$PACKAGE"
        rm -rf "$venv"
        # Only its python is used (`-m kubernetes_validate`), which finds
        # its packages from where it is.
        mv "$scratch" "$venv"
        trap - EXIT
    fi
fi
echo "KUBERNETES_VALIDATE_PYTHON=$venv/bin/python" >&3
