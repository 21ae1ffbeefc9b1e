#!/bin/bash
# ofi_foreign.sh MPIEXEC PROGRAM INTRUDER COUNT: runs ofi_foreign on 2 ranks over the ofi transport
# with the endpoint names in files; passes when the job exits 0 and rank 1 logs at finalize that it
# dropped at least COUNT packets.
mx=$1 prog=$2 intruder=$3 count=$4
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
out=$(WEFT_TRANSPORTS=self,ofi WEFT_DEBUG=1 WEFT_OFI_ADDR_FILE="$dir/addr" \
      "$mx" -n 2 --timeout 120 "$prog" "$intruder" "$count" 2>&1)
rc=$?
if [ $rc -ne 0 ]; then
    echo "$out" | grep -v 'debug:' | tail -20
    echo "ofi_foreign.sh: exit status expected 0 got $rc"
    exit 1
fi
n=$(echo "$out" | sed -n 's/^\[weft:1\] debug: ofi: \([0-9]*\) foreign or malformed packets dropped.*/\1/p')
if [ -z "$n" ] || [ "$n" -lt "$count" ]; then
    echo "$out" | grep -E 'ofi|ok' | tail -20
    echo "ofi_foreign.sh: rank 1 expected to drop at least $count packets, dropped ${n:-?}"
    exit 1
fi
echo "ofi_foreign.sh: rank 1 dropped $n foreign packets; the job completed"
