#!/usr/bin/env bash
# The symbolizer benchmark (bench/symbolize.sh BUILD_DIR, after `make
# BUILD=BUILD_DIR bench-tools` or `make BUILD=BUILD_DIR
# BUILD_DIR/gen-unsymbolized`): a Perfetto trace of SAMPLES samples
# (default 1M) whose FRAMES distinct frames (default 10k) carry only rel_pc
# and the build id of a real binary with symbols and DWARF (profconv
# itself, copied as libbench.so), converted without and with --symbols.
# Prints each time and what --symbols adds; medians of RUNS runs (3).
set -euo pipefail
build=${1:-build}
samples=${SAMPLES:-1000000}
frames=${FRAMES:-10000}
runs=${RUNS:-3}
b=$(cd "$build" && pwd)
for tool in profconv gen-unsymbolized; do
    if [ ! -x "$b/$tool" ]; then
        echo "bench/symbolize.sh: $build/$tool is missing (make BUILD=$build $build/$tool)" >&2
        exit 1
    fi
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$b/profconv" "$work/libbench.so"
bid=$(readelf -n "$work/libbench.so" | awk '/Build ID/ {print $3}')
read -r _ vaddr _ filesz _ < <(readelf -lW "$work/libbench.so" | awk '/LOAD/ && / R E / {print $2, $3, $4, $5, $6}')
text=$(printf "%x:%x" $((vaddr)) $((vaddr + filesz)))
"$b/gen-unsymbolized" --build-id "$bid" --text "$text" --frames "$frames" \
    --samples "$samples" -o "$work/unsym.pftrace"
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
time_of() {
    for _ in $(seq "$runs"); do
        /usr/bin/time -f "%e" "$@" 2>&1 >/dev/null | tail -1
    done | median
}
plain=$(time_of "$b/profconv" -q "$work/unsym.pftrace" -o "$work/a.json.gz")
named=$(time_of "$b/profconv" -q "$work/unsym.pftrace" --symbols "$work" -o "$work/b.json.gz")
size=$(stat -c %s "$work/unsym.pftrace")
echo "input: $samples samples, $frames unsymbolized frames, $((size / 1000000)) MB"
echo "without --symbols: ${plain} s"
echo "with --symbols:    ${named} s (symbols and DWARF of a $(( $(stat -c %s "$work/libbench.so") / 1000 )) KB binary)"
awk -v a="$plain" -v b="$named" 'BEGIN { printf "--symbols adds:    %.2f s\n", b - a }'
