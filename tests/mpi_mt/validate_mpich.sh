#!/bin/bash
# validate_mpich.sh [OUTDIR]: builds every program here with MPICH (mpicc.mpich) and runs it the way
# CMakeLists.txt does (4 ranks x 8 threads, 2 ranks x 4 threads), minus --weft and with smaller
# counts: MPICH busy-polls, so 32 spinning threads on 2 cores make barrier-heavy programs crawl.
# A check that fails here is wrong about the standard, not about Weft.
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-/tmp/weft-mpich-mt-tests}
mkdir -p "$out"
fail=0
run() { # run NP THREADS PROGRAM ARGS...
    local np=$1 th=$2 prog=$3
    shift 3
    local t0=$SECONDS
    if timeout 150 mpiexec.mpich -n "$np" "$out/$prog" "$@" --threads="$th" --deadline=120 >"$out/log" 2>&1; then
        echo "ok    $prog -n $np --threads=$th $* ($((SECONDS - t0)) s)"
    else
        echo "FAIL  $prog -n $np --threads=$th $*"
        sed 's/^/      /' "$out/log" | head -20
        fail=1
    fi
}
for src in "$here"/*.c; do
    p=$(basename "$src" .c)
    mpicc.mpich -std=gnu11 -O1 -pthread -Wall -Wextra -Wno-unused-parameter -Wno-stringop-overflow \
        -o "$out/$p" "$src" || { echo "FAIL  build $p"; fail=1; }
done
for cfg in "4 8" "2 4"; do
    set -- $cfg
    np=$1 th=$2
    run $np $th mt_tags 112
    run $np $th mt_wildcard 200
    run $np $th mt_probe 30
    run $np $th mt_complete 30 1000 200
    run $np $th mt_stress 40000 32
    run $np $th mt_comm 20
    run $np $th mt_comm 10 5 --dup-in-threads
    run $np $th mt_init 500
    run $np $th mt_init 500 --init-in-thread
    # MPICH 4.0.2 crashes in Comm_create_group on a duplicated communicator, hence --no-create-group
    run $np $th mt_comm_create 21 --free-pending --no-create-group
    run $np $th mt_objects 40 10
done
exit $fail
