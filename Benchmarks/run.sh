#!/usr/bin/env bash
# Runs every workload against every engine, each in a fresh process, REPS times, then writes
# results/results.json, results/chart.png and the results table in README.md.
#
#   bash Benchmarks/run.sh            # full run (about 25 minutes on the 2-core VM)
#   SCALE=0.1 REPS=1 bash Benchmarks/run.sh   # a quick smoke run (not for the README)
#
# Environment: SCALE (data sizes, default 1), REPS (repetitions, default 3; the 50 MiB fill
# runs max(1, REPS-1) times, the cold opens and prunes REPS+2), WRITES_REPS (the durable-write
# workloads, default 9: fsync latency on a shared VM is bimodal, so they need more runs),
# WORKLOADS (default "writes fill coldOpen query prune"), APPEND=1 (add to results/raw.jsonl
# instead of starting it over), HEARTH_BENCH_WORK (scratch directory, default /tmp/hearth-bench).
set -euo pipefail
cd "$(dirname "$0")"

need=()
for p in libsqlite3-dev libleveldb-dev zlib1g-dev; do dpkg -s "$p" >/dev/null 2>&1 || need+=("$p"); done
if ((${#need[@]})); then apt-get update && apt-get install -y "${need[@]}"; fi
python3 -c 'import matplotlib' 2>/dev/null || pip install --quiet matplotlib || pip install --quiet --break-system-packages matplotlib

swift build -c release --product HearthBench
BIN="$(swift build -c release --show-bin-path)/HearthBench"
SCALE="${SCALE:-1}"
REPS="${REPS:-3}"
WRITES_REPS="${WRITES_REPS:-9}"
WORKLOADS="${WORKLOADS:-writes fill coldOpen query prune}"
want() { [[ " $WORKLOADS " == *" $1 "* ]]; }
WORK="${HEARTH_BENCH_WORK:-/tmp/hearth-bench}"
RAW=results/raw.jsonl
mkdir -p results
rm -rf "$WORK"; mkdir -p "$WORK"
[[ "${APPEND:-0}" == 1 ]] || : > "$RAW"
run() { "$BIN" "$@" --scale "$SCALE" | tee -a "$RAW"; }

echo "== load: $(uptime)" >&2

# 1. Durable pending writes, 1 and 16 writers (durable tiers only); the engine order rotates.
engines=(hearth-full sqlite-full leveldb-sync floor)
want writes && for rep in $(seq "$WRITES_REPS"); do
  for w in writes1 writes16; do
    for i in 0 1 2 3; do
      e=${engines[$(( (i + rep) % 4 ))]}
      run "$w" "$e" --dir "$WORK/$w-$e"
    done
  done
done

# 2. Cache fill: 50 MiB of JSON as server overwrites and merges (non-durable tiers).
want fill && for rep in $(seq "$(( REPS > 1 ? REPS - 1 : 1 ))"); do
  for e in hearth-batched hearth-batched-cap10 sqlite-normal sqlite-batched leveldb floor; do
    run fill "$e" --dir "$WORK/fill-$e"
  done
done

# 3. Cold open of Hearth's store at its 10 MiB cap; the baselines get the same content.
if want coldOpen; then
  run coldOpen hearth-full --phase build --dir "$WORK/co-hearth-full"
  for e in sqlite-full leveldb floor; do
    run coldOpen "$e" --phase build --dir "$WORK/co-$e" --source "$WORK/co-hearth-full"
  done
  for rep in $(seq $(( REPS + 2 ))); do
    for e in hearth-full sqlite-full leveldb floor; do run coldOpen "$e" --dir "$WORK/co-$e"; done
  done
fi

# 4. Query window: limitToLast(50) of 100,000 children, cold (fresh process) and warm.
if want query; then
  for e in hearth-full sqlite-full leveldb; do run query "$e" --phase build --dir "$WORK/q-$e"; done
  for rep in $(seq "$REPS"); do
    for e in hearth-full sqlite-full leveldb; do run query "$e" --dir "$WORK/q-$e"; done
  done
fi

# 5. Pruning 20% of a full cache (each measurement on a fresh copy of the built store).
if want prune; then
  for e in hearth-full sqlite-full leveldb; do run prune "$e" --phase build --dir "$WORK/p-$e"; done
  for rep in $(seq $(( REPS + 2 ))); do
    for e in hearth-full sqlite-full leveldb; do
      rm -rf "$WORK/p-$e-run"; cp -r "$WORK/p-$e" "$WORK/p-$e-run"
      run prune "$e" --dir "$WORK/p-$e-run"
    done
  done
fi

echo "== load: $(uptime)" >&2
rm -rf "$WORK"
python3 scripts/report.py "$RAW" --out results --readme README.md --scale "$SCALE" --reps "$REPS"
