#!/usr/bin/env bash
# Weft against MPICH and Open MPI: persistent Allreduce and partitioned send (bench/persist.c; bench/README.md).
#
#   bench/run_persist.sh <builddir>
#
# Builds bench/persist.c for the three implementations (bench/lib.sh), then in each round runs, for every
# implementation in rotating order: 8-byte Allreduce, blocking against MPI_Allreduce_init + Start/Wait
# (Open MPI 4.1: MPIX_Allreduce_init), at 2 and 4 ranks, each rank pinned to one CPU (-p); and 4 MiB from
# 8 threads of rank 0 to rank 1, partitioned (8 partitions, one MPI_Pready per thread) against 8 MPI_Isend
# of 512 KiB (2 ranks, not pinned: the sender's threads need the CPUs; Open MPI 4.1 has no partitioned
# communication); and Barrier, Bcast, Reduce, Allgather, Alltoall of 8-byte blocks, blocking against
# persistent, at 4 ranks pinned (-m colls). Writes bench/results/persist-<timestamp>/{raw/,meta.txt,
# runs.txt,summary.md}: per implementation and point, the median over rounds of each run's median, and
# the goals:
#   Weft's persistent Allreduce at least 10% faster than its blocking one;
#   Weft's other persistent collectives no slower than their blocking forms;
#   Weft's partitioned send no slower than its 8 x Isend, and no slower than the better peer's partitioned.
#
# Settings (environment):
#   BENCH_ROUNDS=5                 rounds
#   BENCH_PERSIST_RANKS="2 4"      rank counts of the Allreduce
#   BENCH_PERSIST_COLL_RANKS=4     rank counts of the other collectives ("" skips them)
#   BENCH_PERSIST_BUDGET=1.0       seconds per kind and run (per collective)
#   BENCH_IMPLS="weft mpich openmpi"
#   BENCH_TIMEOUT=300              seconds allowed for one run
#   BENCH_QUICK=1                  smoke configuration: 1 round, 0.1 s budgets
set -u

