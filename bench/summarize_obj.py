#!/usr/bin/env python3
"""Summary of one bench/run_obj.sh result directory: summary.md and summary.csv (standard library only).

Reads raw/sqmr-<impl>-r<round>.out and raw/pack-<impl>-r<round>.out and runs.csv. Each figure is the median
over rounds of the round's own figure (sqmr: the median over its repetitions), with [min-max] over rounds.
Goals of issue 4 (for weft, the garbage-collected build; weft-rc is reported alongside):
  - derived/builtin message rate >= 0.97 at every thread count
  - message rate at 2 threads >= 1.5x the better peer (derived objects; builtin shown too)
  - pack/unpack throughput >= the better peer's, every case
"""
import csv
import os
import re
import statistics
import sys

IMPLS = ["weft", "weft-rc", "mpich", "openmpi"]
PEERS = ["mpich", "openmpi"]


def kv(line):
    return dict(re.findall(r"(\w+)=(\S+)", line))


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def cell(vals, rounds, fmt="{:.3f}"):
    vals = [v for v in vals if v is not None]
    if not vals:
        return "failed"
    s = fmt.format(statistics.median(vals))
    if len(vals) > 1:
        s += " [" + fmt.format(min(vals)) + "–" + fmt.format(max(vals)) + "]"
    if len(vals) < rounds:
        s += f" ({len(vals)}/{rounds})"
    return s


