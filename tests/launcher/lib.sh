# Helpers of the launcher test drivers (bash). Source this file. Every check that fails prints
# what it expected and what it got, then exits 1; `skip` exits 77 (CTest SKIP_RETURN_CODE).
set -u
ulimit -c 0                      # ranks killed by SIGSEGV on purpose leave no core files
T_NAME=${0##*/}
T_DIR=$(mktemp -d "${TMPDIR:-/tmp}/weft-launcher.XXXXXX")
trap 'rm -rf "$T_DIR"' EXIT
unset PMI_FD PMI_PORT PMI_ID PMI_RANK PMI_SIZE WEFT_TIMEOUT MPIEXEC_TIMEOUT WEFT_BIND WEFT_BOUND_CPUS

fail() {
    printf 'FAIL (%s): %s\n' "$T_NAME" "$*" >&2
    exit 1
}

skip() {
    printf 'SKIP (%s): %s\n' "$T_NAME" "$*"
    exit 77
}

# Shows the last run's output, after a failed check.
show_run() {
    printf -- '--- command: %s\n--- exit status: %s\n--- stdout:\n%s\n--- stderr:\n%s\n---\n' \
        "$T_CMD" "$T_RC" "$(head -c 4000 "$T_DIR/out")" "$(head -c 4000 "$T_DIR/err")" >&2
}

# run CMD...: runs CMD with stdin from $T_STDIN (a file name; /dev/null by default), under a 90 s
# guard (SIGKILL: exit status 137). Sets T_RC, T_OUT, T_ERR (trailing newlines stripped), T_SECS;
# the exact bytes are in $T_DIR/out and $T_DIR/err.
run() {
    T_CMD="$*"
    local t0 t1
    t0=$(date +%s%N)
    timeout -s KILL 90 "$@" <"${T_STDIN:-/dev/null}" >"$T_DIR/out" 2>"$T_DIR/err"
    T_RC=$?
    t1=$(date +%s%N)
    T_SECS=$(( (t1 - t0) / 1000000000 ))
    T_OUT=$(cat "$T_DIR/out")
    T_ERR=$(cat "$T_DIR/err")
}

expect_rc() {   # expect_rc WANT WHAT
    if [ "$T_RC" != "$1" ]; then
        printf 'FAIL (%s): %s: exit status\n  expected: %s\n  got:      %s\n' "$T_NAME" "$2" "$1" "$T_RC" >&2
        show_run
        exit 1
    fi
}

expect_eq() {   # expect_eq WHAT WANT GOT
    if [ "$2" != "$3" ]; then
        printf 'FAIL (%s): %s\n--- expected:\n%s\n--- got:\n%s\n' "$T_NAME" "$1" "$2" "$3" >&2
        show_run
        exit 1
    fi
}

expect_match() {   # expect_match WHAT ERE TEXT: TEXT as a whole matches ERE
    if ! [[ $3 =~ $2 ]]; then
        printf 'FAIL (%s): %s\n  expected to match: %s\n  got: %s\n' "$T_NAME" "$1" "$2" "$3" >&2
        show_run
        exit 1
    fi
}

# expect_mpiexec_msg WHAT ERE: stderr holds exactly one line from mpiexec, and it matches ERE.
expect_mpiexec_msg() {
    local lines
    lines=$(grep '^mpiexec: ' "$T_DIR/err")
    if [ "$(printf '%s' "$lines" | grep -c '^mpiexec: ')" != 1 ] || ! [[ $lines =~ $2 ]]; then
        printf 'FAIL (%s): %s: mpiexec message\n  expected one line matching: %s\n  got: %s\n' \
            "$T_NAME" "$1" "$2" "${lines:-(none)}" >&2
        show_run
        exit 1
    fi
}

expect_less() {   # expect_less WHAT LIMIT VALUE
    if [ "$3" -ge "$2" ]; then
        printf 'FAIL (%s): %s\n  expected: less than %s\n  got:      %s\n' "$T_NAME" "$1" "$2" "$3" >&2
        show_run
        exit 1
    fi
}

sorted() { printf '%s\n' "$1" | LC_ALL=C sort; }

# True while pid runs (a zombie counts as gone).
pid_alive() {
    [ -r "/proc/$1/status" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null
}

# expect_gone WHAT DIR: every pid in DIR/* (PROBE_PIDDIR files) is gone within 5 s.
expect_gone() {
    local f pid i
    for f in "$2"/rank* "$2"/child*; do
        [ -e "$f" ] || continue
        pid=$(cat "$f")
        for i in $(seq 50); do
            pid_alive "$pid" || continue 2
            sleep 0.1
        done
        printf 'FAIL (%s): %s: process %s (%s) survived the job\n' "$T_NAME" "$1" "$pid" "${f##*/}" >&2
        ps -o pid,ppid,pgid,stat,args -p "$pid" >&2
        show_run
        exit 1
    done
}

# wait_files DIR N: waits up to 20 s until DIR holds N rank files (the ranks are up).
wait_files() {
    local i
    for i in $(seq 200); do
        [ "$(ls "$1" 2>/dev/null | grep -c '^rank')" -ge "$2" ] && return 0
        sleep 0.1
    done
    fail "the ranks did not start: $(ls "$1")"
}

# expect_no_shm WHAT PREFIX: no /dev/shm entry starts with PREFIX.
expect_no_shm() {
    local left
    left=$(cd /dev/shm && ls -d "$2"* 2>/dev/null)
    if [ -n "$left" ]; then
        printf 'FAIL (%s): %s: files left in /dev/shm\n  expected: none named %s*\n  got: %s\n' \
            "$T_NAME" "$1" "$2" "$left" >&2
        exit 1
    fi
}
