#!/bin/bash
# MPI_Comm_spawn of N processes (default 4) from a 1-rank job: time to the intercommunicator, Weft
# vs MPICH (mpiexec.mpich), ROUNDS spawns per job, implementations alternating job by job.
# usage: bench/run_spawn.sh WEFT_BUILD OUT_FILE [JOBS] [N]
# Needs a quiet machine: the load average is recorded with each job. Results: docs/results/.
set -u
build=$1 out=$2 jobs=${3:-3} n=${4:-4} rounds=${SPAWN_ROUNDS:-5}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /tmp/weft-spawn-XXXXXX) || exit 2
trap 'rm -rf "$tmp"' EXIT
impls=""
"$build/tools/mpicc" -O2 -o "$tmp/weft" "$here/spawn.c" && impls="$impls weft"
command -v mpicc.mpich >/dev/null && mpicc.mpich -O2 -o "$tmp/mpich" "$here/spawn.c" && impls="$impls mpich"
: >"$out"
echo "# $(date -u +%FT%TZ) $(nproc) cores; spawn of $n, $rounds per job; implementations:$impls" >>"$out"
for j in $(seq "$jobs"); do
    for impl in $impls; do
        case $impl in
        weft) cmd=("$build/tools/mpiexec" -n 1 "$tmp/weft" "$n" "$rounds") ;;
        mpich) cmd=(mpiexec.mpich -n 1 "$tmp/mpich" "$n" "$rounds") ;;
        esac
        l=$(cut -d' ' -f1 /proc/loadavg)
        timeout 300 "${cmd[@]}" 2>/dev/null | sed "s/^/$impl job $j load=$l /" >>"$out"
    done
done
echo "# median seconds to the intercommunicator" >>"$out"
for impl in $impls; do
    med=$(grep "^$impl " "$out" | awk '{for (i = 1; i < NF; i++) if ($i == "spawn_s") print $(i + 1)}' |
          sort -n | awk '{a[NR] = $1} END {if (NR) print a[int((NR + 1) / 2)]; else print "none"}')
    echo "$impl $med" >>"$out"
done
cat "$out"
