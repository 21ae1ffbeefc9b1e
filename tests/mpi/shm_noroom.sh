#!/bin/bash
# shm_noroom.sh MPIEXEC PROGRAM: a job whose shared-memory segment cannot fit in /dev/shm must fail
# at MPI_Init, quickly, with advice naming what to change. Shared queues of 1 GiB per rank and one
# more rank than /dev/shm has free GiB ask for more than there is; rank 0 sees it before creating
# anything (nothing is allocated).
here=$(cd "$(dirname "$0")" && pwd)
mpiexec=$1 program=$2
free_kib=$(df -k --output=avail /dev/shm 2>/dev/null | tail -1)
if ! [ "$free_kib" -ge 0 ] 2>/dev/null; then
    echo "SKIP: cannot read the free space of /dev/shm"
    exit 77
fi
np=$((free_kib / 1048576 + 2))
if [ "$np" -gt 96 ]; then
    echo "SKIP: /dev/shm has $((free_kib / 1048576)) GiB free: too many ranks to exceed it"
    exit 77
fi
export WEFT_SHM_FAST_PATHS=0 WEFT_SHM_QUEUE_SIZE=1g
out=$(bash "$here/expect_fail.sh" 60 "WEFT_SHM_FAST_PATHS / WEFT_SHM_RING_SIZE / WEFT_SHM_QUEUE_SIZE" \
    "$mpiexec" -n "$np" --timeout 60 "$program")
rc=$?
printf '%s\n' "$out"
[ "$rc" -eq 0 ] || exit 1
for want in "needs" "MiB of /dev/shm" "free" "enlarge /dev/shm"; do
    if ! grep -qF -- "$want" <<<"$out"; then
        echo "shm_noroom: the message expected to contain '$want'"
        exit 1
    fi
done
