#!/usr/bin/env bash
# Weft against MPICH and Open MPI: object lifetime (issue 4; bench/README.md "Object lifetime").
#
#   bench/run_obj.sh [--quick] <builddir>
#
# Four implementations: weft (the garbage-collected objects of <builddir>), weft-rc (the same sources built with
# -DWEFT_OBJ_REFCOUNT=ON in <builddir>-refcount, requests taking atomic references), mpich, openmpi (bench/lib.sh
# builds the peers with their mpicc). In each round, for every implementation in rotating order:
#   sqmr  2 ranks, 1, 2, 4 threads per rank, builtin and derived objects alternating (bench/sqmr.c)
#   pack  1 rank, MPI_Pack/MPI_Unpack of a vector of doubles and of 3-D subarray faces (bench/pack.c)
# Every rank pins itself and its threads to one CPU (-p; launchers do not bind; BENCH_BIND=none: no pinning). Writes
# bench/results/obj-<timestamp>/{raw/,runs.csv,meta.txt,summary.md,summary.csv}. A Weft that does not build, or
# lacks derived datatypes or MPI_Pack, has those figures marked failed/unsupported; the peers' are produced anyway.
# Exit status: 0 if every peer run succeeded and the summary was written.
#
# Settings (environment):
#   BENCH_ROUNDS=3                rounds
#   BENCH_OBJ_THREADS=1,2,4       sqmr thread counts
#   BENCH_OBJ_BUDGET=1.0          sqmr: seconds per (threads, mode), split into BENCH_OBJ_REPS repetitions
#   BENCH_OBJ_REPS=7              sqmr repetitions per (threads, mode)
#   BENCH_OBJ_PACK_SIZES=4K,64K,1M  vector counts (doubles)
#   BENCH_OBJ_PACK_FACES=64,128   cube edges
#   BENCH_OBJ_PACK_BUDGET=0.3     pack: seconds per (case, op), 5 repetitions
#   BENCH_OBJ_RC_BUILD=<builddir>-refcount   the refcount build directory (configured if missing)
#   BENCH_BIND=core               core: each rank pins itself (and so all its threads) to CPU rank mod C before
#                                 MPI_Init, launchers do not bind; none: nobody binds
#   BENCH_IMPLS="weft weft-rc mpich openmpi"
#   BENCH_TIMEOUT=120             seconds allowed for one run
#   BENCH_QUICK=1 or --quick      smoke configuration, about 2 minutes: 2 rounds, short budgets, fewer sizes
#   BENCH_OUT=dir                 where to write instead of bench/results/obj-<timestamp>
set -u

if [ "${1:-}" = --quick ]; then
    BENCH_QUICK=1
    shift
fi
if [ $# -ne 1 ]; then
    echo "usage: $0 [--quick] <builddir>" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" 2>/dev/null && pwd || echo "$1")
. "$here/lib.sh"

if [ "${BENCH_QUICK:-0}" = 1 ]; then
    : "${BENCH_ROUNDS:=2}" "${BENCH_OBJ_BUDGET:=0.3}" "${BENCH_OBJ_REPS:=3}"
    : "${BENCH_OBJ_PACK_SIZES:=64K,1M}" "${BENCH_OBJ_PACK_FACES:=64}" "${BENCH_OBJ_PACK_BUDGET:=0.05}"
fi
rounds=${BENCH_ROUNDS:-3}
threads=${BENCH_OBJ_THREADS:-1,2,4}
budget=${BENCH_OBJ_BUDGET:-1.0}
reps=${BENCH_OBJ_REPS:-7}
psizes=${BENCH_OBJ_PACK_SIZES:-4K,64K,1M}
pfaces=${BENCH_OBJ_PACK_FACES:-64,128}
pbudget=${BENCH_OBJ_PACK_BUDGET:-0.3}
rcbuild=${BENCH_OBJ_RC_BUILD:-$build-refcount}
all_impls=${BENCH_IMPLS:-weft weft-rc mpich openmpi}
limit=${BENCH_TIMEOUT:-120}
bind=${BENCH_BIND:-core}
case $bind in
    core) pin=-p ;;
    none) pin= ;;
    *) echo "$0: BENCH_BIND must be core or none, not '$bind'" >&2; exit 2 ;;
esac
ncpu=$(nproc)

bench_outdir obj-

