#!/usr/bin/env bash
# Benchmarks (`make bench`): generates inputs with the project's own
# generators (simpleperf report-sample, Perfetto traced_perf / Chrome /
# heapprofd, perf script text), converts each to a choice of outputs, and
# prints one table: a row per (input, output) with input MB, input MB/s,
# samples/s, peak RSS (/usr/bin/time %M), output MB, seconds (the median
# of 3 runs) and the ratio to the decoding floor, bench/skim, on the same
# input: each run times the skim, then the conversion, and the ratio is
# the median of the runs' ratios.  This machine's speed drifts by half
# from one minute to the next, which a skim timed apart from its
# conversion made into the ratio's own noise.  The simpleperf
# rows are repeated at --threads 1, 2 and all cores, and a real capture
# (from ../shared, or $SHARED) is converted and imported by the Firefox
# Profiler itself, for comparison.
# Then the targets for the 1M-sample inputs (gzip -1 alone on the
# uncompressed output against our end-to-end .json.gz; peak RSS against
# input MB / 4 + 64), and the comparison of the packaged gzip encoders.
# About 4-5 minutes on a 2-core VM (estimated; the last line says how long).
#
#   usage: bench/run.sh BUILD_DIR
#   QUICK=1 bench/run.sh BUILD_DIR    every input 100 times smaller and one
#                                     run each: checks the script in seconds
set -euo pipefail
build=${1:-build}
quick=${QUICK:-0}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
t_start=$(date +%s.%N)

for tool in profconv skim gen-simpleperf gen-perfetto; do
    if [ ! -x "$build/$tool" ]; then
        echo "bench/run.sh: $build/$tool is missing (make bench builds it)" >&2
        exit 1
    fi
done

scale=1
small_runs=3
big_runs=3
if [ "$quick" != 0 ]; then
    scale=100
    small_runs=1
    big_runs=1
fi

model=$(grep -m1 '^model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//')
echo "machine: $(nproc) cores, ${model:-unknown CPU}; $(uname -sr)"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
if [ "$quick" != 0 ]; then
    echo "QUICK: inputs 100 times smaller, one run each (not for results)"
fi
echo

# Runs "$@" once; prints "seconds max_rss_kb".  A failing run stops the
# benchmark with its messages.  Written data goes to disk first: the
# write-back of an input just generated (or an output just written) would
# slow the run it falls in.
timed() {
    local t0 t1
    sync
    t0=$(date +%s.%N)
    if ! /usr/bin/time -f "%M" -o "$work/rss" "$@" >/dev/null 2>"$work/err"; then
        echo "bench/run.sh: failed: $*" >&2
        cat "$work/err" >&2
        exit 1
    fi
    t1=$(date +%s.%N)
    echo "$(awk "BEGIN{print $t1 - $t0}") $(tail -n 1 "$work/rss")"
}

# The median line of stdin by its first number (the lower middle one of
# an even count) of $1 lines.
median() {
    sort -g | awk -v n="$1" 'NR == int((n + 1) / 2)'
}

# Runs "$@" $1 times (after the count); prints "seconds max_rss_kb" of the
# median run (by time).
best() {
    local runs=$1 rows=""
    shift
    for ((i = 0; i < runs; i++)); do
        rows+="$(timed "$@")"$'\n'
    done
    printf '%s' "$rows" | median "$runs"
}

# Runs the skim of $2, then "$@" (after the two), $1 times; prints
# "seconds max_rss_kb ratio": the median run of "$@" (by time) and the
# median of each run's time over its skim's.
pairs() {
    local runs=$1 in=$2 skim run rows="" ratios=""
    shift 2
    for ((i = 0; i < runs; i++)); do
        skim=$(timed "$build/skim" "$in")
        run=$(timed "$@")
        rows+="$run"$'\n'
        ratios+="$(awk -v s="${skim%% *}" -v r="${run%% *}" 'BEGIN{
            if (s <= 0) s = 0.001;
            print r / s}')"$'\n'
    done
    printf '%s %s\n' "$(printf '%s' "$rows" | median "$runs")" \
        "$(printf '%s' "$ratios" | median "$runs")"
}