if [ $# -ne 1 ]; then
    echo "usage: $0 <builddir>" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" 2>/dev/null && pwd || echo "$1")
. "$here/lib.sh"

if [ "${BENCH_QUICK:-0}" = 1 ]; then
    : "${BENCH_ROUNDS:=1}" "${BENCH_PERSIST_BUDGET:=0.1}"
fi
rounds=${BENCH_ROUNDS:-5}
rank_counts=${BENCH_PERSIST_RANKS:-2 4}
coll_rank_counts=${BENCH_PERSIST_COLL_RANKS-4}
budget=${BENCH_PERSIST_BUDGET:-1.0}
impls=${BENCH_IMPLS:-weft mpich openmpi}
limit=${BENCH_TIMEOUT:-300}
ncpu=$(nproc)

bench_outdir persist-

bench_build persist
{
    bench_meta
    echo "allreduce: 8 B (one double, MPI_SUM), ranks $rank_counts, each rank pinned to CPU rank mod $ncpu (-p), MPI_Init"
    echo "colls: Barrier, Bcast, Reduce (root 0), Allgather, Alltoall of one double per block, ranks ${coll_rank_counts:-none}, pinned (-p)"
    echo "part: 2 ranks, 4 MiB in 8 x 512 KiB from 8 threads, not pinned, MPI_THREAD_MULTIPLE"
    echo "rounds: $rounds; budget ${budget}s per kind and run; launchers --bind-to none"
} >"$out/meta.txt"

: >"$out/runs.txt"
status=0
for ((r = 0; r < rounds; r++)); do
    for impl in $(bench_order "$r"); do
        [ "${state[$impl]}" = ok ] || continue
        for np in $rank_counts; do
            f=$out/raw/$impl-allreduce-np$np-r$r.txt
            log "round $r: $impl allreduce np=$np"
            if bench_launch "$impl" "$np" "$limit" persist -m allreduce -t "$budget" -p >"$f" 2>&1; then
                sed "s/^/impl=$impl round=$r /" "$f" | grep 'mode=' >>"$out/runs.txt"
            else
                log "  FAILED (exit $?): see $f"
                status=1
            fi
        done
        for np in $coll_rank_counts; do
          for coll in barrier bcast reduce allgather alltoall; do
            # one run per collective: a peer that fails one (MPICH 4.0.2 crashes in MPI_Start of
            # a persistent Allgather) keeps the others
            f=$out/raw/$impl-$coll-np$np-r$r.txt
            log "round $r: $impl $coll np=$np"
            if bench_launch "$impl" "$np" "$limit" persist -m $coll -t "$budget" -p >"$f" 2>&1; then
                sed "s/^/impl=$impl round=$r /" "$f" | grep 'mode=' >>"$out/runs.txt"
            else
                log "  FAILED (exit $?): see $f"
                status=1
            fi
          done
        done
        f=$out/raw/$impl-part-np2-r$r.txt
        log "round $r: $impl part np=2"
        if bench_launch "$impl" 2 "$limit" persist -m part -t "$budget" >"$f" 2>&1; then
            sed "s/^/impl=$impl round=$r /" "$f" | grep 'mode=' >>"$out/runs.txt"
        else
            log "  FAILED (exit $?): see $f"
            status=1
        fi
    done
done

python3 - "$out" <<'EOF' && log "summary: $out/summary.md"
import sys, statistics, collections
out = sys.argv[1]
runs = collections.defaultdict(list)
unavailable = set()
for line in open(f"{out}/runs.txt"):
    kv = dict(f.split("=", 1) for f in line.split())
    key = (kv["impl"], kv["mode"], kv["kind"], int(kv["np"]))
    if "unavailable" in kv:
        unavailable.add(key)
    else:
        runs[key].append(float(kv["median_us"]))
med = {k: statistics.median(v) for k, v in runs.items()}
impls = sorted({k[0] for k in runs} | {k[0] for k in unavailable}, key=["weft", "mpich", "openmpi"].index)
lines = ["# Persistent Allreduce and partitioned send", "", open(f"{out}/meta.txt").read(), "",
         "Median over rounds of each run's median, microseconds (rounds in parentheses).", "",
         "| point | " + " | ".join(impls) + " |", "|---|" + "---|" * len(impls)]
points = sorted({(k[1], k[2], k[3]) for k in list(runs) + list(unavailable)})
for mode, kind, np in points:
    cells = []
    for i in impls:
        k = (i, mode, kind, np)
        cells.append(f"{med[k]:.3f} ({len(runs[k])})" if k in med else ("n/a" if k in unavailable else "-"))
    lines.append(f"| {mode} {kind} np={np} | " + " | ".join(cells) + " |")
lines += ["", "## Goals", ""]
for np in sorted({k[3] for k in med if k[1] == "allreduce"}):
    b, p = med.get(("weft", "allreduce", "blocking", np)), med.get(("weft", "allreduce", "persistent", np))
    if b and p:
        gain = 100 * (1 - p / b)
        lines.append(f"- Allreduce 8 B np={np}: persistent {p:.3f} us vs blocking {b:.3f} us: {gain:+.1f}% "
                     f"({'met' if gain >= 10 else 'NOT met'}: goal at least 10% faster)")
for mode in ("barrier", "bcast", "reduce", "allgather", "alltoall"):
    for np in sorted({k[3] for k in med if k[1] == mode}):
        b, p = med.get(("weft", mode, "blocking", np)), med.get(("weft", mode, "persistent", np))
        if b and p:
            lines.append(f"- {mode} {'' if mode == 'barrier' else '8 B '}np={np}: persistent {p:.3f} us vs blocking {b:.3f} us: "
                         f"{100 * (1 - p / b):+.1f}% ({'met' if p <= b else 'NOT met'}: goal no slower)")
wp, wi = med.get(("weft", "part", "partitioned", 2)), med.get(("weft", "part", "isend", 2))
if wp and wi:
    lines.append(f"- partitioned 4 MiB / 8 threads: {wp:.1f} us vs 8 x Isend {wi:.1f} us "
                 f"({'met' if wp <= wi else 'NOT met'}: goal at most equal)")
peers = [med[(i, "part", "partitioned", 2)] for i in ("mpich", "openmpi") if (i, "part", "partitioned", 2) in med]
if wp and peers:
    best = min(peers)
    lines.append(f"- partitioned vs the better peer's partitioned: {wp:.1f} us vs {best:.1f} us "
                 f"({'met' if wp <= best else 'NOT met'})")
open(f"{out}/summary.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
EOF
exit $status