# --- build ---------------------------------------------------------------------------------------------------
# lib.sh knows weft, mpich, openmpi; weft-rc is the same CMake project configured with WEFT_OBJ_REFCOUNT=ON.
impls=$(echo " $all_impls " | sed 's/ weft-rc / /' | xargs)
bench_build sqmr pack
declare -gA bindir state
if [[ " $all_impls " == *" weft-rc "* ]]; then
    bindir[weft-rc]=$rcbuild/bench
    if [ ! -f "$rcbuild/CMakeCache.txt" ] &&
        ! cmake -S "$here/.." -B "$rcbuild" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEFT_OBJ_REFCOUNT=ON \
            >"$out/build-weft-rc.log" 2>&1; then
        state[weft-rc]="missing (configure failed, see build-weft-rc.log)"
    elif ! grep -q '^WEFT_OBJ_REFCOUNT:BOOL=ON' "$rcbuild/CMakeCache.txt"; then
        state[weft-rc]="missing ($rcbuild is not configured with WEFT_OBJ_REFCOUNT=ON)"
    elif ! cmake --build "$rcbuild" -j2 --target bench_programs mpiexec >>"$out/build-weft-rc.log" 2>&1; then
        state[weft-rc]="missing (build failed, see build-weft-rc.log)"
    else
        state[weft-rc]=ok
    fi
    log "build weft-rc: ${state[weft-rc]}"
fi
impls=$all_impls

{
    bench_meta
    echo "weft_rc_build: $rcbuild"
    if [ "$bind" = core ]; then
        echo "binding: each rank pins itself and its threads to CPU rank mod $ncpu before MPI_Init (-p); launchers --bind-to none"
    else
        echo "binding: none (launchers --bind-to none, programs do not pin)"
    fi
    echo "rounds: $rounds"
    echo "sqmr: threads $threads, ${budget}s per (threads, mode) in $reps repetitions, 12+12 messages of 0 bytes per iteration"
    echo "pack: vector counts $psizes, faces $pfaces, ${pbudget}s per (case, op) in 5 repetitions"
} >"$out/meta.txt"

# launch <impl> <nranks> <timeout> <program> args...
launch() {
    local impl=$1
    shift
    if [ "$impl" = weft-rc ]; then
        (build=$rcbuild; bindir[weft]=${bindir[weft-rc]}; bench_launch weft "$@")
    else
        bench_launch "$impl" "$@"
    fi
}

echo "round,job,impl,status,seconds" >"$out/runs.csv"
peer_failures=0
t_start=$(date +%s)
for ((r = 0; r < rounds; r++)); do
    for impl in $(bench_order "$r"); do
        for job in sqmr pack; do
            stem=$out/raw/$job-$impl-r$r
            if [ "${state[$impl]}" != ok ]; then
                echo "$r,$job,$impl,missing,0" >>"$out/runs.csv"
                continue
            fi
            if [ $job = sqmr ]; then
                args=(2 "$limit" sqmr -n "$threads" -t "$budget" -r "$reps" $pin)
            else
                args=(1 "$limit" pack -s "$psizes" -f "$pfaces" -t "$pbudget" -r 5 $pin)
            fi
            t0=$(date +%s%N)
            launch "$impl" "${args[@]}" >"$stem.out" 2>"$stem.err" </dev/null
            rc=$?
            ms=$((($(date +%s%N) - t0) / 1000000))
            secs=$((ms / 1000)).$(((ms % 1000) / 100))
            case $rc in
                0) status=ok ;;
                3) status=unsupported ;;
                124|137) status=timeout ;;
                *) status=failed:$rc ;;
            esac
            if [ $rc -eq 0 ] && grep -q 'check=FAIL' "$stem.out"; then
                status=check-failed
            elif [ $rc -eq 0 ] && grep -q 'unsupported' "$stem.out"; then
                status=partial
            fi
            echo "$r,$job,$impl,$status,$secs" >>"$out/runs.csv"
            log "round $((r + 1))/$rounds $job $impl: $status ($secs s)"
            case $impl in weft|weft-rc) ;; *) [ "$status" = ok ] || peer_failures=$((peer_failures + 1)) ;; esac
        done
    done
done
{
    echo "runs_seconds: $(( $(date +%s) - t_start ))"
    echo "load_after: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "cpu_busy_after: $(cpu_busy)%"
} >>"$out/meta.txt"

if ! python3 "$here/summarize_obj.py" "$out"; then
    log "summary failed; raw outputs are in $out/raw"
    exit 1
fi
log "results: $out"
[ $peer_failures -eq 0 ]
