#!/usr/bin/env bash
# Weft against MPICH and Open MPI: single-node point-to-point benchmarks (bench/README.md).
#
#   bench/run.sh <builddir>
#
# Builds bench/pingpong.c and bench/tagmatch.c three times (Weft through the CMake target bench_programs in
# <builddir>, MPICH with mpicc.mpich, Open MPI with mpicc.openmpi), runs them on 2 ranks with the
# implementations alternating inside each round, repeats the rounds, and writes
# bench/results/<timestamp>/{raw/,runs.csv,meta.txt,summary.md,summary.csv}. A missing or failing Weft is
# reported as such; the peers' results are produced regardless. Exit status: 0 if every peer run succeeded.
#
# Settings (environment):
#   BENCH_ROUNDS=3         rounds; each round runs every benchmark once per implementation
#   BENCH_BUDGET=0.3       pingpong: seconds of timed iterations per message size (plus 10% warm-up)
#   BENCH_SIZES=0,8,64,512,4K,16K,64K,256K,1M,4M
#   BENCH_TM_BUDGET=0.3    tagmatch: seconds of repetitions per N (at least one repetition)
#   BENCH_TM_NS=16,64,256,1024,4096,16384,65536
#   BENCH_TM_BYTES=8       tagmatch message size (0..8)
#   BENCH_BIND=core        core: launchers do not bind; each program pins its whole process (all threads) to
#                          CPU <rank> of its allowed set right after MPI_Init, identically for the three
#                          implementations. none: nobody binds, the kernel places the ranks.
#   BENCH_IMPLS="weft mpich openmpi"
#   BENCH_TIMEOUT=120      seconds for one pingpong run; tagmatch runs get BENCH_TM_TIMEOUT=240
#   BENCH_QUICK=1          smoke configuration: 2 rounds, budgets 0.05 s, N up to 16384 (about 20 s)
#   BENCH_OUT=dir          where to write instead of bench/results/<timestamp>
set -u

if [ $# -ne 1 ]; then
    echo "usage: $0 <builddir>" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" 2>/dev/null && pwd || echo "$1")

if [ "${BENCH_QUICK:-0}" = 1 ]; then
    : "${BENCH_ROUNDS:=2}" "${BENCH_BUDGET:=0.05}" "${BENCH_TM_BUDGET:=0.05}"
    : "${BENCH_TM_NS:=16,64,256,1024,4096,16384}"
fi
rounds=${BENCH_ROUNDS:-3}
budget=${BENCH_BUDGET:-0.3}
sizes=${BENCH_SIZES:-0,8,64,512,4K,16K,64K,256K,1M,4M}
tm_budget=${BENCH_TM_BUDGET:-0.3}
tm_ns=${BENCH_TM_NS:-16,64,256,1024,4096,16384,65536}
tm_bytes=${BENCH_TM_BYTES:-8}
bind=${BENCH_BIND:-core}
impls=${BENCH_IMPLS:-weft mpich openmpi}
pp_timeout=${BENCH_TIMEOUT:-120}
tm_timeout=${BENCH_TM_TIMEOUT:-240}
case $bind in
    none) pin_arg= ;;
    core) pin_arg=-p ;;
    *) echo "$0: BENCH_BIND must be none or core, not '$bind'" >&2; exit 2 ;;
esac

ncpu=$(nproc)
. "$here/lib.sh"
bench_outdir ""

# --- build -------------------------------------------------------------------------------------------------
bench_build pingpong tagmatch

# --- metadata ----------------------------------------------------------------------------------------------
{
    bench_meta
    echo "ranks: 2"
    echo "binding: $bind"
    echo "rounds: $rounds"
    echo "pingpong: sizes=$sizes budget_s=$budget"
    echo "tagmatch: N=$tm_ns budget_s=$tm_budget msg_bytes=$tm_bytes"
} >"$out/meta.txt"

# --- runs --------------------------------------------------------------------------------------------------
# run <impl> <program> <timeout> <outfile-stem> args...  -> exit status of the job
run() {
    local impl=$1 prog=$2 limit=$3 stem=$4
    shift 4
    local exe=${bindir[$impl]}/bench_$prog
    case $impl in
    weft)
        timeout -k 5 "$limit" "$build/tools/mpiexec" -n 2 --timeout "$limit" "$exe" "$@" ;;
    mpich)
        timeout -k 5 "$limit" mpiexec.mpich -n 2 -bind-to none "$exe" "$@" ;;
    openmpi)
        OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
        timeout -k 5 "$limit" mpiexec.openmpi -n 2 --bind-to none --mca pml ob1 --mca btl self,vader \
            "$exe" "$@" ;;
    esac >"$stem.out" 2>"$stem.err" </dev/null
}

echo "round,bench,impl,status,seconds" >"$out/runs.csv"
set -f
ordered=($impls)
set +f
peer_failures=0
for ((r = 1; r <= rounds; r++)); do
    # Rotate the order every round so no implementation always runs first (or right after another).
    order=()
    for ((i = 0; i < ${#ordered[@]}; i++)); do
        order+=("${ordered[(i + r - 1) % ${#ordered[@]}]}")
    done
    for bench in pingpong tagmatch; do
        for impl in "${order[@]}"; do
            stem=$out/raw/$bench-$impl-r$r
            if [ "${state[$impl]}" != ok ]; then
                echo "$r,$bench,$impl,missing,0" >>"$out/runs.csv"
                continue
            fi
            t0=$(date +%s%N)
            if [ $bench = pingpong ]; then
                run "$impl" pingpong "$pp_timeout" "$stem" -s "$sizes" -t "$budget" $pin_arg
            else
                run "$impl" tagmatch "$tm_timeout" "$stem" -n "$tm_ns" -t "$tm_budget" -b "$tm_bytes" $pin_arg
            fi
            rc=$?
            ms=$((($(date +%s%N) - t0) / 1000000))
            secs=$((ms / 1000)).$(((ms % 1000) / 100))
            case $rc in
                0) status=ok ;;
                124|137) status=timeout ;;
                *) status=failed:$rc ;;
            esac
            if [ $rc -eq 0 ] && grep -q 'check=FAIL' "$stem.out"; then
                status=check-failed
            fi
            echo "$r,$bench,$impl,$status,$secs" >>"$out/runs.csv"
            log "round $r/$rounds $bench $impl: $status ($secs s)"
            if [ "$status" != ok ] && [ "$impl" != weft ]; then
                peer_failures=$((peer_failures + 1))
            fi
        done
    done
done
{
    echo "load_after: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "cpu_busy_after: $(cpu_busy)%"
} >>"$out/meta.txt"

# --- summary -----------------------------------------------------------------------------------------------
if ! python3 "$here/summarize.py" "$out"; then
    log "summary failed; raw outputs are in $out/raw"
    exit 1
fi
log "results: $out"
[ $peer_failures -eq 0 ]
