#!/usr/bin/env python3
"""Summarize one bench/run.sh result directory: writes summary.md and summary.csv there, prints summary.md.

    python3 bench/summarize.py bench/results/<timestamp>

Every figure is the median over rounds of one run's own figure (a run's median latency, its bandwidth, its
median time per message), shown with the min-max across rounds. Ratios compare Weft's median with the better
peer's median. Standard library only.
"""
import csv
import os
import re
import statistics
import sys

IMPLS = ["weft", "mpich", "openmpi"]
NAMES = {"weft": "Weft", "mpich": "MPICH", "openmpi": "Open MPI"}
PEERS = ["mpich", "openmpi"]
KV = re.compile(r"(\w+)=(\S+)")


def human_size(n):
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20} MiB"
    if n >= 1 << 10 and n % (1 << 10) == 0:
        return f"{n >> 10} KiB"
    return f"{n} B"


def parse_file(path, key):
    """Lines of k=v pairs that start with `key=`: {int(key value): {field: value}}."""
    rows = {}
    try:
        with open(path) as f:
            for line in f:
                if not line.startswith(key + "="):
                    continue
                kv = dict(KV.findall(line))
                if kv.get("check") != "ok":
                    continue  # a failed payload check voids the figures of that line
                rows[int(kv[key])] = kv
    except OSError:
        pass
    return rows


def load(out):
    runs = []
    with open(os.path.join(out, "runs.csv")) as f:
        runs = list(csv.DictReader(f))
    meta = {}
    try:
        with open(os.path.join(out, "meta.txt")) as f:
            for line in f:
                k, _, v = line.partition(":")
                meta[k.strip()] = v.strip()
    except OSError:
        pass
    # samples[metric][param][impl] = [value per round]
    samples = {}

    def add(metric, param, impl, value):
        samples.setdefault(metric, {}).setdefault(param, {}).setdefault(impl, []).append(value)

    for run in runs:
        if run["status"] == "missing":
            continue
        stem = os.path.join(out, "raw", f"{run['bench']}-{run['impl']}-r{run['round']}.out")
        impl = run["impl"]
        if run["bench"] == "pingpong":
            for size, kv in parse_file(stem, "size").items():
                add("lat", size, impl, float(kv["median_us"]))
                add("p99", size, impl, float(kv["p99_us"]))
                add("mean", size, impl, float(kv["mean_us"]))
                if size > 0:
                    add("bw", size, impl, float(kv["bw_MBps"]))
        else:
            rows = parse_file(stem, "N")
            for n, kv in rows.items():
                add("tm", n, impl, float(kv["median_us_per_msg"]))
            if len(rows) >= 2:
                lo, hi = min(rows), max(rows)
                add("tmratio", (lo, hi), impl,
                    float(rows[hi]["median_us_per_msg"]) / float(rows[lo]["median_us_per_msg"]))
    return runs, meta, samples


class Cell:
    def __init__(self, values):
        self.n = len(values)
        self.med = statistics.median(values) if values else None
        self.lo = min(values) if values else None
        self.hi = max(values) if values else None


def fmt(x):
    if x is None:
        return "–"
    if x >= 1000:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    if x >= 1:
        return f"{x:.2f}"
    return f"{x:.3f}"


def fmt_ratio(r):
    if r is None:
        return "–"
    return f"{r:.2f}x" if r >= 0.1 else f"{r:.2g}x"


def cell_text(c, rounds):
    if c.med is None:
        return "–"
    s = fmt(c.med)
    if c.n > 1:
        s += f" [{fmt(c.lo)}–{fmt(c.hi)}]"
    if c.n < rounds:
        s += f" ({c.n}/{rounds})"
    return s


