#!/bin/bash
# --bind-to (auto, core, none), WEFT_BIND, --report-bindings and WEFT_BOUND_CPUS, checked against
# the CPUs the kernel lets each rank run on (Cpus_allowed_list). The expectations are computed from
# the CPUs this script may run on, which mpiexec inherits, so the test holds on any machine.
# usage: test_bind.sh MPIEXEC
. "$(dirname "$0")/lib.sh"
MX=$1

# Each rank prints its rank, WEFT_BOUND_CPUS and the kernel's list of the CPUs it may run on.
SHOW='echo "rank $PMI_RANK bound=${WEFT_BOUND_CPUS-(unset)} cpus=$(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)"'

# expand LIST: "0-2,5" -> "0 1 2 5"
expand() {
    local part out=()
    IFS=, read -ra parts <<<"$1"
    for part in "${parts[@]}"; do
        if [[ $part == *-* ]]; then
            out+=($(seq "${part%-*}" "${part#*-}"))
        else
            out+=("$part")
        fi
    done
    echo "${out[*]}"
}

# compress CPU...: ascending CPUs -> the kernel's list, "0 1 2 5" -> "0-2,5"
compress() {
    local out="" first=$1 last=$1 c
    shift
    for c in "$@" ""; do
        if [ -n "$c" ] && [ "$c" -eq $((last + 1)) ]; then
            last=$c
            continue
        fi
        [ "$first" = "$last" ] && out+=",$first" || out+=",$first-$last"
        first=$c last=$c
    done
    echo "${out#,}"
}

