#!/usr/bin/env bash
# The dynamic broadcast (MPIX_Dynbcast; bench/README.md "Dynamic broadcast", docs/dynbcast.md).
#
#   bench/run_dynbcast.sh <builddir>
#
# Builds bench/dynbcast.c for the three implementations (bench/lib.sh; only Weft has MPIX_Dynbcast, the
# peers measure the alternatives), then in each round runs, for every implementation in rotating order, at
# BENCH_DYN_RANKS ranks: rank 0 sends to k random ranks by MPIX_Dynbcast (Weft), by k sends, and by MPI_Bcast
# on a communicator created for it (Comm_create_group, or Comm_split), the creation counted. Every rank pins
# itself to one CPU (-p). Writes bench/results/dynbcast-<timestamp>/{raw/,meta.txt,runs.txt,summary.md,
# summary.csv}.
#
# Settings (environment):
#   BENCH_ROUNDS=3                 rounds
#   BENCH_DYN_RANKS=8              ranks (8 oversubscribes a 2-CPU machine: read the numbers with that in mind)
#   BENCH_DYN_K=1,2,4,7            destinations
#   BENCH_DYN_SIZES=8,1K,32K,256K,1M
#   BENCH_DYN_BUDGET=0.2           seconds per (method, k, size)
#   BENCH_IMPLS="weft mpich openmpi"
#   BENCH_TIMEOUT=600              seconds allowed for one run
#   BENCH_QUICK=1                  smoke configuration: 1 round, small budgets
set -u

if [ $# -ne 1 ]; then
    echo "usage: $0 <builddir>" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" 2>/dev/null && pwd || echo "$1")
. "$here/lib.sh"

if [ "${BENCH_QUICK:-0}" = 1 ]; then
    : "${BENCH_ROUNDS:=1}" "${BENCH_DYN_BUDGET:=0.03}" "${BENCH_DYN_SIZES:=8,32K,1M}"
fi
rounds=${BENCH_ROUNDS:-3}
np=${BENCH_DYN_RANKS:-8}
ks=${BENCH_DYN_K:-1,2,4,7}
sizes=${BENCH_DYN_SIZES:-8,1K,32K,256K,1M}
budget=${BENCH_DYN_BUDGET:-0.2}
impls=${BENCH_IMPLS:-weft mpich openmpi}
limit=${BENCH_TIMEOUT:-600}
ncpu=$(nproc)

bench_outdir dynbcast-

bench_build dynbcast
{
    bench_meta
    echo "binding: each rank pins itself to CPU rank mod $ncpu (-p); launchers --bind-to none"
    echo "rounds: $rounds; ranks: $np; k: $ks; sizes: $sizes; budget ${budget}s/point"
} >"$out/meta.txt"

: >"$out/runs.txt"
status=0
for ((r = 0; r < rounds; r++)); do
    for impl in $(bench_order "$r"); do
        [ "${state[$impl]}" = ok ] || continue
        methods=sends,bcast,split
        [ "$impl" = weft ] && methods=dyn,sends,bcast,split
        f=$out/raw/$impl-np$np-r$r.txt
        log "round $r: $impl np=$np"
        if bench_launch "$impl" "$np" "$limit" dynbcast -m "$methods" -k "$ks" -s "$sizes" -t "$budget" -p \
                >"$f" 2>&1; then
            sed "s/^/impl=$impl round=$r /" "$f" | grep 'mode=' >>"$out/runs.txt"
        else
            log "  FAILED (exit $?): see $f"
            status=1
        fi
    done
done

python3 - "$out" <<'PY' && log "summary: $out/summary.md"
"""summary.md / summary.csv: per (k, size), the median over rounds of each run's median time (root's clock,
up to the last destination's answer); ratios of MPIX_Dynbcast to the alternatives (< 1: the dynamic
broadcast is faster)."""
import statistics, sys
from collections import defaultdict
from pathlib import Path

out = Path(sys.argv[1])
vals = defaultdict(list)   # (impl, method, k, size) -> [median_us]
bad = set()
for line in (out / "runs.txt").read_text().splitlines():
    kv = dict(f.split("=", 1) for f in line.split() if "=" in f)
    if kv.get("check") == "unavailable":
        continue
    key = (kv["impl"], kv["method"], int(kv["k"]), int(kv["size"]))
    if kv.get("check") != "ok":
        bad.add(key)
    vals[key].append(float(kv["median_us"]))
med = {k: statistics.median(v) for k, v in vals.items()}
impls = [i for i in ("weft", "mpich", "openmpi") if any(k[0] == i for k in med)]
cols = [(i, m) for i in impls for m in ("dyn", "sends", "bcast", "split") if any(k[:2] == (i, m) for k in med)]
md = ["# Dynamic broadcast: MPIX_Dynbcast vs k sends vs MPI_Bcast on a communicator created for it", ""]
meta = out / "meta.txt"
if meta.exists():
    md += ["```", meta.read_text().rstrip(), "```", ""]
md += ["Median microseconds per operation, from the root's start to the last destination's answer (one",
       "extra message latency for every method). bcast = Comm_create_group + MPI_Bcast + Comm_free, split =",
       "Comm_split + MPI_Bcast + Comm_free (creation counted). Ratios: Weft's dyn / the alternative (< 1:",
       "the dynamic broadcast is faster); best alt = the fastest alternative of any implementation.", ""]
hdr = ["k", "size"] + [f"{i} {m}" for i, m in cols] + ["dyn/weft sends", "dyn/weft bcast", "dyn/best alt"]
md += ["| " + " | ".join(hdr) + " |", "|" + "---|" * len(hdr)]
csv = [",".join(h.replace(" ", "_").replace("/", "_over_") for h in hdr)]
for k, size in sorted({(key[2], key[3]) for key in med}):
    cells = [med.get((i, m, k, size)) for i, m in cols]
    dyn = med.get(("weft", "dyn", k, size))
    ws = med.get(("weft", "sends", k, size))
    wb = [v for v in (med.get(("weft", "bcast", k, size)), med.get(("weft", "split", k, size))) if v]
    alts = [med[(i, m, kk, ss)] for (i, m, kk, ss) in med if kk == k and ss == size and m != "dyn"]
    ratios = [dyn / ws if dyn and ws else None, dyn / min(wb) if dyn and wb else None,
              dyn / min(alts) if dyn and alts else None]
    fmt = lambda v, p=1: "-" if v is None else f"{v:.{p}f}"
    md.append(f"| {k} | {size} | " + " | ".join(fmt(c) for c in cells) + " | " +
              " | ".join(fmt(r, 2) for r in ratios) + " |")
    csv.append(f"{k},{size}," + ",".join("" if c is None else f"{c:.2f}" for c in cells) + "," +
               ",".join("" if r is None else f"{r:.3f}" for r in ratios))
if bad:
    md += ["", "**Failed checks:** " + ", ".join(f"{i} {m} k={k} size={s}" for i, m, k, s in sorted(bad))]
(out / "summary.md").write_text("\n".join(md) + "\n")
(out / "summary.csv").write_text("\n".join(csv) + "\n")
PY
exit $status