mb_of() {
    awk "BEGIN{printf \"%.1f\", $(stat -c %s "$1")/1e6}"
}

# 1000000 -> 1M, 100000 -> 100k.
count_name() {
    awk -v n="$1" 'BEGIN{ if (n >= 1e6 && n % 1e6 == 0) printf "%dM", n/1e6;
                        else if (n >= 1000 && n % 1000 == 0) printf "%dk", n/1000;
                        else printf "%d", n }'
}

format_of() {
    case $1 in
    firefox*) echo firefox ;;
    gecko*) echo gecko ;;
    folded*) echo folded ;;
    pb*) echo pprof ;;
    speedscope*) echo speedscope ;;
    esac
}

fmt='%-30s %-16s %8s %8s %10s %8s %8s %7s %6s\n'
printf "$fmt" input output "MB in" "MB/s in" samples/s "RSS MB" "MB out" seconds ratio
printf "$fmt" "" "" "" "" "" "" "" "" "/skim"

notes=()
declare -A secs_of
# Converts input $5 (named $1, $2 samples, "-" for none) to each output
# in $4, best of $3 runs, and prints its rows.  Sets case_mb, case_rss
# (the largest peak RSS, KB) and secs_of[OUTPUT].
# Options for profconv in every run of bench_case, when set.
pc_args=()
bench_case() {
    local name=$1 samples=$2 runs=$3 outputs=$4 in=$5 r ratio secs rss outmb
    case_mb=$(mb_of "$in")
    case_rss=0
    for out in $outputs; do
        r=$(pairs "$runs" "$in" "$build/profconv" -q ${pc_args[@]+"${pc_args[@]}"} \
            --to "$(format_of "$out")" "$in" -o "$work/out.$out")
        read -r secs rss ratio <<<"$r"
        secs_of[$out]=$secs
        if [ "$rss" -gt "$case_rss" ]; then
            case_rss=$rss
        fi
        outmb=$(awk "BEGIN{printf \"%.2f\", $(stat -c %s "$work/out.$out")/1e6}")
        awk -v n="$name" -v o="$out" -v mb="$case_mb" -v s="$secs" -v k="$samples" \
            -v r="$rss" -v om="$outmb" -v ra="$ratio" -v fmt="$fmt" 'BEGIN{
            if (s <= 0) s = 0.001;
            printf fmt, n, o, mb, sprintf("%.1f", mb / s),
                   k == "-" ? "-" : sprintf("%.0f", k / s), sprintf("%.1f", r / 1024), om,
                   sprintf("%.3f", s), sprintf("%.1f", ra)}'
    done
}

# The RSS target of a 1M-sample input: peak RSS within input MB / 4 + 64.
rss_note() {
    local name=$1
    notes+=("$(awk -v n="$name" -v r="$case_rss" -v mb="$case_mb" 'BEGIN{
        t = mb / 4 + 64;
        printf "%s: peak RSS %.1f MB, target %.1f MB (input %.1f MB / 4 + 64): %s", n, r / 1024,
               t, mb, r / 1024 <= t ? "met" : "missed"}')")
}

n_small=$((100000 / scale))
n_big=$((1000000 / scale))
small=$(count_name "$n_small")
big=$(count_name "$n_big")
sp_opts=(--threads 8 --depth 40 --symbols 500)

# simpleperf report-sample.
in="$work/sp_small.trace"
"$build/gen-simpleperf" --samples "$n_small" "${sp_opts[@]}" -o "$in"
bench_case "simpleperf $small" "$n_small" "$small_runs" \
    "firefox.json firefox.json.gz gecko.json.gz folded pb.gz speedscope.json" "$in"
rm -f "$in" "$work"/out.*

