#!/bin/bash
# mpiexec in a Slurm allocation without -hosts: the hosts come from SLURM_JOB_NODELIST (a host
# list expression) with SLURM_TASKS_PER_NODE as their slots, and the proxies start by srun, as
# Hydra does; `-launcher slurm` without -hosts does the same. No Slurm is needed: the allocation
# is the environment Slurm would give, and `srun` is a stand-in that notes the host it was asked
# for and runs the proxy here. test_slurm.sh does it under a real Slurm.
# usage: test_slurm_alloc.sh MPIEXEC PROBE
. "$(dirname "$0")/lib.sh"
MX=$1 P=$2
mkdir -p "$T_DIR/bin"
cat >"$T_DIR/bin/srun" <<'SRUN'
#!/bin/sh
while [ $# -gt 0 ]; do
    case $1 in
    --nodelist=*) echo "${1#--nodelist=}" >>"$SRUN_LOG" ;;
    --nodes=*|--ntasks=*) ;;
    *) break ;;
    esac
    shift
done
exec "$@"
SRUN
chmod +x "$T_DIR/bin/srun"
export SRUN_LOG=$T_DIR/srun.log
unset SLURM_JOB_ID SLURM_JOB_NODELIST SLURM_NODELIST SLURM_TASKS_PER_NODE SLURM_JOB_CPUS_PER_NODE
alloc() {   # alloc NODELIST TASKS CMD...: CMD in that allocation, srun being the stand-in
    local list=$1 tasks=$2
    shift 2
    : >"$SRUN_LOG"
    PATH=$T_DIR/bin:$PATH SLURM_JOB_ID=42 SLURM_JOB_NODELIST=$list SLURM_TASKS_PER_NODE=$tasks run "$@"
}
RANKS='echo $PMI_RANK $MPI_LOCALRANKID $MPI_LOCALNRANKS'

# The allocation's hosts and their tasks as slots; one srun per host that has ranks.
alloc 'n[1-3]' '2(x2),1' "$MX" -n 5 sh -c "$RANKS"
expect_rc 0 "mpiexec in an allocation of n[1-3], 2(x2),1 tasks"
expect_eq "rank local nlocal (sorted)" "$(printf '0 0 2\n1 1 2\n2 0 2\n3 1 2\n4 0 1')" "$(sorted "$T_OUT")"
expect_eq "srun started one proxy on each host" "$(printf 'n1\nn2\nn3')" "$(LC_ALL=C sort "$SRUN_LOG")"

# Zero padding and several bracket groups; a PMI exchange across the four hosts.
alloc 'r[1-2]n[08-09]' '1(x4)' "$MX" -n 4 "$P" exchange
expect_rc 0 "allocation r[1-2]n[08-09]"
expect_eq "exchange output (sorted)" "$(printf 'rank %s of 4: exchange ok\n' 0 1 2 3 | head -c -1)" "$(sorted "$T_OUT")"
expect_eq "hosts of r[1-2]n[08-09]" "$(printf 'r1n08\nr1n09\nr2n08\nr2n09')" "$(LC_ALL=C sort "$SRUN_LOG")"

# Lists and ranges mixed, with -ppn: only the hosts that get ranks are started.
alloc 'a,b[7,10-11],c' '1(x5)' "$MX" -ppn 1 -n 3 sh -c "$RANKS"
expect_rc 0 "allocation a,b[7,10-11],c with -ppn 1 -n 3"
expect_eq "hosts started for 3 ranks (b7: no padding written)" "$(printf 'a\nb10\nb7')" "$(LC_ALL=C sort "$SRUN_LOG")"

# -launcher slurm without -hosts takes the allocation too (srun named by -launcher-exec).
: >"$SRUN_LOG"
SLURM_JOB_ID=42 SLURM_JOB_NODELIST='x[1-2]' SLURM_TASKS_PER_NODE=2,1 run "$MX" -launcher slurm \
    -launcher-exec "$T_DIR/bin/srun" -n 3 sh -c "$RANKS"
expect_rc 0 "-launcher slurm in an allocation"
expect_eq "rank local nlocal, slots 2,1 (sorted)" "$(printf '0 0 2\n1 1 2\n2 0 1')" "$(sorted "$T_OUT")"
expect_eq "hosts of x[1-2]" "$(printf 'x1\nx2')" "$(LC_ALL=C sort "$SRUN_LOG")"

# An allocation of this host only: the ranks are mpiexec's children, no srun.
alloc "$(hostname)" 4 "$MX" -n 2 sh -c "$RANKS"
expect_rc 0 "allocation of this host only"
expect_eq "rank local nlocal (sorted)" "$(printf '0 0 2\n1 1 2')" "$(sorted "$T_OUT")"
expect_eq "no srun for this host" "" "$(cat "$SRUN_LOG")"

# -hosts wins over the allocation.
alloc 'n[1-3]' '1(x3)' "$MX" -launcher fork -hosts p,q -n 2 sh -c "$RANKS"
expect_rc 0 "-hosts inside an allocation"
expect_eq "no srun with -hosts -launcher fork" "" "$(cat "$SRUN_LOG")"

# What cannot work is a usage error naming the variable.
run "$MX" -launcher slurm -n 1 "$P" hello
expect_rc 2 "-launcher slurm outside an allocation"
expect_match "says why" ".*-launcher slurm needs -hosts or -f outside a Slurm allocation.*" "$T_ERR"
for bad in 'n[1-3' 'n[3-1]' 'a,,b' 'n[x]' 'n[1-2]]' 'n[[1]]' ','; do
    alloc "$bad" 1 "$MX" -n 1 "$P" hello
    expect_rc 2 "malformed SLURM_JOB_NODELIST '$bad'"
    expect_match "names the variable ($bad)" ".*cannot read SLURM_JOB_NODELIST=.*not a Slurm host list.*" "$T_ERR"
done
alloc 'n[1-3]' '2(x2)' "$MX" -n 1 "$P" hello
expect_rc 2 "SLURM_TASKS_PER_NODE with fewer counts than hosts"
expect_match "names both variables" ".*SLURM_TASKS_PER_NODE='2\(x2\)' does not give one count for each of the 3 hosts.*" "$T_ERR"
expect_eq "nothing started" "" "$(cat "$SRUN_LOG")"
echo "PASS: $T_NAME"
