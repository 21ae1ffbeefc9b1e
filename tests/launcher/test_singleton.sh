#!/bin/bash
# A program started without mpiexec is rank 0 of 1; under mpiexec the job name is weft-<pid>-<hex>.
# usage: test_singleton.sh MPIEXEC PROBE pmi|mpi
. "$(dirname "$0")/lib.sh"
MX=$1 P=$2 KIND=$3

run "$P" hello
expect_rc 0 "singleton hello"
if [ "$KIND" = pmi ]; then
    expect_match "singleton hello" '^rank 0 of 1 singleton 1 kvs weft-[0-9]+-[0-9a-f]{8}$' "$T_OUT"
else
    expect_eq "singleton hello" "rank 0 of 1 singleton 1 kvs -" "$T_OUT"
fi
run "$P" exchange
expect_rc 0 "singleton exchange"
expect_eq "singleton exchange" "rank 0 of 1: exchange ok" "$T_OUT"

mkdir "$T_DIR/pids"
PROBE_PIDDIR=$T_DIR/pids run "$MX" -n 2 "$P" hello
expect_rc 0 "hello under mpiexec"
if [ "$KIND" = pmi ]; then
    mx=$(cat "$T_DIR/pids/ppid0")
    expect_match "hello under mpiexec (job name weft-<mpiexec pid>-<hex>)" \
        "^rank [01] of 2 singleton 0 kvs weft-$mx-[0-9a-f]{8}"$'\n'"rank [01] of 2 singleton 0 kvs weft-$mx-[0-9a-f]{8}\$" "$(sorted "$T_OUT")"
    k=($(awk '{print $NF}' "$T_DIR/out"))
    expect_eq "both ranks see the same job name" "${k[0]}" "${k[1]}"
else
    expect_eq "hello under mpiexec" "$(printf 'rank 0 of 2 singleton 0 kvs -\nrank 1 of 2 singleton 0 kvs -')" "$(sorted "$T_OUT")"
fi
echo "PASS: $T_NAME"