def med(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def main(out):
    raw = os.path.join(out, "raw")
    runs = list(csv.DictReader(open(os.path.join(out, "runs.csv"))))
    rounds = len({r["round"] for r in runs}) or 1
    impls = [i for i in IMPLS if any(r["impl"] == i for r in runs)]
    # sqmr[impl][threads][mode] = [per-round figures]; ratio likewise
    sqmr, ratio, pack = {}, {}, {}
    for f in sorted(os.listdir(raw)):
        m = re.match(r"(sqmr|pack)-(.+)-r(\d+)\.out$", f)
        if not m:
            continue
        job, impl = m.group(1), m.group(2)
        for line in open(os.path.join(raw, f), errors="replace"):
            d = kv(line)
            if job == "sqmr" and "threads" in d and "mode" not in d and d.get("check") == "ok":
                t = int(d["threads"])
                for mode in ("builtin", "derived"):
                    sqmr.setdefault(impl, {}).setdefault(t, {}).setdefault(mode, []).append(
                        num(d.get(mode + "_mmsg_s")))
                ratio.setdefault(impl, {}).setdefault(t, []).append(num(d.get("ratio")))
            elif job == "pack" and "op" in d and d.get("check") == "ok":
                key = (d["case"], int(d["param"]), d["op"])
                pack.setdefault(key, {}).setdefault(impl, []).append(num(d.get("median_gbps")))
    threads = sorted({t for i in sqmr.values() for t in i})
    md, rows = [], []
    md.append(f"# Object lifetime benchmarks (issue 4): {os.path.basename(out.rstrip('/'))}\n")
    meta = os.path.join(out, "meta.txt")
    if os.path.exists(meta):
        md.append("```\n" + open(meta).read().strip() + "\n```\n")
    md.append("## Runs\n\n| impl | job | ok | other |\n|---|---|---|---|")
    for impl in impls:
        for job in ("sqmr", "pack"):
            rs = [r for r in runs if r["impl"] == impl and r["job"] == job]
            ok = sum(r["status"] == "ok" for r in rs)
            other = ", ".join(sorted({f"r{r['round']}: {r['status']}" for r in rs if r["status"] != "ok"}))
            md.append(f"| {impl} | {job} | {ok}/{len(rs)} | {other} |")
    md.append("")

    # goals
    goals = []
    def best_peer(vals_by_impl):
        peers = [(med(vals_by_impl.get(p, [])), p) for p in PEERS]
        peers = [x for x in peers if x[0] is not None]
        return max(peers) if peers else (None, None)

    for impl in ("weft", "weft-rc"):
        if impl not in impls:
            continue
        for t in threads:
            r = med(ratio.get(impl, {}).get(t, []))
            verdict = "not measured" if r is None else ("met" if r >= 0.97 else "NOT met")
            goals.append((f"{impl}: derived/builtin at {t} threads >= 0.97", "" if r is None else f"{r:.3f}", verdict))
        for mode in ("derived", "builtin"):
            w = med(sqmr.get(impl, {}).get(2, {}).get(mode, []))
            p, pn = best_peer({i: sqmr.get(i, {}).get(2, {}).get(mode, []) for i in PEERS})
            if w is None or p is None:
                goals.append((f"{impl}: rate at 2 threads ({mode}) >= 1.5x better peer", "", "not measured"))
            else:
                goals.append((f"{impl}: rate at 2 threads ({mode}) >= 1.5x better peer",
                              f"{w / p:.2f}x ({w:.3f} vs {pn} {p:.3f} Mmsg/s)",
                              "met" if w / p >= 1.5 else "NOT met"))
        worst = None
        for key, by in pack.items():
            w = med(by.get(impl, []))
            p, _ = best_peer(by)
            if w is None or p is None:
                continue
            worst = min(worst, w / p) if worst is not None else w / p
        if worst is None:
            goals.append((f"{impl}: pack/unpack >= better peer, every case", "", "not measured"))
        else:
            goals.append((f"{impl}: pack/unpack >= better peer, every case", f"worst case {worst:.2f}x",
                          "met" if worst >= 1.0 else "NOT met"))
    md.append("## Goals\n\n| goal | figure | verdict |\n|---|---|---|")
    for g in goals:
        md.append(f"| {g[0]} | {g[1]} | {g[2]} |")
        rows.append(["goal", g[0], "", "", "", "", g[1], "", "", "", "", g[2]])
    md.append("")

    md.append("## SQMR message rate (millions of messages per second and rank, sends + receives)\n")
    md.append("| threads | " + " | ".join(f"{i} builtin | {i} derived" for i in impls) + " |")
    md.append("|---|" + "---|---|" * len(impls))
    for t in threads:
        cells = []
        for i in impls:
            for mode in ("builtin", "derived"):
                vals = sqmr.get(i, {}).get(t, {}).get(mode, [])
                cells.append(cell(vals, rounds))
                v = med(vals)
                rows.append(["sqmr", f"rate_{mode}", t, "Mmsg/s", i, len([x for x in vals if x is not None]),
                             "" if v is None else f"{v:.4f}", "", "", "", "", ""])
        md.append(f"| {t} | " + " | ".join(cells) + " |")
    md.append("\n## derived / builtin (median of each round's per-repetition ratios)\n")
    md.append("| threads | " + " | ".join(impls) + " |")
    md.append("|---|" + "---|" * len(impls))
    for t in threads:
        cells = []
        for i in impls:
            vals = ratio.get(i, {}).get(t, [])
            cells.append(cell(vals, rounds))
            v = med(vals)
            rows.append(["sqmr", "derived_over_builtin", t, "", i, len([x for x in vals if x is not None]),
                         "" if v is None else f"{v:.4f}", "", "", "", "0.97", ""])
        md.append(f"| {t} | " + " | ".join(cells) + " |")
    md.append("\n## Weft / better peer, message rate\n")
    md.append("| threads | mode | weft | weft-rc |\n|---|---|---|---|")
    for t in threads:
        for mode in ("builtin", "derived"):
            p, pn = best_peer({i: sqmr.get(i, {}).get(t, {}).get(mode, []) for i in PEERS})
            cells = []
            for impl in ("weft", "weft-rc"):
                w = med(sqmr.get(impl, {}).get(t, {}).get(mode, []))
                cells.append("-" if w is None or p is None else f"{w / p:.2f}x (vs {pn})")
            md.append(f"| {t} | {mode} | " + " | ".join(cells) + " |")

    md.append("\n## MPI_Pack / MPI_Unpack throughput (GB/s)\n")
    md.append("| case | param | op | " + " | ".join(impls) + " | weft / better peer |")
    md.append("|---|---|---|" + "---|" * (len(impls) + 1))
    for key in sorted(pack):
        by = pack[key]
        p, pn = best_peer(by)
        w = med(by.get("weft", []))
        ratio_s = "-" if w is None or p is None else f"{w / p:.2f}x (vs {pn})"
        md.append(f"| {key[0]} | {key[1]} | {key[2]} | " + " | ".join(cell(by.get(i, []), rounds) for i in impls)
                  + f" | {ratio_s} |")
        for i in impls:
            v = med(by.get(i, []))
            rows.append(["pack", f"{key[0]}_{key[2]}", key[1], "GB/s", i, len([x for x in by.get(i, []) if x is not None]),
                         "" if v is None else f"{v:.3f}", "", "", "" if w is None or p is None else f"{w / p:.3f}",
                         "1.0", ""])
    md.append("\nEach cell: median [min–max] over rounds; (k/n): only k of n rounds gave the figure; `failed`: no round"
              " did (the run failed, or the implementation lacks the datatype calls: see Runs and raw/).")
    text = "\n".join(md) + "\n"
    open(os.path.join(out, "summary.md"), "w").write(text)
    with open(os.path.join(out, "summary.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["kind", "name", "param", "unit", "impl", "rounds", "median", "min", "max",
                    "weft_over_best_peer", "target", "verdict"])
        w.writerows(rows)
    print(text)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: summarize_obj.py <results dir>", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
