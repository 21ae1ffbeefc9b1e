#!/bin/bash
# The fake-host harness itself (netns.sh, rsh, rshd.py), checked with MPICH's Hydra: hosts share
# nothing but their network, jobs span them through rsh, a bad exit status on host 2 comes back,
# and nothing made is left behind. Needs root; exit 77 (skip) with the reason otherwise.
# usage: test_harness.sh
NET_SRC=$(cd "$(dirname "$0")" && pwd)
. "$NET_SRC/../launcher/lib.sh"
. "$NET_SRC/netns.sh"

# Leaves nothing behind however the script ends (a failed check, SIGTERM, SIGINT); SIGKILL is the
# reaper's and the next run's business (netns.sh).
net_test_setup

command -v mpiexec.mpich >/dev/null && command -v mpicc.mpich >/dev/null ||
    skip "MPICH (mpiexec.mpich, mpicc.mpich) is not installed"

mpicc.mpich -O1 -o "$T_DIR/hostinfo" "$NET_SRC/hostinfo.c" 2>"$T_DIR/cc.err" ||
    fail "mpicc.mpich hostinfo.c: $(cat "$T_DIR/cc.err")"
net_up 3 || fail "net_up 3 failed (see above)"

# --- Each host on its own: host name, PID 1, namespaces, /dev/shm, System V IPC, routes, names.
declare -A ns_owner=()
for n in net uts ipc mnt pid; do ns_owner[$(readlink /proc/$$/ns/$n)]="the machine"; done
for i in 1 2 3; do
    hrun h$i 10 sh -c 'hostname; echo $$; tr "\0" " " </proc/1/cmdline; echo
        for n in net uts ipc mnt pid; do readlink /proc/self/ns/$n; done | tr "\n" " "; echo
        ip -4 route | tr -s " " | sed "s/ $//"; getent hosts weft-h1 weft-h2 weft-h3 | tr -s " " | tr "\n" ";"'
    expect_rc 0 "h$i: looking around"
    mapfile -t got <<<"$T_OUT"
    expect_eq "h$i: host name" "weft-h$i" "${got[0]}"
    expect_less "h$i: a shell's pid in the host's own PID namespace" 64 "${got[1]}"
    expect_match "h$i: PID 1 is the holder" "^bash $NET_SRC/holder.sh weft-h$i " "${got[2]}"
    expect_match "h$i: its namespaces" \
        '^net:\[[0-9]+\] uts:\[[0-9]+\] ipc:\[[0-9]+\] mnt:\[[0-9]+\] pid:\[[0-9]+\] $' "${got[3]}"
    for ns in ${got[3]}; do
        [ -z "${ns_owner[$ns]:-}" ] || fail "h$i shares its namespace $ns with ${ns_owner[$ns]}"
        ns_owner[$ns]=h$i
    done
    expect_eq "h$i: the only route is the fake /24 (nothing leaves the fake network)" \
        "$NET_SUBNET.0/24 dev eth0 proto kernel scope link src $NET_SUBNET.$i" "${got[4]}"
    expect_eq "h$i: /etc/hosts names the fake hosts" \
        "$NET_SUBNET.1 weft-h1;$NET_SUBNET.2 weft-h2;$NET_SUBNET.3 weft-h3;" "${got[5]}"
done

segments='ipcs -m | awk "\$2 ~ /^[0-9]+\$/ { print \$1 }"'      # the keys of System V segments
hrun h1 10 sh -c "ipcmk -M 4096 >/dev/null && $segments; : >/dev/shm/weft-harness-probe; ls /dev/shm"
expect_rc 0 "h1: a System V segment and a /dev/shm file"
expect_match "h1: made them" '^0x[0-9a-f]+'$'\n''weft-harness-probe$' "$T_OUT"
key=${T_OUT%%$'\n'*}
hrun h2 10 sh -c "$segments; ls /dev/shm"
expect_eq "h2: sees neither h1's System V segment nor its /dev/shm file" "" "$T_OUT"
sh -c "$segments" | grep -qx "$key" && fail "the machine sees h1's System V segment $key"
[ -e /dev/shm/weft-harness-probe ] && fail "the machine's /dev/shm holds h1's file"

