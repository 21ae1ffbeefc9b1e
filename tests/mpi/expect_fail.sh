#!/bin/bash
# expect_fail.sh MAX_SECONDS PATTERN COMMAND...
# Runs COMMAND (an mpiexec line) and passes when it exits non-zero within MAX_SECONDS and its output
# (stdout and stderr) contains PATTERN (any output if PATTERN is empty). A job that hangs until the
# launcher's timeout kills it fails, even though that exit code is non-zero too.
max=$1 pattern=$2
shift 2
start=$SECONDS
out=$("$@" 2>&1)
rc=$?
elapsed=$((SECONDS - start))
printf '%s\n' "$out"
if [ "$rc" -eq 0 ]; then
    echo "expect_fail: exit code expected non-zero got 0"
    exit 1
fi
if [ "$elapsed" -gt "$max" ]; then
    echo "expect_fail: job end expected within ${max}s got ${elapsed}s (exit $rc: killed by a timeout?)"
    exit 1
fi
if [ -n "$pattern" ] && ! grep -qF -- "$pattern" <<<"$out"; then
    echo "expect_fail: output expected to contain '$pattern'"
    exit 1
fi
echo "expect_fail: exit code $rc in ${elapsed}s${pattern:+, output names '$pattern'}, as expected"
