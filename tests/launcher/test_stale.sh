#!/bin/bash
# No file in /dev/shm or /tmp outlives a job killed at any moment of its start-up: SIGKILL to
# mpiexec, to a rank, or to both, at random times spread over MPI_Init, in a bounded loop; then,
# under Hydra, a rank that dies before MPI_Init while rank 0 holds the segment (the next job on the
# node removes what that leaves). Runs in a mount namespace of its own with private /dev/shm and
# /tmp, so that other jobs on the machine neither disturb the check nor are disturbed; skips where
# that cannot be made (not root).
# usage: test_stale.sh MPIEXEC MPI_PROBE SHM_KILLER [ROUNDS]
if [ -z "${WEFT_STALE_INNER:-}" ]; then
    if ! unshare --mount --propagation private true 2>/dev/null; then
        echo "SKIP (${0##*/}): needs a private mount namespace (unshare --mount: not root?)"
        exit 77
    fi
    export WEFT_STALE_INNER=1
    unset TMPDIR
    exec unshare --mount --propagation private bash -c \
        'mount -t tmpfs -o mode=1777 weft-shm /dev/shm && mount -t tmpfs -o mode=1777 weft-tmp /tmp &&
         exec bash "$0" "$@"' "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"
MX=$1 P=$2 KILLER=$3 ROUNDS=${4:-36}
BUDGET_S=60

# leftovers: every entry of /dev/shm and /tmp but this script's own directory.
leftovers() {
    ls -A /dev/shm | sed 's|^|/dev/shm/|'
    ls -A /tmp | grep -vxF "${T_DIR##*/}" | sed 's|^|/tmp/|'
}

# expect_clean WHAT: within 5 s (the watcher of a killed mpiexec waits for its ranks to die),
# nothing is left.
expect_clean() {
    local i left
    for i in $(seq 50); do
        left=$(leftovers)
        [ -z "$left" ] && return 0
        sleep 0.1
    done
    printf 'FAIL (%s): %s: files left:\n%s\n' "$T_NAME" "$1" "$left" >&2
    show_run
    exit 1
}

# The ranks write their pid before becoming the probe (exec keeps it): $T_DIR/pids/pid.<rank>.
PIDS=$T_DIR/pids
mkdir "$PIDS"
WRAP='echo $$ >"$1/pid.$PMI_RANK"; exec "$0" sleep'

# a_rank: the pid of a started rank, at random; empty if none has started.
a_rank() {
    local f=("$PIDS"/pid.*)
    [ -e "${f[0]}" ] && cat "${f[RANDOM % ${#f[@]}]}"
}

# ours: the processes of mpiexec's program (its watcher included: a forked mpiexec) or the probe's
# in this mount namespace (other tests run the same programs outside it).
ours() {
    local pid me
    me=$(readlink /proc/self/ns/mnt)
    for pid in $(pgrep -f -- "^($MX|$P)( |\$)"); do
        [ "$(readlink "/proc/$pid/ns/mnt" 2>/dev/null)" = "$me" ] && ps -o pid=,args= -p "$pid"
    done
}

# expect_no_process WHAT: within 5 s, none of ours is left.
expect_no_process() {
    local i left
    for i in $(seq 50); do
        left=$(ours)
        [ -z "$left" ] && return 0
        sleep 0.1
    done
    printf 'FAIL (%s): %s: processes left:\n%s\n' "$T_NAME" "$1" "$left" >&2
    exit 1
}

# kill_on_name SUFFIX TARGET: kills TARGET (a pid, or @FILE) the moment a name ending in SUFFIX
# appears in /dev/shm (shm_killer, waiting at most 10 s); true if it did.
kill_on_name() {
    "$KILLER" /dev/shm "$1" "$2" 10000 >"$T_DIR/killer" &
    KILLER_PID=$!
}
killed_on_name() {
    wait $KILLER_PID
}

[ -z "$(leftovers)" ] || fail "the private /dev/shm and /tmp are not empty: $(leftovers)"

# How long a 3-rank start-up takes here: random kills are spread over 1.5 times that.
t0=$(date +%s%N)
run "$MX" -n 3 "$P" hello
expect_rc 0 "a job that is not killed"
T_INIT_MS=$(( ($(date +%s%N) - t0) / 1000000 ))
expect_clean "a job that is not killed"
expect_no_process "a job that is not killed"
span=$(( T_INIT_MS * 3 / 2 + 20 ))

