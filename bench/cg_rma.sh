#!/bin/bash
# Instructions per call of the same-node one-sided path, stable under load (this VM has no hardware
# counters for perf stat): bench_rma (bench/rma.c) at 2 ranks, both under callgrind, jobs lat,
# atomic and passive (-g idle); for rank 0 (the origin), the inclusive instructions per call of
# MPI_Put, MPI_Get, MPI_Fetch_and_op, MPI_Compare_and_swap, MPI_Accumulate and MPI_Win_flush
# (averaged over every call of the run: the flush figure mixes the cases that follow each kind
# of operation).
#   bench/cg_rma.sh BUILD [TAG]      (needs valgrind; results in /tmp/cg-rma-TAG)
B=$(cd "$1" && pwd); tag=${2:-rma}; d=/tmp/cg-rma-$tag
rm -rf "$d"; mkdir -p "$d"
for job in "-m lat" "-m atomic" "-m passive -g idle"; do
    j=$(echo "$job" | awk '{print $2}')
    # shellcheck disable=SC2086
    LD_LIBRARY_PATH=$B/src timeout 600 "$B/tools/mpiexec" -n 2 valgrind --tool=callgrind \
        --callgrind-out-file="$d/cg.$j.%p" "$B/bench/bench_rma" $job -t 0.5 >"$d/out.$j" 2>&1
done
# the origin's file: the one that called MPI_Win_flush
for f in "$d"/cg.*.[0-9]*; do
    grep -qE '^c?fn=\([0-9]+\) PMPI_Win_flush$' "$f" || continue
    callgrind_annotate --inclusive=yes "$f" 2>/dev/null >"$f.incl"
    line="$tag $(basename "$f" | cut -d. -f2)"
    for fn in PMPI_Put PMPI_Get PMPI_Fetch_and_op PMPI_Compare_and_swap PMPI_Accumulate \
              PMPI_Win_flush; do
        id=$(grep -m1 -E "^c?fn=\\([0-9]+\\) $fn\$" "$f" | sed 's/.*(\([0-9]*\)).*/\1/')
        [ -n "$id" ] || continue
        n=$(awk -v id="($id)" '/^cfn=/ {c = ($1 == "cfn=" id || index($0, "cfn=" id " ") == 1)}
                               /^calls=/ && c {split($1, a, "="); s += a[2]; c = 0}
                               END {print s + 0}' "$f")
        ir=$(grep -E "[:]$fn " "$f.incl" | head -1 | awk '{print $1}' | tr -d ,)
        [ "${n:-0}" -gt 0 ] && line="$line ${fn#PMPI_}=$((ir / n))($n)"
    done
    echo "$line"
done
