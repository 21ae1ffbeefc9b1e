#!/usr/bin/env bash
# Weft against MPICH and Open MPI: message rate (issue 16 item 1; bench/README.md).
#
#   bench/run_mr.sh [--quick] <builddir>
#
# In each round, for every job, every implementation in rotating order (BENCH_MR_ORDER=job, the default: the
# implementations run one job within seconds of each other, so that the machine's slow phases, which on the
# 2-core VM last tens of seconds and slow every implementation 2-3x, fall on them alike; BENCH_MR_ORDER=impl runs
# all jobs of one implementation, then the next). The jobs:
#   sqmr1    2 ranks, 1 thread, builtin objects (bench/sqmr.c); Weft at MPI_THREAD_MULTIPLE, the peers at
#            MPI_THREAD_SINGLE (-l single) and, as sqmr1m, at MULTIPLE too
#   sqmrT    2 ranks, 2 and 4 threads per rank at MPI_THREAD_MULTIPLE (everyone)
#   mbw1     osu_mbw_mr-style window of 64 8-byte Isend/Irecv, 1 pair (bench/mbw_mr.c); Weft at MULTIPLE, the
#            peers at SINGLE
#   mbw4     the same with 4 pairs (8 ranks: oversubscribed on fewer than 8 cores)
# Every rank pins itself to CPU rank mod C before MPI_Init (-p). Writes bench/results/mr-<timestamp>/ with raw/,
# runs.csv, meta.txt and summary.md (median over rounds per figure, Weft over the better peer, and the median
# over rounds of that round's own ratio). Run it on a quiet machine. Exit status: 0 if every peer run succeeded.
#
# Settings (environment): BENCH_ROUNDS=3, BENCH_MR_BUDGET=1.0 (seconds per figure, split into BENCH_MR_REPS=5
# repetitions), BENCH_MR_WINDOW=64, BENCH_IMPLS="weft mpich openmpi", BENCH_TIMEOUT=120, BENCH_QUICK=1 or --quick
# (1 round, 0.2 s), BENCH_OUT=dir, BENCH_MR_ORDER=job|impl.
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
    : "${BENCH_ROUNDS:=1}" "${BENCH_MR_BUDGET:=0.2}" "${BENCH_MR_REPS:=2}"
fi
rounds=${BENCH_ROUNDS:-3}
budget=${BENCH_MR_BUDGET:-1.0}
reps=${BENCH_MR_REPS:-5}
window=${BENCH_MR_WINDOW:-64}
impls=${BENCH_IMPLS:-weft mpich openmpi}
limit=${BENCH_TIMEOUT:-120}
order=${BENCH_MR_ORDER:-job}
case $order in job|impl) ;; *) echo "BENCH_MR_ORDER must be job or impl" >&2; exit 2 ;; esac
jobs_all="sqmr1 sqmr1m sqmrT mbw1 mbw4"
ncpu=$(nproc)

bench_outdir mr-
bench_build sqmr mbw_mr
{
    bench_meta
    echo "rounds: $rounds, budget ${budget}s per figure in $reps repetitions, window $window, order: $order"
    echo "levels: weft MPI_THREAD_MULTIPLE everywhere; peers MPI_THREAD_SINGLE for sqmr1/mbw1/mbw4, MULTIPLE for sqmr1m/sqmrT"
} >"$out/meta.txt"

