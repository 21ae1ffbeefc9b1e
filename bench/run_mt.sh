#!/usr/bin/env bash
# Weft against MPICH and Open MPI: threads and progression (issue 3; bench/README.md, docs/benchmarks.md).
#
#   bench/run_mt.sh <builddir>
#
# Builds the bench/mt_*.c programs three times (Weft through the CMake target bench_programs in <builddir>,
# MPICH with mpicc.mpich -pthread, Open MPI with mpicc.openmpi -pthread, the peers into a temporary
# directory), runs every benchmark once per implementation in each round with the implementations alternating
# (the order rotates from round to round), every run under `timeout`, and writes
# bench/results/mt-<timestamp>/{raw/,runs.csv,meta.txt,summary.md,summary.csv}. A Weft that is missing, does
# not build, or fails is reported as such; the peers' results are produced regardless.
# Exit status: 0 if every peer run succeeded and the summary was written.
#
# Jobs (BENCH_MT_JOBS, in this order):
#   overlap      mt_overlap      4 MiB, computation = communication time; both / sender / receiver computing
#   sendtime     mt_sendtime     send time vs size 1 KiB..8 MiB with 100 and 500 us of computation
#   latency      mt_latency      1-byte latency with 1, 2, 4, 8 threads per rank, patterns 1toN and NtoN
#   computelat   mt_compute_lat  1 MiB ping-pong latency while 0..4 other threads compute in each rank
#   cpublocked   mt_cpu_blocked  CPU used by a rank blocked in MPI_Recv for BENCH_MT_CPU_SECONDS
#   ranks        mt_ranks_lat    1-byte latency with 2, 4, 8 ranks (pairs) on this machine's cores
#   level        mt_initlevel    0/8-byte ping-pong after MPI_Init_thread(SINGLE) and (MULTIPLE)
#
# Settings (environment):
#   BENCH_ROUNDS=2              rounds
#   BENCH_MT_JOBS="overlap sendtime latency computelat cpublocked ranks level"
#   BENCH_MT_LEVEL=multiple     thread level requested by overlap, sendtime, computelat, cpublocked
#                               (init = plain MPI_Init; latency always asks for multiple)
#   BENCH_MT_RANKS_LEVEL=init   thread level of the ranks job (plain MPI_Init: single-threaded ranks)
#   BENCH_MT_RANKS=2,4,8        rank counts of the ranks job
#   BENCH_MT_OV_BUDGET=1.0      overlap: seconds per case (3 cases, plus 20% warm-up/calibration)
#   BENCH_MT_ST_BUDGET=0.2      sendtime: seconds per size (8 sizes)
#   BENCH_MT_LAT_BUDGET=0.5     latency: seconds per (pattern, N) (8 points)
#   BENCH_MT_CL_BUDGET=0.5      computelat: seconds per N (5 points)
#   BENCH_MT_CPU_SECONDS=3      cpublocked: how long rank 0 is blocked
#   BENCH_MT_RL_BUDGET=1.0      ranks: seconds per run
#   BENCH_MT_IL_BUDGET=0.3      level: seconds per size (0 and 8 B)
#   BENCH_MT_IL_REPEAT=3        level: pairs of runs (SINGLE, MULTIPLE) per implementation and round; the
#                               figure is the median of the per-pair ratios (runs far apart in time can
#                               differ by the VM's CPU placement alone, up to 5x in 1-byte latency here)
#   BENCH_BIND=core             core: launchers are told not to bind (Weft's mpiexec --bind-to none too:
#                               it binds by default when ranks <= CPUs) and each program pins its process to
#                               CPU <rank mod C> of its allowed set before MPI_Init (-p), so every thread the
#                               library starts inherits it: identical for the three implementations.
#                               none: nobody binds.
#   BENCH_IMPLS="weft mpich openmpi"
#   BENCH_MT_TIMEOUT=120        seconds allowed for one run (cpublocked: its seconds + this)
#   BENCH_QUICK=1               smoke configuration (about 1 minute): budgets of 0.05-0.2 s, 1 s blocked
#   BENCH_OUT=dir               where to write instead of bench/results/mt-<timestamp>
set -u

