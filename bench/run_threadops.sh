#!/bin/bash
# Threading backends side by side (issue 16 section 4): bench_threadops (ThreadOps-style costs of the
# threading layer: create/join, yield, mutex, spinlock, condition and wait-object round trips), then
# Weft's 8 B latency (bench_pingpong) and single-thread SQMR rate (bench_sqmr -n 1) on 2 ranks, in
# one build tree per backend, the trees alternating round by round so all see the same machine.
#
# usage: bench/run_threadops.sh [OUT_FILE] [ROUNDS]
#   TREES="pthreads=build pth=build-pth"   the trees to compare, NAME=DIR; a missing pth tree is
#                                          configured (-DWEFT_THREADS=pth) and built; the first one
#                                          is the reference of the ratios
#   THREADOPS_QUICK=1                      smoke run: tiny budgets, 1 round
# Writes the raw lines and a summary (medians over the rounds, ratios to the first tree) to OUT_FILE
# (default bench/results/threadops-<timestamp>.txt). Run it on an idle machine.
set -u
cd "$(dirname "$0")/.."
out=${1:-bench/results/threadops-$(date -u +%Y%m%d-%H%M%S).txt}
rounds=${2:-5}
trees=${TREES:-"pthreads=build pth=build-pth"}
if [ -n "${THREADOPS_QUICK:-}" ]; then
    rounds=1; to_args="-t 0.02 -r 1 -y 200"; pp_args="-t 0.05"; sq_args="-t 0.1 -r 1"
else
    to_args="-t 0.2 -r 5"; pp_args="-t 0.5"; sq_args="-t 0.5 -r 3"
fi
mkdir -p "$(dirname "$out")"
: >"$out"

for spec in $trees; do
    name=${spec%%=*} dir=${spec#*=}
    if [ ! -f "$dir/build.ninja" ]; then
        backend=$name
        [ "$backend" = pth ] && ./tools/install-deps.sh libpth-dev
        cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEFT_THREADS="$backend" \
            >/dev/null || { echo "configure of $dir failed" >&2; exit 1; }
    fi
    cmake --build "$dir" --target mpiexec mpi_abi bench_threadops bench_pingpong bench_sqmr >/dev/null ||
        { echo "build of $dir failed" >&2; exit 1; }
done

{
    echo "# bench/run_threadops.sh $(date -u +%FT%TZ), $(nproc) CPUs, $(uname -r), trees: $trees"
    echo "# rounds $rounds; threadops $to_args; pingpong -s 8 $pp_args -p; sqmr -n 1 $sq_args -p"
} >>"$out"
for r in $(seq "$rounds"); do
    for spec in $trees; do
        name=${spec%%=*} dir=${spec#*=}
        l=$(cut -d' ' -f1 /proc/loadavg)
        timeout 300 "$dir/bench/bench_threadops" $to_args 2>&1 |
            sed "s/^/$name $r load=$l /" >>"$out"
        timeout 120 "$dir/tools/mpiexec" -n 2 "$dir/bench/bench_pingpong" -s 8 $pp_args -p 2>/dev/null |
            grep '^size' | sed "s/^/$name $r load=$l pp /" >>"$out"
        timeout 120 "$dir/tools/mpiexec" -n 2 "$dir/bench/bench_sqmr" -n 1 $sq_args -p 2>/dev/null |
            grep 'builtin_mmsg' | sed "s/^/$name $r load=$l sqmr /" >>"$out"
    done
done

python3 - "$out" "$trees" <<'EOF' | tee -a "$out"
import re, statistics, sys
path, trees = sys.argv[1], sys.argv[2].split()
names = [t.split('=')[0] for t in trees]
vals = {}
for line in open(path):
    if line.startswith('#'):
        continue
    f = line.split()
    if len(f) < 4:
        continue
    name = f[0]
    m = re.search(r'op=(\S+) ns=([\d.]+)', line)
    if m:
        vals.setdefault((m.group(1) + ' (ns)', name), []).append(float(m.group(2)))
        continue
    if f[3] == 'pp':
        m = re.search(r'size=8 .*median_us=([\d.]+)', line)
        if m:
            vals.setdefault(('8 B latency, median (us)', name), []).append(float(m.group(1)))
    elif f[3] == 'sqmr':
        m = re.search(r'builtin_mmsg_s=([\d.]+)', line)
        if m:
            vals.setdefault(('SQMR 1 thread (Mmsg/s)', name), []).append(float(m.group(1)))
ops = []
for (op, _) in vals:
    if op not in ops:
        ops.append(op)
print('# summary: median over rounds; ratio = tree / %s' % names[0])
print('| measure | ' + ' | '.join(names) + ' | ' + ' | '.join('%s/%s' % (n, names[0]) for n in names[1:]) + ' |')
print('|---|' + '---:|' * (2 * len(names) - 1))
for op in ops:
    med = [statistics.median(vals[(op, n)]) if (op, n) in vals else None for n in names]
    cells = ['%.3g' % v if v is not None else '-' for v in med]
    ratios = ['%.2f' % (v / med[0]) if v is not None and med[0] else '-' for v in med[1:]]
    print('| %s | %s | %s |' % (op, ' | '.join(cells), ' | '.join(ratios)))
EOF
