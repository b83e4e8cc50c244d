#!/usr/bin/env bash
# Interleaved rounds of a store-reading workload (`prune`, `coldOpen`): the stores are built once
# (Hearth's with the first binary; LevelDB's and SQLite's as the workload builds them), then each
# round runs every given HearthBench binary's `hearth-full` on a fresh copy of Hearth's store and
# then `leveldb` and `sqlite-full` (from the first binary) on fresh copies of theirs, each a fresh
# process, and prints one line per run; then the medians of every metric per binary and engine.
# Extra arguments after `--` go to every Hearth run (e.g. `--whole-load checkpoint`).
#
#   bash Benchmarks/scripts/memory_rounds.sh prune 5 /tmp/HB_before /tmp/HB_after
#   bash Benchmarks/scripts/memory_rounds.sh coldOpen 5 /tmp/HB_before /tmp/HB_after -- --whole-load checkpoint
#
# Copy the binaries out of .build first: a build between rounds would change what is measured.
set -euo pipefail
workload=$1 rounds=$2
shift 2
bins=() extra=()
while (($#)); do
  if [[ $1 == -- ]]; then shift; extra=("$@"); break; fi
  bins+=("$1"); shift
done
dir=${HEARTH_BENCH_WORK:-/tmp/hearth-memory-rounds}
rm -rf "$dir" && mkdir -p "$dir"
first=${bins[0]}
"$first" "$workload" hearth-full --phase build --dir "$dir/built-hearth" >/dev/null
for engine in leveldb sqlite-full; do
  "$first" "$workload" "$engine" --phase build --dir "$dir/built-$engine" --source "$dir/built-hearth" >/dev/null
done
out=$(mktemp)
for _ in $(seq 1 "$rounds"); do
  for bin in "${bins[@]}" leveldb sqlite-full; do
    rm -rf "$dir/run"
    if [[ $bin == leveldb || $bin == sqlite-full ]]; then
      cp -a "$dir/built-$bin" "$dir/run"
      line=$("$first" "$workload" "$bin" --dir "$dir/run" 2>/dev/null | tail -1)
      name=$bin
    else
      cp -a "$dir/built-hearth" "$dir/run"
      line=$("$bin" "$workload" hearth-full --dir "$dir/run" "${extra[@]}" 2>/dev/null | tail -1)
      name=$(basename "$bin")
    fi
    echo "$name $line" | tee -a "$out"
  done
done
rm -rf "$dir"
python3 - "$out" <<'PY'
import json, statistics as s, sys, collections
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    name, text = line.split(' ', 1)
    runs[name].append(json.loads(text))
for name, ds in runs.items():
    keys = sorted({k for d in ds for k, v in d.items() if isinstance(v, (int, float))})
    medians = []
    for k in keys:
        values = [d[k] for d in ds if k in d]
        m = s.median(values)
        medians.append(f"{k} {m / 1048576:.1f} MiB" if 'RSS' in k else f"{k} {m:.4g}")
    print(f"{name}: " + ", ".join(medians))
PY
