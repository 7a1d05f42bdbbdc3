#!/usr/bin/env bash
# Benchmarks: generate simpleperf inputs with the project's generator,
# convert each to both Firefox formats with and without gzip, and print input MB/s,
# samples/s, peak RSS and output size, best of 3 runs; then the same
# recording as perf script text to every output format.  Then compare the
# packaged gzip encoders on the largest output.
#   usage: bench/run.sh BUILD_DIR
set -euo pipefail
build=${1:-build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

best_of_3() {  # prints "seconds max_rss_kb" of the fastest run
    local best="" rss=""
    for _ in 1 2 3; do
        local t0 t1 t
        t0=$(date +%s.%N)
        /usr/bin/time -f "%M" -o "$work/rss" "$@" >/dev/null 2>&1
        t1=$(date +%s.%N)
        t=$(awk "BEGIN{print $t1 - $t0}")
        if [ -z "$best" ] || awk "BEGIN{exit !($t < $best)}"; then
            best=$t
            rss=$(tail -n 1 "$work/rss")
        fi
    done
    echo "$best $rss"
}

printf '%-28s %-16s %9s %10s %12s %9s %10s\n' input output "MB in" "MB/s in" "samples/s" "RSS MB" "MB out"
for samples in 100000 300000; do
    in="$work/sp_$samples.trace"
    "$build/gen-simpleperf" --samples "$samples" --threads 8 --depth 40 --symbols 500 -o "$in"
    mb=$(awk "BEGIN{printf \"%.1f\", $(stat -c %s "$in")/1e6}")
    for out in firefox.json firefox.json.gz gecko.json gecko.json.gz; do
        read -r secs rss < <(best_of_3 "$build/profconv" -q --to "${out%%.*}" "$in" -o "$work/out.$out")
        outmb=$(awk "BEGIN{printf \"%.2f\", $(stat -c %s "$work/out.$out")/1e6}")
        awk -v n="simpleperf ${samples} samples" -v o="$out" -v mb="$mb" -v s="$secs" \
            -v k="$samples" -v r="$rss" -v om="$outmb" 'BEGIN{
            if (s <= 0) s = 0.005;
            printf "%-28s %-16s %9s %10.1f %12.0f %9.1f %10s\n", n, o, mb, mb/s, k/s, r/1024, om}'
    done
done

# The same 300,000-sample recording as perf script text, to each format.
in="$work/ps_300000.txt"
"$build/gen-simpleperf" --samples 300000 --threads 8 --depth 40 --symbols 500 --perf-script -o "$in"
mb=$(awk "BEGIN{printf \"%.1f\", $(stat -c %s "$in")/1e6}")
for out in folded firefox.json.gz pb.gz speedscope.json; do
    read -r secs rss < <(best_of_3 "$build/profconv" -q "$in" -o "$work/out.$out")
    outmb=$(awk "BEGIN{printf \"%.2f\", $(stat -c %s "$work/out.$out")/1e6}")
    awk -v n="perf script 300000 samples" -v o="$out" -v mb="$mb" -v s="$secs" \
        -v k=300000 -v r="$rss" -v om="$outmb" 'BEGIN{
        if (s <= 0) s = 0.005;
        printf "%-28s %-16s %9s %10.1f %12.0f %9.1f %10s\n", n, o, mb, mb/s, k/s, r/1024, om}'
done

if [ -x "$build/gzip-bench" ]; then
    echo
    "$build/profconv" -q --to gecko --no-gzip "$work/sp_300000.trace" -o "$work/out.json"
    "$build/gzip-bench" "$work/out.json" 3
fi
