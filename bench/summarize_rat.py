#!/usr/bin/env python3
"""Summary of bench/run_rat.sh: medians over rounds, ratios, issue 15's goals. Usage: summarize_rat.py DIR"""
import os
import re
import statistics
import sys

d = sys.argv[1]
raw = os.path.join(d, "raw")


def fields(line):
    return dict(kv.split("=", 1) for kv in line.split() if "=" in kv)


def collect(prefix, pick):
    """Values per round of files raw/<prefix>-r<k>.out, by pick(lines) (None: no figure)."""
    vals = []
    for f in sorted(os.listdir(raw)):
        if re.fullmatch(re.escape(prefix) + r"-r\d+\.out", f):
            with open(os.path.join(raw, f)) as fh:
                v = pick(fh.read().splitlines())
            if v is not None:
                vals.append(v)
    return vals


def pp(size, key):
    def pick(lines):
        for l in lines:
            f = fields(l)
            if f.get("size") == str(size) and f.get("check") == "ok" and key in f:
                return float(f[key])
    return pick


def line_with(first, key):
    def pick(lines):
        for l in lines:
            f = fields(l)
            if l.startswith(first) and f.get("check", "ok") == "ok" and key in f:
                return float(f[key])
    return pick


def med(vals):
    return statistics.median(vals) if vals else None


def fmt(v, nd=3):
    return "–" if v is None else f"{v:.{nd}g}" if v < 1000 else f"{v:.0f}"


def cell(vals, nd=3):
    if not vals:
        return "–"
    return f"{fmt(med(vals), nd)} [{fmt(min(vals), nd)}–{fmt(max(vals), nd)}] ({len(vals)})"


out = []
meta = open(os.path.join(d, "meta.txt")).read()
out.append("# Ranks as threads vs flat MPI vs threads sharing one rank\n")
out.append("```\n" + meta + "```\n")
out.append("Median over rounds [min–max] (rounds). Latencies one-way, us; bandwidth MB/s (10^6 B).\n")
impls = ["weft", "mpich", "openmpi"]
goals = []

out.append("## One pair (bench_pingpong)\n")
out.append("| figure | Weft rat (1 process x 2) | Weft flat (2 processes) | MPICH flat | Open MPI flat | rat / Weft flat |")
out.append("|---|---|---|---|---|---|")
for label, size, key, better in (("latency 8 B, median", 8, "median_us", "lower"),
                                 ("bandwidth 1 MiB", 1048576, "bw_MBps", "higher")):
    rat = collect("pp-weft-rat", pp(size, key))
    flat = {i: collect(f"pp-{i}-flat", pp(size, key)) for i in impls}
    ratio = med(rat) / med(flat["weft"]) if rat and flat["weft"] else None
    out.append(f"| {label} | {cell(rat)} | {cell(flat['weft'])} | {cell(flat['mpich'])} | "
               f"{cell(flat['openmpi'])} | {fmt(ratio)} |")
    if ratio is not None:
        ok = ratio <= 1 if better == "lower" else ratio >= 1
        goals.append(f"- {label}: rat / flat Weft = {ratio:.3f} (goal: at least flat's, {'<=' if better == 'lower' else '>='} 1): "
                     f"{'met' if ok else 'NOT met'}")

out.append("\n## P pairs at once, 1-byte latency (median us)\n")
out.append("| P | Weft rat, pairs in-process | Weft rat, all in one process | Weft flat | Weft threads | MPICH threads | Open MPI threads |")
out.append("|---|---|---|---|---|---|---|")
for p in (1, 2, 4):
    rat = collect(f"pairs{p}-weft-rat", line_with("ranks=", "median_us"))
    rat1 = collect(f"pairs{p}-weft-rat1", line_with("ranks=", "median_us"))
    flat = collect(f"pairs{p}-weft-flat", line_with("ranks=", "median_us"))
    thr = {i: collect(f"pairs{p}-{i}-threads", line_with("pattern=NtoN", "median_us")) for i in impls}
    out.append(f"| {p} | {cell(rat)} | {cell(rat1)} | {cell(flat)} | {cell(thr['weft'])} | {cell(thr['mpich'])} | "
               f"{cell(thr['openmpi'])} |")
    if rat and flat:
        r = med(rat) / med(flat)
        goals.append(f"- {p} pair(s): rat / flat Weft latency = {r:.3f} (goal <= 1): {'met' if r <= 1 else 'NOT met'}")
    peers = [med(thr[i]) for i in ("mpich", "openmpi") if thr[i]]
    if p == 4 and rat and peers:
        g = min(peers) / med(rat)
        goals.append(f"- 4 pairs: better peer's threads-sharing latency / Weft rat = {g:.2f} (goal >= 5): "
                     f"{'met' if g >= 5 else 'NOT met'}")

out.append("\n## Resident size of a 4-rank job (kB, all processes)\n")
out.append("| Weft rat 1 x 4 | Weft 4 processes | MPICH 4 processes | Open MPI 4 processes | rat / Weft flat |")
out.append("|---|---|---|---|---|")
rat = collect("rss-weft-rat", line_with("ranks=", "rss_total_kb"))
flat = {i: collect(f"rss-{i}-flat", line_with("ranks=", "rss_total_kb")) for i in impls}
ratio = med(rat) / med(flat["weft"]) if rat and flat["weft"] else None
out.append(f"| {cell(rat, 6)} | {cell(flat['weft'], 6)} | {cell(flat['mpich'], 6)} | {cell(flat['openmpi'], 6)} | {fmt(ratio)} |")
if ratio is not None:
    goals.append(f"- memory: a 4-rank job as 1 x 4 uses {ratio:.2f}x the resident size of 4 processes (reported)")

out.append("\n## Goals (issue 15)\n")
out.extend(goals or ["- no figures"])
runs = open(os.path.join(d, "runs.txt")).read().split("\n") if os.path.exists(os.path.join(d, "runs.txt")) else []
bad = [l for l in runs if l and not l.endswith(" 0")]
out.append(f"\nRuns: {len([l for l in runs if l])}, failed: {len(bad)}" + (" (" + ", ".join(bad) + ")" if bad else ""))
print("\n".join(out))
