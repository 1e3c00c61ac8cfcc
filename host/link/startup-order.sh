#!/usr/bin/env bash
# Writes host/link/startup-order.txt: the functions a `toolcell` process
# runs when it starts and makes the calls people make most, for the linker
# to lay out together at the front of the code (build.rs passes the file to
# lld as `--symbol-ordering-file`).
#
# A process maps its 35 MB of code a fault at a time, each fault bringing in
# the 64 KB around the page touched. Laid out as the compiler left them, the
# functions a small `tools call` runs were spread over 200 such windows;
# together they fill about 20 (BENCHMARKS.md, issue 21, twelfth step).
#
# Run it after changes that move much of the start-up's code (a new
# dependency, a different wasmtime), on a release build of the same commit:
#
#     cargo build --release && host/link/startup-order.sh
#
# It needs valgrind (Debian: valgrind), whose callgrind names every
# function a run executes. A name the linker no longer finds is skipped, so
# a stale file costs speed, never a build. valgrind knows neither `openat2`
# nor the pooling allocator's reservation: the listing and search runs end
# at their first folder and the workflow at its first tool call, and what
# they did not reach stays where the compiler put it.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
binary=$(realpath -m "${1:-$root/target/release/toolcell}")
out=$root/host/link/startup-order.txt
command -v valgrind >/dev/null || { echo "startup-order.sh needs valgrind (Debian: apt-get install valgrind)" >&2; exit 1; }
[[ -x $binary ]] || { echo "no binary at $binary: build it first (cargo build --release)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/ws/docs" "$work/data"
cp "$root"/docs/*.md "$work/ws/docs/"
cp -r "$root/workflows" "$work/ws/"
head -c 300 /dev/zero | tr '\0' x > "$work/ws/small.txt"
for i in $(seq 0 23000); do echo "line $i of a one-megabyte file for read_file"; done > "$work/ws/one_mb.txt"
# A workspace config, trusted, as most workspaces have: reading it and
# checking its trust is part of every start there.
printf '[tools.list_directory]\nenv = ["TOOLCELL_LIST_MAX_ENTRIES"]\n' > "$work/ws/toolcell.toml"

# The runs, in the order their functions are laid out: what every process
# runs first, then each command's own. Words are separated by `|`.
runs=(
    "--version"
    "tools|list"
    'tools|call|read_file|--args|{"path":"small.txt"}'
    'tools|call|read_file|--args|{"path":"one_mb.txt","start_line":1,"end_line":1000000}'
    'tools|call|list_directory|--args|{"path":".","recursive":true}'
    'tools|call|search_files|--args|{"path":".","query":"*.md","mode":"name"}'
    'tools|call|search_files|--args|{"path":".","query":"line 7"}'
    "run|workflows/notes-index.rhai|--arg|folder=docs|--arg|out=notes.md|--approve|write_file"
)
export TOOLCELL_DATA_DIR="$work/data" TOOLCELL_CACHE_DIR="$work/cache"
(cd "$work/ws" && "$binary" trust >/dev/null)
n=0
for run in "${runs[@]}"; do
    n=$((n + 1))
    IFS='|' read -r -a words <<< "$run"
    # Once as it is, to fill the compile cache: a process that compiles a
    # tool is not the one to lay out for.
    (cd "$work/ws" && "$binary" "${words[@]}" >/dev/null 2>&1) || true
    # A run may fail under valgrind (see above): what it executed still counts.
    (cd "$work/ws" && valgrind --tool=callgrind --demangle=no \
        --callgrind-out-file="$work/run.$n" "$binary" "${words[@]}" >/dev/null 2>&1) || true
    [[ -s $work/run.$n ]] || { echo "valgrind wrote no profile for: ${words[*]}" >&2; exit 1; }
done

# Every function callgrind names (as the caller or the called) that is one
# of the binary's own code symbols: those of the first run, then those the
# second adds, and so on, each run's in name order (so that the file
# changes only where the code did).
nm --defined-only "$binary" | awk '$2 ~ /^[tTwW]$/ { print $3 }' > "$work/symbols"
for i in $(seq 1 "$n"); do
    sed -n 's/^c\{0,1\}fn=([0-9]*) //p' "$work/run.$i" | sed "s/^/$i /"
done |
    awk 'NR == FNR { own[$0] = 1; next } own[$2] && !seen[$2]++' "$work/symbols" - |
    LC_ALL=C sort -k1,1n -k2,2 | cut -d' ' -f2- > "$work/order"
mv "$work/order" "$out"
echo "$(wc -l < "$out") functions written to $out"
