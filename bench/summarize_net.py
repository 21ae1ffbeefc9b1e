#!/usr/bin/env python3
"""Summarize one bench/run_net.sh result directory: writes summary.md and summary.csv there, prints summary.md.

    python3 bench/summarize_net.py bench/results/net-<timestamp>

Every figure is the median over rounds of one run's own figure (only runs whose status is ok, only lines whose
check is ok), shown with the min-max across rounds. "Weft / best peer" divides Weft's median by the better
peer's median (the lower for times, the higher for rates, bandwidth and overlap). Standard library only.
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

# (job, metric name, param, unit, higher is better, line selector {key: value}, value key, goal)
# goal: None (reported only) or (comparison, factor): "le" = Weft <= factor x better peer, "ge" = >=.
METRICS = [
    ("pingpong", "latency", "8 B", "us", False, {"size": "8"}, "median_us", ("le", 0.9)),
    ("pingpong", "latency", "1 KiB", "us", False, {"size": "1024"}, "median_us", ("le", 0.9)),
    ("pingpong", "bandwidth", "64 KiB", "MB/s", True, {"size": "65536"}, "bw_MBps", ("ge", 1.0)),
    ("pingpong", "bandwidth", "1 MiB", "MB/s", True, {"size": "1048576"}, "bw_MBps", ("ge", 1.0)),
    ("pingpong", "bandwidth", "4 MiB", "MB/s", True, {"size": "4194304"}, "bw_MBps", ("ge", 1.0)),
    ("rate", "message rate", "1 thread/rank", "Mmsg/s", True, {"threads": "1"}, "builtin_mmsg_s", None),
    ("rate", "message rate", "4 threads/rank", "Mmsg/s", True, {"threads": "4"}, "builtin_mmsg_s", ("ge", 2.0)),
    ("mtlat", "1-byte latency NtoN", "1 thread/rank", "us", False, {"pattern": "NtoN", "threads": "1"},
     "median_us", None),
    ("mtlat", "1-byte latency NtoN", "8 threads/rank", "us", False, {"pattern": "NtoN", "threads": "8"},
     "median_us", None),
    ("overlap", "overlap 4 MiB", "sender computes", "", True, {"case": "sender", "side": "sender"}, "overlap",
     ("ge", 1.0)),
    ("overlap", "overlap 4 MiB", "receiver computes", "", True, {"case": "receiver", "side": "receiver"},
     "overlap", ("ge", 1.0)),
    ("overlap", "overlap 4 MiB", "both compute, sender", "", True, {"case": "both", "side": "sender"}, "overlap",
     None),
    ("overlap", "overlap 4 MiB", "both compute, receiver", "", True, {"case": "both", "side": "receiver"},
     "overlap", None),
    ("coll", "Allreduce 2x2", "8 B", "us", False, {"coll": "allreduce", "size": "8"}, "median_us", ("le", 1.0)),
    ("coll", "Allreduce 2x2", "1 MiB", "us", False, {"coll": "allreduce", "size": "1048576"}, "median_us",
     ("le", 1.0)),
    ("coll", "Bcast 2x2", "8 B", "us", False, {"coll": "bcast", "size": "8"}, "median_us", ("le", 1.0)),
    ("coll", "Bcast 2x2", "1 MiB", "us", False, {"coll": "bcast", "size": "1048576"}, "median_us", ("le", 1.0)),
    ("startup", "start-up + teardown 2x8", "MPI_Init+MPI_Finalize", "ms", False, {"ranks": "16"}, "wall_ms",
     ("le", 1.0)),
]


def read_rows(path):
    """The k=v lines of a raw output (not the '#' headers), those with a failed check left out."""
    rows = []
    try:
        with open(path) as f:
            for line in f:
                if line.startswith("#") or "=" not in line:
                    continue
                kv = dict(KV.findall(line))
                if kv.get("check", "ok") == "ok":
                    rows.append(kv)
    except OSError:
        pass
    return rows


class Cell:
    def __init__(self, values):
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


def cell_text(c, rounds):
    if c.med is None:
        return "–"
    s = fmt(c.med)
    if c.n > 1:
        s += f" [{fmt(c.lo)}–{fmt(c.hi)}]"
    if c.n < rounds:
        s += f" ({c.n}/{rounds})"
    return s


def goal_text(goal):
    if goal is None:
        return "(reported)"
    op, factor = goal
    sign = "≤" if op == "le" else "≥"
    return f"{sign} {factor:g}x better peer"


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

    # rows[(job, impl, round)] = parsed lines of an ok run
    rows = {}
    for run in runs:
        if run["status"] == "ok":
            rnd = int(run["round"])
            rows[(run["job"], run["impl"], rnd)] = read_rows(
                os.path.join(out, "raw", f"{run['job']}-{run['impl']}-r{rnd}.out"))

    md = ["# Between two hosts: Weft vs MPICH vs Open MPI", ""]
    md.append(f"{meta.get('date', '?')}, {meta.get('host', '?')}; {rounds} round(s); load before "
              f"{meta.get('load_before', '?')} (CPUs {meta.get('cpu_busy_before', '?')} busy), after "
              f"{meta.get('load_after', '?')} ({meta.get('cpu_busy_after', '?')}). Weft {meta.get('weft_commit', '?')}; "
              f"MPICH {meta.get('mpich', '?')}; {meta.get('openmpi', '?')}.")
    md.append("")
    md.append(f"Hosts: {meta.get('hosts', '?')}. Binding: {meta.get('binding', '?')}. "
              f"Budgets: {meta.get('budgets', '?')}.")
    md.append("")
    md.append(f"System V IPC namespaces: {meta.get('ipc_namespaces', '?')}; /dev/shm: {meta.get('dev_shm', '?')}. "
              "The hosts share neither, so no implementation can reach the other host through shared memory: "
              "between hosts every byte goes over TCP on eth0 (within a host, in the 2x2 collectives, each "
              "uses its shared memory).")
    md.append("")
    md.append("## Configuration")
    md.append("")
    md.append(f"Weft's transport between the hosts: {meta.get('weft_transport', '?')}.")
    md.append("")
    md.append("| implementation | how it ran | where the ranks ran (-ppn 2) |")
    md.append("|---|---|---|")
    for impl in impls:
        md.append(f"| {NAMES[impl]} | {meta.get('config_' + impl, '?')} | {meta.get('placement_' + impl, '?')} |")
    md.append("")

    md.append("## Runs")
    md.append("")
    md.append("| implementation | state | runs ok | not ok |")
    md.append("|---|---|---|---|")
    for impl in impls:
        mine = [r for r in runs if r["impl"] == impl]
        ok = sum(1 for r in mine if r["status"] == "ok")
        bad = [f"{r['job']} r{r['round']}: {r['status']} ({r['seconds']} s)" for r in mine if r["status"] != "ok"]
        md.append(f"| {NAMES[impl]} | {meta.get('state_' + impl, '?')} | {ok}/{len(mine)} | "
                  f"{'; '.join(bad) or '–'} |")
    md.append("")

    md.append("## Figures and goals")
    md.append("")
    md.append("Each cell: median over rounds [min–max]; `(k/n)`: only k of n rounds gave the figure. Latencies "
              "are one-way (half a round trip) or per call (collectives: the slowest rank's), in µs; MB is "
              "10^6 bytes; message rate in millions of messages per second and rank; overlap from 0 to 1.")
    md.append("")
    md.append("| figure | " + " | ".join(NAMES[i] for i in impls) + " | Weft / best peer | goal | verdict |")
    md.append("|---|" + "---|" * len(impls) + "---|---|---|")
    csv_rows = []
    verdicts = {}
    for job, name, param, unit, higher, sel, key, goal in METRICS:
        cells = {}
        for impl in impls:
            vals = []
            for rnd in range(1, rounds + 1):
                for row in rows.get((job, impl, rnd), []):
                    if all(row.get(k) == v for k, v in sel.items()) and key in row:
                        try:
                            vals.append(float(row[key]))
                        except ValueError:
                            pass
                        break
            cells[impl] = Cell(vals)
        peer_meds = [cells[p].med for p in PEERS if p in cells and cells[p].med is not None]
        best = (max(peer_meds) if higher else min(peer_meds)) if peer_meds else None
        weft = cells.get("weft", Cell([])).med
        ratio = weft / best if weft is not None and best else None
        if goal is None:
            verdict = "(reported)"
        elif weft is None or best is None:
            verdict = "not measured"
        else:
            op, factor = goal
            met = weft <= factor * best if op == "le" else weft >= factor * best
            verdict = "met" if met else "NOT met"
        verdicts[(name, param)] = verdict
        label = f"{name}, {param}" + (f" ({unit})" if unit else "")
        md.append(f"| {label} | " + " | ".join(cell_text(cells[i], rounds) for i in impls) +
                  f" | {fmt_ratio(ratio)} | {goal_text(goal)} | {verdict} |")
        for impl in impls:
            c = cells[impl]
            csv_rows.append([job, name, param, unit, impl, c.n, c.med, c.lo, c.hi,
                             ratio if impl == "weft" else "", goal_text(goal), verdict if impl == "weft" else ""])
    md.append("")
    goals = [v for v in verdicts.values() if v != "(reported)"]
    md.append(f"Goals: {sum(v == 'met' for v in goals)} met, {sum(v == 'NOT met' for v in goals)} not met, "
              f"{sum(v == 'not measured' for v in goals)} not measured, of {len(goals)}.")
    md.append("")
    md.append("Raw outputs: `raw/<job>-<impl>-r<round>.out/.err`; statuses: `runs.csv`; settings: `meta.txt`.")
    text = "\n".join(md) + "\n"
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write(text)
    with open(os.path.join(out, "summary.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["job", "name", "param", "unit", "impl", "rounds", "median", "min", "max",
                    "weft_over_best_peer", "target", "verdict"])
        w.writerows(csv_rows)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
