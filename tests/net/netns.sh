# Fake hosts on one machine, for multi-node tests (bash; source this file). docs/multinode-tests.md
# tells the whole story; in short:
#
#   net_check            0 if this machine can make fake hosts; else 1, and NET_WHY says why (skip)
#   net_up N             hosts h1..hN (host names weft-h1..weft-hN), one bridge between them
#   net_exec H CMD...    runs CMD in host H (h2, 2 or weft-h2), cwd and environment kept
#   net_down             removes everything net_up made; idempotent
#
# A host is a network namespace plus a holder process: PID 1 of its own PID namespace, with its own
# UTS (host name), IPC (System V, POSIX message queues) and mount namespace (a private tmpfs on
# /dev/shm, a generated /etc/hosts). Only the network joins two hosts, and only through a bridge in
# a namespace of its own: addresses 10.213.X.0/24 (X from the owner's pid) exist in these
# namespaces alone, with no route to or from the machine's own network.
#
# Everything is named weft-<pid>-... after the shell that sourced this file (<pid> = $$, the
# owner). It goes away (1) in net_down, which the owner runs from its EXIT trap (and INT/TERM
# traps that exit); (2) if the owner dies without it (SIGKILL, as CTest does on a timeout): a
# detached reaper notices within a second and removes everything, and the holders and rshd, which
# read a pipe the owner holds open, exit at its EOF (the kernel then kills every process of the
# host's PID namespace); (3) failing both (the reaper killed too), the next net_up removes the
# leftovers of owners that are gone (net_cleanup_stale).
#
# The owner's children inherit the pipe's write end ($NET_LIFE_FD); net_exec closes it. A
# background job (`cmd &`) holds it while it runs: `cmd {NET_LIFE_FD}>&- &` does not.
#
# Needs root, ip (iproute2), unshare and nsenter (util-linux 2.36+); rsh and rshd.py need python3
# 3.9+.

NET_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NET_LIB="$NET_LIB_DIR/netns.sh"
NET_PREFIX="weft-$$-"                          # every namespace this shell makes starts with it
NET_DIR="${TMPDIR:-/tmp}/weft-$$-net"           # state: hosts file, host table, pipes, logs
NET_SUBNET="10.213.$(( $$ % 254 + 1 ))"         # hosts are $NET_SUBNET.1 .. $NET_SUBNET.N
NET_N=0
NET_HOLDER=()                                  # NET_HOLDER[i]: pid of host i's holder (PID 1 there)
NET_LIFE_FD=                                   # write end of $NET_DIR/life; closing it ends all
NET_NETNS=                                     # the network namespaces made, as net:[inode]
NET_WHY=
NET_MAX_SECS=${NET_MAX_SECS:-3600}             # the reaper tears the hosts down after this anyway

net__log() { printf 'netns: %s\n' "$*" >&2; }

# net__starttime PID: the process's start time (field 22 of /proc/PID/stat), empty if it is gone.
net__starttime() {
    local s
    s=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
    s=${s##*) }
    set -- $s
    printf '%s' "${20}"
}

# net__owner_alive PID DIR: the shell that made weft-PID-* still runs (the same process, not a
# later one that got its pid: DIR/owner holds the owner's start time when DIR still exists).
net__owner_alive() {
    local now
    [ "$1" = $$ ] && return 0
    now=$(net__starttime "$1")
    [ -n "$now" ] || return 1
    [ -r "$2/owner" ] && [ "$(cat "$2/owner")" != "$now" ] && return 1
    return 0
}

# net__namespaces PREFIX: the names of the network namespaces that start with PREFIX.
net__namespaces() {
    ip netns list 2>/dev/null | awk -v p="$1" 'index($1, p) == 1 { print $1 }'
}

# net__teardown PREFIX DIR: kills every process in the namespaces PREFIX*, deletes them, stops
# rshd and removes DIR. Safe to run twice and on a half-made setup.
net__teardown() {
    local prefix=$1 dir=$2 list ns pids i pid
    list=$(net__namespaces "$prefix")
    for i in $(seq 50); do                     # at most 5 s: SIGKILL cannot be ignored
        pids=$(for ns in $list; do ip netns pids "$ns" 2>/dev/null; done)
        [ -n "$pids" ] || break
        kill -KILL $pids 2>/dev/null
        sleep 0.1
    done
    for ns in $list; do
        ip netns del "$ns" 2>/dev/null || [ ! -e "/run/netns/$ns" ] || net__log "cannot delete namespace $ns"
    done
    for f in rshd reaper; do
        pid=$(cat "$dir/$f.pid" 2>/dev/null) || continue
        if grep -qa "$f" "/proc/$pid/cmdline" 2>/dev/null && [ "$pid" != $$ ]; then
            kill -KILL "$pid" 2>/dev/null
        fi
    done
    case $dir in */weft-*-net) rm -rf "$dir" ;; esac
}

