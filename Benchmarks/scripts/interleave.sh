#!/usr/bin/env bash
# Interleaved A/B runs of one durable-write workload: each round runs every given HearthBench
# binary's `hearth-full` once and then `leveldb-sync` once (from the first binary), each a fresh
# process in a fresh directory, and prints one line per run. Then the per-round medians of
# Hearth ÷ LevelDB and the medians of ops/s, close ms, process CPU ms over the timed part and
# bytes on disk.
#
#   bash Benchmarks/scripts/interleave.sh writes16 30 /tmp/HB_before /tmp/HB_after
#
# Copy the binaries out of .build first: a build between rounds would change what is measured.
set -euo pipefail
workload=$1 rounds=$2
shift 2
dir=${HEARTH_BENCH_WORK:-/tmp/hearth-interleave}
out=$(mktemp)
for _ in $(seq 1 "$rounds"); do
  for bin in "$@" LDB; do
    rm -rf "$dir"
    if [[ $bin == LDB ]]; then line=$("$1" "$workload" leveldb-sync --dir "$dir" 2>/dev/null | tail -1)
    else line=$("$bin" "$workload" hearth-full --dir "$dir" 2>/dev/null | tail -1); fi
    echo "$(basename "$bin") $line" | tee -a "$out"
  done
done
rm -rf "$dir"
python3 - "$out" <<'PY'
import json, statistics as s, sys, collections
runs, rounds, current = collections.defaultdict(list), [], {}
for line in open(sys.argv[1]):
    name, text = line.split(' ', 1)
    d = json.loads(text)
    runs[name].append(d)
    current[name] = d['opsPerSec']
    if name == 'LDB':
        rounds.append(current)
        current = {}
for name, ds in runs.items():
    ratio = s.median(r[name] / r['LDB'] for r in rounds if name in r)
    print(f"{name:12s} ops/s {s.median(d['opsPerSec'] for d in ds):9.0f}  close ms {s.median(d['closeSeconds'] for d in ds) * 1e3:5.1f}"
          f"  cpu ms {s.median(d['cpuSeconds'] for d in ds) * 1e3:5.0f}  bytes {s.median(d['bytesOnDisk'] for d in ds):9.0f}"
          f"  ÷ LevelDB per round, median {ratio:.3f}")
PY
rm -f "$out"
