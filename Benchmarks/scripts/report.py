#!/usr/bin/env python3
"""Turns HearthBench's JSON lines into results.json (medians), chart.png and the results
table (printed, and written into README.md between the results markers).

    python3 scripts/report.py results/raw.jsonl --out results --readme README.md
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess

WORKLOADS = {
    "writes1": "1. durable pending writes, 1 writer",
    "writes16": "1. durable pending writes, 16 writers",
    "fill": "2. cache fill, 50 MiB JSON",
    "coldOpen": "3. cold open at the 10 MiB cap",
    "query": "4. query window, limitToLast(50) of 100,000",
    "prune": "5. prune 20% of a full cache",
}
# (hearth engine, sqlite engine, leveldb engine, floor engine, main metric, higher is better)
PAIRS = {
    "writes1": ("hearth-full", "sqlite-full", "leveldb-sync", "floor", "opsPerSec", True),
    "writes16": ("hearth-full", "sqlite-full", "leveldb-sync", "floor", "opsPerSec", True),
    "fill": ("hearth-batched", "sqlite-normal", "leveldb", "floor", "opsPerSec", True),
    "coldOpen": ("hearth-full", "sqlite-full", "leveldb", "floor", "viewsMs", False),
    "query": ("hearth-full", "sqlite-full", "leveldb", None, "coldMs", False),
    "prune": ("hearth-full", "sqlite-full", "leveldb", None, "pruneMs", False),
}
ORDER = ["hearth-full", "hearth-batched", "hearth-batched-cap10", "sqlite-full", "sqlite-normal",
         "sqlite-batched", "leveldb-sync", "leveldb", "floor"]


def load(path):
    runs = {}
    builds = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            r = json.loads(line)
            target = builds if r.get("phase") == "build" else runs
            target.setdefault(r["workload"], {}).setdefault(r["engine"], []).append(r)
    return runs, builds


def medians(rows):
    out = {"runs": len(rows)}
    keys = {k for r in rows for k, v in r.items() if isinstance(v, (int, float))}
    for k in sorted(keys):
        vals = [r[k] for r in rows if isinstance(r.get(k), (int, float))]
        out[k] = statistics.median(vals)
    return out


def machine():
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = 0
    try:
        with open("/proc/meminfo") as f:
            mem = int(f.readline().split()[1]) // (1024 * 1024)
    except OSError:
        pass
    try:
        swift = subprocess.run(["swift", "--version"], capture_output=True, text=True).stdout.split("\n")[0]
    except OSError:
        swift = "?"
    return {"cpu": cpu, "cores": os.cpu_count(), "memoryGiB": mem, "os": platform.platform(), "swift": swift}


def fmt(v, unit=""):
    if v is None:
        return "–"
    if isinstance(v, float) and v != v:
        return "–"
    a = abs(v)
    if a >= 100:
        s = f"{v:,.0f}"
    elif a >= 10:
        s = f"{v:.1f}"
    elif a >= 1:
        s = f"{v:.2f}"
    else:
        s = f"{v:.3f}"
    return s + unit


def mib(v):
    return None if v is None else v / 1048576


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def table(res):
    lines = []
    cols = {
        "writes1": [("ops/s", "opsPerSec", None), ("p50 ms", "p50Ms", None), ("p99 ms", "p99Ms", None),
                    ("close ms", "closeMs", None), ("next open ms", "reopenMs", None)],
        "writes16": [("ops/s", "opsPerSec", None), ("p50 ms", "p50Ms", None), ("p99 ms", "p99Ms", None),
                     ("close ms", "closeMs", None), ("next open ms", "reopenMs", None)],
        "fill": [("ops/s", "opsPerSec", None), ("MB/s JSON", "mbPerSec", None), ("p50 ms", "p50Ms", None), ("p99 ms", "p99Ms", None)],
        "coldOpen": [("open ms", "openMs", None), ("first read ms", "firstReadMs", None), ("all views ms", "viewsMs", None)],
        "query": [("cold ms", "coldMs", None), ("warm p50 ms", "warmP50Ms", None), ("warm p99 ms", "warmP99Ms", None)],
        "prune": [("prune ms", "pruneMs", None), ("open→pruned ms", "openToPrunedMs", None), ("queries removed", "queriesRemoved", None)],
    }
    for w, title in WORKLOADS.items():
        if w not in res["workloads"]:
            continue
        engines = res["workloads"][w]
        builds = res["builds"].get(w, {})
        c = cols[w]
        head = ["engine"] + [x[0] for x in c] + ["disk MiB", "disk / JSON byte",
                                                  "peak RSS MiB" + (" over the workload's data" if w == "fill" else "")]
        lines.append(f"**{title}**\n")
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "---|" * len(head))
        for e in ORDER:
            if e not in engines:
                continue
            m = engines[e]
            logical = m.get("logicalBytes") or builds.get(e, {}).get("logicalBytes")
            if w == "coldOpen" and logical is None:
                logical = builds.get("hearth-full", {}).get("logicalBytes")
            disk = m.get("bytesOnDisk")
            row = [f"`{e}`"] + [fmt(m.get(k)) for _, k, _ in c]
            peak = m.get("peakRSSBytes")
            if w == "fill" and peak is not None and m.get("rssBaseBytes") is not None:
                peak -= m["rssBaseBytes"]  # the pre-generated workload is most of the process
            row += [fmt(mib(disk)), fmt(ratio(disk, logical)), fmt(mib(peak))]
            lines.append("| " + " | ".join(row) + " |")
        lines.append("")
    # Ratios
    lines.append("**Ratios** (Hearth's median ÷ the baseline's median on the workload's main metric; "
                 "for ops/s higher is better for Hearth, for ms lower is better)\n")
    lines.append("| workload | metric | Hearth | Hearth/SQLite | Hearth/LevelDB | Hearth/floor | disk/JSON Hearth · SQLite · LevelDB |")
    lines.append("|---|---|---|---|---|---|---|")
    for w, (h, s, l, f, metric, higher) in PAIRS.items():
        engines = res["workloads"].get(w)
        if not engines or h not in engines:
            continue
        builds = res["builds"].get(w, {})

        def get(e, k=metric):
            return engines.get(e, {}).get(k) if e else None

        def dj(e):
            if not e or e not in engines:
                return None
            logical = engines[e].get("logicalBytes") or builds.get(e, {}).get("logicalBytes") or builds.get("hearth-full", {}).get("logicalBytes")
            return ratio(engines[e].get("bytesOnDisk"), logical)

        lines.append(f"| {w} (`{h}` vs `{s}`, `{l}`{', floor' if f else ''}) | {metric} | {fmt(get(h))} | "
                     f"{fmt(ratio(get(h), get(s)))} | {fmt(ratio(get(h), get(l)))} | {fmt(ratio(get(h), get(f)))} | "
                     f"{fmt(dj(h))} · {fmt(dj(s))} · {fmt(dj(l))} |")
    # Floors worth quoting
    fl = res["workloads"].get("fill", {}).get("floor")
    if fl:
        lines.append("")
        lines.append(f"Floor on the fill's bytes: append {fmt(fl.get('mbPerSec'))} MB/s, zlib level 6 deflate "
                     f"{fmt(fl.get('deflateMBPerSec'))} MB/s (ratio {fmt(fl.get('deflateRatio'))}), inflate "
                     f"{fmt(fl.get('inflateMBPerSec'))} MB/s.")
    return "\n".join(lines)


def chart(res, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [
        ("writes1", "opsPerSec", "durable writes, 1 writer\nops/s (higher is better)"),
        ("writes16", "opsPerSec", "durable writes, 16 writers\nops/s (higher is better)"),
        ("fill", "mbPerSec", "cache fill 50 MiB\nMB/s of JSON (higher is better)"),
        ("coldOpen", "firstReadMs", "cold open: first small read\nms (lower is better)"),
        ("coldOpen", "viewsMs", "cold open: every view rebuilt\nms (lower is better)"),
        ("query", "coldMs", "limitToLast(50) of 100k, cold\nms (lower is better)"),
        ("query", "warmP50Ms", "limitToLast(50) of 100k, warm p50\nms, log (lower is better)"),
        ("prune", "pruneMs", "prune 20% of a full cache\nms (lower is better)"),
        ("*", "diskPerJSON", "bytes on disk per JSON byte\n(after fill / cold-open store)"),
    ]
    fig, axes = plt.subplots(3, 3, figsize=(15, 12))
    colors = {"hearth": "#d9480f", "sqlite": "#1c7ed6", "leveldb": "#2f9e44", "floor": "#868e96"}
    for ax, (w, metric, title) in zip(axes.flat, panels):
        names, vals = [], []
        if w == "*":
            for e in ["hearth-batched", "hearth-batched-cap10", "sqlite-normal", "leveldb"]:
                m = res["workloads"].get("fill", {}).get(e)
                if m and m.get("logicalBytes"):
                    names.append("fill " + e)
                    vals.append(m["bytesOnDisk"] / m["logicalBytes"])
            logical = res["builds"].get("coldOpen", {}).get("hearth-full", {}).get("logicalBytes")
            for e in ["hearth-full", "sqlite-full", "leveldb"]:
                b = res["builds"].get("coldOpen", {}).get(e)
                if b and logical:
                    names.append("cap " + e)
                    vals.append(b["bytesOnDisk"] / logical)
        else:
            for e in ORDER:
                m = res["workloads"].get(w, {}).get(e)
                if m and m.get(metric) is not None:
                    names.append(e)
                    vals.append(m[metric])
        bars = ax.barh(names, vals, color=[colors[n.split(" ")[-1].split("-")[0]] for n in names])
        ax.invert_yaxis()
        ax.set_title(title, fontsize=10)
        if "log" in title:
            ax.set_xscale("log")
        for b, v in zip(bars, vals):
            ax.text(b.get_width(), b.get_y() + b.get_height() / 2, " " + fmt(v), va="center", fontsize=8)
        ax.tick_params(axis="y", labelsize=8)
        ax.tick_params(axis="x", labelsize=8)
        ax.set_xlim(right=max(vals) * (3 if "log" in title else 1.3) if vals else 1)
    m = res["machine"]
    fig.suptitle(f"Hearth vs SQLite (Firebase Android layout) vs LevelDB (Firebase iOS layout) vs the floor — "
                 f"medians, {res['date']}, {m['cores']} cores, {m['cpu']}", fontsize=11)
    fig.tight_layout(rect=[0, 0, 1, 0.97])
    fig.savefig(path, dpi=90)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("raw")
    ap.add_argument("--out", default="results")
    ap.add_argument("--readme")
    ap.add_argument("--scale", default="1")
    ap.add_argument("--reps", default="3")
    a = ap.parse_args()
    runs, builds = load(a.raw)
    res = {
        "date": datetime.date.today().isoformat(),
        "machine": machine(),
        "scale": float(a.scale),
        "reps": int(a.reps),
        "workloads": {w: {e: medians(rows) for e, rows in es.items()} for w, es in runs.items()},
        "builds": {w: {e: medians(rows) for e, rows in es.items()} for w, es in builds.items()},
    }
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)
    chart(res, os.path.join(a.out, "chart.png"))
    m = res["machine"]
    text = (f"Measured {res['date']} on {m['cpu']} ({m['cores']} cores, {m['memoryGiB']} GiB), {m['os']}, "
            f"{m['swift']}; release build; medians of {res['reps']} runs or more (each a fresh process; the fill "
            f"{max(1, res['reps'] - 1)}), scale {res['scale']:g}.\n\n" + table(res))
    print(text)
    if a.readme:
        with open(a.readme) as f:
            readme = f.read()
        begin, end = "<!-- results:begin -->", "<!-- results:end -->"
        if begin in readme and end in readme:
            head, rest = readme.split(begin, 1)
            _, tail = rest.split(end, 1)
            readme = head + begin + "\n" + text + "\n" + end + tail
            with open(a.readme, "w") as f:
                f.write(readme)


if __name__ == "__main__":
    main()
