#!/usr/bin/env bash
# The durable-write rows, interleaved, with ratios per round: each round runs writes1 and then
# writes16 against hearth-full, sqlite-full, leveldb-sync and the floor (the engine order
# rotating from round to round, as run.sh does), each a fresh process in a fresh directory.
# Prints every run as one JSON line, then per workload the medians of ops/s, of the writes-only
# rate (less the engine's open and close), p50, p99, open and close, and the median (and range)
# over rounds of Hearth ÷ each of the others, on both rates.
#
#   bash Benchmarks/scripts/writes_rounds.sh 7 [BIN] [RAW]
#
# BIN defaults to this package's release HearthBench: copy it out of .build first if a build
# may run meanwhile. RAW (default: a temporary file) keeps the JSON lines.
set -euo pipefail
rounds=$1
bin=${2:-$(dirname "$0")/../.build/release/HearthBench}
raw=${3:-$(mktemp)}
dir=${HEARTH_BENCH_WORK:-/tmp/hearth-writes-rounds}
engines=(hearth-full sqlite-full leveldb-sync floor)
echo "== load: $(uptime)" >&2
for round in $(seq 1 "$rounds"); do
  for w in writes1 writes16; do
    for i in 0 1 2 3; do
      e=${engines[$(( (i + round) % 4 ))]}
      rm -rf "$dir"
      line=$("$bin" "$w" "$e" --dir "$dir" | tail -1)
      echo "{\"round\":$round,${line:1}" | tee -a "$raw"
    done
  done
done
rm -rf "$dir"
echo "== load: $(uptime)" >&2
python3 - "$raw" <<'PY'
import json, statistics as s, sys, collections
runs = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    d = json.loads(line)
    runs[d['workload']].setdefault(d['round'], {})[d['engine']] = d
# Writes only: the ops over the time less the engine's open and its flush + close (the floor
# has neither).
def writes_only(d): return d['ops'] / (d['seconds'] - d.get('openMs', 0) / 1e3 - d.get('closeSeconds', 0))
engines = ['hearth-full', 'sqlite-full', 'leveldb-sync', 'floor']
for workload, rounds in sorted(runs.items()):
    print(f"{workload}: {len(rounds)} rounds")
    for e in engines:
        ds = [r[e] for r in rounds.values() if e in r]
        print(f"  {e:13s} ops/s {s.median(d['opsPerSec'] for d in ds):8.0f}  writes only {s.median(map(writes_only, ds)):8.0f}"
              f"  p50 ms {s.median(d['p50Ms'] for d in ds):6.3f}  p99 ms {s.median(d['p99Ms'] for d in ds):7.3f}"
              f"  open ms {s.median(d.get('openMs', 0) for d in ds):6.2f}  close ms {s.median(d.get('closeSeconds', 0) for d in ds) * 1e3:6.2f}")
        print("    runs: " + ", ".join(f"{d['opsPerSec']:.0f}" for d in ds))
        if all('gathers' in d for d in ds):
            print(f"    gathers {s.median(d['gathers'] for d in ds):.0f}, ended at the limit {s.median(d['gatherTimeouts'] for d in ds):.0f} (medians)")
    for e in engines[1:]:
        both = [r for r in rounds.values() if 'hearth-full' in r and e in r]
        for label, f in (('ops/s', lambda d: d['opsPerSec']), ('writes only', writes_only)):
            ratios = sorted(f(r['hearth-full']) / f(r[e]) for r in both)
            print(f"  hearth-full ÷ {e:13s} {label:11s} per round: median {s.median(ratios):.3f}, range {ratios[0]:.3f}–{ratios[-1]:.3f}")
PY
