#!/bin/bash
# Our mpiexec across fake hosts (netns.sh): it runs in weft-h1 and starts its proxy on every other
# host through tests/net/rsh (-launcher rsh -launcher-exec), as through ssh. Checks placement, PMI
# across hosts, MPMD, stdin to a remote rank 0, every rank's output (--tag-output), the
# environment options, exit codes and aborts on remote hosts, a rank killed on a remote host,
# SIGINT and SIGTERM to mpiexec, and real MPI programs across hosts; after each failure, that no
# process and no /dev/shm file is left on any host. Needs root; exit 77 (skip) with the reason
# otherwise.
# usage: test_launch.sh MPIEXEC PMI_PROBE P2P_ORDER COLL_MOVE
NET_SRC=$(cd "$(dirname "$0")" && pwd)
. "$NET_SRC/../launcher/lib.sh"
. "$NET_SRC/netns.sh"
MX=$1 P=$2 ORDER=$3 COLL=$4

net_test_setup

net_up 3 || fail "net_up 3 failed (see above)"

RSH=(-launcher rsh -launcher-exec "$NET_SRC/rsh")
H2=weft-h1,weft-h2
H3=weft-h1,weft-h2,weft-h3

# --- Placement and PMI across hosts.
hrun h1 60 "$MX" "${RSH[@]}" --timeout 50 -hosts $H2 -ppn 2 -n 4 --tag-output \
    sh -c 'echo $(hostname) $PMI_RANK $PMI_SIZE $MPI_LOCALRANKID $MPI_LOCALNRANKS'
expect_rc 0 "2 hosts x 2 ranks"
want='[0] weft-h1 0 4 0 2
[1] weft-h1 1 4 1 2
[2] weft-h2 2 4 0 2
[3] weft-h2 3 4 1 2'
expect_eq "2 hosts x 2 ranks: host, rank, size, local rank, local ranks (tagged)" "$want" "$(sorted "$T_OUT")"
expect_eq "2 hosts x 2 ranks: stderr" "" "$T_ERR"

hrun h1 60 "$MX" "${RSH[@]}" --timeout 50 -hosts $H3 -n 6 "$P" exchange
expect_rc 0 "3 hosts x 2 ranks (one slot each, two rounds): PMI put, fence, get"
expect_eq "3 hosts: exchange output (sorted)" "$(printf 'rank %s of 6: exchange ok\n' 0 1 2 3 4 5 | head -c -1)" \
    "$(sorted "$T_OUT")"
expect_clean "after a good job"

# --- MPMD over 3 hosts, one rank each.
hrun h1 60 "$MX" "${RSH[@]}" --timeout 50 -hosts $H3 --tag-output -n 1 sh -c 'echo A $PMI_RANK $(hostname)' : \
    -n 2 sh -c 'echo B $PMI_RANK $(hostname); echo err $PMI_RANK >&2'
expect_rc 0 "MPMD"
expect_eq "MPMD: stdout" "$(printf '[0] A 0 weft-h1\n[1] B 1 weft-h2\n[2] B 2 weft-h3')" "$(sorted "$T_OUT")"
expect_eq "MPMD: stderr" "$(printf '[1] err 1\n[2] err 2')" "$(sorted "$T_ERR")"

# --- MPMD with hosts per section: the second section on weft-h3 (its own -hosts), the third on the
# global list where the first stopped (weft-h2), with its -wdir there.
hrun h1 60 "$MX" "${RSH[@]}" --timeout 50 -hosts $H2 --tag-output -n 1 sh -c 'echo A $(hostname)' : \
    -hosts weft-h3 -n 2 sh -c 'echo B $(hostname)' : -wdir /tmp -n 1 sh -c 'echo C $(hostname) $(pwd)'
expect_rc 0 "MPMD, hosts per section"
expect_eq "MPMD, hosts per section: stdout" \
    "$(printf '[0] A weft-h1\n[1] B weft-h3\n[2] B weft-h3\n[3] C weft-h2 /tmp')" "$(sorted "$T_OUT")"
expect_clean "MPMD, hosts per section"

