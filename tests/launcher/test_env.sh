#!/bin/bash
# -genv, -env (per program with ':'), and the inherited environment.
# usage: test_env.sh MPIEXEC PROBE
. "$(dirname "$0")/lib.sh"
MX=$1 P=$2

WEFT_T_I=inherited WEFT_T_G=overridden run "$MX" -genv WEFT_T_G 'g value' -env WEFT_T_L l1 -n 2 \
    "$P" env WEFT_T_G WEFT_T_L WEFT_T_I PMI_SIZE
expect_rc 0 "-genv and -env"
want='rank 0 WEFT_T_G=g value
rank 0 WEFT_T_L=l1
rank 0 WEFT_T_I=inherited
rank 0 PMI_SIZE=2
rank 1 WEFT_T_G=g value
rank 1 WEFT_T_L=l1
rank 1 WEFT_T_I=inherited
rank 1 PMI_SIZE=2'
expect_eq "environment of 2 ranks (sorted)" "$(sorted "$want")" "$(sorted "$T_OUT")"

run "$MX" -genv WEFT_T_G g -n 1 -env WEFT_T_L a "$P" env WEFT_T_G WEFT_T_L PMI_RANK : \
    -n 2 -env WEFT_T_L b "$P" env WEFT_T_G WEFT_T_L PMI_RANK
expect_rc 0 "two programs separated by ':'"
want='rank 0 WEFT_T_G=g
rank 0 WEFT_T_L=a
rank 0 PMI_RANK=0
rank 1 WEFT_T_G=g
rank 1 WEFT_T_L=b
rank 1 PMI_RANK=1
rank 2 WEFT_T_G=g
rank 2 WEFT_T_L=b
rank 2 PMI_RANK=2'
expect_eq "environment per program (sorted)" "$(sorted "$want")" "$(sorted "$T_OUT")"

run "$MX" -n 1 "$P" env WEFT_T_X : -genv WEFT_T_X 1 "$P" env WEFT_T_X
expect_rc 2 "-genv after ':' is a usage error"
echo "PASS: $T_NAME"
