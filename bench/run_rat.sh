#!/usr/bin/env bash
# Ranks as threads (issue 15 §2, docs/ranks-as-threads.md) against flat MPI and against threads
# sharing one rank, Weft vs MPICH and Open MPI, one host.
#
#   bench/run_rat.sh <builddir>
#
# Jobs, each round, implementations and modes alternating:
#   pp     bench_pingpong 8 B and 1 MiB between ranks 0 and 1: Weft flat (2 processes) and Weft rat
#          (1 process x 2 ranks as threads); the peers flat for reference
#   pairsP P = 1, 2, 4 pairs pinging at once, 1-byte latency:
#            - ranks: bench_mt_ranks_lat on 2P ranks, Weft flat and Weft rat (2 ranks per process, so
#              each pair is one process's two thread-ranks; and all 2P in one process when 2P <= 8)
#            - threads sharing one rank: bench_mt_latency -P NtoN with P threads on each of 2 ranks at
#              MPI_THREAD_MULTIPLE, Weft, MPICH and Open MPI
#   rss    bench_rss, 4 ranks: Weft flat, Weft rat 1 x 4, the peers flat; the job's resident size
# The rat programs are the same sources linked by Weft's `mpicc -ranks-as-threads`.
# Writes bench/results/rat-<timestamp>/{raw/,meta.txt,summary.md}. Settings: BENCH_ROUNDS (3),
# BENCH_BUDGET (0.5 s per point), BENCH_IMPLS ("weft mpich openmpi"), BENCH_QUICK=1 (1 round, 0.05 s).
# Nobody binds (launchers --bind-to none, programs unpinned): thread-ranks of one process and
# processes alike are placed by the kernel.
set -u
if [ $# -ne 1 ]; then
    echo "usage: $0 <builddir>" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" 2>/dev/null && pwd || echo "$1")
if [ "${BENCH_QUICK:-0}" = 1 ]; then
    : "${BENCH_ROUNDS:=1}" "${BENCH_BUDGET:=0.05}"
fi
rounds=${BENCH_ROUNDS:-3}
budget=${BENCH_BUDGET:-0.5}
impls=${BENCH_IMPLS:-"weft mpich openmpi"}
ncpu=$(nproc)
limit=120
. "$here/lib.sh"
bench_outdir rat-

cmake --build "$build" --target weft-rankhost weft-ratshim weft-ratstart >"$out/build-rat.log" 2>&1 ||
    { echo "cannot build weft-rankhost (see $out/build-rat.log)" >&2; exit 2; }
bench_build pingpong mt_ranks_lat mt_latency rss
# bench_build builds Weft's programs through CMake; bench_rss is not one of its targets: build it here.
if [ "${state[weft]:-}" = ok ]; then
    "$build/tools/mpicc" -O2 -o "$build/bench/bench_rss" "$here/rss.c" >>"$out/build-weft.log" 2>&1 ||
        state[weft]="missing (bench_rss did not build)"
fi
mkdir -p "$tmp/rat"
for p in pingpong mt_ranks_lat rss; do
    "$build/tools/mpicc" -ranks-as-threads -O2 -pthread -o "$tmp/rat/bench_$p" "$here/$p.c" -lm \
        >>"$out/build-rat.log" 2>&1 || { echo "rat build of $p failed (see $out/build-rat.log)" >&2; exit 2; }
done
{
    bench_meta
    echo "rounds: $rounds; budget ${budget}s per point; launchers --bind-to none, programs unpinned"
    echo "rat: Weft's mpicc -ranks-as-threads, mpiexec --ranks-per-process K"
} >"$out/meta.txt"

# rat_run <name> <nranks> <K> <program> args...
rat_run() {
    local name=$1 n=$2 k=$3 prog=$4
    shift 4
    timeout -k 5 $limit "$build/tools/mpiexec" -n "$n" --ranks-per-process "$k" --bind-to none \
        --timeout $limit "$tmp/rat/bench_$prog" "$@" >"$out/raw/$name.out" 2>"$out/raw/$name.err"
    echo "$name $?" >>"$out/runs.txt"
}
flat_run() {
    local name=$1 impl=$2 n=$3 prog=$4
    shift 4
    [ "${state[$impl]}" = ok ] || return 0
    bench_launch "$impl" "$n" $limit "$prog" "$@" >"$out/raw/$name.out" 2>"$out/raw/$name.err"
    echo "$name $?" >>"$out/runs.txt"
}

for ((r = 1; r <= rounds; r++)); do
    log "round $r/$rounds"
    for impl in $(bench_order $r); do
        flat_run "pp-$impl-flat-r$r" "$impl" 2 pingpong -s 8,1M -t "$budget"
        [ "$impl" = weft ] && rat_run "pp-weft-rat-r$r" 2 2 pingpong -s 8,1M -t "$budget"
    done
    for p in 1 2 4; do
        n=$((2 * p))
        for impl in $(bench_order $r); do
            flat_run "pairs$p-$impl-threads-r$r" "$impl" 2 mt_latency -P NtoN -n "$p" -t "$budget"
            if [ "$impl" = weft ]; then
                flat_run "pairs$p-weft-flat-r$r" weft "$n" mt_ranks_lat -t "$budget" -l init
                rat_run "pairs$p-weft-rat-r$r" "$n" 2 mt_ranks_lat -t "$budget" -l init
                [ "$n" -gt 2 ] && rat_run "pairs$p-weft-rat1-r$r" "$n" "$n" mt_ranks_lat -t "$budget" -l init
            fi
        done
    done
    for impl in $(bench_order $r); do
        flat_run "rss-$impl-flat-r$r" "$impl" 4 rss
        [ "$impl" = weft ] && rat_run "rss-weft-rat-r$r" 4 4 rss
    done
done
python3 "$here/summarize_rat.py" "$out" >"$out/summary.md"
cat "$out/summary.md"