# --- stdin goes to rank 0, here on weft-h2 (the front end runs in weft-h1).
seq 1 40000 >"$T_DIR/in"
T_STDIN=$T_DIR/in hrun h1 60 "$MX" "${RSH[@]}" --timeout 50 -hosts weft-h2,weft-h1 -n 2 \
    sh -c 'if [ $PMI_RANK = 0 ]; then hostname; cat; else hostname; wc -c; fi'
expect_rc 0 "stdin to rank 0 on weft-h2"
expect_eq "stdin to rank 0 on weft-h2: rank 0 got all of it, rank 1 nothing" \
    "$( (printf '0\nweft-h1\nweft-h2\n'; cat "$T_DIR/in") | LC_ALL=C sort -n)" "$(LC_ALL=C sort -n "$T_DIR/out")"

# --- Environment. rsh passes its whole environment, ssh does not: rsh-clean is rsh as ssh, with
# nothing but PATH and what rsh itself needs. Rank 1 runs on weft-h2.
cat >"$T_DIR/rsh-clean" <<EOF
#!/bin/sh
exec env -i PATH="\$PATH" WEFT_NET_DIR="\$WEFT_NET_DIR" WEFT_NET_PYTHON="\$WEFT_NET_PYTHON" "$NET_SRC/rsh" "\$@"
EOF
chmod +x "$T_DIR/rsh-clean"
CLEAN=(-launcher ssh -launcher-exec "$T_DIR/rsh-clean" --timeout 50 -hosts $H2)
VARS=(WEFT_T_I WEFT_T_A WEFT_T_G WEFT_T_L)
export WEFT_T_I=inherited WEFT_T_A='a b'
hrun h1 60 "$MX" "${CLEAN[@]}" -genv WEFT_T_G g -n 2 -env WEFT_T_L l "$P" env "${VARS[@]}"
expect_rc 0 "environment, default (-genvall)"
expect_eq "-genvall: rank 1 on weft-h2" "$(printf 'rank 1 %s\n' WEFT_T_I=inherited 'WEFT_T_A=a b' WEFT_T_G=g WEFT_T_L=l | head -c -1)" \
    "$(grep '^rank 1' "$T_DIR/out")"
hrun h1 60 "$MX" "${CLEAN[@]}" -genvnone -genv WEFT_T_G g -n 2 -env WEFT_T_L l "$P" env "${VARS[@]}"
expect_rc 0 "environment, -genvnone"
expect_eq "-genvnone: rank 1 on weft-h2" "$(printf 'rank 1 %s\n' 'WEFT_T_I=(unset)' 'WEFT_T_A=(unset)' WEFT_T_G=g WEFT_T_L=l | head -c -1)" \
    "$(grep '^rank 1' "$T_DIR/out")"
hrun h1 60 "$MX" "${CLEAN[@]}" -genvlist WEFT_T_A,WEFT_T_X -n 2 "$P" env "${VARS[@]}"
expect_rc 0 "environment, -genvlist"
expect_eq "-genvlist WEFT_T_A,WEFT_T_X: rank 1 on weft-h2" \
    "$(printf 'rank 1 %s\n' 'WEFT_T_I=(unset)' 'WEFT_T_A=a b' 'WEFT_T_G=(unset)' 'WEFT_T_L=(unset)' | head -c -1)" \
    "$(grep '^rank 1' "$T_DIR/out")"
unset WEFT_T_I WEFT_T_A

# --- -iface: the proxies connect to eth0's address instead of the host name.
hrun h1 60 "$MX" "${RSH[@]}" --timeout 50 -iface eth0 -hosts $H2 -n 2 "$P" exchange
expect_rc 0 "-iface eth0"
hrun h1 60 "$MX" "${RSH[@]}" --timeout 50 -iface nosuch0 -hosts $H2 -n 2 "$P" exchange
expect_rc 1 "-iface of an interface that does not exist"
expect_eq "-iface nosuch0: message" "mpiexec: -iface nosuch0: no such interface with an IPv4 address" "$T_ERR"

# --- Exit codes and aborts on remote hosts; the message names the rank and its host.
hrun h1 60 "$MX" "${RSH[@]}" --timeout 50 -hosts $H3 -n 3 "$P" exit 5 2 nofinalize
expect_rc 5 "rank 2 on weft-h3 exits 5"
expect_mpiexec_msg "rank 2 on weft-h3 exits 5" \
    '^mpiexec: rank 2 \(pid [0-9]+ on weft-h3\) exited with code 5; terminating the job$'
