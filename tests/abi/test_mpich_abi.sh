#!/bin/bash
# Binaries built for the standard ABI by another implementation run on Weft unchanged.
# usage: test_mpich_abi.sh BUILD_DIR SOURCE_DIR
#
# abi_compat.c is built with Weft's mpicc and with the mpicc_abi of MPICH's PyPI wheel
# (mpich_wheel.sh), then run on Weft's libmpi_abi.so.1 under Weft's mpiexec: same checks, same
# transcript. The wheel's binary finds Weft's library through LD_LIBRARY_PATH, which the loader
# searches before the binary's RUNPATH (the wheel's own lib/). The same binary is also run on
# MPICH's library under MPICH's launcher, which shows the program's expectations are the
# standard's and not Weft's.
. "$(dirname "$0")/../launcher/lib.sh"
B=$1 S=$2
unset CC MPICH_CC WEFT_CC LD_LIBRARY_PATH
W=$(bash "$S/tests/abi/mpich_wheel.sh" "$B/mpich-wheel")
[ $? = 0 ] || skip "${W#SKIP: }"
MPIEXEC=$B/tools/mpiexec
SRC=$S/tests/abi/abi_compat.c

run "$B/tools/mpicc" -o "$T_DIR/compat_weft" "$SRC"
expect_rc 0 "abi_compat.c built with Weft's mpicc"
run "$W/bin/mpicc_abi" -o "$T_DIR/compat_mpich" "$SRC"
expect_rc 0 "abi_compat.c built with MPICH's mpicc_abi"
run readelf -d "$T_DIR/compat_mpich"
expect_match "the mpicc_abi binary needs libmpi_abi.so.1" ".*NEEDED.*\[libmpi_abi\.so\.1\].*" "$T_OUT"

# Weft's build, on Weft.
run "$MPIEXEC" -n 4 --timeout 60 "$T_DIR/compat_weft"
expect_rc 0 "Weft's build on Weft, 4 ranks"
want=$T_OUT
expect_match "Weft's build runs on Weft" "library: Weft .*" "$(head -1 "$T_DIR/out")"

# MPICH's build, on Weft: the same transcript.
LD_LIBRARY_PATH=$B/src run "$MPIEXEC" -n 4 --timeout 60 "$T_DIR/compat_mpich"
expect_rc 0 "MPICH's mpicc_abi build on Weft, 4 ranks"
expect_eq "transcript of the mpicc_abi build on Weft" "$want" "$T_OUT"

# MPMD: MPI_APPNUM of each section (the program checks its attribute against its argument).
LD_LIBRARY_PATH=$B/src run "$MPIEXEC" --timeout 60 -n 1 "$T_DIR/compat_mpich" 0 : \
    -n 2 "$T_DIR/compat_mpich" 1
expect_rc 0 "MPICH's build on Weft, MPMD, MPI_APPNUM 0 and 1"
expect_match "MPMD transcript" ".*attributes: appnum=0 universe=3.*" "$T_OUT"

# MPI_ERRORS_ABORT ends the job; MPI_ERRORS_RETURN (above) did not.
LD_LIBRARY_PATH=$B/src run "$MPIEXEC" -n 2 --timeout 60 "$T_DIR/compat_mpich" --abort
if [ "$T_RC" = 0 ] || [ "$T_RC" = 137 ]; then
    fail "MPI_ERRORS_ABORT from the mpicc_abi build: exit status $T_RC, expected the job to abort"
fi
case $T_OUT in *"MPI_ERRORS_ABORT returned"*) show_run; fail "MPI_ERRORS_ABORT returned" ;; esac
expect_match "the abort names MPI_ERRORS_ABORT" ".*MPI_ERRORS_ABORT.*" "$T_ERR"

# The same binary on MPICH's own library and launcher: the checks are the standard's.
run "$W/bin/mpiexec" -n 2 "$T_DIR/compat_mpich"
expect_rc 0 "MPICH's build on MPICH (validates the program)"
expect_match "MPICH's build on MPICH runs MPICH" "library: MPICH .*" "$(head -1 "$T_DIR/out")"
echo "PASS: abi_compat built by Weft's mpicc and MPICH's mpicc_abi gives the same transcript on Weft"