# Plain TCP from h1 to h2 over the fake network, bounded (the listener gives up after 10 s).
net_exec h2 timeout 10 python3 -c '
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 7400)); s.listen(1); c, a = s.accept()
c.sendall(c.recv(64).replace(b"ping", b"pong from " + socket.gethostname().encode() + b" to " + a[0].encode()))
' </dev/null >/dev/null 2>"$T_DIR/echo.err" {NET_LIFE_FD}>&- &
echo_pid=$!
hrun h1 10 bash -c 'for i in $(seq 50); do exec 3<>/dev/tcp/weft-h2/7400 && break; sleep 0.1; done 2>/dev/null
    echo ping >&3; read -r line <&3; echo "$line"'
wait $echo_pid
expect_eq "TCP echo from h1 to h2" "pong from weft-h2 to $NET_SUBNET.1" "$T_OUT"

# --- MPICH jobs across the hosts. Hydra's mpiexec runs in h1 and starts its proxy on every other
# host through rsh (as through ssh); the proxies connect back to weft-h1, which their /etc/hosts
# resolves to h1's address. UCX (MPICH's ch4:ucx) must reach other hosts over tcp: their shared
# memory transports see the other hosts as unreachable (separate IPC and mount namespaces).
# UCX_NET_DEVICES=eth0 keeps UCX off the loopback device, whose address means another host in each.
HYDRA=(mpiexec.mpich -launcher ssh -launcher-exec "$NET_SRC/rsh")
export UCX_TLS=tcp,self,sm UCX_NET_DEVICES=eth0 MPIEXEC_TIMEOUT=30

# check_job WHAT NRANKS PER_HOST: every rank printed its line, on the host Hydra's block mapping
# gives it (rank r on weft-h(r / PER_HOST + 1)), in that host's PID namespace (its pid is low and
# is what /proc/self says, PID 1 is the host's holder); ranks of a host share /dev/shm, other
# hosts' differ; the allreduce sum and the ring neighbour are right.
check_job() {
    local what=$1 n=$2 per=$3 r want="" got="" line
    local re="^rank ([0-9]+) size $n proc ([^ ]+) host ([^ ]+) shm ([0-9:]+) pid ([0-9]+) self ([^ ]+)"
    re+=" init ([^ ]+) sum ([0-9]+) ring ([0-9]+)$"
    local -A shm_of=() host_of_shm=()
    for r in $(seq 0 $((n - 1))); do
        want+="rank $r on weft-h$((r / per + 1)) in its PID namespace"
        want+=" sum $((n * (n - 1) / 2)) ring $(((r + n - 1) % n))"$'\n'
    done
    while read -r line; do
        [[ $line =~ $re ]] || continue
        local rk=${BASH_REMATCH[1]} proc=${BASH_REMATCH[2]} host=${BASH_REMATCH[3]} shm=${BASH_REMATCH[4]}
        local pid=${BASH_REMATCH[5]} self=${BASH_REMATCH[6]} init=${BASH_REMATCH[7]}
        local sum=${BASH_REMATCH[8]} ring=${BASH_REMATCH[9]} where
        [ "$proc" = "$host" ] || host="$host (MPI_Get_processor_name: $proc)"
        if [ "$pid" -lt 1000 ] && [ "$self" = "$pid" ] && [ "$init" = "holder.sh:$host" ]; then
            where="in its PID namespace"
        else
            where="pid $pid, /proc/self $self, PID 1 $init"
        fi
        got+="rank $rk on $host $where sum $sum ring $ring"$'\n'
        if [ -n "${shm_of[$host]:-}" ] && [ "${shm_of[$host]}" != "$shm" ]; then
            fail "$what: ranks on $host see different /dev/shm (${shm_of[$host]}, $shm)"
        fi
        if [ -n "${host_of_shm[$shm]:-}" ] && [ "${host_of_shm[$shm]}" != "$host" ]; then
            fail "$what: $host and ${host_of_shm[$shm]} see the same /dev/shm ($shm)"
        fi
        shm_of[$host]=$shm
        host_of_shm[$shm]=$host
    done <<<"$T_OUT"
    expect_eq "$what: one line per rank, sorted" "$(sorted "${want%$'\n'}")" "$(sorted "${got%$'\n'}")"
}

