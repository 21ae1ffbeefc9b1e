#!/usr/bin/env bash
# Weft against MPICH and Open MPI: collectives (issue 5; bench/README.md "Collectives").
#
#   bench/run_coll.sh <builddir>
#
# Builds bench/coll.c for the three implementations (bench/lib.sh), then in each round runs, for every
# implementation in rotating order: the latency of Bcast, Allreduce, Alltoall, Allgather for 8 B..1 MiB at
# 2 and 4 ranks, and the overlap of Ibcast and Iallreduce with computation at 2 and 4 ranks. Every rank pins
# itself to one CPU (-p; launchers do not bind). Writes bench/results/coll-<timestamp>/{raw/,meta.txt,
# runs.txt,summary.md,summary.csv}.
#
# Settings (environment):
#   BENCH_ROUNDS=3                 rounds
#   BENCH_COLL_RANKS="2 4"         rank counts
#   BENCH_COLL_SIZES=8,64,512,4K,32K,256K,1M
#   BENCH_COLL_LIST=               latency: the collectives (coll -c; default bcast,allreduce,alltoall,allgather;
#                                  neighbor_alltoall: a 2-D periodic grid of the ranks)
#   BENCH_COLL_MODES="lat overlap" which measurements
#   BENCH_COLL_BUDGET=0.3          latency: seconds per (collective, size)
#   BENCH_COLL_OV_SIZES=4K,64K,1M  overlap: message sizes
#   BENCH_COLL_OV_BUDGET=1.0       overlap: seconds per collective
#   BENCH_COLL_OV_WHO="all root rest"  overlap: which ranks compute (coll -w): every rank, rank 0 only,
#                                  every rank but 0 (issue 16: "at least 0.8 when one side computes")
#   BENCH_IMPLS="weft mpich openmpi"
#   BENCH_TIMEOUT=300              seconds allowed for one run
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
    : "${BENCH_ROUNDS:=1}" "${BENCH_COLL_BUDGET:=0.05}" "${BENCH_COLL_OV_BUDGET:=0.2}"
fi
rounds=${BENCH_ROUNDS:-3}
rank_counts=${BENCH_COLL_RANKS:-2 4}
sizes=${BENCH_COLL_SIZES:-8,64,512,4K,32K,256K,1M}
budget=${BENCH_COLL_BUDGET:-0.3}
ov_size=${BENCH_COLL_OV_SIZES:-4K,64K,1M}
ov_budget=${BENCH_COLL_OV_BUDGET:-1.0}
ov_who=${BENCH_COLL_OV_WHO:-all root rest}
impls=${BENCH_IMPLS:-weft mpich openmpi}
coll_list=${BENCH_COLL_LIST:-}
modes=${BENCH_COLL_MODES:-lat overlap}
limit=${BENCH_TIMEOUT:-300}
ncpu=$(nproc)

bench_outdir coll-

bench_build coll
{
    bench_meta
    echo "binding: each rank pins itself to CPU rank mod $ncpu (-p); launchers --bind-to none"
    echo "rounds: $rounds; ranks: $rank_counts; sizes: $sizes; latency budget ${budget}s/point; collectives: ${coll_list:-default}; modes: $modes"
    echo "overlap: sizes $ov_size, MPI_THREAD_MULTIPLE (engine threads on in Weft), budget ${ov_budget}s per (collective, size); computing ranks: $ov_who"
} >"$out/meta.txt"

: >"$out/runs.txt"
status=0
for ((r = 0; r < rounds; r++)); do
    for impl in $(bench_order "$r"); do
        [ "${state[$impl]}" = ok ] || continue
        for np in $rank_counts; do
            for mode in $modes; do
                for who in $([ $mode = lat ] && echo all || echo $ov_who); do
                    f=$out/raw/$impl-np$np-$mode-$who-r$r.txt
                    if [ $mode = lat ]; then
                        args=(-m lat -s "$sizes" -t "$budget" -p ${coll_list:+-c "$coll_list"})
                    else
                        args=(-m overlap -s "$ov_size" -t "$ov_budget" -l multiple -p -w "$who")
                    fi
                    log "round $r: $impl np=$np $mode$([ $mode = lat ] || echo " ($who computing)")"
                    if bench_launch "$impl" "$np" "$limit" coll "${args[@]}" >"$f" 2>&1; then
                        sed "s/^/impl=$impl round=$r /" "$f" | grep 'mode=' >>"$out/runs.txt"
                    else
                        log "  FAILED (exit $?): see $f"
                        [ "$impl" = weft ] || status=1
                    fi
                done
            done
        done
    done
done

python3 "$here/summarize_coll.py" "$out" && log "summary: $out/summary.md"
exit $status
