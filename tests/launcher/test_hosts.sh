#!/bin/bash
# Several "hosts" on this machine: -launcher fork starts one proxy per host name here, so the whole
# multi-host path (placement, proxies, PMI relayed to the front end, output, stdin, exits) runs
# without root. tests/net/test_launch.sh does the same on fake hosts.
# usage: test_hosts.sh MPIEXEC PROBE
. "$(dirname "$0")/lib.sh"
MX=$1 P=$2
F=("$MX" -launcher fork)

run "${F[@]}" -hosts a,b -n 4 "$P" exchange
expect_rc 0 "2 hosts, 4 ranks, put/fence/get"
expect_eq "exchange output (sorted)" "$(printf 'rank %s of 4: exchange ok\n' 0 1 2 3 | head -c -1)" "$(sorted "$T_OUT")"

# Placement: host a has 2 slots, b 1 (the default); rounds until every rank has a place.
run "${F[@]}" -hosts a:2,b -n 4 sh -c 'echo $PMI_RANK $PMI_SIZE $MPI_LOCALRANKID $MPI_LOCALNRANKS'
expect_rc 0 "placement by slots"
expect_eq "rank size local nlocal (sorted)" "$(printf '0 4 0 3\n1 4 1 3\n2 4 0 1\n3 4 2 3')" "$(sorted "$T_OUT")"

echo 'b:2   # a comment' >"$T_DIR/hostfile"
printf '\n  a\n' >>"$T_DIR/hostfile"
run "${F[@]}" -f "$T_DIR/hostfile" -ppn 2 -n 5 sh -c 'echo $PMI_RANK $MPI_LOCALRANKID $MPI_LOCALNRANKS'
expect_rc 0 "-f with -ppn 2"
expect_eq "rank local nlocal (sorted)" "$(printf '0 0 3\n1 1 3\n2 0 2\n3 1 2\n4 2 3')" "$(sorted "$T_OUT")"

# MPMD, -genv, -env, --tag-output
run "${F[@]}" -hosts a,b --tag-output -genv WEFT_T_G g -n 1 -env WEFT_T_L x "$P" env WEFT_T_G WEFT_T_L : \
    -n 2 -env WEFT_T_L y "$P" env WEFT_T_G WEFT_T_L
expect_rc 0 "MPMD with -genv and -env"
want='[0] rank 0 WEFT_T_G=g
[0] rank 0 WEFT_T_L=x
[1] rank 1 WEFT_T_G=g
[1] rank 1 WEFT_T_L=y
[2] rank 2 WEFT_T_G=g
[2] rank 2 WEFT_T_L=y'
expect_eq "tagged output (sorted)" "$(sorted "$want")" "$(sorted "$T_OUT")"

# MPMD with hosts per section (as Hydra's local -hosts): the section after the first ':' on its own
# host c (3 ranks, one slot: round after round), the last one on the global list going on where
# the first section stopped (b, then a again). Hosts told apart by their local ranks.
run "${F[@]}" -hosts a,b -n 1 sh -c 'echo $PMI_RANK $MPI_LOCALRANKID $MPI_LOCALNRANKS' : \
    -host c -n 3 sh -c 'echo $PMI_RANK $MPI_LOCALRANKID $MPI_LOCALNRANKS' : \
    -n 2 sh -c 'echo $PMI_RANK $MPI_LOCALRANKID $MPI_LOCALNRANKS'
expect_rc 0 "MPMD, hosts per section"
expect_eq "MPMD, hosts per section: rank local nlocal (a: 0 5, b: 4, c: 1 2 3)" \
    "$(printf '0 0 2\n1 0 3\n2 1 3\n3 2 3\n4 0 1\n5 1 2')" "$(sorted "$T_OUT")"
# Only sections' hosts: the others run on mpiexec's own host (its host name).
run "${F[@]}" -n 2 sh -c 'echo $PMI_RANK $MPI_LOCALRANKID $MPI_LOCALNRANKS' : -hosts a,b:2 -n 3 \
    sh -c 'echo $PMI_RANK $MPI_LOCALRANKID $MPI_LOCALNRANKS'
