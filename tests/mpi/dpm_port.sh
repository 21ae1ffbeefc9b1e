#!/bin/bash
# Two mpiexec jobs of 2 ranks meet through a port (a file and Publish/Lookup_name), then their rank
# 0s through MPI_Comm_join (tests/mpi/dpm_port.c). Usage: dpm_port.sh MPIEXEC PROGRAM
set -u
mpiexec=$1 prog=$2
dir=$(mktemp -d) || exit 1
export WEFT_NAME_DIR=$dir/names
trap 'kill $spid 2>/dev/null; rm -rf "$dir"' EXIT
"$mpiexec" -n 2 --timeout 100 "$prog" server "$dir" & spid=$!
"$mpiexec" -n 2 --timeout 100 "$prog" client "$dir"; crc=$?
[ $crc -eq 0 ] || kill $spid 2>/dev/null   # the server would wait for it until its timeout
wait $spid; src=$?
echo "server exit $src, client exit $crc"
[ $src -eq 0 ] && [ $crc -eq 0 ]
