#!/bin/bash
# Same-run comparison of two Weft builds on one benchmark, split by the machine's phase. On the 2-vCPU VM a
# cache line's round trip between the two CPUs is either ~100-130 ns ("near") or ~400-500 ns ("far"), changing
# every few seconds to minutes, and every two-rank figure follows it (bench/clrtt.c). So each run is bracketed by
# two probes of bench_clrtt, and a run counts only when both probes give the same phase.
#
#   bench/run_phase_ab.sh BASE_BUILD NEW_BUILD OUT_FILE ROUNDS KEY PROGRAM [ARGS...]
#   e.g. bench/run_phase_ab.sh /tmp/base/build build /tmp/mbw.txt 40 mmsg_s mbw_mr -s 8 -w 64 -t 0.4 -r 2 -p
#
# A round runs 2 ranks of BASE_BUILD/bench/bench_PROGRAM, then of NEW_BUILD's (each under its own mpiexec), and
# appends "<base|new> <rtt_before> <rtt_after> <value>" per run to OUT_FILE, value = the first KEY=<number> of the
# program's output. Then it prints, per phase (near: both probes below 200 ns; far: both above 300 ns), the number
# of runs, the mean and the median of each build, and new / base of the means. Run it on an idle machine.
set -u
if [ $# -lt 6 ]; then
    sed -n '2,12p' "$0" >&2
    exit 2
fi
base=$1 new=$2 out=$3 rounds=$4 key=$5 prog=$6
shift 6
probe=$new/bench/bench_clrtt
[ -x "$probe" ] || { echo "$probe is missing: cmake --build $new --target bench_programs" >&2; exit 2; }
rtt() { "$probe" -n 100000 2>/dev/null | sed -n 's/.*rtt_ns=\([0-9]*\).*/\1/p'; }
: >"$out"
for r in $(seq "$rounds"); do
    for b in base new; do
        if [ "$b" = base ]; then B=$base; else B=$new; fi
        p0=$(rtt)
        v=$(timeout 120 "$B/tools/mpiexec" -n 2 --bind-to none "$B/bench/bench_$prog" "$@" 2>/dev/null |
            grep -o "$key=[0-9.]*" | head -1 | cut -d= -f2)
        p1=$(rtt)
        echo "$b ${p0:-0} ${p1:-0} ${v:-nan}" >>"$out"
    done
done
awk '
function med(list, n,   a, i, j, t) {
    n = split(list, a, " ")
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
$4 == "nan" { next }
{ ph = ($2 < 200 && $3 < 200) ? "near" : ($2 > 300 && $3 > 300) ? "far" : "" }
ph != "" { n[ph, $1]++; s[ph, $1] += $4; l[ph, $1] = l[ph, $1] " " $4 }
END {
    for (p = 1; p <= 2; p++) {
        ph = p == 1 ? "near" : "far"
        if (!n[ph, "base"] || !n[ph, "new"]) { printf "%s: too few runs\n", ph; continue }
        mb = s[ph, "base"] / n[ph, "base"]; mn = s[ph, "new"] / n[ph, "new"]
        printf "%s: base n=%d mean %.4g median %.4g | new n=%d mean %.4g median %.4g | new/base %.3f\n", ph,
               n[ph, "base"], mb, med(l[ph, "base"]), n[ph, "new"], mn, med(l[ph, "new"]), mn / mb
    }
}' "$out"