if [ $# -ne 1 ]; then
    echo "usage: $0 <builddir>" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" 2>/dev/null && pwd || echo "$1")

if [ "${BENCH_QUICK:-0}" = 1 ]; then
    : "${BENCH_ROUNDS:=2}" "${BENCH_MT_OV_BUDGET:=0.2}" "${BENCH_MT_ST_BUDGET:=0.05}"
    : "${BENCH_MT_LAT_BUDGET:=0.1}" "${BENCH_MT_CL_BUDGET:=0.1}" "${BENCH_MT_CPU_SECONDS:=1}"
    : "${BENCH_MT_RL_BUDGET:=0.2}" "${BENCH_MT_IL_BUDGET:=0.1}" "${BENCH_MT_IL_REPEAT:=2}"
fi
rounds=${BENCH_ROUNDS:-2}
jobs=${BENCH_MT_JOBS:-overlap sendtime latency computelat cpublocked ranks level}
level=${BENCH_MT_LEVEL:-multiple}
rl_level=${BENCH_MT_RANKS_LEVEL:-init}
rank_counts=${BENCH_MT_RANKS:-2,4,8}
ov_budget=${BENCH_MT_OV_BUDGET:-1.0}
st_budget=${BENCH_MT_ST_BUDGET:-0.2}
lat_budget=${BENCH_MT_LAT_BUDGET:-0.5}
cl_budget=${BENCH_MT_CL_BUDGET:-0.5}
cpu_seconds=${BENCH_MT_CPU_SECONDS:-3}
rl_budget=${BENCH_MT_RL_BUDGET:-1.0}
il_budget=${BENCH_MT_IL_BUDGET:-0.3}
il_repeat=${BENCH_MT_IL_REPEAT:-3}
bind=${BENCH_BIND:-core}
impls=${BENCH_IMPLS:-weft mpich openmpi}
limit=${BENCH_MT_TIMEOUT:-120}
case $bind in
    none) pin_arg= ;;
    core) pin_arg=-p ;;
    *) echo "$0: BENCH_BIND must be none or core, not '$bind'" >&2; exit 2 ;;
esac
for j in $jobs; do
    case $j in
        overlap|sendtime|latency|computelat|cpublocked|ranks|level) ;;
        *) echo "$0: unknown job '$j' in BENCH_MT_JOBS" >&2; exit 2 ;;
    esac
done
ncpu=$(nproc)
programs="mt_overlap mt_sendtime mt_latency mt_compute_lat mt_cpu_blocked mt_ranks_lat mt_initlevel"

. "$here/lib.sh"
bench_outdir mt-

# --- build -------------------------------------------------------------------------------------------------
bench_build $programs

# --- metadata ----------------------------------------------------------------------------------------------
{
    bench_meta
    if [ "$bind" = core ]; then
        echo "binding: core (each program pins its process to CPU rank mod $ncpu before MPI_Init; launchers --bind-to none)"
    else
        echo "binding: none (nobody binds)"
    fi
    echo "rounds: $rounds"
    echo "jobs: $jobs"
    echo "thread_level: $level (ranks job: $rl_level; latency job: multiple)"
    echo "budgets: overlap=${ov_budget}s/case sendtime=${st_budget}s/size latency=${lat_budget}s/point computelat=${cl_budget}s/N cpublocked=${cpu_seconds}s ranks=${rl_budget}s/run level=${il_budget}s/size x $il_repeat pairs"
    echo "ranks: $rank_counts"
} >"$out/meta.txt"

# --- runs --------------------------------------------------------------------------------------------------
# launch <impl> <nranks> <timeout> <program> args...
launch() {
    local impl=$1 n=$2 t=$3 prog=$4
    shift 4
    local exe=${bindir[$impl]}/bench_$prog
    case $impl in
    weft)
        timeout -k 5 "$t" "$build/tools/mpiexec" -n "$n" --bind-to none --timeout "$t" "$exe" "$@" ;;
    mpich)
        timeout -k 5 "$t" mpiexec.mpich -n "$n" -bind-to none "$exe" "$@" ;;
    openmpi)
        local over=
        [ "$n" -gt "$ncpu" ] && over=--oversubscribe
        OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
        timeout -k 5 "$t" mpiexec.openmpi -n "$n" $over --bind-to none --mca pml ob1 --mca btl self,vader \
            "$exe" "$@" ;;
    esac
}

