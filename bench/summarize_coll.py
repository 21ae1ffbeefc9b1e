#!/usr/bin/env python3
"""Summary of a bench/run_coll.sh results directory: summary.md and summary.csv.

Latency: per (collective, ranks, size) and implementation, the median over rounds of each run's median
per-call time; ratio = Weft / the better peer (goal: <= 1 at every size). Overlap: the median over rounds
of each run's overlap (goal: >= 0.8), with T_comm for reference."""
import statistics
import sys
from collections import defaultdict
from pathlib import Path


def parse(path):
    rows = []
    for line in path.read_text().splitlines():
        kv = dict(f.split("=", 1) for f in line.split() if "=" in f)
        if "mode" in kv:
            rows.append(kv)
    return rows


def main(out):
    out = Path(out)
    rows = parse(out / "runs.txt")
    lat = defaultdict(list)   # (coll, np, size, impl) -> [median_us]
    ov = defaultdict(list)    # (coll + computing ranks, np, size, impl) -> [(overlap, comm_us)]
    bad = []
    for r in rows:
        key = (r["coll"], int(r["np"]), int(r["size"]), r["impl"])
        if r.get("check") != "ok":
            bad.append(key)
        if r["mode"] == "lat":
            lat[key].append(float(r["median_us"]))
        else:
            who = r.get("compute", "all")
            okey = (r["coll"] + ("" if who == "all" else f" ({who} computes)"),) + key[1:]
            ov[okey].append((float(r["overlap"]), float(r["comm_us"])))
    impls = [i for i in ("weft", "mpich", "openmpi") if any(k[3] == i for k in list(lat) + list(ov))]
    peers = [i for i in impls if i != "weft"]
    md = ["# Collectives: Weft vs MPICH vs Open MPI", ""]
    meta = out / "meta.txt"
    if meta.exists():
        md += ["```", meta.read_text().rstrip(), "```", ""]
    csv = ["mode,coll,np,size," + ",".join(impls) + ",ratio_weft_over_best_peer,goal_met"]

    md += ["## Latency (median us per call; ratio = Weft / better peer, goal <= 1)", ""]
    md += ["| coll | ranks | size | " + " | ".join(impls) + " | ratio | goal |",
           "|---|---|---|" + "---|" * len(impls) + "---|---|"]
    met = total = 0
    for coll, np_, size in sorted({k[:3] for k in lat}):
        vals = {i: statistics.median(lat[(coll, np_, size, i)]) for i in impls if lat.get((coll, np_, size, i))}
        peer_vals = [vals[p] for p in peers if p in vals]
        ratio = vals["weft"] / min(peer_vals) if "weft" in vals and peer_vals else None
        goal = "" if ratio is None else ("met" if ratio <= 1 else "**not met**")
        if ratio is not None:
            total += 1
            met += ratio <= 1
        cells = [f"{vals[i]:.2f}" if i in vals else "-" for i in impls]
        md.append(f"| {coll} | {np_} | {size} | " + " | ".join(cells) +
                  f" | {'-' if ratio is None else f'{ratio:.2f}'} | {goal} |")
        csv.append(f"lat,{coll},{np_},{size}," + ",".join(c if c != "-" else "" for c in cells) +
                   f",{'' if ratio is None else f'{ratio:.3f}'},{goal.strip('*')}")
    md += ["", f"Latency goal met at {met} of {total} points.", ""]

    md += ["## Overlap with computation (median over rounds; goal >= 0.8)", ""]
    md += ["| coll | ranks | size | " + " | ".join(f"{i} overlap (T_comm us)" for i in impls) + " | goal |",
           "|---|---|---|" + "---|" * len(impls) + "---|"]
    for coll, np_, size in sorted({k[:3] for k in ov}):
        cells, wv = [], None
        for i in impls:
            v = ov.get((coll, np_, size, i))
            if not v:
                cells.append("-")
                continue
            o = statistics.median(x[0] for x in v)
            c = statistics.median(x[1] for x in v)
            cells.append(f"{o:.2f} ({c:.0f})")
            if i == "weft":
                wv = o
        goal = "" if wv is None else ("met" if wv >= 0.8 else "**not met**")
        md.append(f"| {coll} | {np_} | {size} | " + " | ".join(cells) + f" | {goal} |")
        csv.append(f"overlap,{coll},{np_},{size}," + ",".join(c if c != "-" else "" for c in cells) +
                   f",,{goal.strip('*')}")
    if bad:
        md += ["", "**Failed checks:** " + ", ".join(f"{c} np={n} size={s} {i}" for c, n, s, i in sorted(set(bad)))]
    (out / "summary.md").write_text("\n".join(md) + "\n")
    (out / "summary.csv").write_text("\n".join(csv) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
