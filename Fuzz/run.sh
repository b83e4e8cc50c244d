#!/usr/bin/env bash
# Builds every fuzz target (release, -sanitize=fuzzer) and runs each for a bounded
# time, starting from the committed seeds (Fuzz/Corpus/<Target>) plus the working corpus
# (Fuzz/corpus/<Target>, ignored by git). Exits non-zero on any finding (crash, timeout, OOM),
# whose reproducer lands in Fuzz/artifacts/. Prints execs/s and total execs per target.
#
#   Fuzz/run.sh [seconds-per-target]        default 60
#   HEARTH_FUZZ_ASAN=1 Fuzz/run.sh          also AddressSanitizer (see README: coverage caveat)
#   HEARTH_FUZZ_TARGETS="FuzzState" Fuzz/run.sh 30
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
targets=${HEARTH_FUZZ_TARGETS:-"FuzzDecode FuzzRecovery FuzzState FuzzRules FuzzToken FuzzWire FuzzREST"}
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
for t in $targets; do
    echo "fuzz: building $t (${sanitizers[*]})"
    swift build --package-path Fuzz -c release --scratch-path "$scratch" "${sanitizers[@]}" --product "$t" 2>&1 \
        | grep -v "Cannot export local symbol" || true
    bin="$scratch/release/$t"
    [ -x "$bin" ] || { echo "fuzz: $t did not build"; exit 2; }
done
for t in $targets; do
    corpus=Fuzz/corpus/$t
    mkdir -p "$corpus"
    cp -n Fuzz/Corpus/$t/* "$corpus"/ 2>/dev/null || true
    log=Fuzz/artifacts/$t.log
    echo "fuzz: running $t for ${seconds}s"
    extra=()
    [ -d Fuzz/Regressions/$t ] && extra+=(Fuzz/Regressions/$t)
    rc=0
    "$scratch/release/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix=Fuzz/artifacts/$t- "$corpus" ${extra[@]+"${extra[@]}"} >"$log" 2>&1 </dev/null || rc=$?
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
