#!/bin/bash
# mpi4py, a real client of the standard ABI: builds mpi4py from its PyPI source for the MPI 5.0
# standard ABI (MPI4PY_BUILD_MPIABI=1) in a virtual environment under the build directory, then
# runs mpi4py's own test suite under our mpiexec at each rank count, and an MPIPoolExecutor
# (mpi4py.futures) mapping a function over 100 items on 4 workers.
#
#   tests/mpi4py/run.sh BUILD_DIR [NP...]      (default NP: 1 2 3 4 5)
#
# MPI4PY_COMPILER chooses who compiles mpi4py:
#   weft  (default) our mpicc;
#   mpich MPICH's mpicc_abi, from its PyPI wheel (tests/abi/mpich_wheel.sh): the extension module
#         is then MPICH's build for the standard ABI, and runs on Weft's libmpi_abi.so.1 unchanged,
#         found through LD_LIBRARY_PATH (the loader searches it before the module's RUNPATH, which
#         names the wheel's own library). When the wheel cannot be had, this prints SKIP and why.
#
# What is excluded from the suite, and why, is in tests/mpi4py/exclude.txt (one place). A rank
# count passes when mpiexec exits 0: every rank's unittest run had no failure and no error. The
# last line per rank count is mpi4py's own summary (tests run, skips). Logs: BUILD/mpi4py/*.log.
# Needs python3-venv and python3-dev (installed when missing, as root) and PyPI.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=$(cd "${1:?usage: run.sh BUILD_DIR [NP...]}" && pwd)
shift
nps=${*:-1 2 3 4 5}
ver=${MPI4PY_VERSION:-4.1.2}
work=$build/mpi4py
venv=$work/venv
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)
# Per rank count: mpiexec's own deadline, and a hard stop a little after it.
limit=${MPI4PY_TIMEOUT:-600}
compiler=${MPI4PY_COMPILER:-weft}

"$top/tools/install-deps.sh" python3-venv python3-dev || exit 1
case $compiler in
weft)
    mpicc=$build/tools/mpicc who="Weft's mpicc" ;;
mpich)
    work=$build/mpi4py-mpich
    venv=$work/venv
    unset CC MPICH_CC WEFT_CC
    wheel=$(bash "$top/tests/abi/mpich_wheel.sh" "$build/mpich-wheel")
    if [ $? != 0 ]; then
        echo "${wheel:-SKIP: the MPICH wheel could not be installed}: mpi4py built by MPICH's mpicc_abi did not run"
        exit 0
    fi
    mpicc=$wheel/bin/mpicc_abi who="MPICH's mpicc_abi" ;;
*)
    echo "run.sh: MPI4PY_COMPILER must be weft or mpich, not '$compiler'" >&2; exit 2 ;;
esac
mkdir -p "$work"

# Build mpi4py once per (version, build directory); the stamp says what the venv holds.
stamp="mpi4py $ver abi $mpicc"
if [ "$(cat "$work/stamp" 2>/dev/null)" != "$stamp" ]; then
    rm -rf "$venv" "$work/sdist" "$work/src" "$work/stamp"
    echo "building mpi4py $ver for the standard ABI with $mpicc"
    "$py" -m venv "$venv" || exit 1
    # the source distribution: its test/ directory is the suite
    timeout 900 "$venv/bin/pip" download -q --no-deps --no-binary mpi4py -d "$work/sdist" "mpi4py==$ver" ||
        { rm -rf "$venv" "$work/sdist"; echo "SKIP: cannot download mpi4py $ver from PyPI (no route to the package index?): the mpi4py suite did not run"; exit 0; }
    tarball=$(ls "$work"/sdist/mpi4py-"$ver".tar.gz) || exit 1
    MPI4PY_BUILD_MPIABI=1 MPICC="$mpicc" timeout 1800 "$venv/bin/pip" install -q \
        --no-cache-dir "$tarball" >"$work/build.log" 2>&1 ||
        { tail -40 "$work/build.log" >&2; echo "FAIL: mpi4py did not build with $mpicc" >&2; exit 1; }
    mkdir -p "$work/src" && tar xzf "$tarball" -C "$work/src" --strip-components=1 || exit 1
    echo "$stamp" >"$work/stamp"
fi

