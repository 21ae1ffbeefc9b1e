#!/bin/bash
# MPI_Comm_spawn of N processes (default 4) from a 1-rank job: time to the intercommunicator, Weft
# vs MPICH, ROUNDS spawns per job, implementations alternating job by job.
#   mpich   Debian's MPICH 4.0.2 (mpicc.mpich, mpiexec.mpich). It is ch4:ucx, whose netmod has no
#           dynamic processes before MPICH 4.2 (pmodels/mpich#6797, fixed by #5467): MPI_Comm_spawn
#           fails there, recorded as "did not finish" with MPICH's message.
#   mpich5  the MPICH 5.0 wheel of PyPI (ch4:ofi), if MPICH5_DIR (default WEFT_BUILD/mpich-wheel, a
#           virtual environment with `pip install mpich`) has bin/mpicc and bin/mpiexec.
# usage: bench/run_spawn.sh WEFT_BUILD OUT_FILE [JOBS] [N]
# Needs a quiet machine: the load average is recorded with each job. Results: docs/results/.
set -u
build=$1 out=$2 jobs=${3:-3} n=${4:-4} rounds=${SPAWN_ROUNDS:-5}
here=$(cd "$(dirname "$0")" && pwd)
mpich5=${MPICH5_DIR:-$build/mpich-wheel}
tmp=$(mktemp -d /tmp/weft-spawn-XXXXXX) || exit 2
trap 'rm -rf "$tmp"' EXIT
impls=""
"$build/tools/mpicc" -O2 -o "$tmp/weft" "$here/spawn.c" && impls="$impls weft"
command -v mpicc.mpich >/dev/null && mpicc.mpich -O2 -o "$tmp/mpich" "$here/spawn.c" && impls="$impls mpich"
[ -x "$mpich5/bin/mpicc" ] && [ -x "$mpich5/bin/mpiexec" ] &&
    "$mpich5/bin/mpicc" -O2 -o "$tmp/mpich5" "$here/spawn.c" -Wl,-rpath,"$mpich5/lib" && impls="$impls mpich5"
: >"$out"
echo "# $(date -u +%FT%TZ) $(nproc) cores; spawn of $n, $rounds per job; implementations:$impls" >>"$out"
for j in $(seq "$jobs"); do
    for impl in $impls; do
        case $impl in
        weft) cmd=("$build/tools/mpiexec" -n 1 "$tmp/weft" "$n" "$rounds") ;;
        mpich) cmd=(mpiexec.mpich -n 1 "$tmp/mpich" "$n" "$rounds") ;;
        mpich5) cmd=("$mpich5/bin/mpiexec" -n 1 "$tmp/mpich5" "$n" "$rounds") ;;
        esac
        l=$(cut -d' ' -f1 /proc/loadavg)
        timeout -s KILL 300 "${cmd[@]}" </dev/null >"$tmp/o" 2>"$tmp/e"
        rc=$?
        sed "s/^/$impl job $j load=$l /" "$tmp/o" >>"$out"
        if [ "$(grep -c spawn_s "$tmp/o")" != "$rounds" ]; then
            why=$(grep -v '^ *$' "$tmp/e" | head -n 3 | tr '\n' ' ' | cut -c 1-300)
            echo "$impl job $j did-not-finish status $rc: ${why:-no message}" >>"$out"
        fi
    done
done
echo "# median seconds to the intercommunicator (none: no spawn finished)" >>"$out"
for impl in $impls; do
    med=$(grep "^$impl " "$out" | awk '{for (i = 1; i < NF; i++) if ($i == "spawn_s") print $(i + 1)}' |
          sort -n | awk '{a[NR] = $1} END {if (NR) print a[int((NR + 1) / 2)]; else print "none"}')
    echo "$impl $med" >>"$out"
done
cat "$out"
