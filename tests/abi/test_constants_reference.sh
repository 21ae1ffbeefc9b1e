#!/bin/bash
# Every constant of MPICH's standard-ABI header (the PyPI wheel's mpi_abi.h) has the same value in
# Weft's generated mpi.h (compare_constants.py compiles both and compares).
# usage: test_constants_reference.sh BUILD_DIR SOURCE_DIR PYTHON
B=$1 S=$2 PY=$3
W=$(bash "$S/tests/abi/mpich_wheel.sh" "$B/mpich-wheel")
if [ $? != 0 ]; then
    echo "$W"
    exit 77
fi
exec "$PY" "$S/tests/abi/compare_constants.py" --reference "$W/include/mpi_abi.h" \
    --weft-include "$B/gen/include"
