#!/bin/bash
# The MPI test suite across fake hosts: every plain test of tests/mpi and tests/mpi_mt (the list is
# the build's own, suite_list.py) rerun with its ranks spread over H hosts, at most P per host
# (fewer when the test has fewer ranks: a 2-rank test on 2 hosts has one rank on each), so that
# ranks on different hosts talk through Weft's tcp transport (or libfabric: WEFT_TRANSPORTS=shm,ofi)
# and ranks of one host through shared memory.
# Launched from weft-h1 by our mpiexec through tests/net/rsh (-launcher rsh), or by MPICH's Hydra
# the same way with SUITE_LAUNCHER=hydra. Needs root; exit 77 (skip) with the reason otherwise.
#
# usage: suite.sh BUILD_DIR MPIEXEC H P [MIN_RANKS [NAME_REGEX]]
#   MIN_RANKS (default 1): only the tests of at least that many ranks (3 hosts x 1 rank places the
#   tests of 1 and 2 ranks exactly as 2 hosts x 2 ranks does: one rank a host).
#   SUITE_JOBS (default 2): tests run at once. SUITE_TIME_SCALE (default 2): each test's own
#   --timeout, and the --deadline=S of the multithreaded programs, times this (tcp between fake
#   hosts sharing 2 cores is slower than one host's shared memory); a SIGKILL 30 s after it.
#   SUITE_TAG (default empty): appended to the test's name in the summary and its file (.reduced).
#   Prints PASS/FAIL/SKIP per test, the output of each
#   failure, and a summary; writes the summary to BUILD_DIR/Testing/net-suite-HxP.txt too.
NET_SRC=$(cd "$(dirname "$0")" && pwd)
. "$NET_SRC/../launcher/lib.sh"
. "$NET_SRC/netns.sh"

BUILD=$(realpath "$1") MPIEXEC=$(realpath "$2") H=$3 P=$4 MIN_NP=${5:-1} PICK=${6:-}
JOBS=${SUITE_JOBS:-2}
SCALE=${SUITE_TIME_SCALE:-2}
SUITE_TAG=${SUITE_TAG:-}   # set by a reduced run (e.g. .reduced): names its summary apart
T_NAME="net.suite.${H}x${P}${SUITE_TAG}"

net_test_setup

# Ranks on several hosts go through Weft's tcp transport (WEFT_TRANSPORTS=auto without an RDMA
# device, or shm,tcp), or libfabric when asked for (shm,ofi), which a build without it lacks.
case ${WEFT_TRANSPORTS:-auto} in
*ofi*) "$BUILD/tools/weft-info" 2>/dev/null | grep -Eq '^ *ofi: +yes' ||
    skip "WEFT_TRANSPORTS=$WEFT_TRANSPORTS but this Weft was built without libfabric (weft-info: ofi: no)" ;;
esac

LAUNCHER=${SUITE_LAUNCHER:-weft}
[ "$LAUNCHER" != hydra ] || command -v mpiexec.mpich >/dev/null ||
    skip "MPICH's Hydra (mpiexec.mpich) is not installed"

python3 "$NET_SRC/suite_list.py" "$BUILD" "$MPIEXEC" "$MIN_NP" $PICK >"$T_DIR/list" 2>"$T_DIR/left" ||
    fail "suite_list.py failed: $(cat "$T_DIR/left")"
[ -s "$T_DIR/list" ] || fail "no test to run (filter '${PICK}')"
net_up "$H" || fail "net_up $H failed (see above)"
hosts=$(seq -f 'weft-h%g' -s, 1 "$H")

