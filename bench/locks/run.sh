#!/usr/bin/env bash
# bench/locks/run.sh [pairs]: the cost of one uncontended lock+unlock pair through the threading
# layer (inline, gate on and off), through a shared-library call, and through raw pthread calls,
# counted in instructions by callgrind (exact and repeatable, unlike time on a shared machine).
# Builds with plain gcc into $LOCKS_BUILD (default build-locks/ at the top of the tree), prints the
# table and writes it to bench/results/locks-<timestamp>.txt. docs/threads.md explains the numbers.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PAIRS=${1:-1000000}
OUT=${LOCKS_BUILD:-$ROOT/build-locks}
CC=${CC:-gcc}
RESULTS=$ROOT/bench/results
mkdir -p "$OUT" "$RESULTS"

command -v valgrind >/dev/null || { echo "run.sh: valgrind is needed (apt-get install valgrind)" >&2; exit 1; }

# As libmpi_abi.so is built: -O2, PIC, hidden visibility. The backend macro is given here, so the
# CMake-generated wt_thread_config.h is not needed.
CFLAGS="-O2 -g -std=gnu11 -fPIC -fvisibility=hidden -D_GNU_SOURCE -DWEFT_THREADS_PTHREADS -I$ROOT/src"
LAYER="$ROOT/src/thread/wt_thread_pthreads.c $ROOT/src/util/wu_log.c $ROOT/src/util/wu_status.c"
$CC $CFLAGS -shared -o "$OUT/liblockcall.so" "$HERE/lockcall.c" $LAYER -lpthread
$CC $CFLAGS -o "$OUT/bench_locks" "$HERE/bench_locks.c" $LAYER -L"$OUT" -llockcall \
    -Wl,-rpath,"$OUT" -lpthread

# Instructions of the loop of one variant: collect only inside its bench_ function (callees
# included); LD_BIND_NOW keeps the lazy binding of the first PLT call out of the count.
count() {
    local variant=$1 fn=$2 file="$OUT/callgrind.$1.out"
    LD_BIND_NOW=1 valgrind --tool=callgrind --callgrind-out-file="$file" --toggle-collect="$fn" \
        "$OUT/bench_locks" "$variant" "$PAIRS" 2>/dev/null
    awk '/^summary:/ { print $2 }' "$file"
}

declare -A ns
while IFS=$'\t' read -r v t; do ns[$v]=$t; done < <("$OUT/bench_locks" --time "$PAIRS")

stamp=$(date +%Y%m%d-%H%M%S)
report="$RESULTS/locks-$stamp.txt"
{
    echo "# lock+unlock pair, uncontended: instructions per pair (callgrind, $PAIRS pairs, loop subtracted)"
    echo "# $(date -u '+%Y-%m-%d %H:%M UTC'); $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //');" \
         "$($CC --version | head -1); glibc $(ldd --version | head -1 | awk '{print $NF}');" \
         "$(valgrind --version)"
    echo "# ns/pair: native, fastest batch of 1000 pairs, loop subtracted; indicative only on a shared machine"
    printf '%-18s %18s %10s  %s\n' "variant," "instructions/pair," "ns/pair," "what"
    base=
    while IFS=$'\t' read -r variant fn what; do
        ir=$(count "$variant" "$fn")
        per=$(awk -v ir="$ir" -v n="$PAIRS" 'BEGIN { printf "%.2f", ir / n }')
        if [ -z "$base" ]; then
            base=$per
            per=$(awk -v p="$per" 'BEGIN { printf "%.1f", p }')
            printf '%-18s %18s %10s  %s\n' "$variant," "$per," "${ns[$variant]}," "$what"
            continue
        fi
        net=$(awk -v p="$per" -v b="$base" 'BEGIN { printf "%.1f", p - b }')
        printf '%-18s %18s %10s  %s\n' "$variant," "$net," "${ns[$variant]}," "$what"
    done < <("$OUT/bench_locks" --list)
} | tee "$report"
echo "written to $report"
