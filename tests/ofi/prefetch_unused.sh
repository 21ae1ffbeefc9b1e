#!/usr/bin/env bash
# mpi.ofi.prefetch_unused.np4: the launcher says the job spans two hosts (-launcher fork -hosts a,b
# on this one machine: MPI_LOCALNRANKS is 2 of 4), so every rank starts opening libfabric ahead of
# need (WEFT_OFI_PREFETCH, docs/ofi.md "Start-up"); the node table then finds a single node and the
# job runs on shm alone. The job must give the right results, and every rank must drop the unused
# transport in MPI_Init (WEFT_DEBUG's line), leaving no thread behind.
# usage: prefetch_unused.sh <mpiexec> <p2p_order>
set -u
mx=$1 prog=$2
out=$(env WEFT_TRANSPORTS=shm,ofi WEFT_DEBUG=1 "$mx" -launcher fork -hosts a,b -n 4 --timeout 90 \
      "$prog" 2 --weft 2>&1)
rc=$?
dropped=$(grep -c "transport opened ahead of need" <<<"$out")
ofi=$(grep -c "peers by shm+ofi\|peers by ofi" <<<"$out")
if [ $rc -ne 0 ] || [ "$dropped" -ne 4 ] || [ "$ofi" -ne 0 ]; then
    tail -40 <<<"$out"
    echo "FAIL: exit status $rc (expected 0); $dropped of 4 ranks dropped a prefetched transport;" \
         "$ofi ranks used ofi (expected none)"
    exit 1
fi
echo "PASS: 4 ranks on one node (2 host names) used shm only and dropped the prefetched transport"
