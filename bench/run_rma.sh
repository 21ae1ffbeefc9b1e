#!/usr/bin/env bash
# Weft against MPICH and Open MPI: one-sided communication at 2 ranks (bench/rma.c; issue 14;
# docs/benchmarks.md "One-sided").
#
#   bench/run_rma.sh <builddir>
#
# Builds bench/rma.c for the three implementations (bench/lib.sh), then in each round runs, for
# every implementation in rotating order, seven jobs of 2 ranks, each rank pinned to CPU rank (-p,
# before MPI_Init, so the library's threads and the benchmark's share it):
#   lat        Put and Get 8 B, with flush (lock_all) and with fence
#   bw         Put and Get 64 KiB and 1 MiB (4 MiB per sample), with flush and with fence
#   atomic     Fetch_and_op and Compare_and_swap (int64) + flush
#   mt_fence   RMA-MT-style Put bandwidth, 1, 2, 4, 8 threads of rank 0, fence
#   mt_flush   the same with lock_all + a flush per thread
#   acc_idle   Accumulate + flush latency, the target waiting in MPI_Barrier
#   acc_compute  the same while the target computes without calling MPI
# Every job is bounded by BENCH_TIMEOUT; one that fails or does not finish is reported as "did not
# finish" for the cases it did not print (peers may hang on the computing target or fail with
# threads). Writes bench/results/rma-<timestamp>/{raw/,meta.txt,runs.txt,summary.md}: per
# implementation and case the median over rounds of each run's median, ratios and the goals:
#   latency (Put/Get 8 B, Fetch_and_op, Compare_and_swap) at most 0.8x the better peer;
#   bandwidth (Put/Get 64 KiB, 1 MiB) at least the better peer;
#   8-thread Put bandwidth at least 0.9x the 1-thread figure (fence, flush);
#   Accumulate with the target computing within 2x of the idle target.
#
# Settings (environment):
#   BENCH_ROUNDS=3                 rounds
#   BENCH_RMA_BUDGET=1.0           seconds per case and run (plus 10% warm-up)
#   BENCH_RMA_JOBS="lat bw atomic mt_fence mt_flush acc_idle acc_compute" (also bw_create: -m bw on a
#                  Win_create window of malloc'd memory; Open MPI then picks its own osc component)
#   BENCH_IMPLS="weft mpich openmpi"
#   BENCH_TIMEOUT=120              seconds allowed for one job
#   BENCH_RMA_MT_ROUNDS=8          mt_*: rounds of the 128 Puts per sample between the threads'
#                                  barriers (bench/rma.c -R; 1: the 2 MiB samples of before)
#   BENCH_QUICK=1                  smoke configuration: 1 round, 0.05 s budgets, 60 s timeout
set -u

if [ $# -ne 1 ]; then
    echo "usage: $0 <builddir>" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" 2>/dev/null && pwd || echo "$1")
. "$here/lib.sh"

if [ "${BENCH_QUICK:-0}" = 1 ]; then
    : "${BENCH_ROUNDS:=1}" "${BENCH_RMA_BUDGET:=0.05}" "${BENCH_TIMEOUT:=60}"
fi
rounds=${BENCH_ROUNDS:-3}
budget=${BENCH_RMA_BUDGET:-1.0}
jobs=${BENCH_RMA_JOBS:-lat bw atomic mt_fence mt_flush acc_idle acc_compute}
impls=${BENCH_IMPLS:-weft mpich openmpi}
limit=${BENCH_TIMEOUT:-120}
mt_rounds=${BENCH_RMA_MT_ROUNDS:-8}
ncpu=$(nproc)

bench_outdir rma-

# Open MPI 4.1 picks osc/rdma over vader for MPI_Win_allocate on one node, and that crashes in
# MPI_Compare_and_swap (segfault in the vader BTL); osc/sm is its shared-memory one-sided
# component, faster here on every case and correct: use it (BENCH_OMPI_OSC= to let Open MPI choose).
export OMPI_MCA_osc=${BENCH_OMPI_OSC-sm}
[ -n "$OMPI_MCA_osc" ] || unset OMPI_MCA_osc

job_args() {
    case $1 in
    lat) echo "-m lat" ;;
    bw) echo "-m bw" ;;
    bw_create) echo "-m bw -w create" ;;
    atomic) echo "-m atomic" ;;
    mt_fence) echo "-m mt -s fence -T 1,2,4,8 -R $mt_rounds" ;;
    mt_flush) echo "-m mt -s flush -T 1,2,4,8 -R $mt_rounds" ;;
    acc_idle) echo "-m passive -g idle" ;;
    acc_compute) echo "-m passive -g compute" ;;
    *) echo "unknown job '$1' in BENCH_RMA_JOBS" >&2; exit 2 ;;
    esac
}
for j in $jobs; do job_args "$j" >/dev/null || exit 2; done

bench_build rma
{
    bench_meta
    echo "window: MPI_Win_allocate of 4 MiB + 4 KiB, disp_unit 1, MPI_INFO_NULL; rank 0 origin, rank 1 target"
    echo "ranks: 2, each pinned to CPU rank (-p, before MPI_Init); launchers --bind-to none"
    echo "thread level: MPI_Init, except mt_* (MPI_THREAD_MULTIPLE)"
    echo "openmpi one-sided component: ${OMPI_MCA_osc:-its own choice}"
    echo "jobs: $jobs"
    echo "mt sample: $mt_rounds round(s) of 128 Puts of 16 KiB between the threads' barriers"
    echo "rounds: $rounds; budget ${budget}s per case and run (+10% warm-up); timeout ${limit}s per job"
} >"$out/meta.txt"

: >"$out/runs.txt"
status=0
[ "${state[weft]:-ok}" = ok ] || status=1
for ((r = 0; r < rounds; r++)); do
    for impl in $(bench_order "$r"); do
        [ "${state[$impl]}" = ok ] || continue
        for j in $jobs; do
            f=$out/raw/$impl-$j-r$r.txt
            log "round $r: $impl $j"
            # shellcheck disable=SC2046
            if [ "$j" = bw_create ] && [ "$impl" = openmpi ]; then
                # osc/sm serves only allocated windows: Open MPI chooses its component for Win_create
                (unset OMPI_MCA_osc; bench_launch "$impl" 2 "$limit" rma $(job_args "$j") -t "$budget" -p) >"$f" 2>&1
            else
                bench_launch "$impl" 2 "$limit" rma $(job_args "$j") -t "$budget" -p >"$f" 2>&1
            fi
            rc=$?
            grep '^case=' "$f" | sed "s/^/impl=$impl round=$r job=$j /" >>"$out/runs.txt"
            if [ $rc -ne 0 ]; then
                [ $rc -eq 124 ] || [ $rc -eq 137 ] && why="did not finish in ${limit}s" || why="exit $rc"
                log "  $why: see $f"
                echo "impl=$impl round=$r job=$j dnf=1 why=${why// /_}" >>"$out/runs.txt"
                [ "$impl" = weft ] && status=1
            fi
        done
    done
done

python3 "$here/summarize_rma.py" "$out" && log "summary: $out/summary.md"
exit $status
