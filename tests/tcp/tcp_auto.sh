#!/usr/bin/env bash
# mpi.tcp.auto.np4: WEFT_TRANSPORTS=auto on this machine, 4 ranks on 2 nodes (WEFT_NODE_SPLIT=2)
# and a launcher that says the job spans hosts (-launcher fork -hosts a,b: the hint that starts
# libfabric's prefetch under ofi). Without an RDMA device and FI_PROVIDER, every rank must reach the
# other node by tcp and never load libfabric (tcp_nolib checks its own mappings). Then, when Weft
# has libfabric, FI_PROVIDER=tcp must make auto choose ofi.
# usage: tcp_auto.sh <mpiexec> <tcp_nolib> <ofi built: 1|0>
set -u
mx=$1 prog=$2 ofi=$3
if [ -d /sys/class/infiniband ] && [ -n "$(ls -A /sys/class/infiniband 2>/dev/null)" ]; then
    echo "SKIP: this machine has an RDMA device (/sys/class/infiniband): auto chooses ofi here"
    exit 77
fi
out=$(env -u WEFT_TRANSPORTS -u FI_PROVIDER WEFT_DEBUG=1 WEFT_NODE_SPLIT=2 "$mx" -launcher fork \
      -hosts a,b -n 4 --timeout 90 "$prog" 2>&1)
rc=$?
tcp=$(grep -c "peers by shm+tcp" <<<"$out")
ofi=$(grep -c "debug: ofi:" <<<"$out")
if [ $rc -ne 0 ] || [ "$tcp" -ne 4 ] || [ "$ofi" -ne 0 ]; then
    grep -v "debug: \(coll\|comm\)" <<<"$out" | tail -30
    echo "FAIL: exit status $rc (expected 0); $tcp of 4 ranks used shm+tcp; $ofi ofi debug lines (expected 0)"
    exit 1
fi
echo "auto without an RDMA device: shm+tcp on 4 ranks, libfabric not loaded"
[ "$3" = 1 ] || { echo "PASS (no libfabric in this build: the FI_PROVIDER case not run)"; exit 0; }
out=$(env -u WEFT_TRANSPORTS FI_PROVIDER=tcp WEFT_DEBUG=1 WEFT_NODE_SPLIT=2 "$mx" -n 4 \
      --timeout 90 "$prog" --expect-ofi 2>&1)
rc=$?
n=$(grep -c "peers by shm+ofi" <<<"$out")
if [ $rc -ne 0 ] || [ "$n" -ne 4 ]; then
    grep -v "debug: \(coll\|comm\)" <<<"$out" | tail -30
    echo "FAIL: with FI_PROVIDER=tcp: exit status $rc (expected 0); $n of 4 ranks used shm+ofi"
    exit 1
fi
echo "PASS: auto chose tcp without FI_PROVIDER (libfabric never loaded), ofi with FI_PROVIDER=tcp"