expect_less "rank 2 on weft-h3 exits 5: seconds" 10 "$T_SECS"
expect_clean "rank 2 on weft-h3 exited 5"

hrun h1 60 "$MX" "${RSH[@]}" --timeout 50 -hosts $H3 -n 3 "$P" abort 7 1
expect_rc 7 "rank 1 on weft-h2 aborts with 7"
expect_mpiexec_msg "rank 1 on weft-h2 aborts with 7" \
    '^mpiexec: rank 1 \(pid [0-9]+ on weft-h2\) called MPI_Abort with code 7; terminating the job$'
hrun h1 60 "$MX" "${RSH[@]}" --timeout 50 -hosts $H2 -n 2 "$P" abort 256 1
expect_rc 1 "rank 1 on weft-h2 aborts with 256"

hrun h1 60 "$MX" "${RSH[@]}" --timeout 50 -hosts $H2 -n 2 /nonexistent/program
expect_rc 127 "a program missing on the hosts"

hrun h1 60 "$MX" "${RSH[@]}" --timeout 50 -hosts weft-h1,weft-nosuch -n 2 "$P" exchange
expect_rc 255 "a host rsh cannot reach"
expect_match "a host rsh cannot reach: message" \
    "mpiexec: rank 1 on weft-nosuch: the proxy's launcher \\(pid [0-9]+\\) exited with status 255 before the proxy connected; terminating the job" \
    "$T_ERR"
expect_clean "after an unreachable host"

# --- A rank killed on weft-h2 while the others wait in a fence; each rank leaves a /dev/shm file.
# bg_job ARGS...: mpiexec in weft-h1 in the background, its pid (in weft-h1) in $T_DIR/mx.pid; the
# ranks write their pids (in their hosts) to $T_DIR/pids. SIGINT back to its default (bash starts
# background jobs with it ignored).
bg_job() {
    rm -rf "$T_DIR/pids" "$T_DIR/mx.pid"
    mkdir "$T_DIR/pids"
    T_CMD="[h1] $MX $*"
    PROBE_PIDDIR=$T_DIR/pids PROBE_SHM=1 net_exec h1 timeout -s KILL 60 python3 -c '
import os, signal, sys
open(sys.argv[1], "w").write("%d\n" % os.getpid())
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp(sys.argv[2], sys.argv[2:])' "$T_DIR/mx.pid" "$MX" "${RSH[@]}" --timeout 50 "$@" \
        </dev/null >"$T_DIR/out" 2>"$T_DIR/err" {NET_LIFE_FD}>&- &
    BG=$!
    wait_files "$T_DIR/pids" 3
    for i in $(seq 50); do
        [ -s "$T_DIR/mx.pid" ] && break
        sleep 0.1
    done
}
bg_wait() {
    local t0 t1
    t0=$(date +%s%N)
    wait $BG
    T_RC=$?
    t1=$(date +%s%N)
    T_SECS=$(( (t1 - t0) / 1000000000 ))
    T_OUT=$(cat "$T_DIR/out")
    T_ERR=$(cat "$T_DIR/err")
}

bg_job -hosts $H3 -n 3 "$P" sleep
net_exec h2 kill -KILL "$(cat "$T_DIR/pids/rank1")" </dev/null {NET_LIFE_FD}>&-
bg_wait
expect_rc 137 "rank 1 killed on weft-h2"
expect_mpiexec_msg "rank 1 killed on weft-h2" \
    "^mpiexec: rank 1 \\(pid $(cat "$T_DIR/pids/rank1") on weft-h2\\) killed by signal 9 \\(Killed\\); terminating the job\$"
expect_less "rank 1 killed on weft-h2: seconds to end the job" 10 "$T_SECS"
expect_clean "rank 1 killed on weft-h2"

