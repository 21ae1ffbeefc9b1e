#!/bin/bash
# Weft under a real Slurm on this one machine: munged, slurmctld and slurmd started here as root,
# with a configuration written under a temporary directory (no systemd, no cgroups:
# proctrack/linuxproc, task/none), then jobs of the probes:
#   pmi2     srun -n 4 --mpi=pmi2  (the client picks PMI-2 from PMI_JOBID)
#   pmix     srun -n 4 --mpi=pmix  (needs a Weft built with libpmix: HAVE_PMIX=ON)
#   mpiexec  our mpiexec inside `salloc -n 4`, its proxy started by srun (-launcher slurm, with
#            -hosts, without, and without -launcher: the allocation's hosts)
# Each checks the protocol chosen, a PMI exchange and real MPI traffic (a ring, Allreduce and
# Allgather checking every value), and that an abort ends the job. The daemons are stopped and
# every file removed on any exit; every command has a time limit. Skipped, saying why, when not
# root, when Slurm or munge is not installed, or when the daemons cannot start here.
# usage: test_slurm.sh pmi2|pmix|mpiexec MPIEXEC PMI_PROBE MPI_PROBE HAVE_PMIX
. "$(dirname "$0")/lib.sh"
MODE=$1 MPIEXEC=$2 P=$3 M=$4 HAVE_PMIX=$5
unset WEFT_PMI PMI_JOBID PMIX_NAMESPACE PMIX_RANK SLURM_CONF
for v in $(compgen -e | grep '^SLURM_'); do unset "$v"; done
export LC_ALL=C
# The ASan build: libpmix keeps a few bytes until exit (not Weft's); srun passes this on.
export LSAN_OPTIONS="suppressions=$(cd "$(dirname "$0")" && pwd)/lsan-pmix.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

[ "$(id -u)" = 0 ] || skip "needs root (it starts munged, slurmctld and slurmd)"
for cmd in munged slurmctld slurmd srun salloc sinfo; do
    command -v "$cmd" >/dev/null ||
        skip "$cmd is not installed (make test installs slurmctld, slurmd, slurm-client and munge)"
done
if [ "$MODE" = pmix ] && [ "$HAVE_PMIX" != ON ]; then
    skip "this Weft was built without PMIx (no libpmix found by CMake; Debian: libpmix-dev)"
fi

# ---- the cluster: one node, named weftnode, on 127.0.0.1 --------------------------------------
D=$T_DIR
NODE=weftnode
chmod 755 "$D"
mkdir -p "$D/munge" "$D/state" "$D/spool/$NODE" "$D/log"

