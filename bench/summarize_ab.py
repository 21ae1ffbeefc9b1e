#!/usr/bin/env python3
"""Medians of bench/run_ab.sh output, new build over base build, one line per figure."""
import collections
import re
import statistics
import sys

d = collections.defaultdict(list)
for path in sys.argv[1:]:
    for line in open(path):
        build = line.split()[0]
        if " pp " in line:
            m = re.search(r"size=(\d+) .*median_us=([\d.]+).*bw_MBps=([\d.]+)", line)
            d[(build, "lat_us", int(m[1]))].append(float(m[2]))
            d[(build, "bw_MBps", int(m[1]))].append(float(m[3]))
            g = re.search(r"gmed_us=([\d.]+)", line)   # bench_pingpong's finer median, when it has one
            if g:
                d[(build, "gmed_us", int(m[1]))].append(float(g[1]))
        elif " sqmr " in line:
            m = re.search(r"builtin_mmsg_s=([\d.]+) derived_mmsg_s=([\d.]+)", line)
            d[(build, "sqmr_mmsg_s", "builtin")].append(float(m[1]))
            d[(build, "sqmr_mmsg_s", "derived")].append(float(m[2]))
        elif " tm " in line:
            m = re.search(r"N=(\d+) .*median_us_per_msg=([\d.]+)", line)
            d[(build, "tagmatch_us", int(m[1]))].append(float(m[2]))

print("| figure | point | base | new | new/base | better |")
print("|---|---|---|---|---|---|")
for kind, point in sorted({k[1:] for k in d}, key=lambda k: (k[0], str(k[1]).zfill(10))):
    b, n = d[("base", kind, point)], d[("new", kind, point)]
    if not b or not n or statistics.median(b) == 0:
        continue
    mb, mn = statistics.median(b), statistics.median(n)
    better = "higher" if kind in ("bw_MBps", "sqmr_mmsg_s") else "lower"
    print(f"| {kind} | {point} | {mb:.4g} | {mn:.4g} | {mn / mb:.3f} | {better} (n={len(b)}/{len(n)}) |")
