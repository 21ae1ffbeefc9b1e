#!/bin/bash
# --timeout, WEFT_TIMEOUT and MPIEXEC_TIMEOUT end a job that runs too long, with status 124.
# usage: test_timeout.sh MPIEXEC PROBE
. "$(dirname "$0")/lib.sh"
MX=$1 P=$2

mkdir "$T_DIR/pids"
PROBE_PIDDIR=$T_DIR/pids run "$MX" --timeout 2 -n 2 "$P" sleep
expect_rc 124 "--timeout 2 on a job that sleeps for ever"
expect_mpiexec_msg "--timeout 2" '^mpiexec: the job exceeded its timeout of 2 s; terminating the job$'
[ "$T_SECS" -ge 2 ] && [ "$T_SECS" -le 6 ] || fail "--timeout 2: the job ended after $T_SECS s, expected 2 to 6"
expect_gone "after the timeout" "$T_DIR/pids"

WEFT_TIMEOUT=1 run "$MX" -n 1 "$P" sleep
expect_rc 124 "WEFT_TIMEOUT=1"
MPIEXEC_TIMEOUT=1 run "$MX" -n 1 "$P" sleep
expect_rc 124 "MPIEXEC_TIMEOUT=1"
WEFT_TIMEOUT=1 run "$MX" --timeout 0 -n 1 sleep 2
expect_rc 0 "--timeout 0 overrides WEFT_TIMEOUT=1"

# Ranks that ignore SIGTERM get SIGKILL after the grace period.
rm -f "$T_DIR"/pids/*
PROBE_PIDDIR=$T_DIR/pids run "$MX" --timeout 1 -n 2 "$P" sleep noterm
expect_rc 124 "--timeout 1 on ranks ignoring SIGTERM"
[ "$T_SECS" -ge 2 ] && [ "$T_SECS" -le 8 ] || fail "ranks ignoring SIGTERM: the job ended after $T_SECS s, expected 2 to 8"
expect_gone "ranks ignoring SIGTERM" "$T_DIR/pids"
echo "PASS: $T_NAME"