# Stops what we started (by the pids they wrote, and the step daemons and ranks that carry our
# SLURM_CONF), then removes the directory. Runs on every exit.
stop_cluster() {
    local f pid pids="" i left
    for f in "$D/slurmd.pid" "$D/slurmctld.pid" "$D/munge/pid"; do
        pid=$(cat "$f" 2>/dev/null) && [ -n "$pid" ] && pids="$pids $pid"
    done
    [ -n "$pids" ] && kill -TERM $pids 2>/dev/null
    for i in $(seq 50); do
        left=""
        for pid in $pids; do
            pid_alive "$pid" && left="$left $pid"
        done
        [ -z "$left" ] && break
        sleep 0.1
    done
    [ -n "$left" ] && kill -KILL $left 2>/dev/null
    for f in /proc/[0-9]*/environ; do
        pid=${f#/proc/}; pid=${pid%/environ}
        { tr '\0' '\n' <"$f"; } 2>/dev/null | grep -qx "SLURM_CONF=$D/slurm.conf" &&
            kill -KILL "$pid" 2>/dev/null
    done
    rm -rf "$D"
}
trap stop_cluster EXIT

# Prints the end of the daemons' logs (after a failure or before a skip).
show_logs() {
    local f
    for f in "$D/munge/log" "$D/log/slurmctld.log" "$D/log/slurmd.log"; do
        [ -f "$f" ] && { echo "--- ${f#$D/}:"; tail -n 15 "$f"; }
    done >&2
}

cant_start() {
    show_logs
    skip "the Slurm daemons cannot start on this machine: $*"
}

head -c 1024 /dev/urandom >"$D/munge/munge.key"
chmod 600 "$D/munge/munge.key"
timeout 20 munged --force --socket="$D/munge/sock" --key-file="$D/munge/munge.key" \
    --pid-file="$D/munge/pid" --log-file="$D/munge/log" --seed-file="$D/munge/seed" ||
    cant_start "munged failed"

read -r CTLD_PORT SLURMD_PORT < <(python3 -c 'import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
HOST=$(hostname -s)
cat >"$D/slurm.conf" <<EOF
ClusterName=weft
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$D/munge/sock
CredType=cred/munge
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool/%n
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldLogFile=$D/log/slurmctld.log
SlurmdLogFile=$D/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
MpiDefault=none
PlugStackConfig=$D/plugstack.conf
NodeName=$NODE NodeHostname=$(hostname) NodeAddr=127.0.0.1 CPUs=4 State=UNKNOWN
PartitionName=weft Nodes=$NODE Default=YES MaxTime=5 State=UP OverSubscribe=YES
EOF
: >"$D/plugstack.conf"
# The PMIx plugin's per-step client directories in the test's own directory (mpi.conf sits next to
# slurm.conf), not in /tmp: job ids restart at 1 with every new slurmctld, so a directory a killed
# step left in /tmp (/tmp/spmix_appdir_<uid>_<job>.<step>) would make the same step of a later run
# fail to launch ("File exists").
mkdir -p "$D/pmix"
echo "PMIxCliTmpDirBase=$D/pmix" >"$D/mpi.conf"
export SLURM_CONF=$D/slurm.conf

timeout 30 slurmctld -f "$SLURM_CONF" || cant_start "slurmctld failed"
timeout 30 slurmd -f "$SLURM_CONF" -N "$NODE" || cant_start "slurmd failed"
for i in $(seq 150); do
    state=$(timeout 5 sinfo -h -n "$NODE" -o %t 2>/dev/null)
    [ "$state" = idle ] && break
    sleep 0.2
done
[ "$state" = idle ] || cant_start "node $NODE is '${state:-unknown}' after 30 s, not idle"

lines() {   # lines N TEXT: "rank 0 of N: TEXT" ... sorted
    local n=$1 i
    for ((i = 0; i < n; i++)); do printf "rank %d of %d: %s\n" "$i" "$n" "$2"; done | LC_ALL=C sort
}

# ---- the jobs ---------------------------------------------------------------------------------
check_job() {   # check_job WHAT WANT_OUT CMD...
    local what=$1 want=$2
    shift 2
    run "$@"
    [ "$T_RC" = 0 ] || { show_logs; expect_rc 0 "$what"; }
    expect_eq "$what" "$want" "$(sorted "$T_OUT")"
}

case $MODE in
pmi2|pmix)
    timeout 20 srun --mpi=list 2>&1 | grep -qw "$MODE" || skip "this Slurm has no mpi/$MODE plugin"
    SRUN=(srun --time=2 --mpi="$MODE")
    check_job "srun --mpi=$MODE: the client's choice" "$(lines 4 "method $MODE")" \
        "${SRUN[@]}" -n 4 "$P" method
    check_job "srun --mpi=$MODE: PMI exchange" "$(lines 4 'exchange ok')" "${SRUN[@]}" -n 4 "$P" exchange
    check_job "srun --mpi=$MODE: MPI ring, Allreduce, Allgather" "$(lines 4 'ring ok')" \
        "${SRUN[@]}" -n 4 "$M" ring
    check_job "srun --mpi=$MODE: MPI on 3 ranks" "$(lines 3 'ring ok')" "${SRUN[@]}" -n 3 "$M" ring
    run "${SRUN[@]}" -n 2 "$M" abort 5 1
    # Slurm cancels the step: srun exits with the status of the killed task (137) or the code.
    if [ "$T_RC" = 0 ] || [ "$T_SECS" -ge 60 ]; then
        show_run
        fail "srun --mpi=$MODE: MPI_Abort on rank 1 must end the job with a failure, soon (status $T_RC after ${T_SECS}s)"
    fi
    grep -q "calling MPI_Abort(5)" "$T_DIR/err" || { show_run; fail "srun --mpi=$MODE: rank 1 did not reach MPI_Abort"; }
    ;;
mpiexec)
    ALLOC=(salloc --time=2 -n 4 --quiet)
    LAUNCH=("$MPIEXEC" -launcher slurm -hosts "$NODE" -ppn 4 --timeout 60)
    check_job "salloc + mpiexec -launcher slurm: PMI exchange" "$(lines 4 'exchange ok')" \
        "${ALLOC[@]}" "${LAUNCH[@]}" -n 4 "$P" exchange
    check_job "salloc + mpiexec -launcher slurm: MPI ring, Allreduce, Allgather" "$(lines 4 'ring ok')" \
        "${ALLOC[@]}" "${LAUNCH[@]}" -n 4 "$M" ring
    # The proxy ran as a Slurm step (srun sets SLURM_STEP_ID; salloc alone does not).
    run "${ALLOC[@]}" "${LAUNCH[@]}" -n 2 "$P" env SLURM_STEP_ID
    expect_rc 0 "salloc + mpiexec -launcher slurm: env"
    expect_eq "the ranks run under a proxy started by srun" "$(printf 'rank 0 SLURM_STEP_ID=0\nrank 1 SLURM_STEP_ID=0')" \
        "$(sorted "$T_OUT")"
    run "${ALLOC[@]}" "${LAUNCH[@]}" -n 2 "$M" abort 5 1
    expect_rc 5 "salloc + mpiexec -launcher slurm: rank 1 aborts with code 5"
    # Without -hosts, the allocation's node list and tasks (as Hydra); with no -launcher either.
    check_job "salloc + mpiexec -launcher slurm, no -hosts: MPI ring" "$(lines 4 'ring ok')" \
        "${ALLOC[@]}" "$MPIEXEC" -launcher slurm --timeout 60 -n 4 "$M" ring
    run "${ALLOC[@]}" "$MPIEXEC" --timeout 60 -n 2 "$P" env SLURM_STEP_ID
    expect_rc 0 "salloc + mpiexec, no -hosts, no -launcher: env"
    expect_eq "mpiexec in an allocation starts its proxy by srun" \
        "$(printf 'rank 0 SLURM_STEP_ID=0\nrank 1 SLURM_STEP_ID=0')" "$(sorted "$T_OUT")"
    check_job "salloc + mpiexec, no -hosts, no -launcher: MPI ring" "$(lines 4 'ring ok')" \
        "${ALLOC[@]}" "$MPIEXEC" --timeout 60 -n 4 "$M" ring
    ;;
*)
    fail "unknown mode $MODE"
    ;;
esac
echo "PASS: $T_NAME ($MODE)"
