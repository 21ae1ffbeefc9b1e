#!/usr/bin/env bash
# The thread-private MPI paper's derived-datatype halo exchange (issue 15; bench/halo3d.c,
# docs/threadcomm.md): P ranks (BENCH_HALO_RANKS, default 4) in a 3-D periodic grid exchange
# subarray faces of their 3-D blocks, as
#   weft  flat      P processes, one rank each
#   weft  flatmt    P processes, one rank each, at MPI_THREAD_MULTIPLE (the library's thread-safe
#                   path without thread-ranks: what K = 1 costs beyond flat comes from there)
#   weft  tcomm K   P/K processes x K thread-ranks (MPIX_Threadcomm), K = 1, 2, 4 (those dividing P)
#   weft  rat K     the flat program linked by `mpicc -ranks-as-threads`, `mpiexec --ranks-per-process
#                   K` (K = 2, 4; docs/ranks-as-threads.md); BENCH_HALO_RAT=0 leaves it out
#   mpich, openmpi flat   P processes (no MPIX_Threadcomm there: MPICH 4.0.2's mpi.h has none)
# each round, implementations alternating, every local block size of BENCH_HALO_SIZES in one run.
#
#   bench/run_halo.sh <builddir>
#
# Writes bench/results/halo-<timestamp>/{raw/,runs.csv,meta.txt,summary.md}: per (size, impl, mode,
# K) the median over rounds of the time per exchange (each run's figure is itself a median of 5
# samples), and the speed-ups of each configuration over Weft flat and over the faster peer
# (time of the other / time of this one: >= 1 means at least as fast; the issue asks it of tcomm).
#
# Settings: BENCH_ROUNDS=3, BENCH_HALO_BUDGET=0.5 (seconds per size and run), BENCH_HALO_RANKS=4,
#   BENCH_HALO_SIZES (XxYxZ per rank, comma-separated; default: the program's six),
#   BENCH_HALO_GHOST=2, BENCH_IMPLS="weft mpich openmpi", BENCH_HALO_TIMEOUT=300,
#   BENCH_QUICK=1 (1 round, 0.05 s, sizes 16x16x16,32x32x32: smoke only).
set -u
if [ $# -ne 1 ]; then
    echo "usage: $0 <builddir>" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" 2>/dev/null && pwd || echo "$1")
if [ "${BENCH_QUICK:-0}" = 1 ]; then
    : "${BENCH_ROUNDS:=1}" "${BENCH_HALO_BUDGET:=0.05}" "${BENCH_HALO_SIZES:=16x16x16,32x32x32}"
fi
rounds=${BENCH_ROUNDS:-3}
budget=${BENCH_HALO_BUDGET:-0.5}
nranks=${BENCH_HALO_RANKS:-4}
sizes=${BENCH_HALO_SIZES:-}
ghost=${BENCH_HALO_GHOST:-2}
impls=${BENCH_IMPLS:-weft mpich openmpi}
tmo=${BENCH_HALO_TIMEOUT:-300}
rat=${BENCH_HALO_RAT:-1}
ncpu=$(nproc)
. "$here/lib.sh"
bench_outdir halo-
bench_build halo3d >"$out/states.txt"
args=(-g "$ghost" -t "$budget")
[ -n "$sizes" ] && args+=(-s "$sizes")

# the ranks-as-threads build of the flat program
if [ "$rat" = 1 ] && [ "${state[weft]:-}" = ok ]; then
    mkdir -p "$tmp/rat"
    if cmake --build "$build" --target weft-rankhost weft-ratshim weft-ratstart >"$out/build-rat.log" 2>&1 &&
        "$build/tools/mpicc" -ranks-as-threads -O2 -pthread -o "$tmp/rat/bench_halo3d" "$here/halo3d.c" \
            >>"$out/build-rat.log" 2>&1; then
        log "build rat: ok"
    else
        rat=0
        log "build rat: failed (see build-rat.log): no rat runs"
    fi
fi
{
    bench_meta
    echo "rounds: $rounds budget_s: $budget ranks: $nranks ghost: $ghost sizes: ${sizes:-default}"
    echo "launchers --bind-to none, programs unpinned; rat: $([ "$rat" = 1 ] && echo on || echo off)"
} >"$out/meta.txt"

ks=()
for k in 1 2 4; do
    [ $((nranks % k)) = 0 ] && ks+=("$k")
done

# record <raw> <round> <impl> <mode> <K>
record() {
    sed -n 's/^mode=[a-z]* .* size=\([0-9x]*\) .* time_us=\([0-9.]*\) .*$/\1,\2/p' "$1" |
        sed "s/^/$2,$3,$4,$5,/" >>"$out/runs.csv"
    log "round $2 $3 $4 K=$5: $(grep -c '^mode=' "$1") sizes"
}

echo "round,impl,mode,k,size,time_us" >"$out/runs.csv"
for ((r = 0; r < rounds; r++)); do
    for impl in $(bench_order "$r"); do
        [ "${state[$impl]}" = ok ] || continue
        raw="$out/raw/$impl-flat-r$r.txt"
        if bench_launch "$impl" "$nranks" "$tmo" halo3d -m flat "${args[@]}" >"$raw" 2>&1; then
            record "$raw" "$r" "$impl" flat 1
        else
            log "round $r $impl flat: FAILED (see $raw)"
        fi
        [ "$impl" = weft ] || continue
        raw="$out/raw/weft-flatmt-r$r.txt"
        if bench_launch weft "$nranks" "$tmo" halo3d -m flatmt "${args[@]}" >"$raw" 2>&1; then
            record "$raw" "$r" weft flatmt 1
        else
            log "round $r weft flatmt: FAILED (see $raw)"
        fi
        for k in "${ks[@]}"; do
            raw="$out/raw/weft-tcomm$k-r$r.txt"
            if bench_launch weft $((nranks / k)) "$tmo" halo3d -m tcomm -k "$k" "${args[@]}" >"$raw" 2>&1; then
                record "$raw" "$r" weft tcomm "$k"
            else
                log "round $r weft tcomm K=$k: FAILED (see $raw)"
            fi
            [ "$rat" = 1 ] && [ "$k" -gt 1 ] || continue
            raw="$out/raw/weft-rat$k-r$r.txt"
            if timeout -k 5 "$tmo" "$build/tools/mpiexec" -n "$nranks" --ranks-per-process "$k" \
                    --bind-to none --timeout "$tmo" "$tmp/rat/bench_halo3d" -m flat "${args[@]}" >"$raw" 2>&1; then
                record "$raw" "$r" weft rat "$k"
            else
                log "round $r weft rat K=$k: FAILED (see $raw)"
            fi
        done
    done
done

python3 - "$out" <<'PY'
import csv, statistics, sys
out = sys.argv[1]
rows = list(csv.DictReader(open(f"{out}/runs.csv")))
med = {}
for key in {(r["size"], r["impl"], r["mode"], r["k"]) for r in rows}:
    med[key] = statistics.median(float(r["time_us"]) for r in rows
                                 if (r["size"], r["impl"], r["mode"], r["k"]) == key)
def vol(s):
    x, y, z = map(int, s.split("x"))
    return (x * y * z, s)
with open(f"{out}/summary.md", "w") as f:
    f.write("time per exchange (us, median over rounds); speed-up = other's time / this time "
            "(>= 1: at least as fast)\n\n")
    f.write("| size (per rank) | impl | mode | K | time_us | vs weft flat | vs best peer flat |\n")
    f.write("|---|---|---|---|---|---|---|\n")
    for size in sorted({k[0] for k in med}, key=vol):
        wf = med.get((size, "weft", "flat", "1"))
        peers = [v for (s, i, m, k), v in med.items() if s == size and i != "weft" and m == "flat"]
        best = min(peers) if peers else None
        for (s, impl, mode, k), v in sorted(med.items(), key=lambda kv: (kv[0][1] != "weft", kv[0][1], kv[0][2], int(kv[0][3]))):
            if s != size:
                continue
            a = f"{wf / v:.2f}x" if wf and v and (impl, mode) != ("weft", "flat") else ""
            b = f"{best / v:.2f}x" if best and v and impl == "weft" else ""
            f.write(f"| {size} | {impl} | {mode} | {k} | {v:.2f} | {a} | {b} |\n")
print(open(f"{out}/summary.md").read())
PY
