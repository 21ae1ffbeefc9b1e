#!/usr/bin/env python3
"""Summarize one bench/run_mt.sh result directory: writes summary.md and summary.csv there, prints summary.md.

    python3 bench/summarize_mt.py bench/results/mt-<timestamp>

Every figure is the median over rounds of one run's own figure, shown with the min-max across rounds. Ratios
between two points of one benchmark (N=8 / N=1 threads, 8 / 2 ranks, MULTIPLE / SINGLE) are taken within a
round (the same run, or the runs of the same round) and then summarized over rounds in the same way. "Weft /
best peer" divides Weft's median by the better peer's median. Standard library only.
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


def read_lines(path, key):
    """Lines of k=v pairs starting with `key=` whose check (if any) is ok."""
    rows = []
    try:
        with open(path) as f:
            for line in f:
                if not line.startswith(key + "="):
                    continue
                kv = dict(KV.findall(line))
                if kv.get("check", "ok") != "ok":
                    continue
                rows.append(kv)
    except OSError:
        pass
    return rows


def header(path):
    try:
        with open(path) as f:
            for line in f:
                if line.startswith("# mt_"):
                    return dict(KV.findall(line))
    except OSError:
        pass
    return {}


class Cell:
    def __init__(self, values):
        values = [v for v in values if v is not None]
        self.n = len(values)
        self.med = statistics.median(values) if values else None
        self.lo = min(values) if values else None
        self.hi = max(values) if values else None


def fmt(x):
    if x is None:
        return "–"
    a = abs(x)
    if a >= 1000:
        return f"{x:.0f}"
    if a >= 10:
        return f"{x:.1f}"
    if a >= 1:
        return f"{x:.2f}"
    return f"{x:.3f}"


def fmt_ratio(r):
    if r is None:
        return "–"
    return f"{r:.2f}x" if r >= 0.1 else f"{r:.2g}x"


def cell_text(c, rounds, suffix=""):
    if c.med is None:
        return "–"
    s = fmt(c.med) + suffix
    if c.n > 1:
        s += f" [{fmt(c.lo)}–{fmt(c.hi)}]"
    if c.n < rounds:
        s += f" ({c.n}/{rounds})"
    return s


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.argv[1]
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
    rounds = max((int(r["round"]) for r in runs), default=0)
    impls = [i for i in IMPLS if any(r["impl"] == i for r in runs)]

    # S[metric][param][impl][round] = value
    S = {}
    provided = {}

    def add(metric, param, impl, rnd, value):
        S.setdefault(metric, {}).setdefault(param, {}).setdefault(impl, {})[rnd] = value

    def get(metric, param, impl, rnd):
        return S.get(metric, {}).get(param, {}).get(impl, {}).get(rnd)

    for run in runs:
        if run["status"] != "ok":
            continue
        impl, rnd, job = run["impl"], int(run["round"]), run["job"]
        path = os.path.join(out, "raw", f"{job}-{impl}-r{rnd}.out")
        h = header(path)
        if "provided" in h:
            provided.setdefault(impl, {}).setdefault(job.split("-")[0].rstrip("0123456789"), set()).add(
                h["provided"])
        if job == "overlap":
            for kv in read_lines(path, "case"):
                p = (kv["case"], kv["side"])
                add("ov", p, impl, rnd, float(kv["overlap"]))
                for k in ("comm", "comp", "total"):
                    add("ov_" + k, p, impl, rnd, float(kv[k + "_median_us"]))
        elif job == "sendtime":
            for kv in read_lines(path, "size"):
                p = (int(kv["size"]), int(kv["comp_us"]))
                add("st", p, impl, rnd, float(kv["send_median_us"]))
                if "overlap" in kv:
                    add("st_ov", p, impl, rnd, float(kv["overlap"]))
        elif job == "latency":
            for kv in read_lines(path, "pattern"):
                p = (kv["pattern"], int(kv["threads"]))
                for k in ("median", "mean", "p99"):
                    add("lat_" + k, p, impl, rnd, float(kv[k + "_us"]))
        elif job == "computelat":
            for kv in read_lines(path, "threads"):
                p = int(kv["threads"])
                for k in ("median", "mean", "p99"):
                    add("cl_" + k, p, impl, rnd, float(kv[k + "_us"]))
                add("cl_cores", p, impl, rnd,
                    0.5 * (float(kv["compute_cores0"]) + float(kv["compute_cores1"])))
        elif job == "cpublocked":
            for kv in read_lines(path, "role"):
                add("cpu", kv["role"], impl, rnd, float(kv["cpu_pct"]))
        elif job.startswith("ranks"):
            for kv in read_lines(path, "ranks"):
                p = int(kv["ranks"])
                for k in ("median", "mean", "p99"):
                    add("rl_" + k, p, impl, rnd, float(kv[k + "_us"]))
        elif job.startswith("level-"):
            # level-<level>-<k>: the k-th (SINGLE, MULTIPLE) pair of the round; key round * 1000 + k
            parts = job.split("-")
            key = rnd * 1000 + (int(parts[2]) if len(parts) > 2 and parts[2].isdigit() else 0)
            for kv in read_lines(path, "size"):
                p = (int(kv["size"]), kv["level"])
                add("il_median", p, impl, key, float(kv["median_us"]))
                add("il_mean", p, impl, key, float(kv["mean_us"]))

    # within-round ratios (within-pair for the level job, whose keys are round * 1000 + pair)
    def ratio_metric(name, src, num, den):
        for impl in impls:
            for key in sorted(S.get(src, {}).get(num, {}).get(impl, {})):
                a, b = get(src, num, impl, key), get(src, den, impl, key)
                if a is not None and b:
                    add(name, (num, den), impl, key, a / b)

    for pat in ("1toN", "NtoN"):
        ns = sorted({p[1] for p in S.get("lat_mean", {}) if p[0] == pat})
        if len(ns) >= 2:
            for k in ("median", "mean"):
                ratio_metric("latr_" + k, "lat_" + k, (pat, ns[-1]), (pat, ns[0]))
    cns = sorted(S.get("cl_mean", {}))
    if len(cns) >= 2:
        for k in ("median", "mean"):
            ratio_metric("clr_" + k, "cl_" + k, cns[-1], cns[0])
    rns = sorted(S.get("rl_mean", {}))
    if len(rns) >= 2:
        for k in ("median", "mean"):
            ratio_metric("rlr_" + k, "rl_" + k, rns[-1], rns[0])
    for size in sorted({p[0] for p in S.get("il_median", {})}):
        ratio_metric("ilr", "il_median", (size, "multiple"), (size, "single"))

    def cells(metric, param):
        return {i: Cell(list(S.get(metric, {}).get(param, {}).get(i, {}).values())) for i in impls}

    md, rows = [], []

    def best_peer(cs, higher_better):
        vals = [(cs[p].med, p) for p in PEERS if p in cs and cs[p].med is not None]
        if not vals:
            return None, None
        return (max if higher_better else min)(vals)

    def table(title, metric, unit, higher_better, label, shown, note=None, ratio_col=True, suffix=""):
        params = sorted(S.get(metric, {}))
        if not params:
            return
        md.append(f"\n### {title}\n")
        if note:
            md.append(note + "\n")
        cols = [label] + [NAMES[i] for i in impls] + (["Weft / best peer"] if ratio_col else [])
        md.append("| " + " | ".join(cols) + " |")
        md.append("|" + "---|" * len(cols))
        for p in params:
            cs = cells(metric, p)
            bp, _ = best_peer(cs, higher_better)
            w = cs.get("weft")
            ratio = w.med / bp if (ratio_col and w and w.med is not None and bp) else None
            line = [shown(p)] + [cell_text(cs[i], rounds, suffix) for i in impls]
            if ratio_col:
                line.append(fmt_ratio(ratio))
            md.append("| " + " | ".join(line) + " |")
            for i in impls:
                c = cs[i]
                rows.append(["metric", metric, shown(p), unit, i, c.n, c.med, c.lo, c.hi,
                             ratio if i == "weft" else "", "", ""])

    # --- goals ---
    goals = []

    def goal(text, metric, param, op, target):
        """op: 'ge', 'le', 'lt', 'absdev' (|x - 1| < target)."""
        cs = cells(metric, param)

        def ok(x):
            if x is None:
                return None
            return {"ge": x >= target, "le": x <= target, "lt": x < target,
                    "absdev": abs(x - 1) < target}[op]

        verdicts = {i: ok(cs[i].med) for i in impls}
        w = cs.get("weft")
        verdict = "not measured" if not w or w.med is None else ("met" if verdicts["weft"] else "NOT met")
        goals.append((text, cs, verdicts, verdict))
        for i in impls:
            c = cs[i]
            rows.append(["goal", text, "", "", i, c.n, c.med, c.lo, c.hi, "", target,
                         verdict if i == "weft" else ("" if verdicts[i] is None else
                                                      ("met" if verdicts[i] else "not met"))])

    for case, side, text in (("both", "sender", "overlap, both computing, sender side ≥ 0.9"),
                             ("both", "receiver", "overlap, both computing, receiver side ≥ 0.9"),
                             ("sender", "sender", "overlap, sender computing ≥ 0.9"),
                             ("receiver", "receiver", "overlap, receiver computing ≥ 0.9")):
        goal(text, "ov", (case, side), "ge", 0.9)
    for pat in ("1toN", "NtoN"):
        for k in ("mean", "median"):
            keys = list(S.get("latr_" + k, {}))
            key = next((q for q in keys if q[0][0] == pat), None)
            if key:
                goal(f"{pat} threads: {k} latency N={key[0][1]} / N={key[1][1]} ≤ 3", "latr_" + k, key, "le", 3)
            else:
                goals.append((f"{pat} threads: {k} latency N=8 / N=1 ≤ 3", {}, {}, "not measured"))
    key = next(iter(S.get("clr_mean", {})), None)
    if key:
        goal(f"1 MiB latency with computing threads: mean N={key[0]} / N={key[1]} ≤ 1.3", "clr_mean", key, "le", 1.3)
    else:
        goals.append(("1 MiB latency with computing threads: mean N=4 / N=0 ≤ 1.3", {}, {}, "not measured"))
    goal("CPU of a rank blocked in MPI_Recv < 5% of a core", "cpu", "blocked_recv", "lt", 5.0)
    key = next(iter(S.get("rlr_mean", {})), None)
    if key:
        goal(f"1-byte latency, mean {key[0]} ranks / {key[1]} ranks ≤ 3", "rlr_mean", key, "le", 3)
    else:
        goals.append(("1-byte latency, mean 8 ranks / 2 ranks ≤ 3", {}, {}, "not measured"))
    for key in sorted(S.get("ilr", {})):
        goal(f"latency {human_size(key[0][0])}: MULTIPLE / SINGLE within 10%", "ilr", key, "absdev", 0.10)

    # --- header ---
    md.append(f"# Threads and progression: {os.path.basename(os.path.abspath(out))}\n")
    for k in ("date", "host", "weft_commit", "mpich", "openmpi", "binding", "rounds", "thread_level", "budgets",
              "runs_seconds", "cpu_busy_before", "cpu_busy_after", "load_before", "load_after"):
        if k in meta:
            md.append(f"- {k}: {meta[k]}")
    busy = [int(meta.get(k, "0%").rstrip("%") or 0) for k in ("cpu_busy_before", "cpu_busy_after")]
    if max(busy) > 20:
        md.append(f"\n**Warning: other programs kept the CPUs {busy[0]}% busy before the run and {busy[1]}% after"
                  " it.** These benchmarks put several threads or ranks on each core on purpose; other load"
                  " changes the figures (above all the peers', which poll): look at the spreads, and rerun on a"
                  " quiet machine before quoting figures.")
    md.append("\nCells: median over rounds [min–max over rounds] (rounds with a result / rounds, when some failed)."
              " Weft / best peer divides Weft's median by the better peer's median.")

    # --- runs ---
    md.append("\n## Runs\n")
    def group(job):
        return re.sub(r"-\d+$", "", job)  # level-single-2 -> level-single

    jobs = []
    for r in runs:
        if group(r["job"]) not in jobs:
            jobs.append(group(r["job"]))
    md.append("| job | " + " | ".join(NAMES[i] for i in impls) + " |")
    md.append("|---|" + "---|" * len(impls))
    for j in jobs:
        line = [j]
        for i in impls:
            mine = [r for r in runs if r["impl"] == i and group(r["job"]) == j]
            st = [r["status"] for r in mine]
            ok = sum(s == "ok" for s in st)
            bad = sorted(set(s for s in st if s != "ok"))
            secs = [float(r["seconds"]) for r in mine if r["status"] == "ok"]
            t = f", {statistics.median(secs):.1f} s" if secs else ""
            line.append(f"{ok}/{len(st)} ok{t}" + (f" ({', '.join(bad)})" if bad else ""))
        md.append("| " + " | ".join(line) + " |")
    md.append("| build | " + " | ".join(meta.get("state_" + i, "?") for i in impls) + " |")
    md.append("| thread level provided | " + " | ".join(
        "; ".join(f"{j}: {'/'.join(sorted(v))}" for j, v in sorted(provided.get(i, {}).items())) or "–"
        for i in impls) + " |")

    # --- goals ---
    md.append("\n## Goals\n")
    md.append("Verdict for Weft; the peers' figures for the same goal are given for reference, with their own"
              " verdict after the figure.\n")
    md.append("| goal | " + " | ".join(NAMES[i] for i in impls) + " | Weft verdict |")
    md.append("|---|" + "---|" * len(impls) + "---|")
    for text, cs, verdicts, verdict in goals:
        line = [text]
        for i in impls:
            c = cs.get(i)
            if c is None or c.med is None:
                line.append("–")
                continue
            s = cell_text(c, rounds)
            if i != "weft" and verdicts.get(i) is not None:
                s += " met" if verdicts[i] else " not met"
            line.append(s)
        line.append(f"**{verdict}**" if verdict == "NOT met" else verdict)
        md.append("| " + " | ".join(line) + " |")

    # --- tables ---
    md.append("\n## Figures")
    table("Overlap ratio, 4 MiB message, computation ≈ communication time", "ov", "ratio", True, "computing / side",
          lambda p: f"{p[0]} / {p[1]}",
          "(T_comm + T_comp − T_total) / min(T_comm, T_comp), clipped to [0, 1], from each side's own medians:"
          " 1 = the transfer is hidden behind the computation, 0 = it happens only in MPI_Wait.", ratio_col=False)
    for k, what in (("comm", "T_comm (Isend/Irecv + Wait)"), ("comp", "T_comp (computation alone)"),
                    ("total", "T_total (start, computation, Wait)")):
        table(f"Overlap: {what}, median us", "ov_" + k, "us", False, "computing / side",
              lambda p: f"{p[0]} / {p[1]}")
    table("Send time: Isend + computation + Wait on the sender, median us", "st", "us",
          False, "size / computation", lambda p: f"{human_size(p[0])} / {p[1]} us",
          "Computation on both ranks. 0 us: the transfer alone (T_comm). Perfect overlap gives"
          " max(computation, T_comm), none gives their sum. The overlap figure of each run is in the CSV"
          " (metric st_ov) and in the next table.")
    table("Send time: overlap ratio", "st_ov", "ratio", True, "size / computation",
          lambda p: f"{human_size(p[0])} / {p[1]} us",
          "Only meaningful where T_comm is well above the jitter of the computation (a few us): for small"
          " messages min(T_comm, T_comp) is T_comm, so noise of a microsecond swings the ratio from 0 to 1.",
          ratio_col=False)
    for k in ("median", "mean", "p99"):
        table(f"1-byte latency with N threads per rank, {k} one-way us", "lat_" + k, "us", False, "pattern / N",
              lambda p: f"{p[0]} / {p[1]}",
              "1toN: rank 0's one thread with N threads of rank 1, round robin; NtoN: N concurrent thread pairs."
              if k == "median" else None)
    for k in ("median", "mean"):
        table(f"Threads: {k} latency ratio, largest N / N=1", "latr_" + k, "ratio", False, "pattern",
              lambda p: f"{p[0][0]} N={p[0][1]} / N={p[1][1]}", ratio_col=False)
    for k in ("median", "mean", "p99"):
        table(f"1 MiB ping-pong with N computing threads per rank, {k} one-way us", "cl_" + k, "us", False, "N",
              str)
    table("Computing threads: cores' worth of computation they got (mean of the two ranks)", "cl_cores",
          "cores", True, "N", str,
          "Work done / (work rate of one thread alone × elapsed time); each rank is pinned to one CPU, so at most"
          " 1: a latency bought by starving the computation shows here.", ratio_col=False)
    for k in ("median", "mean"):
        table(f"Computing threads: {k} latency ratio", "clr_" + k, "ratio", False, "N",
              lambda p: f"N={p[0]} / N={p[1]}", ratio_col=False)
    table("CPU used while blocked, % of one core", "cpu", "%", False, "role",
          lambda p: {"blocked_recv": "rank blocked in MPI_Recv",
                     "sleeper": "rank sleeping outside MPI"}.get(p, p),
          "getrusage(RUSAGE_SELF) of the whole process (all its threads) / wall time.")
    for k in ("median", "mean", "p99"):
        table(f"1-byte latency with R ranks (R/2 pairs at once), {k} one-way us", "rl_" + k, "us", False, "ranks",
              str)
    for k in ("median", "mean"):
        table(f"Ranks: {k} latency ratio", "rlr_" + k, "ratio", False, "ranks",
              lambda p: f"{p[0]} / {p[1]}", ratio_col=False)
    table("Thread level: median one-way latency, us", "il_median", "us", False, "size / level",
          lambda p: f"{human_size(p[0])} / {p[1]}")
    table("Thread level: MULTIPLE / SINGLE, median latency", "ilr", "ratio", False, "size",
          lambda p: human_size(p[0][0]),
          "One ratio per (SINGLE, MULTIPLE) pair of back-to-back runs; median [min–max] over all pairs of all"
          " rounds (so the count can exceed the number of rounds).", ratio_col=False)

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