in="$work/sp_big.trace"
"$build/gen-simpleperf" --samples "$n_big" "${sp_opts[@]}" -o "$in"
bench_case "simpleperf $big" "$n_big" "$big_runs" "firefox.json firefox.json.gz pb.gz folded" "$in"
rss_note "simpleperf $big"
# gzip -1 alone on our uncompressed output, against our whole conversion
# to .json.gz (the target: the conversion is faster).
r=$(best "$big_runs" gzip -1 -c "$work/out.firefox.json")
read -r gz _ <<<"$r"
notes+=("$(awk -v g="$gz" -v o="${secs_of[firefox.json.gz]}" -v j="${secs_of[firefox.json]}" \
    -v mb="$(mb_of "$work/out.firefox.json")" -v n="simpleperf $big" 'BEGIN{
    printf "%s: firefox.json.gz end to end %.3f s (firefox.json %.3f s: gzip adds %.3f s); " \
           "gzip -1 alone on its firefox.json (%.1f MB) %.3f s: %s", n, o, j, o - j, mb, g,
           o < g ? "met (faster than gzip -1 alone)" : "missed (slower than gzip -1 alone)"}')")
# Kept for the gzip encoder comparison at the end.
"$build/profconv" -q --to gecko --no-gzip "$in" -o "$work/gecko.json"
# Every core: the same conversion on 1 thread, 2, and all the machine has.
thread_counts() {
    local all
    all=$(nproc)
    if [ "$all" -gt 2 ]; then
        echo 1 2 "$all"
    else
        echo 1 2
    fi
}
for t in $(thread_counts); do
    pc_args=(--threads "$t")
    bench_case "simpleperf $big --threads $t" "$n_big" "$big_runs" "firefox.json.gz" "$in"
done
pc_args=()
rm -f "$in" "$work"/out.*

# A real capture (simpleperf's perf_with_interpreter_frames testdata:
# Java, interpreter and kernel frames, 15 threads), its samples repeated
# to the big size, when the shared corpus is at hand.  The Firefox
# Profiler's own import of the same file is the peer row (one run).
shared=${SHARED:-../shared}
real="$shared/corpus/simpleperf/inputs/perf_with_interpreter_frames.callchain.trace"
if [ -f "$real" ]; then
    in="$work/sp_real.trace"
    "$build/gen-simpleperf" --from "$real" --samples "$n_big" -o "$in"
    for t in $(thread_counts); do
        pc_args=(--threads "$t")
        bench_case "real capture $big --threads $t" "$n_big" "$big_runs" "firefox.json.gz" "$in"
    done
    pc_args=()
    if [ -x "$shared/fxprof/validate" ] && command -v node >/dev/null; then
        t0=$(date +%s.%N)
        if /usr/bin/time -f "%M" -o "$work/rss" "$shared/fxprof/validate" --quiet "$in" \
            >/dev/null 2>&1; then
            t1=$(date +%s.%N)
            awk -v n="real capture $big" -v mb="$(mb_of "$in")" -v k="$n_big" \
                -v r="$(tail -n 1 "$work/rss")" -v t0="$t0" -v t1="$t1" \
                -v sk="$(best "$big_runs" "$build/skim" "$in" | cut -d' ' -f1)" -v fmt="$fmt" 'BEGIN{
                s = t1 - t0;
                printf fmt, n, "Firefox Profiler", mb, sprintf("%.1f", mb / s), sprintf("%.0f", k / s),
                       sprintf("%.1f", r / 1024), "-", sprintf("%.3f", s), sprintf("%.1f", s / sk)}'
        else
            echo "(the Firefox Profiler's import of the real capture failed; peer row left out)"
        fi
    fi
    rm -f "$in" "$work"/out.*
else
    echo "(no $real: the real-capture rows are left out)"
fi

