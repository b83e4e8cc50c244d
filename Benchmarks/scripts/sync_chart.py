#!/usr/bin/env python3
"""Draws the sync/server chart (results/sync-chart.png) from ServerBench's JSON results and the
drain figures in README.md's "Drain, current" table, and prints the medians it plotted.

    swift build -c release --product ServerBench && .build/release/ServerBench --json results/server.json
    python3 scripts/sync_chart.py results/server.json --readme README.md --out results/sync-chart.png

Several JSON files may be given (e.g. one run with `--only memory` and one with `--only
writes,fanout`): each figure comes from the last file that has it.

Panels: drain cost per write vs N (against the raw-client floor), fan-out p50/p99 vs listening
connections (against a raw broadcast of the same bytes), acknowledged durable writes/s vs writing
connections (against fdatasync x batch and the raw echo), and memory per connection of a
`hearth serve` process. Every point is the median over the runs in the JSON file.
"""
import argparse
import json
import re
import statistics
import sys

DRAIN_MARKER = "**Drain, current**"


def drain_rows(readme):
    """(N, durability, per-write µs, floor per-write µs) from the first table after the marker."""
    text = open(readme, encoding="utf-8").read()
    at = text.find(DRAIN_MARKER)
    if at < 0:
        sys.exit(f"{readme}: no '{DRAIN_MARKER}' drain table")
    rows = []
    started = False
    for line in text[at:].splitlines():
        if line.startswith("|"):
            started = True
            cells = [c.strip() for c in line.strip("|").split("|")]
            n = cells[0].replace(",", "")
            if not n.isdigit() or len(cells) < 7:
                continue
            per, floor = num(cells[4]), num(cells[6])
            if per is not None and floor is not None:
                rows.append((int(n), cells[1], per, floor))
        elif started:
            break
    return rows


def num(cell):
    """The number in a cell like '177 µs' or '1,234 µs' (µs assumed), else None."""
    m = re.search(r"([\d,]+(?:\.\d+)?)\s*(µs|ms|s)?", cell)
    if not m:
        return None
    v = float(m.group(1).replace(",", ""))
    return v * {"µs": 1, "ms": 1e3, "s": 1e6, None: 1}[m.group(2)]


def med(rows, key):
    return statistics.median(r[key] for r in rows)


