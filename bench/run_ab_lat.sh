#!/bin/bash
# Small-message latency of two Weft builds in one run (issue 17's "8 B within 3% of the base"): the NEW build's
# bench_pingpong (it reports gmed_us, the median of means of 64 round trips, finer than the clock) runs against
# each build's library (LD_LIBRARY_PATH over the program's RUNPATH; the MPI ABI is the same) and launcher, the
# builds alternating with the order reversed every round. Then bench/summarize_ab.py OUT.
#   bench/run_ab_lat.sh BASE_BUILD NEW_BUILD OUT [ROUNDS=20] [SIZES=0,8,64] [BUDGET=0.5]
# Run on an idle machine (the load is recorded per round).
set -u
base=$1 new=$2 out=$3 rounds=${4:-20} sizes=${5:-0,8,64} budget=${6:-0.5}
bin=$new/bench/bench_pingpong
[ -x "$bin" ] || { echo "$0: no $bin (cmake --build $new --target bench_pingpong)" >&2; exit 2; }
: >"$out"
for r in $(seq "$rounds"); do
    if [ $((r % 2)) = 0 ]; then order="base new"; else order="new base"; fi
    for b in $order; do
        if [ "$b" = base ]; then B=$base; else B=$new; fi
        l=$(cut -d' ' -f1 /proc/loadavg)
        LD_LIBRARY_PATH=$B/src timeout 120 "$B/tools/mpiexec" -n 2 "$bin" -s "$sizes" -t "$budget" -p 2>/dev/null |
            grep '^size' | sed "s/^/$b $r load=$l pp /" >>"$out"
    done
done
python3 "$(dirname "$0")/summarize_ab.py" "$out"
