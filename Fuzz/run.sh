#!/usr/bin/env bash
# Builds every fuzz target (release, -sanitize=fuzzer) and runs each for a bounded
# time, starting from the committed seeds (Fuzz/Corpus/<Target>) plus the working corpus
# (Fuzz/corpus/<Target>, ignored by git). Exits non-zero on any finding (crash, timeout, OOM),
# whose reproducer lands in Fuzz/artifacts/. Prints execs/s and total execs per target.
#
#   Fuzz/run.sh [seconds-per-target]        default 60
#   HEARTH_FUZZ_ASAN=1 Fuzz/run.sh          also AddressSanitizer (see README: coverage caveat)
#   HEARTH_FUZZ_TARGETS="FuzzState" Fuzz/run.sh 30
#   HEARTH_FUZZ_JOBS=1 Fuzz/run.sh          one fuzzer at a time (default: one per core)
#   Fuzz/run.sh --build-only                builds every target, runs none (CI starts it early)
set -euo pipefail
cd "$(dirname "$0")/.."
build_only=0
if [ "${1:-}" = --build-only ]; then
    build_only=1
    shift
fi
seconds=${1:-60}
targets=${HEARTH_FUZZ_TARGETS:-"FuzzDecode FuzzRecovery FuzzState FuzzRules FuzzToken FuzzWire FuzzREST FuzzFrames"}
# A Swift crash under libFuzzer otherwise starts swift-backtrace, which outlives the fuzzer and
# holds its output pipes open.
export SWIFT_BACKTRACE=enable=no
sanitizers=(--sanitize=fuzzer)
scratch=Fuzz/.build
if [ "${HEARTH_FUZZ_ASAN:-0}" != 0 ]; then
    sanitizers+=(--sanitize=address)
    scratch=Fuzz/.build-asan
fi
mkdir -p Fuzz/artifacts
status=0
summary=()
# One build for every target: a build per product would compile the shared dependencies' tails
# one product at a time, with a core idle; one invocation keeps both cores busy.
echo "fuzz: building $targets (${sanitizers[*]})"
set -- $targets
if [ $# -eq 1 ]; then
    what=(--product "$1")
else
    # swift build takes one --product at a time: build the whole package (every fuzz target).
    what=()
fi
swift build --package-path Fuzz -c release --scratch-path "$scratch" "${sanitizers[@]}" ${what[@]+"${what[@]}"} 2>&1 \
    | grep -v "Cannot export local symbol" || true
for t in $targets; do
    [ -x "$scratch/release/$t" ] || { echo "fuzz: $t did not build"; exit 2; }
done
[ "$build_only" = 1 ] && exit 0
# Each fuzzer is one process on one core: run as many at once as there are cores
# (HEARTH_FUZZ_JOBS), so the bounded run costs seconds × targets ÷ cores of wall time.
jobs=${HEARTH_FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
run_one() {
    local t=$1 corpus=Fuzz/corpus/$1 log=Fuzz/artifacts/$1.log rc=0 extra=()
    mkdir -p "$corpus"
    cp -n Fuzz/Corpus/$t/* "$corpus"/ 2>/dev/null || true
    [ -d Fuzz/Regressions/$t ] && extra+=(Fuzz/Regressions/$t)
    "$scratch/release/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix=Fuzz/artifacts/$t- "$corpus" ${extra[@]+"${extra[@]}"} >"$log" 2>&1 </dev/null || rc=$?
    echo "$rc" >"Fuzz/artifacts/$t.rc"
}
running=0
for t in $targets; do
    echo "fuzz: running $t for ${seconds}s"
    run_one "$t" &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then
        wait -n || true
        running=$((running - 1))
    fi
done
wait
for t in $targets; do
    log=Fuzz/artifacts/$t.log
    rc=$(cat "Fuzz/artifacts/$t.rc" 2>/dev/null || echo missing)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    line="$t: ${execs:-?} execs, ${rate:-?} execs/s in ${seconds}s"
    if ! grep -q "inline 8-bit counters" "$log"; then
        # A build without coverage instrumentation fuzzes blind (and a no-op build runs nothing).
        status=1
        line="$line — NOT INSTRUMENTED (no coverage counters), see $log"
    fi
    if [ "$rc" != 0 ]; then
        status=1
        line="$line — FINDING (exit $rc), see $log"
        grep -E "FUZZ FINDING|Fatal error|ERROR:|Test unit written" "$log" | head -5 || true
    fi
    summary+=("$line")
done
printf 'fuzz: %s\n' "${summary[@]}"
exit $status
