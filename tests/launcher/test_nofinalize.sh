#!/bin/bash
# A rank leaving without finalize, or a barrier that can never complete, ends the job instead of
# hanging it.
# usage: test_nofinalize.sh MPIEXEC PROBE
. "$(dirname "$0")/lib.sh"
MX=$1 P=$2

run "$MX" -n 3 "$P" exit 0 1 nofinalize
expect_rc 1 "rank 1 exits 0 without finalize while the others wait"
expect_mpiexec_msg "rank 1 exits 0 without finalize" \
    '^mpiexec: rank 1 \(pid [0-9]+\) exited with code 0 without calling MPI_Finalize; terminating the job$'
expect_less "seconds to end the job" 10 "$T_SECS"

run "$MX" -n 1 "$P" exit 0 0 nofinalize
expect_rc 1 "a lone rank exits 0 without finalize"
expect_mpiexec_msg "a lone rank exits 0 without finalize" \
    '^mpiexec: rank 0 \(pid [0-9]+\) exited with code 0 without calling MPI_Finalize$'

# Rank 0 is a plain program: it exits 0 normally, but ranks 1 and 2 then wait for it in a fence.
run "$MX" -n 1 true : -n 2 "$P" exchange
expect_rc 1 "a fence that a rank which exited never joins"
expect_mpiexec_msg "a fence that can never complete" \
    '^mpiexec: rank 0 exited while rank [12] waits for it in a PMI barrier \(MPI collective or MPI_Finalize\); terminating the job$'
expect_less "seconds to end the job" 10 "$T_SECS"
echo "PASS: $T_NAME"