# run_one INDEX NAME NP TIMEOUT ENV PROGRAM: one test, its output in INDEX.log, then its status
# and seconds in INDEX.rc (written last: the collector waits for it).
run_one() {
    local i=$1 name=$2 np=$3 tmo=$4 envs prog ppn t0 rc
    IFS=$'\x1f' read -ra envs <<<"$5"
    IFS=$'\x1f' read -ra prog <<<"$6"
    tmo=$((tmo * SCALE))
    for k in "${!prog[@]}"; do
        case ${prog[k]} in --deadline=*) prog[k]=--deadline=$(( ${prog[k]#--deadline=} * SCALE )) ;; esac
    done
    ppn=$(( (np + H - 1) / H ))
    [ "$ppn" -le "$P" ] || ppn=$P
    t0=$(date +%s)
    (
        # The fake hosts share this machine's cores, but each sees all of them and so would not
        # yield with 2 ranks a host (WEFT_WAIT_YIELD=auto: ranks of the node > its CPUs): 4 ranks
        # that never yield on 2 cores made mt_tags 20 to 50 times slower. A test's own value wins.
        export WEFT_WAIT_YIELD=1
        for e in "${envs[@]}"; do export "$e"; done
        if [ "$LAUNCHER" = hydra ]; then
            export MPIEXEC_TIMEOUT=$tmo
            net_exec h1 timeout -s KILL $((tmo + 30)) mpiexec.mpich -launcher ssh \
                -launcher-exec "$NET_SRC/rsh" -hosts "$hosts" -ppn "$ppn" -n "$np" "${prog[@]}"
        else
            # --bind-to none: each fake host would bind its ranks to "its" CPUs, which are the
            # other hosts' too (2 x 2 ranks: two ranks on each CPU, 8 threads each, and
            # mt_complete made 8 operations in 50 s)
            net_exec h1 timeout -s KILL $((tmo + 30)) "$MPIEXEC" -launcher rsh \
                -launcher-exec "$NET_SRC/rsh" --timeout "$tmo" --bind-to none -hosts "$hosts" \
                -ppn "$ppn" -n "$np" "${prog[@]}"
        fi
    ) </dev/null >"$T_DIR/$i.log" 2>&1
    rc=$?
    echo "$rc $(( $(date +%s) - t0 ))" >"$T_DIR/$i.rc.tmp" && mv "$T_DIR/$i.rc.tmp" "$T_DIR/$i.rc"
}

names=() pass=0 failed=() skipped=0
t_start=$(date +%s)
i=0
while IFS=$'\x1e' read -r name np tmo envs prog; do
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
    names[i]=$name
    run_one "$i" "$name" "$np" "$tmo" "$envs" "$prog" {NET_LIFE_FD}>&- &
    i=$((i + 1))
done <"$T_DIR/list"
wait

for ((k = 0; k < i; k++)); do
    read -r rc secs <"$T_DIR/$k.rc" || { rc=255 secs=0; }
    case $rc in
    0) pass=$((pass + 1)); echo "PASS ${names[k]} (${secs} s)" ;;
    77) skipped=$((skipped + 1))   # the program's reason (SKIP: ...), else its last line
        why=$(grep -m 1 -i '^skip' "$T_DIR/$k.log" || tail -n 1 "$T_DIR/$k.log")
        echo "SKIP ${names[k]}: $why" ;;
    *) failed+=("${names[k]}")
       echo "FAIL ${names[k]} (status $rc, ${secs} s); its output ends:"
       tail -n 25 "$T_DIR/$k.log" | sed 's/^/    /' ;;
    esac
done
summary="$T_NAME: $pass passed, ${#failed[@]} failed, $skipped skipped of $i tests on $H hosts (at most $P ranks each, launched by $LAUNCHER) in $(( $(date +%s) - t_start )) s; $(tail -n 1 "$T_DIR/left")"
echo "$summary"
for f in "${failed[@]}"; do echo "  failed: $f"; done
mkdir -p "$BUILD/Testing" && { echo "$summary"; printf '  failed: %s\n' "${failed[@]}"; } \
    >"$BUILD/Testing/net-suite-${H}x${P}${SUITE_TAG}.txt"
[ ${#failed[@]} -eq 0 ] || exit 1
