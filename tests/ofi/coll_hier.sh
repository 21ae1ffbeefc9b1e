#!/bin/bash
# coll_hier.sh MPIEXEC NP SPLIT EXPECT PROGRAM ARGS...: runs PROGRAM on NP ranks with
# WEFT_NODE_SPLIT=SPLIT (ranks r / SPLIT form a node) and WEFT_DEBUG=1. Passes when the job exits 0
# and, EXPECT=hier, every rank's communicators together ran each of barrier, bcast, reduce,
# allreduce and allgather hierarchically at least once (the counts logged when a communicator's
# node layout is freed); EXPECT=flat, no communicator went hierarchical.
mx=$1 np=$2 split=$3 expect=$4
shift 4
out=$(WEFT_TRANSPORTS=shm,ofi WEFT_NODE_SPLIT=$split WEFT_DEBUG=1 "$mx" -n "$np" --timeout 240 "$@" 2>&1)
rc=$?
if [ $rc -ne 0 ]; then
    echo "$out" | grep -v 'debug:' | tail -20
    echo "coll_hier.sh: exit status expected 0 got $rc"
    exit 1
fi
if ! echo "$out" | grep -q ' ranks ok$'; then
    echo "$out" | grep -v 'debug:' | tail -20
    echo "coll_hier.sh: the program did not report success"
    exit 1
fi
lines=$(echo "$out" | grep 'debug: .*hierarchical collectives over')
if [ "$expect" = flat ]; then
    if [ -n "$lines" ]; then
        echo "$lines" | head -5
        echo "coll_hier.sh: expected no hierarchical collectives (NP $np, WEFT_NODE_SPLIT=$split)"
        exit 1
    fi
    echo "coll_hier.sh: flat collectives only, as expected; the job completed"
    exit 0
fi
for r in $(seq 0 $((np - 1))); do
    for kind in barrier bcast reduce allreduce allgather; do
        total=$(echo "$lines" | grep "^\[weft:$r\] " |
                sed -n "s/.* $kind \([0-9]*\).*/\1/p" | awk '{ s += $1 } END { print s + 0 }')
        if [ "$total" -eq 0 ]; then
            echo "$lines" | grep "^\[weft:$r\] "
            echo "coll_hier.sh: rank $r ran no hierarchical $kind (NP $np, WEFT_NODE_SPLIT=$split)"
            exit 1
        fi
    done
done
echo "$lines" | grep '^\[weft:0\] '
echo "coll_hier.sh: every rank ran each collective hierarchically; the job completed"
