#!/bin/bash
# Exit status of mpiexec: 0 when all ranks exit 0, else the first failing rank's code.
# usage: test_exitcode.sh MPIEXEC PROBE
. "$(dirname "$0")/lib.sh"
MX=$1 P=$2

run "$MX" -n 3 "$P" exit 0 0 finalize
expect_rc 0 "all ranks exit 0 after finalize"
expect_eq "stderr when all ranks exit 0" "" "$T_ERR"

# The others finalize too; those that have are left to finish, those that have not yet are ended.
run "$MX" -n 3 "$P" exit 3 1 finalize
expect_rc 3 "rank 1 exits 3 after finalize"
expect_mpiexec_msg "rank 1 exits 3 after finalize" '^mpiexec: rank 1 \(pid [0-9]+\) exited with code 3(; terminating the job)?$'

run "$MX" -n 3 "$P" exit 5 2 nofinalize
expect_rc 5 "rank 2 exits 5 while the others wait in a fence"
expect_mpiexec_msg "rank 2 exits 5 while the others wait" \
    '^mpiexec: rank 2 \(pid [0-9]+\) exited with code 5; terminating the job$'
expect_less "seconds to end the job after rank 2 exits" 10 "$T_SECS"

# Plain programs never speak PMI; exiting 0 early is normal for them.
run "$MX" -n 3 sh -c '[ "$PMI_RANK" = 0 ] || sleep 0.3; echo $PMI_RANK'
expect_rc 0 "plain programs exiting 0 at different times"
expect_eq "plain programs' output" "$(printf '0\n1\n2')" "$(sorted "$T_OUT")"

# The first failure decides; the ranks ended because of it do not count.
run "$MX" -n 2 sh -c 'if [ "$PMI_RANK" = 0 ]; then exit 4; fi; sleep 30; exit 6'
expect_rc 4 "rank 0 fails first with 4"
expect_mpiexec_msg "rank 0 fails first" '^mpiexec: rank 0 \(pid [0-9]+\) exited with code 4; terminating the job$'

run "$MX" -n 2 /nonexistent/program
expect_rc 127 "a program that does not exist"
expect_eq "message for a missing program" "mpiexec: cannot run '/nonexistent/program': no such program" "$T_ERR"

run "$MX" -n 0 "$P"
expect_rc 2 "-n 0 is a usage error"
run "$MX" --bogus-option "$P"
expect_rc 2 "an unknown option is a usage error"
run "$MX" --version
expect_rc 0 "--version"
expect_match "--version output" '^mpiexec \(Weft\) [0-9]+\.[0-9]+\.[0-9]+$' "$T_OUT"
run "$MX" --help
expect_rc 0 "--help"
expect_match "--help output" '^Usage: mpiexec ' "$T_OUT"
echo "PASS: $T_NAME"