hrun h1 60 "${HYDRA[@]}" -hosts weft-h1,weft-h2 -ppn 2 -n 4 "$T_DIR/hostinfo"
expect_rc 0 "2 hosts x 2 ranks"
check_job "2 hosts x 2 ranks" 4 2

hrun h1 60 "${HYDRA[@]}" -hosts weft-h1,weft-h2,weft-h3 -ppn 1 -n 3 "$T_DIR/hostinfo"
expect_rc 0 "3 hosts x 1 rank"
check_job "3 hosts x 1 rank" 3 1

# A bad exit status on host 2 is the job's: rank 1 (on weft-h2) returns 3 after MPI_Finalize.
# (One rank per host in the failure cases: fewer ranks spinning on a loaded machine.)
hrun h1 60 "${HYDRA[@]}" -hosts weft-h1,weft-h2 -ppn 1 -n 2 "$T_DIR/hostinfo" exit 1 3
expect_rc 3 "rank 1 on weft-h2 returns 3"
expect_less "rank 1 on weft-h2 returns 3: seconds" 10 "$T_SECS"
expect_match "rank 1 on weft-h2 returns 3: it says so" "rank 1 on weft-h2: returning 3 on purpose" "$T_ERR"
check_job "rank 1 on weft-h2 returns 3" 2 1

# Rank 1 dies (status 3) while rank 0 waits for it in the allreduce. Hydra 4.0's proxy kills only
# its own host's ranks then and tells mpiexec nothing more, so the job ends when a rank on h1
# notices (UCX's connection to the dead rank fails: MPI_Abort) or at MPIEXEC_TIMEOUT; the same
# without namespaces. Required: a non-zero status, within the timeout, and nothing left after.
MPIEXEC_TIMEOUT=10 hrun h1 30 "${HYDRA[@]}" -hosts weft-h1,weft-h2 -ppn 1 -n 2 "$T_DIR/hostinfo" die 1 3
[ "$T_RC" != 0 ] || { show_run; fail "rank 1 on weft-h2 died with 3: the job's status is 0"; }
expect_less "rank 1 on weft-h2 died with 3: seconds (MPIEXEC_TIMEOUT 10 s, guard 30 s)" 25 "$T_SECS"
expect_match "rank 1 on weft-h2 died with 3: it says so" "rank 1 on weft-h2: exiting with 3 on purpose" "$T_ERR"
how="an MPI error on rank 0"
grep -q 'APPLICATION TIMED OUT' "$T_DIR/out" "$T_DIR/err" && how="Hydra's MPIEXEC_TIMEOUT (10 s)"
printf 'note: rank 1 died on weft-h2; the job ended with status %s after %s s, by %s\n' "$T_RC" "$T_SECS" "$how"

# --- Stale cleanup: the leftovers of a run killed with SIGKILL (reaper included) go at net_up.
( : ) &
dead=$!
wait $dead
ip netns add "weft-$dead-h1" && ip netns add "weft-$dead-br" || fail "cannot make fake leftovers"
mkdir "${TMPDIR:-/tmp}/weft-$dead-net"
(ip netns exec "weft-$dead-h1" sleep 120 </dev/null >/dev/null 2>&1 &)
for i in $(seq 50); do
    orphan=$(ip netns pids "weft-$dead-h1")
    [ -n "$orphan" ] && break
    sleep 0.1
done
[ -n "$orphan" ] || fail "stale cleanup: the fake leftover process did not start"
net_cleanup_stale 2>"$T_DIR/stale.err"
expect_eq "stale cleanup: namespaces of dead run $dead" "" "$(net__namespaces "weft-$dead-")"
[ -e "${TMPDIR:-/tmp}/weft-$dead-net" ] && fail "stale cleanup: ${TMPDIR:-/tmp}/weft-$dead-net is still there"
for i in $(seq 50); do
    pid_alive "$orphan" || break
    sleep 0.1
done
pid_alive "$orphan" && fail "stale cleanup: process $orphan of dead run $dead survived"

net_down
expect_eq "after net_down" "" "$(net_leftovers)"
echo "PASS: $T_NAME (UCX_TLS=$UCX_TLS UCX_NET_DEVICES=$UCX_NET_DEVICES)"
