#!/bin/bash
# tcp_foreign.sh MPIEXEC PROGRAM INTRUDER COUNT: runs tcp_foreign on 2 ranks over the tcp transport
# with the addresses in files; passes when the job exits 0 and rank 1 logs at finalize that it
# dropped at least COUNT connections.
mx=$1 prog=$2 intruder=$3 count=$4
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
out=$(WEFT_TRANSPORTS=self,tcp WEFT_DEBUG=1 WEFT_TCP_ADDR_FILE="$dir/addr" \
      "$mx" -n 2 --timeout 120 "$prog" "$intruder" "$count" 2>&1)
rc=$?
if [ $rc -ne 0 ]; then
    echo "$out" | grep -v 'debug:' | tail -20
    echo "tcp_foreign.sh: exit status expected 0 got $rc"
    exit 1
fi
n=$(echo "$out" | sed -n 's/^\[weft:1\] debug: tcp: \([0-9]*\) foreign or malformed connections dropped.*/\1/p')
if [ -z "$n" ] || [ "$n" -lt "$count" ]; then
    echo "$out" | grep -E 'tcp|ok' | tail -20
    echo "tcp_foreign.sh: rank 1 expected to drop at least $count connections, dropped ${n:-?}"
    exit 1
fi
echo "tcp_foreign.sh: rank 1 dropped $n foreign connections; the job completed"
