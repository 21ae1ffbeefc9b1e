#!/bin/bash
# stdout/stderr of every rank arrive whole, line by line; stdin reaches rank 0 only; --tag-output.
# usage: test_stdio.sh MPIEXEC PROBE
. "$(dirname "$0")/lib.sh"
MX=$1 P=$2

printf 'alpha\nbeta gamma\n' >"$T_DIR/in"
T_STDIN=$T_DIR/in run "$MX" -n 3 "$P" stdio 3
expect_rc 0 "stdio job"
want=""
for r in 0 1 2; do
    for i in 0 1 2; do want+="rank $r line $i"$'\n'; done
    [ $r = 0 ] && want+="rank 0 stdin: alpha"$'\n'"rank 0 stdin: beta gamma"$'\n'
    want+="rank $r stdin: EOF"$'\n'
done
want=${want%$'\n'}
expect_eq "stdout of 3 ranks (sorted)" "$(sorted "$want")" "$(sorted "$T_OUT")"
for r in 0 1 2; do   # each rank's lines keep their order
    expect_eq "order of rank $r's lines" "$(printf '%s' "$want" | grep "^rank $r ")" "$(grep "^rank $r " "$T_DIR/out")"
done
expect_eq "stderr of 3 ranks (sorted)" "$(printf 'rank 0 to stderr\nrank 1 to stderr\nrank 2 to stderr')" "$(sorted "$T_ERR")"

T_STDIN=$T_DIR/in run "$MX" --tag-output -n 2 "$P" stdio 1
expect_rc 0 "--tag-output job"
want=$(printf '[0] rank 0 line 0\n[0] rank 0 stdin: alpha\n[0] rank 0 stdin: beta gamma\n[0] rank 0 stdin: EOF\n[1] rank 1 line 0\n[1] rank 1 stdin: EOF')
expect_eq "stdout with --tag-output (sorted)" "$(sorted "$want")" "$(sorted "$T_OUT")"
expect_eq "stderr with --tag-output (sorted)" "$(printf '[0] rank 0 to stderr\n[1] rank 1 to stderr')" "$(sorted "$T_ERR")"

# Fully buffered writers flush in pieces that cut lines apart; every line must still come out whole.
run "$MX" -n 3 "$P" flood 3000 200
expect_rc 0 "flood job"
bad=$(awk -F: '{
    r = $1; i = $2; s = $3
    if (NF != 3 || length(s) != 200 || i != next_i[r]++) { print NR ": " substr($0, 1, 60); exit }
    for (j = 0; j < 200; j += 37)
        if (substr(s, j + 1, 1) != sprintf("%c", 97 + (r + j) % 26)) { print NR ": " substr($0, 1, 60); exit }
    n[r]++
} END { if (n[0] != 3000 || n[1] != 3000 || n[2] != 3000) print "line counts " n[0] " " n[1] " " n[2] }' "$T_DIR/out")
expect_eq "flood: first broken or missing line" "" "$bad"

# A last line without a newline is passed on as it is; --tag-output ends it.
run "$MX" -n 1 sh -c 'printf "no newline"'
expect_rc 0 "partial last line"
printf 'no newline' >"$T_DIR/want"
cmp -s "$T_DIR/want" "$T_DIR/out" || fail "partial last line: expected the bytes 'no newline', got: $(od -An -c "$T_DIR/out")"
run "$MX" --tag-output -n 1 sh -c 'printf "no newline"'
printf '[0] no newline\n' >"$T_DIR/want"
cmp -s "$T_DIR/want" "$T_DIR/out" || fail "partial last line with --tag-output: expected '[0] no newline\\n', got: $(od -An -c "$T_DIR/out")"

# A megabyte of stdin reaches rank 0 whole.
head -c 1048576 /dev/zero | tr '\0' 'x' >"$T_DIR/big"
T_STDIN=$T_DIR/big run "$MX" -n 2 sh -c 'if [ "$PMI_RANK" = 0 ]; then wc -c; else cat; fi'
expect_rc 0 "1 MiB of stdin"
expect_eq "bytes rank 0 read from stdin" "1048576" "$(echo $T_OUT)"

# Nobody reads mpiexec's stdout any more: the job still ends.
timeout -s KILL 60 "$MX" -n 2 "$P" flood 20000 100 2>"$T_DIR/err" | head -n 1 >"$T_DIR/out"
rcs=("${PIPESTATUS[@]}")
[ "${rcs[0]}" = 0 ] || fail "mpiexec with its stdout closed early: exit status ${rcs[0]}, stderr: $(cat "$T_DIR/err")"
expect_match "first line read through head" '^[0-9]:0:[a-z]{100}$' "$(cat "$T_DIR/out")"
echo "PASS: $T_NAME"