MINE=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
[ -n "$MINE" ] || skip "no Cpus_allowed_list in /proc/self/status"
read -ra CPUS <<<"$(expand "$MINE")"
C=${#CPUS[@]}
[ "$(compress "${CPUS[@]}")" = "$MINE" ] || fail "test helper: compress(expand($MINE)) = $(compress "${CPUS[@]}")"

# The lines SHOW prints, sorted, for n ranks: `want auto N`, `want core N`, `want none N`, each
# with the CPUs of mpiexec given by the array CPUS and the list MINE.
want() {
    local mode=$1 n=$2 i lo hi lines=""
    for ((i = 0; i < n; i++)); do
        if [ "$mode" = core ]; then
            lines+="rank $i bound=${CPUS[i % C]} cpus=${CPUS[i % C]}"$'\n'
        elif [ "$mode" = auto ] && [ "$n" -le "$C" ]; then
            lo=$((i * C / n)) hi=$(((i + 1) * C / n))
            local l=$(compress "${CPUS[@]:lo:hi-lo}")
            lines+="rank $i bound=$l cpus=$l"$'\n'
        else
            lines+="rank $i bound=(unset) cpus=$MINE"$'\n'
        fi
    done
    sorted "${lines%$'\n'}"
}

# check WHAT MODE N MPIEXEC-ARGS...: runs SHOW as N ranks, expects status 0 and `want MODE N`.
check() {
    local what=$1 mode=$2 n=$3
    shift 3
    run "$@" bash -c "$SHOW"
    expect_rc 0 "$what"
    expect_eq "$what: WEFT_BOUND_CPUS and Cpus_allowed_list of each rank (sorted; mpiexec may use $MINE)" \
        "$(want "$mode" "$n")" "$(sorted "$T_OUT")"
}

check "default (auto), 2 ranks" auto 2 "$MX" -n 2
if [ "$C" -eq 2 ]; then   # spelled out for the usual 2-CPU machine
    expect_eq "auto, 2 ranks on 2 CPUs: one CPU each" \
        "$(sorted "rank 0 bound=${CPUS[0]} cpus=${CPUS[0]}
rank 1 bound=${CPUS[1]} cpus=${CPUS[1]}")" "$(sorted "$T_OUT")"
fi
check "--bind-to auto, 1 rank: all of mpiexec's CPUs" auto 1 "$MX" --bind-to auto -n 1
check "--bind-to auto, 4 ranks" auto 4 "$MX" --bind-to auto -n 4
check "auto over two programs (':'), 1 + 1 ranks" auto 2 "$MX" -n 1 bash -c "$SHOW" : -n 1
check "--bind-to core, 4 ranks" core 4 "$MX" --bind-to core -n 4
check "-bind-to core (Hydra's spelling), 3 ranks" core 3 "$MX" -bind-to core -n 3
check "--bind-to=core, 2 ranks" core 2 "$MX" --bind-to=core -n 2
check "--bind-to none, 2 ranks" none 2 "$MX" --bind-to none -n 2
WEFT_BOUND_CPUS=999 check "--bind-to none hides an inherited WEFT_BOUND_CPUS" none 2 "$MX" --bind-to none -n 2
WEFT_BIND=none check "WEFT_BIND=none, 2 ranks" none 2 "$MX" -n 2
WEFT_BIND=core check "WEFT_BIND=core, 3 ranks" core 3 "$MX" -n 3
WEFT_BIND=none check "--bind-to auto overrides WEFT_BIND=none" auto 2 "$MX" --bind-to auto -n 2
WEFT_BIND=bogus check "--bind-to core wins over an invalid WEFT_BIND" core 2 "$MX" --bind-to core -n 2

# --report-bindings: one line per rank, in rank order, on mpiexec's stderr.
run "$MX" --report-bindings --bind-to core -n 3 true
expect_rc 0 "--report-bindings --bind-to core -n 3"
expect_eq "--report-bindings --bind-to core -n 3: stderr" "mpiexec: rank 0 bound to CPUs ${CPUS[0]}
mpiexec: rank 1 bound to CPUs ${CPUS[1 % C]}
mpiexec: rank 2 bound to CPUs ${CPUS[2 % C]}" "$T_ERR"
run "$MX" --report-bindings -n 1 true
expect_eq "--report-bindings -n 1: stderr" "mpiexec: rank 0 bound to CPUs $MINE" "$T_ERR"
run "$MX" -report-bindings --bind-to none -n 2 true
expect_eq "-report-bindings --bind-to none -n 2: stderr" "mpiexec: rank 0 not bound
mpiexec: rank 1 not bound" "$T_ERR"
run "$MX" --bind-to core -n 2 true
expect_eq "no --report-bindings: stderr" "" "$T_ERR"

# mpiexec confined to one CPU: 2 ranks oversubscribe it, so auto leaves them alone; core puts both
# there.
if command -v taskset >/dev/null; then
    ONE=${CPUS[0]}
    run taskset -c "$ONE" "$MX" --report-bindings -n 2 bash -c "$SHOW"
    expect_rc 0 "taskset -c $ONE mpiexec -n 2"
    expect_eq "taskset -c $ONE mpiexec -n 2 (auto, oversubscribed): ranks (sorted)" \
        "rank 0 bound=(unset) cpus=$ONE
rank 1 bound=(unset) cpus=$ONE" "$(sorted "$T_OUT")"
    expect_eq "taskset -c $ONE mpiexec -n 2 (auto, oversubscribed): stderr" "mpiexec: rank 0 not bound
mpiexec: rank 1 not bound" "$T_ERR"
    run taskset -c "$ONE" "$MX" --bind-to core -n 2 bash -c "$SHOW"
    expect_rc 0 "taskset -c $ONE mpiexec --bind-to core -n 2"
    expect_eq "taskset -c $ONE mpiexec --bind-to core -n 2: ranks (sorted)" \
        "rank 0 bound=$ONE cpus=$ONE
rank 1 bound=$ONE cpus=$ONE" "$(sorted "$T_OUT")"
else
    echo "note: no taskset; the one-CPU cases are not run"
fi

# Usage errors.
for bad in "--bind-to socket" "--bind-to" "--bind-to=" "-n 1 true : --bind-to none"; do
    run "$MX" $bad -n 1 true
    expect_rc 2 "mpiexec $bad (usage error)"
done
WEFT_BIND=socket run "$MX" -n 1 true
expect_rc 2 "WEFT_BIND=socket (usage error)"
expect_mpiexec_msg "WEFT_BIND=socket" "^mpiexec: WEFT_BIND wants auto, core or none, got 'socket'$"
echo "PASS: $T_NAME"
