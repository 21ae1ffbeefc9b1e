#!/usr/bin/env python3
"""Summary of bench/run_rma.sh: summarize_rma.py <results dir> writes <dir>/summary.md.

runs.txt holds one line per case and run (impl= round= job= case= ... median_us= mbps= check=),
and one line per job that failed or did not finish (dnf=1). A case's figure is the median over
rounds of each run's median; a line with check=FAIL is left out and counted. A case an
implementation never printed, in a job that failed, is "did not finish"."""
import collections
import statistics
import sys

IMPLS = ["weft", "mpich", "openmpi"]
# (job, case key) -> how the case is shown and judged; key = (case, size, threads, target)
LAT_GOAL, BW_GOAL = 0.8, 1.0


def kv_of(line):
    return dict(f.split("=", 1) for f in line.split() if "=" in f)


def main(out):
    runs = collections.defaultdict(list)        # (impl, key) -> [median_us]
    bw = collections.defaultdict(list)          # (impl, key) -> [mbps]
    tails = collections.defaultdict(list)       # (impl, key) -> [p99_us]
    fails = collections.Counter()               # (impl, key) -> failed checks
    dnf = collections.defaultdict(set)          # impl -> jobs that did not finish
    ends = collections.defaultdict(list)        # (impl, key) -> how the computing target stopped
    job_of, order = {}, []
    for line in open(f"{out}/runs.txt"):
        kv = kv_of(line)
        if kv.get("dnf"):
            dnf[kv["impl"]].add(kv["job"])
            continue
        if "unavailable" in kv:
            dnf[kv["impl"]].add(kv["job"])
            continue
        key = (kv["case"], int(kv["size"]), int(kv["threads"]), kv["target"])
        if key not in job_of:
            job_of[key] = kv["job"]
            order.append(key)
        if kv["check"] != "ok":
            fails[(kv["impl"], key)] += 1
            continue
        if int(kv["n"]) == 0:   # the budget ended before a timed sample (one took longer)
            continue
        runs[(kv["impl"], key)].append(float(kv["median_us"]))
        if "target_end" in kv:
            ends[(kv["impl"], key)].append(kv["target_end"])
        bw[(kv["impl"], key)].append(float(kv["mbps"]))
        tails[(kv["impl"], key)].append(float(kv["p99_us"]))
    impls = [i for i in IMPLS if any(k[0] == i for k in runs) or i in dnf]

    def med(d, i, key):
        v = d.get((i, key))
        return statistics.median(v) if v else None

    def is_bw(key):
        return job_of[key] in ("bw", "bw_create") or job_of[key].startswith("mt")

    def cell(i, key):
        if (i, key) in runs:
            v = med(bw, i, key) if is_bw(key) else med(runs, i, key)
            spread = bw[(i, key)] if is_bw(key) else runs[(i, key)]
            txt = f"{v:.0f} MB/s" if is_bw(key) else f"{v:.3f} us"
            if len(spread) > 1:
                lo, hi = min(spread), max(spread)
                txt += f" [{lo:.0f}-{hi:.0f}]" if is_bw(key) else f" [{lo:.3f}-{hi:.3f}]"
            if not is_bw(key):
                txt += f" p99 {statistics.median(tails[(i, key)]):.2f}"
            return txt
        if fails[(i, key)]:
            return f"check FAILED ({fails[(i, key)]})"
        if job_of.get(key) in dnf.get(i, ()):
            return "did not finish"
        return "-"

    def name(key):
        case, size, threads, target = key
        sz = f"{size // 1048576} MiB" if size >= 1048576 else (f"{size // 1024} KiB" if size >= 1024 else f"{size} B")
        s = f"{case} {sz}"
        if threads > 1 or job_of[key].startswith("mt"):
            s += f" x{threads} threads"
        if case.startswith("acc"):
            s += f", target {target}"
        return s

    lines = ["# One-sided communication (2 ranks)", "", open(f"{out}/meta.txt").read().rstrip(), "",
             "Median over rounds of each run's median (latency: one operation and its "
             "synchronization, timed in groups of 16; bandwidth: bytes of a sample / median sample time), the spread "
             "over rounds in brackets, p99 the median over rounds of each run's 99th percentile.",
             "", "| case | " + " | ".join(impls) + " | Weft / better peer |",
             "|---|" + "---|" * (len(impls) + 1)]
    goals = []
    for key in order:
        w = med(bw, "weft", key) if is_bw(key) else med(runs, "weft", key)
        peers = [med(bw, p, key) if is_bw(key) else med(runs, p, key) for p in ("mpich", "openmpi")]
        peers = [p for p in peers if p]
        ratio = ""
        if w and peers:
            best = max(peers) if is_bw(key) else min(peers)
            r = w / best
            ratio = f"{r:.2f}"
            if not key[0].startswith("acc") and not job_of[key].startswith("mt"):
                if is_bw(key):
                    goals.append(f"- {name(key)}: {w:.0f} MB/s vs {best:.0f} MB/s, {r:.2f}x "
                                 f"({'met' if r >= BW_GOAL else 'NOT met'}: goal at least the better peer)")
                else:
                    goals.append(f"- {name(key)}: {w:.3f} us vs {best:.3f} us, {r:.2f}x "
                                 f"({'met' if r <= LAT_GOAL else 'NOT met'}: goal at most {LAT_GOAL}x the better peer)")
        elif w and not peers and not key[0].startswith("acc") and not job_of[key].startswith("mt"):
            goals.append(f"- {name(key)}: no peer figure (the peers did not finish): not judged")
        lines.append(f"| {name(key)} | " + " | ".join(cell(i, key) for i in impls) + f" | {ratio} |")

    # 8 threads against 1, per implementation and synchronization
    lines += ["", "## Threads: 8-thread Put bandwidth / 1-thread", ""]
    for sync in ("fence", "flush"):
        one = [k for k in order if job_of[k] == f"mt_{sync}" and k[2] == 1]
        eight = [k for k in order if job_of[k] == f"mt_{sync}" and k[2] == 8]
        if not one or not eight:
            continue
        cells = []
        for i in impls:
            a, b = med(bw, i, one[0]), med(bw, i, eight[0])
            if a and b:
                cells.append(f"{i} {b / a:.2f}")
                if i == "weft":
                    goals.append(f"- Put bandwidth, 8 threads / 1 thread, {sync}: {b:.0f} / {a:.0f} MB/s = "
                                 f"{b / a:.2f} ({'met' if b / a >= 0.9 else 'NOT met'}: goal at least 0.9)")
            else:
                cells.append(f"{i} did not finish" if f"mt_{sync}" in dnf.get(i, ()) else f"{i} -")
        lines.append(f"- {sync}: " + ", ".join(cells))

    # computing target against idle target
    lines += ["", "## Passive target: Accumulate latency, target computing / target idle", ""]
    idle = [k for k in order if k[0].startswith("acc") and k[3] == "idle"]
    comp = [k for k in order if k[0].startswith("acc") and k[3] == "compute"]
    if idle and comp:
        for i in impls:
            a, b = med(runs, i, idle[0]), med(runs, i, comp[0])
            if a and b:
                stop = ends.get((i, comp[0]), [])
                how = (f" (the computing target's loop ran to its time limit in {stop.count('limit')} of "
                       f"{len(stop)} runs: the accumulates waited for it)") if "limit" in stop else ""
                lines.append(f"- {i}: {b:.3f} us / {a:.3f} us = {b / a:.2f}{how}")
                if i == "weft":
                    goals.append(f"- Accumulate, target computing / idle: {b / a:.2f} "
                                 f"({'met' if b / a <= 2 else 'NOT met'}: goal within 2x)")
            else:
                lines.append(f"- {i}: did not finish" if "acc_compute" in dnf.get(i, ()) or
                             "acc_idle" in dnf.get(i, ()) else f"- {i}: -")
    lines += ["", "## Goals (Weft)", ""] + (goals or ["- no Weft figures"])
    if any(fails.values()):
        lines += ["", f"WARNING: {sum(fails.values())} case runs failed their data check and are left out."]
    for i, js in sorted(dnf.items()):
        lines.append(f"- {i}: jobs that failed or did not finish in some round: {', '.join(sorted(js))}")
    text = "\n".join(lines) + "\n"
    open(f"{out}/summary.md", "w").write(text)
    print(text)


if __name__ == "__main__":
    main(sys.argv[1])