def grouped(rows, key):
    out = {}
    for r in rows:
        out.setdefault(r[key], []).append(r)
    return dict(sorted(out.items()))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results", nargs="+", help="ServerBench --json output(s); for each figure the last file that has it wins")
    ap.add_argument("--readme", default="README.md", help="where the drain table is")
    ap.add_argument("--out", default="results/sync-chart.png")
    a = ap.parse_args()
    res = {}
    for path in a.results:
        one = json.load(open(path))
        for k, v in one.items():
            if v or k not in res:
                res[k] = v
    drain = drain_rows(a.readme)

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    hearth, floor, echo = "#d9480f", "#868e96", "#1c7ed6"
    fig, axes = plt.subplots(2, 2, figsize=(13, 10))

    # 1. Drain: cost per write vs N.
    ax = axes[0][0]
    for dur, style in (("buffered", "-o"), ("full", "--s")):
        pts = sorted((n, per) for n, d, per, _ in drain if d == dur)
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style, color=hearth, label=f"drain, {dur}")
            for n, v in pts:
                ax.annotate(f"{v:,.0f}", (n, v), textcoords="offset points", xytext=(4, 4), fontsize=8)
    fl = sorted({(n, f) for n, _, _, f in drain})
    ax.plot([p[0] for p in fl], [p[1] for p in fl], ":^", color=floor, label="floor: raw client, same puts")
    for n, v in fl:
        ax.annotate(f"{v:.1f}", (n, v), textcoords="offset points", xytext=(4, -12), fontsize=8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_yticks([t for t in (10, 20, 50, 100, 200, 500, 1000, 2000, 5000) if min(v for *_, v in drain) / 2 <= t <= max(p for *_, p, _ in drain) * 2])
    ax.set_xlabel("offline writes drained (N)")
    ax.set_title("drain after reconnect: µs per write (lower is better)", fontsize=10)
    ax.legend(fontsize=8)

    # 2. Fan-out latency vs listeners.
    ax = axes[0][1]
    fan = grouped(res.get("fanOut", []), "listeners")
    if fan:
        xs = list(fan)
        for key, style, color, label in (("p50Ms", "-o", hearth, "hearth p50"), ("p99Ms", "--o", hearth, "hearth p99"),
                                         ("floorP50Ms", "-^", floor, "raw broadcast p50"), ("floorP99Ms", "--^", floor, "raw broadcast p99")):
            ys = [med(fan[x], key) for x in xs]
            ax.plot(xs, ys, style, color=color, label=label)
            if key.startswith("p"):
                for x, y in zip(xs, ys):
                    ax.annotate(f"{y:.2f}", (x, y), textcoords="offset points", xytext=(4, 4 if key == "p99Ms" else -10), fontsize=8)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(xs, [f"{x:,}" for x in xs])
    ax.set_xlabel("listening connections")
    ax.set_title("fan-out: put sent → last listener's push read, ms (lower is better)", fontsize=10)
    ax.legend(fontsize=8)

    # 3. Durable writes/s vs connections.
    ax = axes[1][0]
    wr = grouped(res.get("writes", []), "connections")
    if wr:
        xs = list(wr)
        rate = [med(wr[x], "writesPerSecond") for x in xs]
        fsb = [statistics.median(r["fsyncPerSecond"] * r["meanBatch"] for r in wr[x]) for x in xs]
        ech = [med(wr[x], "echoRoundTripsPerSecond") for x in xs]
        ax.plot(xs, rate, "-o", color=hearth, label="acknowledged durable writes/s")
        ax.plot(xs, fsb, ":s", color=floor, label="fdatasync/s × mean group commit")
        ax.plot(xs, ech, "--^", color=echo, label="raw WebSocket echo round trips/s")
        for x, y, b in zip(xs, rate, [med(wr[x], "meanBatch") for x in xs]):
            ax.annotate(f"{y:,.0f}\n(batch {b:.1f})", (x, y), textcoords="offset points", xytext=(4, -22), fontsize=8)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(xs, [str(x) for x in xs])
    ax.set_xlabel("writing connections (one put at a time each)")
    ax.set_title("durable writes per second (higher is better)", fontsize=10)
    ax.legend(fontsize=8)

    # 4. Memory per connection.
    ax = axes[1][1]
    mem = res.get("memory", [])
    if mem:
        groups = {}
        for r in mem:
            groups.setdefault((r["listening"], r["connections"]), []).append(r)
        keys = sorted(groups)
        names = [f"{n:,} conns" + (" + 1 listen each" if l else " idle") for l, n in keys]
        rss = [med(groups[k], "rssBytesPerConnection") / 1024 for k in keys]
        dirty = [med(groups[k], "privateDirtyBytesPerConnection") / 1024 for k in keys]
        ys = range(len(keys))
        ax.barh([y - 0.2 for y in ys], rss, height=0.4, color=hearth, label="VmRSS")
        ax.barh([y + 0.2 for y in ys], dirty, height=0.4, color=floor, label="Private_Dirty")
        for y, v in zip(ys, rss):
            ax.text(v, y - 0.2, f" {v:.1f}", va="center", fontsize=8)
        for y, v in zip(ys, dirty):
            ax.text(v, y + 0.2, f" {v:.1f}", va="center", fontsize=8)
        ax.set_yticks(list(ys), names, fontsize=8)
        ax.invert_yaxis()
        ax.set_xlim(right=max(rss + dirty) * 1.6)
        ax.legend(fontsize=8, loc="lower right")
    ax.set_xlabel("KiB per connection (after − before) / N")
    ax.set_title("hearth serve: memory per WebSocket connection (lower is better)", fontsize=10)

    from matplotlib.ticker import NullFormatter, ScalarFormatter
    for ax in axes.flat:
        if ax.get_yscale() == "log":
            ax.yaxis.set_major_formatter(ScalarFormatter())
            ax.yaxis.get_major_formatter().set_scientific(False)
            ax.yaxis.set_minor_formatter(NullFormatter())
        ax.tick_params(labelsize=8)
        ax.grid(True, which="major", alpha=0.3)
    loads = [r["load"][0] for k in ("writes", "fanOut", "memory") for r in res.get(k, []) if r.get("load")]
    load = f", load {min(loads):.1f}–{max(loads):.1f}" if loads else ""
    fig.suptitle(f"Hearth sync and hearth serve — medians of {', '.join(p.split('/')[-1] for p in a.results)} ({res['date'][:10]}, "
                 f"{res['cores']} cores{load}) and the README's drain table", fontsize=11)
    fig.tight_layout(rect=[0, 0, 1, 0.97])
    fig.savefig(a.out, dpi=90)

    for n, d, per, f in drain:
        print(f"drain N={n:,} {d}: {per:,.0f} µs/write, floor {f:,.1f} µs ({per / f:.1f}×)")
    for x, rows in fan.items():
        print(f"fan-out {x:,} listeners ({len(rows)} runs): p50 {med(rows, 'p50Ms'):.2f} ms / floor {med(rows, 'floorP50Ms'):.2f}, "
              f"p99 {med(rows, 'p99Ms'):.2f} ms / floor {med(rows, 'floorP99Ms'):.2f}")
    for x, rows in wr.items():
        print(f"writes {x} connections ({len(rows)} runs): {med(rows, 'writesPerSecond'):,.0f}/s, batch {med(rows, 'meanBatch'):.1f}, "
              f"fdatasync×batch {statistics.median(r['fsyncPerSecond'] * r['meanBatch'] for r in rows):,.0f}/s, echo {med(rows, 'echoRoundTripsPerSecond'):,.0f}/s")
    for (l, n), rows in sorted(groups.items()) if mem else []:
        print(f"memory {n:,} connections{' + listen' if l else ''} ({len(rows)} runs): {med(rows, 'rssBytesPerConnection'):,.0f} B RSS, "
              f"{med(rows, 'privateDirtyBytesPerConnection'):,.0f} B Private_Dirty per connection")
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