# The library mpi4py loads must be this build's. MPICH's build names the wheel's library in its
# RUNPATH: it must find that one by itself (so it really is MPICH's build), and Weft's under
# LD_LIBRARY_PATH.
lib=$(cd / && LD_LIBRARY_PATH=$build/src "$venv/bin/python" -c 'import mpi4py.MPI as m; print(m.__file__)')
if [ "$compiler" = mpich ]; then
    ldd "$lib" | grep -q "$wheel/lib/libmpi_abi.so" ||
        { echo "FAIL: $lib, built by $mpicc, does not find MPICH's libmpi_abi.so by itself:" >&2; ldd "$lib" >&2; exit 1; }
    export LD_LIBRARY_PATH=$build/src
fi
ldd "$lib" | grep -q "$build/src/libmpi_abi.so" ||
    { echo "FAIL: $lib is not linked to $build/src/libmpi_abi.so:" >&2; ldd "$lib" >&2; exit 1; }
libver=$(timeout 60 "$build/tools/mpiexec" -n 1 --timeout 50 "$venv/bin/python" -c \
    'from mpi4py import MPI; print(MPI.Get_library_version().splitlines()[0])' 2>&1)
case $libver in
Weft*) echo "mpi4py built by $mpicc runs on: $libver" ;;
*) echo "FAIL: mpi4py built by $mpicc does not run on Weft's library: $libver" >&2; exit 1 ;;
esac

# exclude.txt: "pattern   # reason" per line. Modules (name.py) go to -e, the rest to --xfile.
sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' "$here/exclude.txt" >"$work/excluded"
grep -v '\.py$' "$work/excluded" >"$work/xfile"
modules=$(grep '\.py$' "$work/excluded" | sed 's/\./\\./g' | paste -sd'|')
excl=()
[ -n "$modules" ] && excl=(-e "^($modules)\$")

export WEFT_WAIT_YIELD=${WEFT_WAIT_YIELD:-auto}
# MPI_Publish_name's directory (docs/dynamic.md): the build's, not the user's home
export WEFT_NAME_DIR=${WEFT_NAME_DIR:-$work/names}
rc=0
for np in $nps; do
    log=$work/suite.np$np.log
    t0=$(date +%s)
    timeout -s KILL $((limit + 30)) "$build/tools/mpiexec" -n "$np" --timeout "$limit" \
        "$venv/bin/python" "$work/src/test/main.py" --xfile "$work/xfile" "${excl[@]}" >"$log" 2>&1
    r=$?
    t1=$(date +%s)
    summary=$(grep -E '^(OK|FAILED)' "$log" | sort | uniq -c | tr -s ' ' | paste -sd';')
    ran=$(grep -E '^Ran [0-9]+ tests' "$log" | head -1)
    if [ "$r" = 0 ]; then
        echo "PASS mpi4py ($who) suite np=$np in $((t1 - t0)) s: $ran; per rank: $summary"
    else
        echo "FAIL mpi4py ($who) suite np=$np (exit $r) in $((t1 - t0)) s: $ran; per rank: $summary"
        grep -E '^(FAIL|ERROR):' "$log" | sort | uniq | head -40
        grep -E 'exceeded its timeout|^\[weft' "$log" | head -5
        rc=1
    fi
done

# mpi4py.futures: rank 0 is the client, ranks 1-4 the pool's workers (no spawn needed).
log=$work/futures.log
timeout -s KILL 200 "$build/tools/mpiexec" -n 5 --timeout 180 "$venv/bin/python" -m mpi4py.futures \
    "$here/futures_map.py" >"$log" 2>&1
r=$?
if [ "$r" = 0 ] && grep -q '^futures ok' "$log"; then
    echo "PASS mpi4py.futures ($who): $(grep '^futures ok' "$log")"
else
    echo "FAIL mpi4py.futures ($who) (exit $r):"
    tail -20 "$log"
    rc=1
fi

# mpi4py.futures spawning its workers: an MPIPoolExecutor under a 1-rank job starts 4 workers with
# MPI_Comm_spawn (docs/dynamic.md).
log=$work/futures_spawn.log
timeout -s KILL 200 "$build/tools/mpiexec" -n 1 --timeout 180 "$venv/bin/python" \
    "$here/futures_spawn.py" >"$log" 2>&1
r=$?
if [ "$r" = 0 ] && grep -q '^futures spawn ok' "$log"; then
    echo "PASS mpi4py.futures (spawned workers): $(grep '^futures spawn ok' "$log")"
else
    echo "FAIL mpi4py.futures (spawned workers) (exit $r):"
    tail -20 "$log"
    rc=1
fi
exit $rc
