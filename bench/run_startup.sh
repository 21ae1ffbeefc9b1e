#!/bin/bash
# Start-up time: wall time of a job that only calls MPI_Init and MPI_Finalize (bench/startup.c), for
# Weft, MPICH (mpiexec.mpich) and Open MPI (mpiexec.openmpi --oversubscribe --mca btl self,vader),
# implementations alternating within each round.
# usage: bench/run_startup.sh WEFT_BUILD OUT_FILE [ROUNDS] [NPS]   (NPS default "64 256"; each run
# is stopped after STARTUP_TIMEOUT seconds, default 300, and counted as failed)
# OUT_FILE gets one line per run "impl np round seconds status" and, at the end, the medians.
# The load average is recorded per run: the figures mean something only on an idle machine.
set -u
build=$1 out=$2 rounds=${3:-3} nps=${4:-"64 256"} limit=${STARTUP_TIMEOUT:-300}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /tmp/weft-startup-XXXXXX) || exit 2
trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
impls=""
"$build/tools/mpicc" -O2 -o "$tmp/weft" "$here/startup.c" && impls="$impls weft"
command -v mpicc.mpich >/dev/null && mpicc.mpich -O2 -o "$tmp/mpich" "$here/startup.c" && impls="$impls mpich"
command -v mpicc.openmpi >/dev/null && mpicc.openmpi -O2 -o "$tmp/openmpi" "$here/startup.c" &&
    impls="$impls openmpi"
: >"$out"
echo "# $(date -u +%FT%TZ) $(nproc) cores; implementations:$impls" >>"$out"
for np in $nps; do
    for r in $(seq "$rounds"); do
        for impl in $impls; do
            case $impl in
            weft) cmd=("$build/tools/mpiexec" -n "$np" "$tmp/weft") ;;
            mpich) cmd=(mpiexec.mpich -n "$np" "$tmp/mpich") ;;
            openmpi) cmd=(mpiexec.openmpi --oversubscribe --mca btl self,vader -n "$np" "$tmp/openmpi") ;;
            esac
            l=$(cut -d' ' -f1 /proc/loadavg)
            t0=$(date +%s.%N)
            timeout "$limit" "${cmd[@]}" >"$tmp/log" 2>&1
            st=$?
            t1=$(date +%s.%N)
            echo "$impl $np $r $(echo "$t1 - $t0" | bc) $st load=$l" >>"$out"
        done
    done
done
# medians of the successful runs
echo "# median seconds (successful runs / runs)" >>"$out"
for np in $nps; do
    for impl in $impls; do
        runs=$(awk -v i="$impl" -v n="$np" '$1 == i && $2 == n' "$out" | wc -l)
        awk -v i="$impl" -v n="$np" '$1 == i && $2 == n && $5 == 0 { print $4 }' "$out" | sort -g |
            awk -v i="$impl" -v n="$np" -v runs="$runs" '{ v[NR] = $1 }
                END { if (!NR) { printf "# %s np=%s: no successful run (%d)\n", i, n, runs; exit }
                      m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
                      printf "# %s np=%s: %.2f s (%d/%d)\n", i, n, m, NR, runs }' >>"$out"
    done
done
grep '^#' "$out"