for sig in INT:130:Interrupt TERM:143:Terminated; do
    IFS=: read -r name status text <<<"$sig"
    bg_job -hosts $H3 -ppn 1 -n 3 "$P" sleep
    net_exec h1 kill -"$name" "$(cat "$T_DIR/mx.pid")" </dev/null {NET_LIFE_FD}>&-
    bg_wait
    expect_rc "$status" "SIG$name to mpiexec"
    expect_mpiexec_msg "SIG$name to mpiexec" "^mpiexec: received signal [0-9]+ \\($text\\); terminating the job\$"
    expect_less "SIG$name to mpiexec: seconds to end the job" 10 "$T_SECS"
    expect_clean "SIG$name to mpiexec"
done

# SIGKILL to mpiexec: the proxies see the connection close and kill their ranks.
bg_job -hosts $H3 -ppn 1 -n 3 "$P" sleep
net_exec h1 kill -KILL "$(cat "$T_DIR/mx.pid")" </dev/null {NET_LIFE_FD}>&-
bg_wait
expect_rc 137 "SIGKILL to mpiexec"
expect_clean "SIGKILL to mpiexec"

# --- Real MPI programs across hosts: Weft's tcp transport between hosts (WEFT_TRANSPORTS=auto on a
# machine without an RDMA device, docs/tcp.md), shm within one.
if [ -n "$ORDER" ] && [ -x "$ORDER" ]; then
    export WEFT_TRANSPORTS=auto
    hrun h1 150 "$MX" "${RSH[@]}" --timeout 140 -hosts $H2 -ppn 1 -n 2 -genv WEFT_TCP_ADDR_FILE "$T_DIR/addr" \
        "$ORDER" 2 --weft
    expect_rc 0 "p2p_order, 2 hosts x 1 rank"
    echo "note: p2p_order across weft-h1 and weft-h2 passed in $T_SECS s"
    # Through tcp, each rank at its host's address (WEFT_TCP_ADDR_FILE: "IP:PORT").
    for r in 0 1; do
        expect_match "p2p_order: rank $r's tcp address is on weft-h$((r + 1))" \
            "^$NET_SUBNET.$((r + 1)):[0-9]+\$" "$(cat "$T_DIR/addr.$r" 2>&1)"
    done
    hrun h1 200 "$MX" "${RSH[@]}" --timeout 190 -hosts $H3 -ppn 2 -n 4 "$COLL" 65536 --weft
    expect_rc 0 "coll_move, weft-h1 x 2 and weft-h2 x 2 ranks (shm and tcp)"
    echo "note: coll_move on weft-h1 x 2 and weft-h2 x 2 ranks passed in $T_SECS s"
    expect_clean "after the MPI programs"
    # A rank killed on another host while the job moves data over tcp (p2p_order's messages of
    # 0 B - 1 MiB, rounds enough for minutes): the job ends with its status within 10 s, nothing
    # left behind.
    T_CMD="[h1] $MX -hosts $H3 -ppn 1 -n 2 $ORDER 100000"
    net_exec h1 timeout -s KILL 60 "$MX" "${RSH[@]}" --timeout 50 -hosts $H3 -ppn 1 -n 2 "$ORDER" 100000 --weft \
        </dev/null >"$T_DIR/out" 2>"$T_DIR/err" {NET_LIFE_FD}>&- &
    BG=$!
    victim=
    for i in $(seq 100); do
        victim=$(net_exec h2 pgrep -x "$(basename "$ORDER" | cut -c1-15)" </dev/null {NET_LIFE_FD}>&- | head -n 1)
        [ -n "$victim" ] && break
        sleep 0.1
    done
    sleep 1
    [ -n "$victim" ] && net_exec h2 kill -KILL "$victim" </dev/null {NET_LIFE_FD}>&-
    bg_wait
    expect_eq "a rank of p2p_order found on weft-h2" yes "$([ -n "$victim" ] && echo yes)"
    # 137 (the kill) or the status of rank 0, which may see the dead peer first: not 0
    expect_eq "rank 1 killed on weft-h2 during tcp traffic: job status not 0" yes \
        "$([ "$T_RC" != 0 ] && echo yes)"
    expect_less "rank 1 killed during tcp traffic: seconds to end the job" 10 "$T_SECS"
    expect_clean "rank 1 killed during tcp traffic"
fi

net_down
expect_eq "after net_down" "" "$(net_leftovers)"
echo "PASS: $T_NAME"
