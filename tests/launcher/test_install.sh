#!/bin/bash
# `cmake --install` into a fresh prefix: mpiexec, mpirun, mpicc and mpicxx pointing at the prefix,
# the pkg-config files, and a CMake project using find_package(MPI) with our mpicc.
# usage: test_install.sh CMAKE BUILD_DIR FINDMPI_PROJECT_DIR CONFIGURED_PREFIX
. "$(dirname "$0")/lib.sh"
CMAKE=$1 B=$2 FM=$3 CONF_PFX=$4
PFX=$T_DIR/prefix
unset CC CXX MPICH_CC MPICH_CXX WEFT_CC WEFT_CXX LD_LIBRARY_PATH

# Installing elsewhere must not touch the configured prefix; whatever it creates there is undone.
before=$(cd "$CONF_PFX" 2>/dev/null && find bin lib include -maxdepth 2 2>/dev/null | sort)
run "$CMAKE" --install "$B" --prefix "$PFX"
after=$(cd "$CONF_PFX" 2>/dev/null && find bin lib include -maxdepth 2 2>/dev/null | sort)
if [ "$before" != "$after" ]; then
    stray=$(comm -13 <(printf '%s\n' "$before") <(printf '%s\n' "$after"))
    for f in $stray; do [ -L "$CONF_PFX/$f" ] && [ ! -e "$CONF_PFX/$f" ] && rm -f "$CONF_PFX/$f"; done
    fail "cmake --install --prefix $PFX also wrote into the configured prefix $CONF_PFX: $stray" \
         "(an install(CODE) using \${CMAKE_INSTALL_PREFIX} expanded at configure time?)"
fi
expect_rc 0 "cmake --install"
for f in bin/mpiexec bin/mpirun bin/mpicc bin/mpicxx lib/libmpi_abi.so lib/pkgconfig/mpi.pc lib/pkgconfig/weft.pc; do
    [ -e "$PFX/$f" ] || fail "cmake --install: $f is missing from the prefix; it holds: $(cd "$PFX" && find . | sort | tr '\n' ' ')"
done
expect_eq "bin/mpirun" "mpiexec" "$(readlink "$PFX/bin/mpirun")"
for w in mpicc mpicxx; do
    [ -x "$PFX/bin/$w" ] || fail "bin/$w is not executable"
    if grep -q "$B" "$PFX/bin/$w"; then fail "installed $w mentions the build tree $B"; fi
done

LINK="-L$PFX/lib -Wl,-rpath,$PFX/lib -lmpi_abi"
run "$PFX/bin/mpicc" -show
expect_eq "installed mpicc -show" "cc -I$PFX/include $LINK" "$T_OUT"
run "$PFX/bin/mpicxx" -show
expect_eq "installed mpicxx -show" "c++ -I$PFX/include $LINK" "$T_OUT"

if command -v pkg-config >/dev/null; then
    PKG_CONFIG_PATH=$PFX/lib/pkgconfig run pkg-config --cflags --libs mpi
    expect_rc 0 "pkg-config mpi"
    expect_eq "pkg-config --cflags --libs mpi" "-I$PFX/include $LINK" "${T_OUT% }"
    PKG_CONFIG_PATH=$PFX/lib/pkgconfig run pkg-config --modversion weft
    expect_match "pkg-config --modversion weft" '^[0-9]+\.[0-9]+\.[0-9]+$' "$T_OUT"
fi

run "$PFX/bin/mpirun" -n 2 sh -c 'echo rank $PMI_RANK'
expect_rc 0 "installed mpirun"
expect_eq "installed mpirun's output (sorted)" "$(printf 'rank 0\nrank 1')" "$(sorted "$T_OUT")"

if [ ! -f "$PFX/include/mpi.h" ]; then
    [ -f "$B/gen/include/mpi.h" ] && fail "mpi.h was generated in the build tree but not installed to $PFX/include"
    skip "install checks passed; FindMPI part skipped: mpi.h is not generated yet"
fi
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
run "$CMAKE" -S "$FM" -B "$T_DIR/fm" "${gen[@]}" -DMPI_C_COMPILER="$PFX/bin/mpicc"
expect_rc 0 "configuring a project with find_package(MPI)"
expect_match "what FindMPI found" "weft-findmpi: compiler=$PFX/bin/mpicc libraries=[^ ]*$PFX/lib/libmpi_abi\\.so" "$T_OUT"
run "$CMAKE" --build "$T_DIR/fm"
expect_rc 0 "building the find_package(MPI) project"
run "$PFX/bin/mpiexec" -n 2 "$T_DIR/fm/hello"
expect_rc 0 "running the find_package(MPI) program"
expect_eq "its output (sorted)" "$(printf 'hello from rank 0 of 2\nhello from rank 1 of 2')" "$(sorted "$T_OUT")"
echo "PASS: $T_NAME"
