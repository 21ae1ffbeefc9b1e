#!/bin/bash
# Dynamic processes across fake hosts (netns.sh): MPI_Comm_spawn and spawn_multiple from a job that
# our mpiexec started in weft-h1 over weft-h1 and weft-h2 (-launcher rsh -launcher-exec
# tests/net/rsh), the children placed by info "host" or by default after the parents' slots and
# started through the parents' launcher; and connect/accept (and Comm_join) between two separate
# jobs, one on each host. Each program checks the intercommunicator (point-to-point both ways, a
# broadcast, an allreduce, a barrier, merge, dup) and disconnects; the children check the host they
# run on (DPM_EXPECT_HOSTS, tests/mpi/dpm_spawn.c). After each job, within 5 s, no process but PID 1
# is left on any host and no /dev/shm file. Needs root; exit 77 (skip) with the reason otherwise.
# Cases whose children (or parents) span both hosts need libfabric between hosts: they are left out,
# saying so, in a Weft built without it.
# usage: test_spawn.sh MPIEXEC DPM_SPAWN DPM_PORT
NET_SRC=$(cd "$(dirname "$0")" && pwd)
. "$NET_SRC/../launcher/lib.sh"
. "$NET_SRC/netns.sh"
MX=$1 SP=$2 PORTP=$3

net_test_setup

net_up 2 || fail "net_up 2 failed (see above)"

RSH=(-launcher rsh -launcher-exec "$NET_SRC/rsh" --bind-to none)
H2=weft-h1,weft-h2
export WEFT_WAIT_YIELD=1   # two hosts on this machine's cores (docs/multinode-tests.md)
OFI=0
"$(dirname "$MX")/weft-info" 2>/dev/null | grep -Eq '^ *ofi: +yes' && OFI=1

# spawn_case WHAT NEEDS_OFI ENV... -- MPIEXEC_ARGS...: one parent job in weft-h1; status 0.
spawn_case() {
    local what=$1 need=$2 envs=()
    shift 2
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    if [ "$need" = 1 ] && [ "$OFI" = 0 ]; then
        echo "note: not run (this Weft has no libfabric between hosts): $what"
        return
    fi
    case " $* " in
    *" -hosts "*) hrun h1 150 env "${envs[@]}" "$MX" "${RSH[@]}" --timeout 140 "$@" ;;
    *) hrun h1 150 env "${envs[@]}" "$MX" --bind-to none --timeout 140 "$@" ;;   # one host: no launcher
    esac
    expect_rc 0 "$what"
    echo "note: $what: passed in $T_SECS s"
    expect_clean "$what"
}

# --- MPI_Comm_spawn onto the other host (info host): parents on weft-h1, children on weft-h2.
spawn_case "spawn from 1 rank, 2 children on weft-h2 (info host)" 0 \
    DPM_SPAWN_HOST=weft-h2 DPM_EXPECT_HOSTS=weft-h2,weft-h2 -- -hosts $H2 -n 1 "$SP" spawn 2
spawn_case "spawn from 4 ranks on weft-h1, 2 children on weft-h2 (info host)" 0 \
    DPM_SPAWN_HOST=weft-h2 DPM_EXPECT_HOSTS=weft-h2,weft-h2 -- -hosts weft-h1:4,weft-h2:4 -n 4 "$SP" spawn 2
spawn_case "spawn_multiple: 1 child with wdir and 2 found by path, all on weft-h2 (info host)" 0 \
    DPM_SPAWN_HOSTS=weft-h2,weft-h2 DPM_EXPECT_HOSTS=weft-h2,weft-h2,weft-h2 -- \
    -hosts $H2 -n 1 "$SP" multiple /tmp

