#!/usr/bin/env bash
# Thread-ranks (MPIX_Threadcomm) against flat processes and against threads sharing a rank (issue 15;
# docs/threadcomm.md), on Weft, MPICH and Open MPI (the peers: flat and mt only).
#
#   bench/run_threadcomm.sh <builddir>
#
# With P peers (BENCH_TC_PEERS, default 4: 2 pairs) every round runs, implementations alternating:
#   tcomm  Weft only: T processes x P/T thread-ranks (BENCH_TC_TCOMM_NP=T, default 1; pairs inside a
#          process: T=2 with P=8 gives 4 threads per process, as mt has)
#   flat   P processes, one thread each (plain MPI_Init)
#   mt     2 processes x P/2 threads at MPI_THREAD_MULTIPLE, thread t of process 0 with thread t of
#          process 1, each pair on its own duplicate of MPI_COMM_WORLD
# and bench_threadcomm measures 8-byte latency (median one-way, us, and its mean), message rate (8 B, windows of 64,
# msg/s summed over pairs) and 1 MiB bandwidth (windows of 8, MB/s summed). Writes
# bench/results/threadcomm-<timestamp>/{raw/,runs.csv,meta.txt,summary.md}: per (impl, mode, test) the
# median over rounds, and Weft tcomm's ratio to each (latency: other/tcomm; rate, bw: tcomm/other).
#
# Settings: BENCH_ROUNDS=3, BENCH_TC_BUDGET=0.5 (seconds per test), BENCH_TC_PEERS=4,
#   BENCH_TC_TCOMM_NP=1, BENCH_IMPLS="weft mpich openmpi", BENCH_TC_TIMEOUT=120, BENCH_QUICK=1 (1 round,
#   0.05 s: smoke only).
set -u
if [ $# -ne 1 ]; then
    echo "usage: $0 <builddir>" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" 2>/dev/null && pwd || echo "$1")
if [ "${BENCH_QUICK:-0}" = 1 ]; then
    : "${BENCH_ROUNDS:=1}" "${BENCH_TC_BUDGET:=0.05}"
fi
rounds=${BENCH_ROUNDS:-3}
budget=${BENCH_TC_BUDGET:-0.5}
peers=${BENCH_TC_PEERS:-4}
tcnp=${BENCH_TC_TCOMM_NP:-1}
if ((tcnp < 1 || peers % tcnp != 0 || (peers / tcnp) % 2 != 0)); then
    echo "BENCH_TC_TCOMM_NP=$tcnp must divide BENCH_TC_PEERS=$peers into even thread counts" >&2
    exit 2
fi
impls=${BENCH_IMPLS:-weft mpich openmpi}
tmo=${BENCH_TC_TIMEOUT:-120}
ncpu=$(nproc)
. "$here/lib.sh"
bench_outdir threadcomm-
bench_build threadcomm >"$out/states.txt"
{ bench_meta; echo "rounds: $rounds budget_s: $budget peers: $peers tcomm_processes: $tcnp"; } >"$out/meta.txt"

echo "round,impl,mode,test,value,unit" >"$out/runs.csv"
for ((r = 0; r < rounds; r++)); do
    for impl in $(bench_order "$r"); do
        [ "${state[$impl]}" = ok ] || continue
        for mode in tcomm flat mt; do
            [ "$mode" = tcomm ] && [ "$impl" != weft ] && continue
            case $mode in
            tcomm) np=$tcnp; args=(-m tcomm -n $((peers / tcnp))) ;;
            flat) np=$peers; args=(-m flat) ;;
            mt) np=2; args=(-m mt -n $((peers / 2))) ;;
            esac
            raw="$out/raw/$impl-$mode-r$r.txt"
            if bench_launch "$impl" "$np" "$tmo" threadcomm "${args[@]}" -t "$budget" >"$raw" 2>&1; then
                sed -n 's/^mode=\([a-z]*\) .* test=\([a-z]*\) value=\([0-9.]*\) unit=\(.*\)$/\1,\2,\3,\4/p' "$raw" |
                    sed "s/^/$r,$impl,/" >>"$out/runs.csv"
                log "round $r $impl $mode: $(grep -c '^mode=' "$raw") figures"
            else
                log "round $r $impl $mode: FAILED (see $raw)"
            fi
        done
    done
done

python3 - "$out" <<'PY'
import csv, statistics, sys
out = sys.argv[1]
rows = list(csv.DictReader(open(f"{out}/runs.csv")))
med = {}
for key in sorted({(r["impl"], r["mode"], r["test"]) for r in rows}):
    vals = [float(r["value"]) for r in rows if (r["impl"], r["mode"], r["test"]) == key]
    med[key] = statistics.median(vals)
units = {"lat": "us (8 B, one-way)", "latmean": "us (8 B, one-way, mean)", "rate": "msg/s (8 B)",
         "bw": "MB/s (1 MiB)"}
with open(f"{out}/summary.md", "w") as f:
    f.write("| impl | mode | test | median | tcomm ratio |\n|---|---|---|---|---|\n")
    for (impl, mode, test), v in sorted(med.items()):
        t = med.get(("weft", "tcomm", test))
        ratio = ""
        if t and v and (impl, mode) != ("weft", "tcomm"):
            ratio = f"{(v / t) if test.startswith('lat') else (t / v):.2f}x"
        f.write(f"| {impl} | {mode} | {units.get(test, test)} | {v:.3f} | {ratio} |\n")
print(open(f"{out}/summary.md").read())
PY
