#!/bin/bash
# mpicc/mpicxx of the build tree: -show, -compile-info, -link-info, compiler choice, and a program
# built with them that runs without LD_LIBRARY_PATH.
# usage: test_wrappers.sh BUILD_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
B=$1 S=$2
CC_W=$B/tools/mpicc CXX_W=$B/tools/mpicxx
unset CC CXX MPICH_CC MPICH_CXX WEFT_CC WEFT_CXX LD_LIBRARY_PATH
INC="-I$B/gen/include -I$S/include"
LINK="-L$B/src -Wl,-rpath,$B/src -lmpi_abi"

run "$CC_W" -show
expect_rc 0 "mpicc -show"
expect_eq "mpicc -show" "cc $INC $LINK" "$T_OUT"
run "$CC_W" -show -O2 x.c -o x
expect_eq "mpicc -show x.c -o x" "cc $INC -O2 x.c -o x $LINK" "$T_OUT"
run "$CC_W" -show -c x.c
expect_eq "mpicc -show -c x.c (no link flags)" "cc $INC -c x.c" "$T_OUT"
run "$CC_W" -show '-DMSG="a b"' -c x.c
expect_eq "mpicc -show quotes an argument with a space" "cc $INC '-DMSG=\"a b\"' -c x.c" "$T_OUT"
run "$CC_W" -compile-info
expect_eq "mpicc -compile-info" "cc $INC" "$T_OUT"
run "$CC_W" -link-info
expect_eq "mpicc -link-info" "cc $LINK" "$T_OUT"
run "$CXX_W" -show -c x.cc
expect_eq "mpicxx -show -c x.cc" "c++ $INC -c x.cc" "$T_OUT"

CC=gcc run "$CC_W" -compile-info
expect_eq "CC=gcc" "gcc $INC" "$T_OUT"
CC=gcc MPICH_CC=clang run "$CC_W" -compile-info
expect_eq "MPICH_CC wins over CC" "clang $INC" "$T_OUT"
CC=gcc MPICH_CC=clang WEFT_CC=tcc run "$CC_W" -compile-info
expect_eq "WEFT_CC wins over MPICH_CC" "tcc $INC" "$T_OUT"
CC=$CC_W run "$CC_W" -compile-info
expect_eq "CC pointing at mpicc falls back to cc" "cc $INC" "$T_OUT"
run "$CC_W" -cc=gcc -compile-info
expect_eq "mpicc -cc=gcc" "gcc $INC" "$T_OUT"
CXX=g++ run "$CXX_W" -compile-info
expect_eq "CXX=g++ for mpicxx" "g++ $INC" "$T_OUT"
run "$CC_W" -showme:compile
expect_rc 1 "mpicc -showme:compile (Open MPI's) is refused"

# Build and run a program.
if [ -f "$B/gen/include/mpi.h" ]; then
    cat >"$T_DIR/t.c" <<'C'
#include <mpi.h>
#include <stdio.h>
int main(void) { int flag = 1; MPI_Initialized(&flag); printf("initialized %d\n", flag); return 0; }
C
    want="initialized 0"
else
    echo "note: $B/gen/include/mpi.h is not generated yet; building a program without MPI calls"
    printf '#include <stdio.h>\nint main(void) { puts("initialized 0"); return 0; }\n' >"$T_DIR/t.c"
    want="initialized 0"
fi
run "$CC_W" -o "$T_DIR/t" "$T_DIR/t.c"
expect_rc 0 "mpicc builds a program"
run "$T_DIR/t"
expect_rc 0 "the program runs without LD_LIBRARY_PATH"
expect_eq "the program's output" "$want" "$T_OUT"
dyn=$(readelf -d "$T_DIR/t")
expect_match "the program's RUNPATH/RPATH" "R(UN)?PATH.*\\[$B/src\\]" "$dyn"
if [ -f "$B/gen/include/mpi.h" ]; then
    expect_match "the program needs libmpi_abi" 'NEEDED.*\[libmpi_abi\.so\.1\]' "$dyn"
fi

if command -v c++ >/dev/null && [ -f "$B/gen/include/mpi.h" ]; then
    cp "$T_DIR/t.c" "$T_DIR/t.cc"
    run "$CXX_W" -o "$T_DIR/tcc" "$T_DIR/t.cc"
    expect_rc 0 "mpicxx builds a C++ program"
    run "$T_DIR/tcc"
    expect_eq "the C++ program's output" "$want" "$T_OUT"
fi
echo "PASS: $T_NAME"