# --- A job on one host (no -hosts: no proxy, no launcher of its own) spawning onto weft-h2: the
# children's mpiexec starts its proxy by ssh, here an ssh in PATH that is tests/net/rsh.
mkdir -p "$T_DIR/bin"
printf '#!/bin/sh\nexec "%s/rsh" "$@"\n' "$NET_SRC" >"$T_DIR/bin/ssh"
chmod +x "$T_DIR/bin/ssh"
spawn_case "spawn from a 1-rank job on one host onto weft-h2 (ssh, the default launcher)" 0 \
    PATH="$T_DIR/bin:$PATH" DPM_SPAWN_HOST=weft-h2 DPM_EXPECT_HOSTS=weft-h2,weft-h2 -- \
    -n 1 "$SP" spawn 2

# --- Default placement: the children take the job's slots after the parents' (as Hydra).
spawn_case "spawn from 1 rank, children placed after it: weft-h2 then weft-h1" 1 \
    DPM_EXPECT_HOSTS=weft-h2,weft-h1 -- -hosts $H2 -n 1 "$SP" spawn 2
spawn_case "nested spawn from 4 ranks on both hosts: children on weft-h1 (the slots wrap), grandchild on weft-h2" 1 \
    DPM_EXPECT_HOSTS=weft-h1,weft-h1 -- -hosts $H2 -ppn 2 -n 4 "$SP" nested 2
spawn_case "spawn_multiple: command 0 on weft-h2, command 1 on weft-h1 (info host each)" 1 \
    DPM_SPAWN_HOSTS=weft-h2,weft-h1 DPM_EXPECT_HOSTS=weft-h2,weft-h1,weft-h1 -- \
    -hosts $H2 -n 1 "$SP" multiple /tmp

# --- Failures: MPI_ERR_SPAWN on every parent, errcodes, MPI_COMM_NULL (the program checks), the
# reason in the message.
hrun h1 150 "$MX" "${RSH[@]}" --timeout 140 -hosts weft-h1:2,weft-h2 -n 2 "$SP" missing
expect_rc 0 "spawning a missing program on weft-h2 and weft-h1 (default placement)"
expect_match "spawning a missing program: the reason" \
    '.*exited with status 127 before they connected \(program not found\).*' "$T_OUT"
expect_clean "spawning a missing program"
hrun h1 150 env DPM_SPAWN_HOST=weft-nosuch "$MX" "${RSH[@]}" --timeout 140 -hosts $H2 -n 1 "$SP" missing
expect_rc 0 "spawning on a host rsh cannot reach"
expect_match "spawning on a host rsh cannot reach: the reason" \
    '.*exited with status 255 before they connected.*' "$T_OUT"
expect_clean "spawning on a host rsh cannot reach"

# --- Connect/accept, the name service and Comm_join between a job on weft-h1 and one on weft-h2,
# each started by its own mpiexec (one host each: no proxy; the port's address is the host name's).
DIR=$(mktemp -d) || fail "mktemp"
chmod 755 "$DIR"
net_exec h1 timeout -s KILL 120 env WEFT_NAME_DIR="$DIR/names" "$MX" -n 2 --timeout 100 "$PORTP" server "$DIR" \
    </dev/null >"$T_DIR/sout" 2>"$T_DIR/serr" {NET_LIFE_FD}>&- &
spid=$!
hrun h2 120 env WEFT_NAME_DIR="$DIR/names" "$MX" -n 2 --timeout 100 "$PORTP" client "$DIR"
crc=$T_RC
[ "$crc" = 0 ] || kill "$spid" 2>/dev/null
wait "$spid"
src=$?
T_OUT="server: $(cat "$T_DIR/sout")
client: $T_OUT" T_ERR="server: $(cat "$T_DIR/serr")
client: $T_ERR"
T_RC="$src/$crc"
expect_rc 0/0 "connect/accept and join between a job on weft-h1 (server) and one on weft-h2 (client)"
expect_match "the port's address is weft-h1's" ".*weft-port:${NET_SUBNET//./\\.}\\.1:[0-9]+.*" \
    "$(cat "$DIR/port" 2>&1)"
rm -rf "$DIR"
expect_clean "connect/accept between hosts"

net_down
expect_eq "after net_down" "" "$(net_leftovers)"
echo "PASS: $T_NAME"
