#!/bin/bash
# finalize_pending.sh MPIEXEC PROGRAM CASE END [RUNS]
# Runs finalize_pending (see finalize_pending.c) RUNS times (default 1) on 2 ranks: the rank with
# the pending operation runs the idle and timer progress threads (a 100 us timer), the other none.
# Each run passes when
#   - no rank crashed (no "killed by signal" from mpiexec) and the job did not time out;
#   - the exit status is what our mpiexec gives: 0 after MPI_Finalize; 1 for a rank that exits 0
#     without MPI_Finalize, with mpiexec's message saying so (as tests/launcher/test_nofinalize.sh);
#   - stderr has the library's warning naming the pending operation (none for `freed`, whose
#     freed requests complete during MPI_Finalize).
mx=$1 prog=$2 kind=$3 end=$4 runs=${5:-1}
ulimit -c 0

culprit=0
case $kind in
    rndv)  want='pending send \(rank 0 → 1, tag 5, 8388608 bytes\)' ;;
    late)  want='pending send \(rank 0 → 1, tag 5, 8388608 bytes\)' ;;
    eager) want='[0-9]+ pending sends \(rank 0 → 1, tag 6, 16384 bytes;' ;;
    recv)  want='pending receive \(rank 1 ← 0, tag 7, 16384 bytes\)'; culprit=1 ;;
    coll)  want='pending nonblocking collective \(on MPI_COMM_WORLD\)' ;;
    freed) want= ;;
    *) echo "finalize_pending.sh: unknown case $kind"; exit 2 ;;
esac
case $end in
    finalize) when='MPI_Finalize'; rc_want=0 ;;
    exit|return) when='exit without MPI_Finalize'; rc_want=1 ;;
    *) echo "finalize_pending.sh: unknown end $end"; exit 2 ;;
esac
[ -n "$want" ] && want="weft:$culprit\] warning: $when with .*$want"

on=(-env WEFT_PROGRESS_IDLE 1 -env WEFT_PROGRESS_TIMER 1 -env WEFT_PROGRESS_TIMER_US 100)
# FINALIZE_PENDING_BACKGROUND=1: the culprit has no explicit polling, its threads alone progress
[ "${FINALIZE_PENDING_BACKGROUND:-0}" = 1 ] && on+=(-env WEFT_PROGRESS_EXPLICIT 0)
off=(-env WEFT_PROGRESS_IDLE 0 -env WEFT_PROGRESS_TIMER 0)
if [ "$culprit" = 0 ]; then
    first=("${on[@]}") second=("${off[@]}")
else
    first=("${off[@]}") second=("${on[@]}")
fi

nofinalize="^mpiexec: rank $culprit \(pid [0-9]+\) exited with code 0 without calling MPI_Finalize"

for ((i = 1; i <= runs; i++)); do
    start=$SECONDS
    out=$("$mx" --timeout 30 -n 1 "${first[@]}" "$prog" "$kind" "$end" \
                             : -n 1 "${second[@]}" "$prog" "$kind" "$end" 2>&1)
    rc=$?
    elapsed=$((SECONDS - start))
    bad=
    if grep -q 'killed by signal' <<<"$out"; then
        bad="a rank crashed"
    elif [ "$rc" != "$rc_want" ]; then
        bad="exit status expected $rc_want got $rc"
    elif [ -n "$want" ] && ! grep -Eq -- "$want" <<<"$out"; then
        bad="output expected to match '$want'"
    elif [ -z "$want" ] && grep -q 'warning' <<<"$out"; then
        bad="output expected to have no warning"
    elif [ "$rc_want" = 1 ] && ! grep -Eq "$nofinalize" <<<"$out"; then
        bad="mpiexec expected to report rank $culprit exiting without MPI_Finalize"
    fi
    if [ -n "$bad" ]; then
        printf '%s\n' "$out"
        echo "finalize_pending.sh: run $i of $runs ($kind, $end, ${elapsed}s): $bad"
        exit 1
    fi
done
printf '%s\n' "$out"
echo "finalize_pending.sh: $runs run(s) of $kind/$end passed"