# The worst case for interning: every sample a new stack.
in="$work/sp_unique.trace"
"$build/gen-simpleperf" --samples "$n_big" "${sp_opts[@]}" --unique -o "$in"
bench_case "simpleperf $big --unique" "$n_big" "$big_runs" "firefox.json.gz pb.gz" "$in"
rss_note "simpleperf $big --unique"
rm -f "$in" "$work"/out.*

# Perfetto: traced_perf, Chrome's sampler, heapprofd.
in="$work/pf_small.pftrace"
"$build/gen-perfetto" --kind perf --samples "$n_small" "${sp_opts[@]}" -o "$in"
bench_case "perfetto perf $small" "$n_small" "$small_runs" \
    "firefox.json firefox.json.gz folded pb.gz" "$in"
rm -f "$in" "$work"/out.*

in="$work/pf_big.pftrace"
"$build/gen-perfetto" --kind perf --samples "$n_big" "${sp_opts[@]}" -o "$in"
bench_case "perfetto perf $big" "$n_big" "$big_runs" "firefox.json firefox.json.gz pb.gz" "$in"
rss_note "perfetto perf $big"
rm -f "$in" "$work"/out.*

# The same with each callstack sampled about 200 times, as hot code is in
# long recordings: what costs then is the samples, not new frames.
in="$work/pf_reuse.pftrace"
"$build/gen-perfetto" --kind perf --samples "$n_big" --reuse 200 "${sp_opts[@]}" -o "$in"
bench_case "perfetto perf $big --reuse 200" "$n_big" "$big_runs" "firefox.json.gz pb.gz" "$in"
rm -f "$in" "$work"/out.*

# The same samples with a clock snapshot every millisecond (31,000 in a
# trace of 31 s, where the default has 5): clock conversion per packet
# must cost the same however many snapshots a long trace holds.
in="$work/pf_snap.pftrace"
"$build/gen-perfetto" --kind perf --samples "$n_big" --snapshot-ms 1 "${sp_opts[@]}" -o "$in"
bench_case "perfetto perf $big --snapshot-ms 1" "$n_big" "$big_runs" "firefox.json.gz" "$in"
rm -f "$in" "$work"/out.*

in="$work/pf_chrome.pftrace"
"$build/gen-perfetto" --kind chrome --samples "$n_small" "${sp_opts[@]}" -o "$in"
bench_case "perfetto chrome $small" "$n_small" "$small_runs" "firefox.json.gz pb.gz" "$in"
rm -f "$in" "$work"/out.*

# heapprofd: 4 processes, 40 dumps each restating every callsite so far;
# no samples, so no samples/s.
n_heap=$((500000 / scale))
dumps=40
if [ "$quick" != 0 ]; then
    dumps=4
fi
in="$work/pf_heap.pftrace"
"$build/gen-perfetto" --kind heap --samples "$n_heap" --dumps "$dumps" --processes 4 \
    --threads 16 --paths 4000 --depth 40 --symbols 500 -o "$in"
bench_case "perfetto heap $dumps dumps" - "$small_runs" "firefox.json.gz pb.gz folded" "$in"
rm -f "$in" "$work"/out.*

# perf script text of the same shape as the simpleperf inputs.
in="$work/ps_small.txt"
"$build/gen-simpleperf" --samples "$n_small" "${sp_opts[@]}" --perf-script -o "$in"
bench_case "perf script $small" "$n_small" "$small_runs" \
    "folded firefox.json.gz pb.gz speedscope.json" "$in"
rm -f "$in" "$work"/out.*

echo
echo "Targets:"
for n in "${notes[@]}"; do
    echo "  $n"
done

if [ -x "$build/gzip-bench" ]; then
    echo
    echo "gzip encoders on the Gecko JSON of simpleperf $big:"
    "$build/gzip-bench" "$work/gecko.json" "$([ "$quick" != 0 ] && echo 1 || echo 3)"
fi

echo
awk -v a="$t_start" -v b="$(date +%s.%N)" 'BEGIN{printf "bench/run.sh: %.0f s in all\n", b - a}'
