#!/bin/bash
# Instructions per call of the message-rate path, stable under load (this VM has no hardware counters for
# perf stat): sqmr with 1 thread, builtin objects, both ranks under callgrind; per rank, the inclusive
# instructions of MPI_Isend and MPI_Irecv per call and of MPI_Waitall per request (the latter includes the
# polls spent waiting, so it varies with the scheduling), and of everything the benchmark loop did per message.
#   bench/cg_sqmr.sh BUILD [TAG]      (needs valgrind; results in /tmp/cg-TAG)
B=$(cd "$1" && pwd); tag=${2:-sqmr}; d=/tmp/cg-$tag
rm -rf "$d"; mkdir -p "$d"
LD_LIBRARY_PATH=$B/src "$B/tools/mpiexec" -n 2 valgrind --tool=callgrind --callgrind-out-file="$d/cg.%p" \
    "$B/bench/bench_sqmr" -n 1 -t 1 -r 1 -m builtin ${CG_ARGS:-} >/dev/null 2>&1
for f in "$d"/cg.*; do
    callgrind_annotate --inclusive=yes "$f" 2>/dev/null >"$f.incl"
    id=$(grep -m1 -E '^c?fn=\([0-9]+\) PMPI_Isend$' "$f" | sed 's/.*(\([0-9]*\)).*/\1/')
    n=$(awk -v id="($id)" '/^cfn=/ {c = ($1 == "cfn=" id || index($0, "cfn=" id " ") == 1)}
                           /^calls=/ && c {split($1, a, "="); s += a[2]; c = 0} END {print s + 0}' "$f")
    get() { grep -E "[:]$1 " "$f.incl" | head -1 | awk '{print $1}' | tr -d ,; }
    it=$(get iterate) is=$(get PMPI_Isend) ir=$(get PMPI_Irecv) wa=$(get PMPI_Waitall)
    [ "${n:-0}" -gt 0 ] || { echo "$tag $(basename "$f"): no MPI_Isend calls found"; continue; }
    echo "$tag $(basename "$f") isend_calls=$n loop_per_msg=$((it / (2 * n))) isend=$((is / n)) irecv=$((ir / n))" \
         "waitall_per_req=$((wa / (2 * n)))"
done
