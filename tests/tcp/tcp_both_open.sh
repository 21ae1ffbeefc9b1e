#!/bin/bash
# tcp_both_open.sh MPIEXEC PROGRAM NP COUNT: runs tcp_both_open over the tcp transport with every
# rank starting its sends at the same wall-clock second, up to 3 times until a run shows a pair
# whose ranks both opened a connection (WEFT_DEBUG's "both ranks opened" line: the higher rank
# moved to the lower's). Passes when every run exits 0 (the program checks order and bytes) and one
# of them moved a pair.
mx=$1 prog=$2 np=$3 count=$4
for run in 1 2 3; do
    start=$(( $(date +%s) + 5 ))   # past MPI_Init of every rank even on a loaded machine
    out=$(WEFT_TRANSPORTS=self,tcp WEFT_DEBUG=1 "$mx" -n "$np" --timeout 100 "$prog" "$start" "$count" 2>&1)
    rc=$?
    if [ $rc -ne 0 ]; then
        echo "$out" | grep -v 'debug:' | tail -20
        echo "tcp_both_open.sh: run $run: exit status expected 0 got $rc"
        exit 1
    fi
    moved=$(echo "$out" | grep -c "both ranks opened a connection")
    held=$(echo "$out" | grep -c "holding it until its own ends")
    echo "$out" | grep -v 'debug:'
    echo "tcp_both_open.sh: run $run: $moved pair(s) moved to one connection, $held read SWITCHED before END"
    [ "$moved" -gt 0 ] && exit 0
done
echo "tcp_both_open.sh: expected at least one pair whose ranks both opened a connection in 3 runs, saw none"
exit 1