def best_peer(cells, higher_better):
    vals = [(cells[p].med, p) for p in PEERS if p in cells and cells[p].med is not None]
    if not vals:
        return None, None
    return (max if higher_better else min)(vals)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.argv[1]
    runs, meta, samples = load(out)
    rounds = max((int(r["round"]) for r in runs), default=0)
    impls = [i for i in IMPLS if any(r["impl"] == i for r in runs)]
    md, rows = [], []

    def table(title, metric, unit, higher_better, label, note=None):
        params = sorted(samples.get(metric, {}))
        if not params:
            return
        md.append(f"\n## {title}\n")
        if note:
            md.append(note + "\n")
        md.append("| " + " | ".join([label] + [NAMES[i] for i in impls] + ["Weft / best peer"]) + " |")
        md.append("|" + "---|" * (len(impls) + 2))
        for p in params:
            cells = {i: Cell(samples[metric][p].get(i, [])) for i in impls}
            bp, _ = best_peer(cells, higher_better)
            w = cells.get("weft")
            ratio = w.med / bp if (w and w.med is not None and bp) else None
            shown = human_size(p) if metric in ("lat", "p99", "mean", "bw") else str(p)
            md.append("| " + " | ".join([shown] + [cell_text(cells[i], rounds) for i in impls]
                                       + [fmt_ratio(ratio)]) + " |")
            for i in impls:
                c = cells[i]
                rows.append(["metric", metric, p, unit, i, c.n, c.med, c.lo, c.hi,
                             ratio if i == "weft" else "", "", ""])

    # --- goals ---
    goals = []

    def goal(metric, param, higher_better, factor, text):
        cells = {i: Cell(samples.get(metric, {}).get(param, {}).get(i, [])) for i in impls}
        bp, which = best_peer(cells, higher_better)
        w = cells.get("weft")
        if not w or w.med is None or bp is None:
            goals.append((text, w.med if w else None, which, bp, None, "not measured"))
            return
        ratio = w.med / bp
        met = ratio >= factor if higher_better else ratio <= factor
        goals.append((text, w.med, which, bp, ratio, "met" if met else "NOT met"))

    goal("lat", 0, False, 0.8, "latency 0 B ≤ 0.8x better peer")
    goal("lat", 8, False, 0.8, "latency 8 B ≤ 0.8x better peer")
    for size in (64 << 10, 256 << 10, 1 << 20):
        goal("bw", size, True, 1.3, f"bandwidth {human_size(size)} ≥ 1.3x better peer")
    goal("bw", 4 << 20, True, 1.05, "bandwidth 4 MiB ≥ 1.05x better peer")

    md.append(f"# Benchmark summary: {os.path.basename(os.path.abspath(out))}\n")
    for k in ("date", "host", "weft_commit", "mpich", "openmpi", "binding", "rounds", "pingpong", "tagmatch",
              "cpu_busy_before", "cpu_busy_after", "load_before", "load_after"):
        if k in meta:
            md.append(f"- {k}: {meta[k]}")
    busy = [int(meta.get(k, "0%").rstrip("%") or 0) for k in ("cpu_busy_before", "cpu_busy_after")]
    if max(busy) > 20:
        md.append(f"\n**Warning: other programs kept the CPUs {busy[0]}% busy before the run and {busy[1]}% after"
                  " it.** The peers poll while they wait, so with other load some runs turn into scheduler time"
                  " slices of milliseconds: look at the spreads, and rerun on a quiet machine before quoting"
                  " figures.")
    md.append("\nCells: median over rounds [min–max over rounds] (rounds with a result / rounds, when some failed)."
              " Weft / best peer divides Weft's median by the better peer's median.")

    md.append("\n## Runs\n")
    md.append("| implementation | pingpong | tagmatch | build |")
    md.append("|---|---|---|---|")
    for i in impls:
        cols = []
        for b in ("pingpong", "tagmatch"):
            st = [r["status"] for r in runs if r["impl"] == i and r["bench"] == b]
            ok = sum(s == "ok" for s in st)
            bad = sorted(set(s for s in st if s != "ok"))
            cols.append(f"{ok}/{len(st)} ok" + (f" ({', '.join(bad)})" if bad else ""))
        md.append(f"| {NAMES[i]} | {cols[0]} | {cols[1]} | {meta.get('state_' + i, '?')} |")

    # tag matching ratio goal, reported for every implementation
    tr = samples.get("tmratio", {})
    tm_key = max(tr, key=lambda k: (k[1], -k[0])) if tr else None
    md.append("\n## Goals\n")
    md.append("| goal | Weft | better peer | Weft / better peer | verdict |")
    md.append("|---|---|---|---|---|")
    for text, wv, which, bp, ratio, verdict in goals:
        md.append(f"| {text} | {fmt(wv)} | {fmt(bp)} ({NAMES.get(which, '–')}) | "
                  f"{fmt_ratio(ratio)} | {verdict} |")
        rows.append(["goal", text, "", "", "weft", "", wv, "", "", ratio, "", verdict])
    if tm_key:
        lo, hi = tm_key
        cells = {i: Cell(tr[tm_key].get(i, [])) for i in impls}
        peers = ", ".join(f"{NAMES[i]} {fmt(cells[i].med)}x" for i in PEERS if i in cells and cells[i].med is not None)
        w = cells.get("weft")
        if (lo, hi) != (16, 65536):
            verdict = f"not evaluated (ran N={lo}..{hi})"
        elif not w or w.med is None:
            verdict = "not measured"
        else:
            verdict = "met" if w.med <= 2.0 else "NOT met"
        md.append(f"| tag matching: time per message at N={hi} ≤ 2x N={lo} | "
                  f"{fmt(w.med) + 'x' if w and w.med is not None else '–'} | {peers or '–'} | – | {verdict} |")
        for i in impls:
            rows.append(["goal", f"tagmatch N={hi} / N={lo} <= 2", f"{lo}-{hi}", "ratio", i, cells[i].n,
                         cells[i].med, cells[i].lo, cells[i].hi, "", "2.0", verdict if i == "weft" else ""])

    table("Latency: median one-way (half round trip), us", "lat", "us", False, "size")
    table("Latency: p99 one-way, us", "p99", "us", False, "size",
          "The 99th percentile of one run's samples (median over rounds).")
    table("Bandwidth: size / median one-way latency, MB/s (10^6 B/s)", "bw", "MB/s", True, "size")
    table("Tag matching: median time per message, us", "tm", "us", False, "N",
          "From the go message to MPI_Waitall's return on the receiver, divided by N.")
    if tm_key:  # last row of the tag matching table
        md.append("| " + " | ".join([f"**ratio N={tm_key[1]} / N={tm_key[0]}**"]
                                   + [cell_text(Cell(tr[tm_key].get(i, [])), rounds) for i in impls] + ["–"]) + " |")

    text = "\n".join(md) + "\n"
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write(text)
    with open(os.path.join(out, "summary.csv"), "w", newline="") as f:
        wr = csv.writer(f)
        wr.writerow(["kind", "name", "param", "unit", "impl", "rounds", "median", "min", "max",
                     "weft_over_best_peer", "target", "verdict"])
        for r in rows:
            wr.writerow(["" if v is None else (f"{v:.6g}" if isinstance(v, float) else v) for v in r])
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
