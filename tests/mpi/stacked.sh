#!/usr/bin/env bash
# Two ranks stacked on one CPU of a machine that has more (mpi.p2p_order.stacked.np2): mpiexec and so
# both ranks confined to the first CPU this test may use, no binding, WEFT_WAIT_YIELD=auto, so that the
# waits do not yield by default and take the wc_wait_together path (core/wc_wait.c). Exit 77 (skipped)
# where that cannot be arranged.
#   stacked.sh MPIEXEC PROGRAM [ARGS...]
set -u
mx=$1
shift
command -v taskset >/dev/null || { echo "skip: no taskset"; exit 77; }
online=$(getconf _NPROCESSORS_ONLN)
[ "$online" -ge 2 ] || { echo "skip: one CPU online, so two ranks oversubscribe it and waits yield anyway"; exit 77; }
first=$(taskset -pc $$ | sed 's/.*: *//; s/[-,].*//')
[ -n "$first" ] || { echo "skip: cannot read this process's CPUs"; exit 77; }
exec env WEFT_WAIT_YIELD=auto WEFT_BIND=none taskset -c "$first" "$mx" -n 2 --bind-to none --timeout 120 "$@"