expect_rc 0 "MPMD, hosts in the second section only"
expect_eq "MPMD, hosts in the second section only: rank local nlocal (here: 0 1, a: 2, b: 3 4)" \
    "$(printf '0 0 2\n1 1 2\n2 0 1\n3 0 2\n4 1 2')" "$(sorted "$T_OUT")"
run "$MX" -n 1 true : -hosts a -host b -n 1 true
expect_rc 2 "-hosts twice in one section"
expect_mpiexec_msg "-hosts twice in one section" "^mpiexec: -host given twice for one program\$"

# stdin goes to rank 0 only, through its proxy, whatever its size.
seq 1 30000 >"$T_DIR/in"
T_STDIN=$T_DIR/in run "${F[@]}" -hosts a,b -n 2 sh -c 'if [ $PMI_RANK = 0 ]; then cat; else wc -c; fi'
expect_rc 0 "stdin to rank 0"
expect_eq "what ranks 0 and 1 read" "$(echo 0; cat "$T_DIR/in")" "$(sort -n "$T_DIR/out")"

# Failures: the first decides the status; the message names the rank and its host.
run "${F[@]}" -hosts a,b -n 3 "$P" exit 5 1 nofinalize
expect_rc 5 "rank 1 on b exits 5"
expect_mpiexec_msg "rank 1 on b exits 5" '^mpiexec: rank 1 \(pid [0-9]+ on b\) exited with code 5; terminating the job$'
expect_less "seconds to end the job" 10 "$T_SECS"

run "${F[@]}" -hosts a,b -n 2 "$P" abort 7 1
expect_rc 7 "rank 1 on b aborts with 7"
expect_mpiexec_msg "rank 1 on b aborts" '^mpiexec: rank 1 \(pid [0-9]+ on b\) called MPI_Abort with code 7; terminating the job$'
run "${F[@]}" -hosts a,b -n 2 "$P" abort 512 1
expect_rc 1 "rank 1 on b aborts with 512"

mkdir "$T_DIR/pids"
PROBE_PIDDIR=$T_DIR/pids run "${F[@]}" -hosts a,b -n 4 "$P" signal 9 3
expect_rc 137 "rank 3 on b killed"
expect_mpiexec_msg "rank 3 on b killed" '^mpiexec: rank 3 \(pid [0-9]+ on b\) killed by signal 9 \(Killed\); terminating the job$'
expect_gone "after rank 3 was killed" "$T_DIR/pids"

# SIGTERM to mpiexec ends the ranks of every proxy.
rm -f "$T_DIR"/pids/*
PROBE_PIDDIR=$T_DIR/pids "${F[@]}" -hosts a,b -n 4 "$P" sleep </dev/null >"$T_DIR/out" 2>"$T_DIR/err" &
mx=$!
T_CMD="kill -TERM mpiexec -launcher fork -hosts a,b -n 4 $P sleep"
wait_files "$T_DIR/pids" 4
kill -TERM $mx
wait $mx
T_RC=$?
expect_rc 143 "SIGTERM to mpiexec"
expect_mpiexec_msg "SIGTERM to mpiexec" '^mpiexec: received signal 15 \(Terminated\); terminating the job$'
expect_gone "SIGTERM to mpiexec" "$T_DIR/pids"

# --timeout ends the ranks of every proxy.
run "${F[@]}" -hosts a,b --timeout 2 -n 2 "$P" sleep
expect_rc 124 "--timeout 2"
expect_less "--timeout 2: seconds" 10 "$T_SECS"

# Binding is per host: local rank 0 of each host gets the first CPU mpiexec may use.
first=$(python3 -c 'import os; print(min(os.sched_getaffinity(0)))')
run "${F[@]}" -hosts a,b --bind-to core -n 2 sh -c 'echo $PMI_RANK $MPI_LOCALRANKID $WEFT_BOUND_CPUS'
expect_rc 0 "--bind-to core on 2 hosts"
expect_eq "rank, local rank, CPUs (sorted)" "$(printf '0 0 %s\n1 0 %s' "$first" "$first")" "$(sorted "$T_OUT")"

run "$MX" -ppn 2 -n 2 "$P" hello
expect_rc 2 "-ppn without -hosts is a usage error"
run "${F[@]}" -hosts a, -n 1 "$P" hello
expect_rc 0 "a trailing comma in -hosts"
echo "PASS: $T_NAME"
