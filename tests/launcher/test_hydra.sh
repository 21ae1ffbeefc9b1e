#!/bin/bash
# Weft programs under MPICH's Hydra (mpiexec.mpich): PMI over PMI_FD, and over PMI_PORT.
# usage: test_hydra.sh PROBE
. "$(dirname "$0")/lib.sh"
P=$1
HYDRA=$(command -v mpiexec.mpich || command -v mpiexec.hydra) || skip "mpiexec.mpich (MPICH's Hydra) is not installed"

run "$HYDRA" -n 2 "$P" exchange
expect_rc 0 "Hydra: exchange on 2 ranks"
expect_eq "Hydra: exchange on 2 ranks (sorted)" "$(printf 'rank 0 of 2: exchange ok\nrank 1 of 2: exchange ok')" "$(sorted "$T_OUT")"

run "$HYDRA" -pmi-port -n 3 "$P" exchange
expect_rc 0 "Hydra -pmi-port: exchange on 3 ranks"
expect_eq "Hydra -pmi-port: exchange (sorted)" \
    "$(printf 'rank 0 of 3: exchange ok\nrank 1 of 3: exchange ok\nrank 2 of 3: exchange ok')" "$(sorted "$T_OUT")"

run "$HYDRA" -n 2 "$P" hello
expect_rc 0 "Hydra: hello"
expect_match "Hydra: hello (job name safe in a file name)" \
    '^rank 0 of 2 singleton 0 kvs [A-Za-z0-9._-]+'$'\n''rank 1 of 2 singleton 0 kvs [A-Za-z0-9._-]+$' "$(sorted "$T_OUT")"

run "$HYDRA" -n 2 "$P" abort 5 1
expect_rc 5 "Hydra: rank 1 aborts with code 5"
echo "PASS: $T_NAME"