# net_cleanup_stale: removes the namespaces and state directories of owners that are gone
# (a run killed before its trap and its reaper could act). Leaves live owners' things alone.
net_cleanup_stale() {
    local ns pid dir seen=" "
    for ns in $(net__namespaces weft-); do
        [[ $ns =~ ^weft-([0-9]+)- ]] || continue
        pid=${BASH_REMATCH[1]}
        [[ $seen == *" $pid "* ]] && continue
        seen+="$pid "
        dir="${TMPDIR:-/tmp}/weft-$pid-net"
        net__owner_alive "$pid" "$dir" && continue
        net__log "removing leftovers of dead run $pid: $(net__namespaces "weft-$pid-" | tr '\n' ' ')"
        net__teardown "weft-$pid-" "$dir"
    done
    for dir in "${TMPDIR:-/tmp}"/weft-*-net; do
        [ -d "$dir" ] || continue
        pid=${dir##*/weft-}
        pid=${pid%-net}
        [[ $pid =~ ^[0-9]+$ ]] || continue
        net__owner_alive "$pid" "$dir" && continue
        net__teardown "weft-$pid-" "$dir"
    done
}

# net__reap OWNER PREFIX DIR: the reaper's body (a detached process, see net_up). Waits until the
# owner is gone (EOF on the life pipe, its stdin, or OWNER no longer running: the pipe may be held
# open by a child the owner left behind), at most NET_MAX_SECS, then tears everything down.
net__reap() {
    local owner=$1 prefix=$2 dir=$3 born i
    echo $$ >"$dir/reaper.pid"
    born=$(net__starttime "$owner")
    for ((i = 0; i < NET_MAX_SECS; i++)); do
        read -r -t 1 _
        [ $? = 1 ] && break                    # EOF (a timeout is > 128)
        [ "$(net__starttime "$owner")" = "$born" ] || break
    done
    net__teardown "$prefix" "$dir"
}

# net_check: whether fake hosts can be made here. Sets NET_WHY when not.
net_check() {
    local t
    if [ "$(id -u)" != 0 ]; then NET_WHY="network namespaces need root (uid $(id -u))"; return 1; fi
    for t in ip unshare nsenter awk; do
        command -v "$t" >/dev/null || { NET_WHY="'$t' is not installed"; return 1; }
    done
    if ! nsenter --help 2>&1 | grep -q -- '--wd'; then
        NET_WHY="nsenter has no --wd (util-linux older than 2.36)"; return 1
    fi
    if ! t=$(ip netns add "${NET_PREFIX}probe" 2>&1); then
        NET_WHY="network namespaces not permitted: ip netns add: $t"; return 1
    fi
    t=$(ip netns exec "${NET_PREFIX}probe" unshare --uts --ipc --mount --pid --fork --mount-proc \
        --propagation private true 2>&1)
    local rc=$?
    ip netns del "${NET_PREFIX}probe" 2>/dev/null
    if [ $rc != 0 ]; then NET_WHY="namespaces not permitted: unshare: $t"; return 1; fi
    return 0
}

# net__index H: prints i for h<i>, <i> or weft-h<i> when host i exists.
net__index() {
    local i=${1#weft-}
    i=${i#h}
    if [[ $i =~ ^[0-9]+$ ]] && [ "$i" -ge 1 ] && [ "$i" -le "$NET_N" ]; then
        printf '%s' "$i"
        return 0
    fi
    net__log "no host '$1' (hosts: h1..h$NET_N)"
    return 1
}

# net_up N: makes hosts h1..hN. Returns non-zero (and says why) when it could not; then net_down
# has already removed what was made.
net_up() {
    local n=$1 i ns br="${NET_PREFIX}br" u t
    if [ "$NET_N" != 0 ]; then net__log "net_up: hosts are already up"; return 1; fi
    if ! [[ $n =~ ^[0-9]+$ ]] || [ "$n" -lt 1 ] || [ "$n" -gt 32 ]; then
        net__log "net_up: want 1..32 hosts, got '$n'"; return 1
    fi
    net_cleanup_stale
    mkdir -m 700 "$NET_DIR" || { net__log "net_up: cannot make $NET_DIR"; return 1; }
    net__starttime $$ >"$NET_DIR/owner"
    mkfifo "$NET_DIR/life" && exec {NET_LIFE_FD}<>"$NET_DIR/life" || { net_down; return 1; }
    NET_N=$n
    export WEFT_NET_DIR=$NET_DIR

    # The reaper: detached (its own session, parent init), so that what kills this shell and its
    # children leaves it; it removes everything when this shell is gone, unless net_down kills it.
    (setsid bash -c '. "$1"; shift; net__reap "$@"' weft-reaper "$NET_LIB" $$ "$NET_PREFIX" "$NET_DIR" \
        <"$NET_DIR/life" >/dev/null 2>&1 {NET_LIFE_FD}>&- &)

    {
        printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n'
        for i in $(seq "$n"); do printf '%s.%s\tweft-h%s\n' "$NET_SUBNET" "$i" "$i"; done
    } >"$NET_DIR/hosts"

    t=$(ip netns add "$br" 2>&1 && ip -n "$br" link add br0 type bridge 2>&1 &&
        ip -n "$br" link set br0 up 2>&1) || { net__log "net_up: bridge: $t"; net_down; return 1; }
    NET_NETNS="net:[$(stat -L -c %i "/run/netns/$br")]"
    for i in $(seq "$n"); do
        ns="${NET_PREFIX}h$i"
        # Both ends of the veth pair are made inside the namespaces: nothing ever appears in the
        # machine's own network namespace.
        t=$(ip netns add "$ns" 2>&1 &&
            ip link add name eth0 netns "$ns" type veth peer name "h$i" netns "$br" 2>&1 &&
            ip -n "$br" link set "h$i" master br0 up 2>&1 &&
            ip -n "$ns" addr add "$NET_SUBNET.$i/24" dev eth0 2>&1 &&
            ip -n "$ns" link set eth0 up 2>&1 &&
            ip -n "$ns" link set lo up 2>&1) || { net__log "net_up: host h$i: $t"; net_down; return 1; }
        NET_NETNS+=" net:[$(stat -L -c %i "/run/netns/$ns")]"
        # Started from a subshell that exits at once, so that they are not jobs of this shell (a
        # bare `wait` would wait for them). ip execs unshare: u is unshare, the holder its child.
        (ip netns exec "$ns" unshare --uts --ipc --mount --pid --fork --mount-proc --propagation private \
            bash "$NET_LIB_DIR/holder.sh" "weft-h$i" "$NET_DIR/hosts" "$NET_DIR/h$i.ready" \
            <"$NET_DIR/life" >>"$NET_DIR/holders.log" 2>&1 {NET_LIFE_FD}>&- &
         echo $! >"$NET_DIR/h$i.unshare")
        u=$(cat "$NET_DIR/h$i.unshare")
        for t in $(seq 100); do                # at most 10 s
            [ -e "$NET_DIR/h$i.ready" ] && break
            kill -0 "$u" 2>/dev/null || break
            sleep 0.1
        done
        t=$(cat "/proc/$u/task/$u/children" 2>/dev/null)
        [ -n "$t" ] || t=$(pgrep -P "$u")
        NET_HOLDER[i]=${t%% *}
        if [ ! -e "$NET_DIR/h$i.ready" ] || [ -z "${NET_HOLDER[i]}" ]; then
            net__log "net_up: host h$i did not start: $(cat "$NET_DIR/holders.log")"
            net_down
            return 1
        fi
        printf 'h%s weft-h%s %s.%s %s\n' "$i" "$i" "$NET_SUBNET" "$i" "${NET_HOLDER[i]}" >>"$NET_DIR/hosts.tab"
    done

    # rsh and rshd run on the interpreter itself, not on a shim that python3 may be (pyenv).
    WEFT_NET_PYTHON=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) && export WEFT_NET_PYTHON
    if [ -n "${WEFT_NET_PYTHON:-}" ]; then
        ("$WEFT_NET_PYTHON" "$NET_LIB_DIR/rshd.py" "$NET_DIR/rshd.sock" "$NET_DIR/hosts.tab" \
            "$NET_DIR/rshd.pid" <"$NET_DIR/life" >>"$NET_DIR/rshd.log" 2>&1 {NET_LIFE_FD}>&- &)
        for t in $(seq 100); do
            [ -S "$NET_DIR/rshd.sock" ] && break
            sleep 0.1
        done
        [ -S "$NET_DIR/rshd.sock" ] ||
            net__log "net_up: rshd did not start, rsh cannot work: $(cat "$NET_DIR/rshd.log")"
    else
        net__log "net_up: no python3: rshd not started, rsh cannot work"
    fi
    return 0
}

# net_exec H CMD...: runs CMD (a program, not a shell function) in host H: its network, UTS, IPC,
# mount and PID namespaces, in the caller's working directory, with the caller's environment.
net_exec() {
    local i
    i=$(net__index "$1") || return 2
    shift
    nsenter -t "${NET_HOLDER[i]}" --net --uts --ipc --mount --pid --wd="$PWD" -- "$@" {NET_LIFE_FD}>&-
}

# net_down: removes the hosts, the bridge, rshd, the reaper and NET_DIR. Idempotent.
net_down() {
    local pid
    pid=$(cat "$NET_DIR/reaper.pid" 2>/dev/null) && kill -KILL "$pid" 2>/dev/null
    if [ -n "$NET_LIFE_FD" ]; then
        exec {NET_LIFE_FD}>&-
        NET_LIFE_FD=
    fi
    net__teardown "$NET_PREFIX" "$NET_DIR"
    NET_N=0
    NET_HOLDER=()
}

# net_leftovers: prints what net_up made that still exists (nothing, when net_down did its job):
# named namespaces; network namespaces of ours still alive, held by a process (their links, the
# veth pairs and the bridge, live exactly as long); links in the machine's own namespace that name
# ours (there should never be any); processes that name NET_DIR (holders, rshd, reaper); NET_DIR.
net_leftovers() {
    local f ns
    net__namespaces "$NET_PREFIX" | sed 's/^/namespace /'
    # One find and one grep over /proc, not a process per pid: this runs on loaded machines.
    find /proc/[0-9]*/ns/net -maxdepth 0 -printf '%p %l\n' 2>/dev/null | while read -r f ns; do
        [ -n "$ns" ] && [[ " $NET_NETNS " == *" $ns "* ]] &&
            echo "process ${f//[^0-9]/} in our network namespace $ns"
    done
    for f in $(grep -laF "$NET_DIR" /proc/[0-9]*/cmdline 2>/dev/null); do
        echo "process ${f//[^0-9]/}: $(tr '\0' ' ' <"$f" 2>/dev/null | cut -c 1-160)"
    done
    ip -o link show 2>/dev/null | grep -F "$NET_PREFIX" | sed 's/^/link /'
    [ -e "$NET_DIR" ] && echo "directory $NET_DIR"
    return 0
}

# ---- for test scripts (they source tests/launcher/lib.sh first: T_NAME, T_DIR, skip, fail) ----

# net_test_exit: the EXIT trap of net_test_setup. Ends the test's background jobs, runs net_down,
# fails the test if anything net_up made is left, removes T_DIR, keeps the status otherwise.
net_test_exit() {
    local rc=$? left ns fd holds=()
    jobs -p | xargs -r kill -KILL 2>/dev/null
    # Hold our namespaces open across the check: the kernel hands a freed namespace's inode number
    # to the next namespace made, and another test on fake hosts running at the same time would
    # then show up as "a process in our network namespace". A real leftover still does.
    for ns in $(net__namespaces "$NET_PREFIX"); do
        exec {fd}<"/run/netns/$ns" && holds+=("$fd")
    done 2>/dev/null
    net_down
    left=$(net_leftovers)
    for fd in "${holds[@]}"; do
        exec {fd}<&-
    done
    if [ -n "$left" ]; then
        printf 'FAIL (%s): left behind after net_down:\n%s\n' "$T_NAME" "$left" >&2
        rc=1
    fi
    rm -rf "$T_DIR"
    exit $rc
}

# net_test_setup: what every test on fake hosts starts with. Leaves nothing behind however the
# script ends (a failed check, SIGTERM, SIGINT, SIGHUP: their traps exit, so the EXIT trap runs at
# once; SIGKILL is the reaper's and the next run's business), and skips (exit 77, saying why) on
# a machine that cannot make fake hosts or run rsh.
net_test_setup() {
    local sig
    trap net_test_exit EXIT
    for sig in TERM:143 INT:130 HUP:129; do
        trap "echo '$T_NAME: SIG${sig%:*}: cleaning up' >&2; exit ${sig#*:}" "${sig%:*}"
    done
    net_check || skip "$NET_WHY"
    python3 -c 'import os, socket, sys; sys.exit(not (hasattr(socket, "send_fds") and hasattr(os, "pidfd_open")))' \
        2>/dev/null || skip "rsh and rshd.py need python3 3.9 or later"
}

# hrun HOST SECS CMD...: lib.sh's run, inside HOST, under a SECS guard, with T_STDIN (default
# /dev/null) as its input. In the background, so that SIGTERM reaches the trap at once instead of
# after the command. Sets T_CMD, T_RC, T_SECS, T_OUT, T_ERR.
hrun() {
    local h=$1 secs=$2 t0 t1
    shift 2
    T_CMD="[$h] $*"
    t0=$(date +%s%N)
    net_exec "$h" timeout -s KILL "$secs" "$@" <"${T_STDIN:-/dev/null}" >"$T_DIR/out" 2>"$T_DIR/err" {NET_LIFE_FD}>&- &
    wait $!
    T_RC=$?
    t1=$(date +%s%N)
    T_SECS=$(( (t1 - t0) / 1000000000 ))
    T_OUT=$(cat "$T_DIR/out")
    T_ERR=$(cat "$T_DIR/err")
}

# leftovers: every process on every host but its holder (PID 1), and every /dev/shm file.
leftovers() {
    local i
    for i in $(seq "$NET_N"); do
        net_exec "h$i" sh -c 'ps -e -o pid=,ppid=,args= | awk -v me=$$ "\$1 != 1 && \$1 != me && \$2 != me { print }"
            ls -A /dev/shm | sed "s|^|/dev/shm/|"' </dev/null {NET_LIFE_FD}>&- | sed "s/^/weft-h$i: /"
    done
}

# expect_clean WHAT: within 5 s, nothing is left on any host (lib.sh's show_run on failure).
expect_clean() {
    local i left
    for i in $(seq 50); do
        left=$(leftovers)
        [ -z "$left" ] && return 0
        sleep 0.1
    done
    printf 'FAIL (%s): %s: left on the hosts:\n%s\n' "$T_NAME" "$1" "$left" >&2
    show_run
    exit 1
}
