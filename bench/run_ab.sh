#!/bin/bash
# Same-run comparison of two Weft builds (the no-regression check of a refactor): pingpong,
# sqmr (1 thread) and tagmatch, the two builds alternating round by round so both see the same
# machine. usage: bench/run_ab.sh BASE_BUILD NEW_BUILD OUT_FILE [ROUNDS]
# Summary: bench/summarize_ab.py OUT_FILE. Run on an idle machine (the load is recorded per round).
set -u
base=$1 new=$2 out=$3 rounds=${4:-6}
: >"$out"
for r in $(seq "$rounds"); do
    for b in base new; do
        if [ "$b" = base ]; then B=$base; else B=$new; fi
        l=$(cut -d' ' -f1 /proc/loadavg)
        timeout 120 "$B/tools/mpiexec" -n 2 "$B/bench/bench_pingpong" -s 0,8,64,512,4K,64K,1M,4M \
            -t 0.3 -p 2>/dev/null | grep '^size' | sed "s/^/$b $r load=$l pp /" >>"$out"
        timeout 120 "$B/tools/mpiexec" -n 2 "$B/bench/bench_sqmr" -n 1 -t 0.5 -r 3 -p 2>/dev/null |
            grep 'builtin_mmsg' | sed "s/^/$b $r load=$l sqmr /" >>"$out"
        timeout 120 "$B/tools/mpiexec" -n 2 "$B/bench/bench_tagmatch" -n 16,1024,16384 -t 0.2 -p \
            2>/dev/null | grep -v '^#' | sed "s/^/$b $r load=$l tm /" >>"$out"
    done
done
