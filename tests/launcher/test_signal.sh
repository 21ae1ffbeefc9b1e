#!/bin/bash
# A rank killed by a signal ends the job; the status is 128+signal and the message names both.
# usage: test_signal.sh MPIEXEC PROBE
. "$(dirname "$0")/lib.sh"
MX=$1 P=$2

mkdir "$T_DIR/pids"
PROBE_PIDDIR=$T_DIR/pids run "$MX" -n 3 "$P" signal 11 2
expect_rc 139 "rank 2 dies of SIGSEGV"
expect_mpiexec_msg "rank 2 dies of SIGSEGV" \
    "^mpiexec: rank 2 \\(pid $(cat "$T_DIR/pids/rank2")\\) killed by signal 11 \\(Segmentation fault\\); terminating the job\$"
expect_gone "after rank 2 died of SIGSEGV" "$T_DIR/pids"

rm -f "$T_DIR"/pids/*
PROBE_PIDDIR=$T_DIR/pids run "$MX" -n 2 "$P" signal 9 0
expect_rc 137 "rank 0 dies of SIGKILL"
expect_mpiexec_msg "rank 0 dies of SIGKILL" '^mpiexec: rank 0 \(pid [0-9]+\) killed by signal 9 \(Killed\); terminating the job$'
expect_gone "after rank 0 died of SIGKILL" "$T_DIR/pids"
echo "PASS: $T_NAME"
