#!/bin/bash
# A rank calling abort (PMI abort / MPI_Abort) ends the job; the status is the abort code.
# usage: test_abort.sh MPIEXEC PROBE
. "$(dirname "$0")/lib.sh"
MX=$1 P=$2

mkdir "$T_DIR/pids"
PROBE_PIDDIR=$T_DIR/pids run "$MX" -n 3 "$P" abort 7 1
expect_rc 7 "rank 1 aborts with code 7"
expect_mpiexec_msg "rank 1 aborts with code 7" \
    "^mpiexec: rank 1 \\(pid $(cat "$T_DIR/pids/rank1")\\) called MPI_Abort with code 7; terminating the job\$"
expect_less "seconds to end the job after the abort" 10 "$T_SECS"
expect_gone "after the abort" "$T_DIR/pids"

# Any abort fails the job: a code outside 1..255 gives status 1 (issue 17: 256 and 512 gave 0).
run "$MX" -n 1 "$P" abort 0 0
expect_rc 1 "a lone rank aborting with code 0"
expect_mpiexec_msg "a lone rank aborting with code 0" '^mpiexec: rank 0 \(pid [0-9]+\) called MPI_Abort with code 0$'

for code in 255:255 256:1 512:1 300:1 -1:1; do
    run "$MX" -n 2 "$P" abort "${code%:*}" 0
    expect_rc "${code#*:}" "abort code ${code%:*}"
    expect_mpiexec_msg "abort code ${code%:*}" \
        "^mpiexec: rank 0 \\(pid [0-9]+\\) called MPI_Abort with code ${code%:*}; terminating the job\$"
done
echo "PASS: $T_NAME"