# Each round kills at a random moment (even rounds) or the moment the segment's name appears
# (odd rounds), and kills mpiexec, a rank, or a rank and then mpiexec (in turn). The kills that
# land while a name exists are counted: with none, the test would prove nothing.
seen=0 start=$SECONDS round=0
while [ $round -lt "$ROUNDS" ] && [ $((SECONDS - start)) -lt $BUDGET_S ]; do
    rm -f "$PIDS"/*
    when=$((round % 2)) who=$(( (round / 2) % 3 ))
    round=$((round + 1))
    "$MX" -n 3 sh -c "$WRAP" "$P" "$PIDS" </dev/null >"$T_DIR/out" 2>"$T_DIR/err" &
    mx=$!
    T_CMD="round $round: mpiexec -n 3 probe sleep, killed $([ $when = 0 ] && echo 'at random' ||
           echo 'when the name appears'): $(echo mpiexec rank rank+mpiexec | cut -d' ' -f$((who + 1)))"
    if [ $when = 0 ]; then
        ms=$((RANDOM % span))
        sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
        compgen -G '/dev/shm/*-shm' >/dev/null && seen=$((seen + 1))
        victim=$(a_rank)
        if [ $who = 0 ] || [ -z "$victim" ]; then
            kill -KILL $mx
        else
            kill -KILL "$victim" 2>/dev/null
        fi
    else
        if [ $who = 0 ]; then
            kill_on_name -shm $mx
        else
            kill_on_name -shm "@$PIDS/pid.$((RANDOM % 3))"
        fi
        if killed_on_name; then
            seen=$((seen + 1))
        else
            kill -KILL $mx
        fi
    fi
    if [ $who = 2 ]; then
        sleep "0.0$((RANDOM % 10))"
        kill -KILL $mx 2>/dev/null
    fi
    for i in $(seq 200); do   # after a rank's kill, mpiexec ends the job (within 20 s, or killed)
        pid_alive $mx || break
        sleep 0.1
    done
    kill -KILL $mx 2>/dev/null
    wait $mx 2>/dev/null
    T_RC=$?
    [ $T_RC = 0 ] && fail "round $round: a process of the job was killed, yet mpiexec's status is 0"
done
expect_clean "after $round rounds of kills during start-up"
expect_no_process "after $round rounds of kills during start-up"
echo "$round rounds in $((SECONDS - start)) s (random kills spread over ${span} ms; a 3-rank" \
     "start-up takes ${T_INIT_MS} ms); a segment's name existed at $seen of the kills"
[ $seen -gt 0 ] || fail "no kill happened while a segment's name existed: the test proved nothing"

# Hydra: rank 2 is killed while rank 0 holds the segment's name; Hydra then ends ranks 0 and 1,
# which leaves the name. The next Weft job on the node removes it.
HYDRA=$(command -v mpiexec.hydra || command -v mpiexec.mpich)
if [ -n "$HYDRA" ]; then
    rm -f "$PIDS"/*
    timeout -s KILL 60 "$HYDRA" -n 3 sh -c "$WRAP" "$P" "$PIDS" </dev/null >"$T_DIR/out" 2>"$T_DIR/err" &
    hy=$!
    T_CMD="Hydra: mpiexec -n 3 probe sleep, rank 2 killed when the name appears"
    kill_on_name -shm "@$PIDS/pid.2"
    killed_on_name || kill -KILL "$(cat "$PIDS/pid.2")"
    wait $hy
    T_RC=$?
    [ "$T_RC" = 0 ] && fail "Hydra: rank 2 was killed, yet the job's status is 0"
    echo "Hydra, rank 2 killed during MPI_Init: left in /dev/shm: $(ls /dev/shm | tr '\n' ' ')"
    run "$MX" -n 2 "$P" exchange
    expect_rc 0 "the next job after Hydra's"
    expect_clean "after the Hydra job and the next one"
else
    echo "no Hydra (mpiexec.hydra / mpiexec.mpich): its part not run"
fi
echo "PASS: $T_NAME"
