#!/bin/bash
# Same-run comparison of several command lines on one figure, split by the machine's phase (bench/clrtt.c,
# bench/README.md "The VM's two phases"): the generalisation of run_phase_ab.sh to anything that prints
# KEY=<number>, for example Weft against a peer under its own launcher.
#
#   bench/run_phase_cmd.sh PROBE OUT_FILE ROUNDS KEY NAME1 CMD1 [NAME2 CMD2 ...]
#   e.g. bench/run_phase_cmd.sh build/bench/bench_clrtt /tmp/sq.txt 20 builtin_mmsg_s \
#          weft "build/tools/mpiexec -n 2 build/bench/bench_sqmr -n 1 -p -t 0.5 -r 3 -m builtin" \
#          ompi "mpiexec.openmpi -n 2 --bind-to none /tmp/sqmr.ompi -n 1 -p -l single -t 0.5 -r 3 -m builtin"
#
# A round runs every command once, in the order given (each CMD is a shell command line, run by bash -c under
# a 120 s time-out), each bracketed by two probes of PROBE (bench_clrtt), and appends
# "<name> <rtt_before> <rtt_after> <value>" per run to OUT_FILE (value: the first KEY=<number> of its output,
# nan if none). Then it prints, per phase (near: both probes below 200 ns; far: both above 300 ns), the runs,
# mean and median of each name, and each name's mean and median over the first name's. Run it on an idle machine.
set -u
if [ $# -lt 6 ] || [ $(( ($# - 4) % 2 )) -ne 0 ]; then
    sed -n '2,16p' "$0" >&2
    exit 2
fi
probe=$1 out=$2 rounds=$3 key=$4
shift 4
[ -x "$probe" ] || { echo "$probe is not an executable probe (bench_clrtt)" >&2; exit 2; }
names=() cmds=()
while [ $# -gt 0 ]; do
    names+=("$1") cmds+=("$2")
    shift 2
done
rtt() { "$probe" -n 100000 2>/dev/null | sed -n 's/.*rtt_ns=\([0-9]*\).*/\1/p'; }
: >"$out"
for r in $(seq "$rounds"); do
    for i in "${!names[@]}"; do
        p0=$(rtt)
        v=$(timeout 120 bash -c "${cmds[$i]}" 2>/dev/null | grep -o "$key=[0-9.]*" | head -1 | cut -d= -f2)
        p1=$(rtt)
        echo "${names[$i]} ${p0:-0} ${p1:-0} ${v:-nan}" >>"$out"
    done
done
awk -v first="${names[0]}" '
function med(list,   a, n, i, j, t) {
    n = split(list, a, " ")
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
$4 == "nan" { next }
!($1 in seen) { seen[$1] = 1; order[++k] = $1 }
{ ph = ($2 < 200 && $3 < 200) ? "near" : ($2 > 300 && $3 > 300) ? "far" : "" }
ph != "" { n[ph, $1]++; s[ph, $1] += $4; l[ph, $1] = l[ph, $1] " " $4 }
END {
    for (p = 1; p <= 2; p++) {
        ph = p == 1 ? "near" : "far"
        if (!n[ph, first]) { printf "%s: no run of %s\n", ph, first; continue }
        m0 = s[ph, first] / n[ph, first]; d0 = med(l[ph, first])
        for (i = 1; i <= k; i++) {
            nm = order[i]
            if (!n[ph, nm]) { printf "%s: %s no run\n", ph, nm; continue }
            m = s[ph, nm] / n[ph, nm]; d = med(l[ph, nm])
            printf "%s: %s n=%d mean %.4g median %.4g | /%s mean %.3f median %.3f\n", ph, nm, n[ph, nm], m, d,
                   first, m / m0, d / d0
        }
    }
}' "$out"
