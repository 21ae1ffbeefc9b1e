#!/bin/bash
# No process and no /dev/shm/<kvsname>* file outlives the job, however it ends: normally, by a
# failing rank, by SIGTERM or SIGINT to mpiexec, or by SIGKILL to mpiexec (the ranks, and the files
# through mpiexec's watcher; what the ranks started is beyond reach).
# usage: test_cleanup.sh MPIEXEC PROBE
. "$(dirname "$0")/lib.sh"
MX=$1 P=$2
PIDS=$T_DIR/pids
mkdir "$PIDS"

# the /dev/shm prefix of the last job: weft-<mpiexec pid>-
shm_prefix() { echo "weft-$(cat "$PIDS/ppid0")-"; }

# Each rank forks a sleeper (same process group, no pipe of ours) and leaves a /dev/shm file (PMI
# build) behind.
PROBE_PIDDIR=$PIDS PROBE_SPAWN=1 PROBE_SHM=1 run "$MX" -n 3 "$P" exchange
expect_rc 0 "normal job"
expect_gone "normal job" "$PIDS"
expect_no_shm "normal job" "$(shm_prefix)"

rm -f "$PIDS"/*
PROBE_PIDDIR=$PIDS PROBE_SPAWN=1 PROBE_SHM=1 run "$MX" -n 3 "$P" signal 9 1
expect_rc 137 "rank 1 killed"
expect_gone "rank 1 killed" "$PIDS"
expect_no_shm "rank 1 killed" "$(shm_prefix)"

# signal SIG STATUS MESSAGE-SIGNAL-NAME: sends SIG to mpiexec while its ranks sleep.
signal_mpiexec() {
    rm -f "$PIDS"/*
    # Non-interactive bash starts background jobs with SIGINT ignored; python restores the default.
    PROBE_PIDDIR=$PIDS PROBE_SPAWN=1 PROBE_SHM=1 python3 -c \
        'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execvp(sys.argv[1], sys.argv[1:])' \
        "$MX" -n 3 "$P" sleep </dev/null >"$T_DIR/out" 2>"$T_DIR/err" &
    local mx=$!
    T_CMD="kill -$1 mpiexec -n 3 $P sleep"
    wait_files "$PIDS" 3
    sleep 0.2
    kill -"$1" $mx
    wait $mx
    T_RC=$?
    expect_rc "$2" "SIG$1 to mpiexec"
    expect_mpiexec_msg "SIG$1 to mpiexec" "^mpiexec: received signal [0-9]+ \\($3\\); terminating the job\$"
    expect_gone "SIG$1 to mpiexec" "$PIDS"
    expect_no_shm "SIG$1 to mpiexec" "weft-$mx-"
}
signal_mpiexec TERM 143 Terminated
signal_mpiexec INT 130 Interrupt

# SIGUSR1 to mpiexec is passed on to the ranks, which here take it as the sign to finish.
rm -f "$PIDS"/*
"$MX" -n 2 sh -c 'trap "echo usr1 \$PMI_RANK; exit 0" USR1; : >"$0/rank$PMI_RANK"; while :; do sleep 0.1; done' \
    "$PIDS" </dev/null >"$T_DIR/out" 2>"$T_DIR/err" &
mx=$!
T_CMD="kill -USR1 mpiexec -n 2 sh ..."
wait_files "$PIDS" 2
kill -USR1 $mx
wait $mx
T_RC=$?
expect_rc 0 "SIGUSR1 passed on to the ranks"
expect_eq "what the ranks did with SIGUSR1 (sorted)" "$(printf 'usr1 0\nusr1 1')" "$(sorted "$(cat "$T_DIR/out")")"

# SIGKILL to mpiexec: the ranks die with it (PR_SET_PDEATHSIG); what they started is beyond reach.
# mpiexec's watcher (tools/mpiexec/cleanup.c) then removes the job's /dev/shm files.
rm -f "$PIDS"/*
PROBE_PIDDIR=$PIDS PROBE_SHM=1 "$MX" -n 3 "$P" sleep </dev/null >"$T_DIR/out" 2>"$T_DIR/err" &
mx=$!
T_CMD="kill -KILL mpiexec -n 3 $P sleep"
wait_files "$PIDS" 3
kill -KILL $mx
wait $mx
T_RC=$?
expect_rc 137 "SIGKILL to mpiexec"
expect_gone "SIGKILL to mpiexec" "$PIDS"
for i in $(seq 50); do   # the watcher waits for the ranks to die, then removes the files
    [ -z "$(cd /dev/shm && ls -d "weft-$mx-"* 2>/dev/null)" ] && break
    sleep 0.1
done
expect_no_shm "SIGKILL to mpiexec" "weft-$mx-"
echo "PASS: $T_NAME"