# The runs of one job: "name nranks timeout program args..." lines, for round r.
job_runs() {
    local job=$1 r=$2
    case $job in
    overlap)    echo "overlap 2 $limit mt_overlap -t $ov_budget -l $level $pin_arg" ;;
    sendtime)   echo "sendtime 2 $limit mt_sendtime -t $st_budget -l $level $pin_arg" ;;
    latency)    echo "latency 2 $limit mt_latency -t $lat_budget $pin_arg" ;;
    computelat) echo "computelat 2 $limit mt_compute_lat -t $cl_budget -l $level $pin_arg" ;;
    cpublocked) echo "cpublocked 2 $(( ${cpu_seconds%.*} + limit )) mt_cpu_blocked -d $cpu_seconds -l $level $pin_arg" ;;
    ranks)
        local n
        for n in ${rank_counts//,/ }; do
            echo "ranks$n $n $limit mt_ranks_lat -t $rl_budget -l $rl_level $pin_arg"
        done ;;
    level)
        # SINGLE and MULTIPLE alternate, il_repeat pairs; which one starts alternates from round to round
        local k first=single second=multiple
        if [ $((r % 2)) = 0 ]; then
            first=multiple
            second=single
        fi
        for ((k = 1; k <= il_repeat; k++)); do
            echo "level-$first-$k 2 $limit mt_initlevel -l $first -t $il_budget $pin_arg"
            echo "level-$second-$k 2 $limit mt_initlevel -l $second -t $il_budget $pin_arg"
        done ;;
    esac
}

echo "round,job,impl,status,seconds" >"$out/runs.csv"
set -f
ordered=($impls)
set +f
peer_failures=0
t_start=$(date +%s)
for ((r = 1; r <= rounds; r++)); do
    # Rotate the order every round so no implementation always runs first (or right after another).
    order=()
    for ((i = 0; i < ${#ordered[@]}; i++)); do
        order+=("${ordered[(i + r - 1) % ${#ordered[@]}]}")
    done
    # Within a job, the runs of one implementation are back to back (the rank counts of "ranks", the
    # SINGLE/MULTIPLE pairs of "level"), so that the ratios between them are not taken minutes apart.
    for job in $jobs; do
        for impl in "${order[@]}"; do
            while read -r name n t prog args; do
                stem=$out/raw/$name-$impl-r$r
                if [ "${state[$impl]}" != ok ]; then
                    echo "$r,$name,$impl,missing,0" >>"$out/runs.csv"
                    continue
                fi
                t0=$(date +%s%N)
                # shellcheck disable=SC2086  # args: word splitting intended
                launch "$impl" "$n" "$t" "$prog" $args >"$stem.out" 2>"$stem.err" </dev/null
                rc=$?
                ms=$((($(date +%s%N) - t0) / 1000000))
                secs=$((ms / 1000)).$(((ms % 1000) / 100))
                case $rc in
                    0) status=ok ;;
                    124|137) status=timeout ;;
                    *) status=failed:$rc ;;
                esac
                if grep -q '^# mt_[a-z_]* unsupported' "$stem.out"; then
                    status=unsupported
                elif [ $rc -eq 0 ] && grep -q 'check=FAIL' "$stem.out"; then
                    status=check-failed
                fi
                echo "$r,$name,$impl,$status,$secs" >>"$out/runs.csv"
                log "round $r/$rounds $name $impl: $status ($secs s)"
                if [ "$status" != ok ] && [ "$impl" != weft ]; then
                    peer_failures=$((peer_failures + 1))
                fi
            done < <(job_runs "$job" "$r")
        done
    done
done
{
    echo "runs_seconds: $(( $(date +%s) - t_start ))"
    echo "load_after: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "cpu_busy_after: $(cpu_busy)%"
} >>"$out/meta.txt"

# --- summary -----------------------------------------------------------------------------------------------
if ! python3 "$here/summarize_mt.py" "$out"; then
    log "summary failed; raw outputs are in $out/raw"
    exit 1
fi
log "results: $out"
[ $peer_failures -eq 0 ]
