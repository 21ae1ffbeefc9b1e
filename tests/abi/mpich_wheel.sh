#!/bin/bash
# mpich_wheel.sh DIR: makes DIR a Python virtual environment holding MPICH's PyPI wheel (mpich==5.0.2),
# which brings MPICH's standard-ABI header (DIR/include/mpi_abi.h) and wrapper (DIR/bin/mpicc_abi).
# Prints DIR on success. When the wheel cannot be had (no pip, no venv, no registry), prints why
# on stdout and exits 77, the status the tests that call it pass on to CTest as "skipped".
# Several tests may call it at once: the first installs under a lock, the others wait for it.
set -u
DIR=$1
VERSION=${WEFT_MPICH_WHEEL_VERSION:-5.0.2}
mkdir -p "$(dirname "$DIR")"
exec 9>"$DIR.lock"
flock -w 600 9 || { echo "SKIP: timed out waiting for another install of the MPICH wheel"; exit 77; }
if [ -x "$DIR/bin/mpicc_abi" ] && [ -f "$DIR/include/mpi_abi.h" ] && [ -f "$DIR/.weft-ok" ]; then
    echo "$DIR"
    exit 0
fi
rm -rf "$DIR"
PY=$(command -v python3) || { echo "SKIP: python3 is not installed"; exit 77; }
if ! out=$("$PY" -m venv "$DIR" 2>&1); then
    echo "SKIP: '$PY -m venv' failed (Debian package python3-venv missing?): $(echo "$out" | tail -1)"
    rm -rf "$DIR"
    exit 77
fi
if ! out=$(timeout 300 "$DIR/bin/python" -m pip install -q --disable-pip-version-check \
        "mpich==$VERSION" 2>&1); then
    echo "SKIP: 'pip install mpich==$VERSION' failed: $(echo "$out" | tail -2 | tr '\n' ' ')"
    rm -rf "$DIR"
    exit 77
fi
if [ ! -x "$DIR/bin/mpicc_abi" ] || [ ! -f "$DIR/include/mpi_abi.h" ]; then
    echo "SKIP: the mpich==$VERSION wheel has no bin/mpicc_abi or include/mpi_abi.h"
    exit 77
fi
touch "$DIR/.weft-ok"
echo "$DIR"
