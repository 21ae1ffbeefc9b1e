#!/bin/bash
# WEFT_* settings at MPI_Init: a bad value stops the job with a non-zero status before any
# communication, naming the variable, the value and the accepted range; an empty value is the
# default; settings that choose a protocol must agree across ranks (MPMD ':' with -env), and a
# mismatch stops the job naming the variable, both values and both ranks instead of hanging.
# usage: test_config.sh MPIEXEC MPI_PROBE
. "$(dirname "$0")/lib.sh"
MX=$1 P=$2

# bad_value WHAT VAR VALUE ERE: the job of 2 ranks fails fast, and stderr has a line matching ERE.
bad_value() {
    run env "$2=$3" "$MX" --timeout 30 -n 2 "$P" exchange
    [ "$T_RC" != 0 ] || { show_run; fail "$1: the job succeeded"; }
    expect_less "$1: seconds (the job must stop at once, not time out)" 20 "$T_SECS"
    grep -qE "$4" "$T_DIR/err" || { show_run; fail "$1: no line on stderr matches: $4"; }
    [ -z "$T_OUT" ] || { show_run; fail "$1: the ranks got past MPI_Init"; }
}

bad_value "overflow" WEFT_SHM_EAGER_MAX 9999999999999g \
    'error: WEFT_SHM_EAGER_MAX=9999999999999g: too large; accepted: 0 to 64m bytes'
bad_value "negative" WEFT_SHM_FRAG_SIZE -1 \
    'error: WEFT_SHM_FRAG_SIZE=-1: out of range; accepted: 0 to 64m bytes'
bad_value "not a word" WEFT_WAIT_YIELD maybe \
    'error: WEFT_WAIT_YIELD=maybe: not one of the accepted words; accepted: auto, 1 or 0'
bad_value "not a number" WEFT_SPIN_US 10us \
    'error: WEFT_SPIN_US=10us: not a number; accepted: 0 to 10000000'
bad_value "not a boolean" WEFT_PROGRESS_TIMER 2 \
    'error: WEFT_PROGRESS_TIMER=2: not a boolean; accepted: 0 or 1'
run env WEFT_SHM_EAGER_MAX=0 WEFT_SHM_FRAG_SIZE=0 "$MX" --timeout 30 -n 2 "$P" exchange
[ "$T_RC" != 0 ] || { show_run; fail "eager and fragment size 0: the job succeeded"; }
grep -q 'error: WEFT_SHM_EAGER_MAX and WEFT_SHM_FRAG_SIZE are both 0' "$T_DIR/err" ||
    { show_run; fail "eager and fragment size 0: not named on stderr"; }

# empty means the default: the exchange works, and nothing is said about the variables
run env WEFT_SHM_EAGER_MAX= WEFT_SHM_FRAG_SIZE= WEFT_WAIT_YIELD= WEFT_SPIN_US= WEFT_DEBUG= \
    "$MX" --timeout 30 -n 2 "$P" exchange
expect_rc 0 "empty values (the defaults)"
expect_eq "empty values: both ranks exchange" "$(sorted 'rank 0 of 2: exchange ok
rank 1 of 2: exchange ok')" "$(sorted "$T_OUT")"
[ -z "$T_ERR" ] || { show_run; fail "empty values: something was said on stderr"; }
run env WEFT_SHM_EAGER_MAX=16k WEFT_WAIT_YIELD=1 "$MX" --timeout 30 -n 2 "$P" exchange
expect_rc 0 "valid values"

# mismatch VAR VALUE: rank 0 gets VAR=VALUE by -env, rank 1 the default; the job stops at once
# naming the variable, both values and both ranks.
mismatch() {
    run "$MX" --timeout 30 -n 1 -env "$1" "$2" "$P" exchange : -n 1 "$P" exchange
    [ "$T_RC" != 0 ] || { show_run; fail "$1 differs: the job succeeded"; }
    expect_less "$1 differs: seconds (the job must stop at once, not hang)" 20 "$T_SECS"
    grep -qE "error: $1 is $3 on rank 1 but $2 on rank 0: it chooses a protocol" "$T_DIR/err" ||
        { show_run; fail "$1 differs: no message naming it, both values and both ranks"; }
}
mismatch WEFT_SHM_EAGER_MAX 1024 16384
mismatch WEFT_SHM_CMA 0 auto
mismatch WEFT_SHM_CMA_COLL_MIN 65536 32768
mismatch WEFT_SHM_FRAG_SIZE 4096 32768
mismatch WEFT_OFI_EAGER_MAX 0 16384
mismatch WEFT_OFI_FRAG_SIZE 2048 32768
# the same value written differently agrees
run "$MX" --timeout 30 -n 1 -env WEFT_SHM_EAGER_MAX 16k "$P" exchange : -n 1 "$P" exchange
expect_rc 0 "WEFT_SHM_EAGER_MAX=16k on one rank, the default 16384 on the other"
# a setting of one rank only (not a protocol) may differ
run "$MX" --timeout 30 -n 1 -env WEFT_SPIN_US 0 "$P" exchange : -n 2 "$P" exchange
expect_rc 0 "WEFT_SPIN_US on one rank only"
echo "PASS: $T_NAME"