echo "round,job,impl,status,seconds" >"$out/runs.csv"
peer_failures=0
# one launch: job $1 of implementation $2 in round $3
run_one() {
    local job=$1 impl=$2 r=$3 lvl=single stem t0 rc status args
    [ "${state[$impl]}" = ok ] || return 0
    [ "$impl" = weft ] && lvl=multiple
    case $job in
    sqmr1)  [ "$impl" = weft ] && return 0
            args=(2 "$limit" sqmr -n 1 -m builtin -l single -t "$budget" -r "$reps" -p) ;;
    sqmr1m) args=(2 "$limit" sqmr -n 1 -m builtin -l multiple -t "$budget" -r "$reps" -p) ;;
    sqmrT)  args=(2 "$limit" sqmr -n 2,4 -m builtin -l multiple -t "$budget" -r "$reps" -p) ;;
    mbw1)   args=(2 "$limit" mbw_mr -s 8 -w "$window" -l "$lvl" -t "$budget" -r "$reps" -p) ;;
    mbw4)   args=(8 "$limit" mbw_mr -s 8 -w "$window" -l "$lvl" -t "$budget" -r "$reps" -p) ;;
    esac
    stem=$out/raw/$job-$impl-r$r
    t0=$(date +%s)
    bench_launch "$impl" "${args[@]}" >"$stem.out" 2>"$stem.err" </dev/null
    rc=$?
    status=ok
    [ $rc -ne 0 ] && status=failed:$rc && [ "$impl" != weft ] && peer_failures=$((peer_failures + 1))
    echo "$r,$job,$impl,$status,$(($(date +%s) - t0))" >>"$out/runs.csv"
    log "round $r $job $impl: $status"
}
for ((r = 0; r < rounds; r++)); do
    if [ "$order" = job ]; then
        for job in $jobs_all; do
            for impl in $(bench_order "$r"); do run_one "$job" "$impl" "$r"; done
        done
    else
        for impl in $(bench_order "$r"); do
            for job in $jobs_all; do run_one "$job" "$impl" "$r"; done
        done
    fi
done
echo "load_after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/meta.txt"

python3 - "$out" >"$out/summary.md" <<'PY'
import collections, glob, os, re, statistics, sys
out = sys.argv[1]
d = collections.defaultdict(list)
byround = {}   # (figure, impl, round) -> value
for path in glob.glob(os.path.join(out, "raw", "*.out")):
    job, impl, rnd = re.match(r"(\w+)-(\w+)-r(\d+)\.out", os.path.basename(path)).groups()
    for line in open(path):
        m = re.match(r"threads=(\d+) builtin_mmsg_s=([\d.]+)", line)
        if m:
            fig = job if job != "sqmrT" else f"sqmr{m[1]}t"
            d[(fig, impl)].append(float(m[2]))
            byround[(fig, impl, int(rnd))] = float(m[2])
        m = re.match(r"size=\d+ pairs=\d+ .*mmsg_s=([\d.]+)", line)
        if m:
            d[(job, impl)].append(float(m[1]))
            byround[(job, impl, int(rnd))] = float(m[1])
rounds = sorted({k[2] for k in byround})
print("# Message rate (Mmsg/s per rank for sqmr, all pairs for mbw_mr; median over rounds)\n")
print("| figure | weft (multiple) | mpich | openmpi | weft / better peer | same-round ratio, median [min-max] | goal |")
print("|---|---|---|---|---|---|---|")
goals = {"sqmr1": 1.0, "mbw1": 1.0, "mbw4": 1.0, "sqmr2t": 1.5, "sqmr4t": 2.0}
for fig, wjob in (("sqmr1", "sqmr1m"), ("sqmr1m", "sqmr1m"), ("sqmr2t", "sqmr2t"), ("sqmr4t", "sqmr4t"),
                  ("mbw1", "mbw1"), ("mbw4", "mbw4")):
    med = lambda k: statistics.median(d[k]) if d.get(k) else None
    w, p = med((wjob, "weft")), [med((fig, i)) for i in ("mpich", "openmpi")]
    best = max([x for x in p if x is not None], default=None)
    ratio = f"{w / best:.3f}" if w and best else "-"
    g = goals.get(fig)
    verdict = "" if g is None or ratio == "-" else (f">= {g}: " + ("met" if w / best >= g else "NOT met"))
    cell = lambda x: f"{x:.3f}" if x is not None else "-"
    rr = []
    for r in rounds:
        wv = byround.get((wjob, "weft", r))
        pv = [byround.get((fig, i, r)) for i in ("mpich", "openmpi")]
        pb = max([x for x in pv if x is not None], default=None)
        if wv and pb:
            rr.append(wv / pb)
    same = f"{statistics.median(rr):.3f} [{min(rr):.3f}-{max(rr):.3f}]" if rr else "-"
    print(f"| {fig} | {cell(w)} | {cell(p[0])} | {cell(p[1])} | {ratio} | {same} | {verdict} |")
print("\nsqmr1: the peers at MPI_THREAD_SINGLE, Weft at MULTIPLE; sqmr1m: everyone at MULTIPLE. The verdict uses"
      " the ratio of the medians; the same-round ratio compares each round's figures, taken seconds apart"
      " when the order is by job.")
PY
cat "$out/summary.md"
[ $peer_failures -eq 0 ]
