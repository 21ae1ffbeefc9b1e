#!/usr/bin/env bash
# Weft against MPICH and Open MPI between two fake hosts (issue 11 §5; bench/README.md "Between two hosts").
#
#   bench/run_net.sh <builddir>          (as root: the fake hosts are network namespaces)
#
# Makes two fake hosts with tests/net/netns.sh (weft-h1, weft-h2: own network, host name, /dev/shm, IPC and
# PIDs; removed on exit, whatever the exit), builds the benchmarks for the three implementations
# (bench/lib.sh; MPICH's with bench/ucx_finalize_fix.c), and in each round runs every job once per
# implementation, the order rotating from round to round. Every launcher runs in weft-h1 and starts the
# ranks on weft-h2 through tests/net/rsh; the only way between the hosts is TCP over their eth0:
#   weft     build/tools/mpiexec -launcher rsh (across hosts: WEFT_TRANSPORTS=auto, Weft's tcp transport on a
#            machine without an RDMA device; BENCH_NET_WEFT_ENV=WEFT_TRANSPORTS=shm,ofi for libfabric)
#   mpich    mpiexec.mpich -launcher ssh (Hydra), ch4:ucx with UCX_TLS=tcp,self,sm UCX_NET_DEVICES=eth0
#   openmpi  mpiexec.openmpi with plm_rsh_agent=rsh, pml ob1, btl self,tcp,vader on eth0 (oob on eth0 too)
# Every run is bounded by `timeout` (and the launcher's own timeout); one that fails or hangs is recorded
# and the run goes on. Writes bench/results/net-<timestamp>/{raw/,runs.csv,meta.txt,summary.md,summary.csv}.
# Exit status: 0 if every peer run succeeded and the summary was written; 77 if fake hosts cannot be made.
#
# Jobs (BENCH_NET_JOBS, in this order), 1 rank per host unless said:
#   pingpong  pingpong     latency 8 B, 1 KiB; bandwidth 64 KiB, 1 MiB, 4 MiB (size / one-way time)
#   rate      sqmr         message rate, 1 and 4 threads per rank (0-byte messages, MPI_COMM_WORLD)
#   mtlat     mt_latency   1-byte latency, 1 and 8 threads per rank, N-to-N pairs
#   overlap   mt_overlap   4 MiB transfer overlapped with computation: both, sender only, receiver only
#   coll      coll         Allreduce and Bcast, 8 B and 1 MiB, 2 hosts x 2 ranks
#   startup   startup      MPI_Init + MPI_Finalize at 2 hosts x 8 ranks: the wall time of the launcher command,
#                          from its start in weft-h1 to its exit (measured here, in ms)
#
# Settings (environment). The defaults should take 5-7 minutes on 2 idle cores (estimated from the budgets
# plus about 1.5 s per launch: some 70 s per round; not yet timed on an idle machine):
#   BENCH_ROUNDS=5                 rounds
#   BENCH_NET_JOBS="pingpong rate mtlat overlap coll startup"
#   BENCH_NET_PP_BUDGET=0.5        pingpong: seconds per size (5 sizes)
#   BENCH_NET_RATE_BUDGET=1.0      sqmr: seconds per thread count, in BENCH_NET_RATE_REPS repetitions (5)
#   BENCH_NET_LAT_BUDGET=0.5       mt_latency: seconds per thread count
#   BENCH_NET_OV_BUDGET=1.0        mt_overlap: seconds per case (3 cases, plus 20% calibration)
#   BENCH_NET_COLL_BUDGET=0.5      coll: seconds per (collective, size)
#   BENCH_BIND=core                core: launchers do not bind; each program pins its process to CPU
#                                  rank mod C (-p). none: nobody binds.
#   BENCH_IMPLS="weft mpich openmpi"
#   BENCH_NET_TIMEOUT=120          seconds allowed for one run
#   BENCH_QUICK=1                  smoke configuration (under a minute): 1 round, budgets of 0.05-0.2 s
#   BENCH_OUT=dir                  where to write instead of bench/results/net-<timestamp>
#   BENCH_NET_WEFT_ENV="V=x ..."   extra environment for Weft's jobs only (recorded in meta.txt), e.g.
#                                  FI_PROVIDER=net: libfabric 1.17's native tcp RDM endpoint instead of the
#                                  default choice tcp;ofi_rxm (docs/ofi.md, "Provider: net or tcp;ofi_rxm")
set -u

if [ $# -ne 1 ]; then
    echo "usage: $0 <builddir>" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" 2>/dev/null && pwd || echo "$1")
top=$(cd "$here/.." && pwd)

if [ "${BENCH_QUICK:-0}" = 1 ]; then
    : "${BENCH_ROUNDS:=1}" "${BENCH_NET_PP_BUDGET:=0.05}" "${BENCH_NET_RATE_BUDGET:=0.2}"
    : "${BENCH_NET_RATE_REPS:=3}" "${BENCH_NET_LAT_BUDGET:=0.1}" "${BENCH_NET_OV_BUDGET:=0.2}"
    : "${BENCH_NET_COLL_BUDGET:=0.05}"
fi
rounds=${BENCH_ROUNDS:-5}
jobs=${BENCH_NET_JOBS:-pingpong rate mtlat overlap coll startup}
pp_budget=${BENCH_NET_PP_BUDGET:-0.5}
rate_budget=${BENCH_NET_RATE_BUDGET:-1.0}
rate_reps=${BENCH_NET_RATE_REPS:-5}
lat_budget=${BENCH_NET_LAT_BUDGET:-0.5}
ov_budget=${BENCH_NET_OV_BUDGET:-1.0}
coll_budget=${BENCH_NET_COLL_BUDGET:-0.5}
bind=${BENCH_BIND:-core}
impls=${BENCH_IMPLS:-weft mpich openmpi}
limit=${BENCH_NET_TIMEOUT:-120}
case $bind in
    none) pin_arg= ;;
    core) pin_arg=-p ;;
    *) echo "$0: BENCH_BIND must be none or core, not '$bind'" >&2; exit 2 ;;
esac
for j in $jobs; do
    case $j in
        pingpong|rate|mtlat|overlap|coll|startup) ;;
        *) echo "$0: unknown job '$j' in BENCH_NET_JOBS" >&2; exit 2 ;;
    esac
done
ncpu=$(nproc)
hosts=weft-h1,weft-h2
rsh=$top/tests/net/rsh

# --- fake hosts: checked before anything is built or written -------------------------------------------------
. "$top/tests/net/netns.sh"
if ! net_check; then
    echo "$0: cannot make fake hosts: $NET_WHY (run as root on a machine that permits network namespaces)" >&2
    exit 77
fi

. "$here/lib.sh"
bench_outdir net-
# lib.sh's trap removes the scratch directory; the hosts must go too, on any exit. INT, TERM and HUP exit,
# so that the EXIT trap runs at once (netns.sh, "Cleanup guarantees").
on_exit() {
    local rc=$?
    net_down
    rm -rf "$tmp"
    exit $rc
}
trap on_exit EXIT
for sig in TERM:143 INT:130 HUP:129; do
    trap "echo '$0: SIG${sig%:*}: cleaning up' >&2; exit ${sig#*:}" "${sig%:*}"
done

# --- build ---------------------------------------------------------------------------------------------------
declare -A bench_extra_src=([mpich]="$here/ucx_finalize_fix.c")
bench_build pingpong sqmr mt_latency mt_overlap coll startup

export NET_MAX_SECS=$(( rounds * 5 * 3 * (limit + 10) + 600 ))   # the reaper's bound on the hosts' life
if ! net_up 2 2>>"$out/run.log"; then
    log "net_up 2 failed (see run.log)"
    exit 1
fi
log "fake hosts up: weft-h1 = $NET_SUBNET.1, weft-h2 = $NET_SUBNET.2"

# --- launching -----------------------------------------------------------------------------------------------
# launch <impl> <ppn> <timeout> <program|-cmd> args...: the job across weft-h1 and weft-h2, <ppn> ranks on
# each, its launcher in weft-h1. With program "-cmd" the arguments are a command run as the ranks (no MPI).
launch() {
    local impl=$1 ppn=$2 t=$3 prog=$4
    shift 4
    local n=$((2 * ppn)) exe
    if [ "$prog" = -cmd ]; then
        exe=$1
        shift
    else
        exe=${bindir[$impl]}/bench_$prog
    fi
    case $impl in
    weft)
        # shellcheck disable=SC2086  # BENCH_NET_WEFT_ENV: words VAR=value
        net_exec h1 env ${BENCH_NET_WEFT_ENV:-} timeout -k 5 "$t" "$build/tools/mpiexec" -launcher rsh -launcher-exec "$rsh" \
            --bind-to none --timeout "$t" -hosts "$hosts" -ppn "$ppn" -n "$n" "$exe" "$@" ;;
    mpich)
        net_exec h1 env UCX_TLS=tcp,self,sm UCX_NET_DEVICES=eth0 MPIEXEC_TIMEOUT="$t" \
            timeout -k 5 "$t" mpiexec.mpich -launcher ssh -launcher-exec "$rsh" -hosts "$hosts" -ppn "$ppn" \
            -n "$n" -bind-to none "$exe" "$@" ;;
    openmpi)
        local over=
        [ "$ppn" -gt "$ncpu" ] && over=--oversubscribe
        net_exec h1 env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
            timeout -k 5 "$t" mpiexec.openmpi --mca plm_rsh_agent "$rsh" --host "weft-h1:$ppn,weft-h2:$ppn" \
            -n "$n" $over --bind-to none --mca pml ob1 --mca btl self,tcp,vader --mca btl_tcp_if_include eth0 \
            --mca oob_tcp_if_include eth0 "$exe" "$@" ;;
    esac
}

# A run that timed out or failed may leave ranks behind on a host (its launcher killed first): kill every
# process of the fake hosts but what netns.sh keeps there (each host's PID 1 and the unshare that started
# it), by pid, so the next run starts on idle hosts.
reap_hosts() {
    local i ns pid keep left=
    for i in 1 2; do
        ns=${NET_PREFIX}h$i
        keep=" ${NET_HOLDER[i]} $(cat "$NET_DIR/h$i.unshare" 2>/dev/null) "
        for pid in $(ip netns pids "$ns" 2>/dev/null); do
            [[ $keep == *" $pid "* ]] && continue
            kill -KILL "$pid" 2>/dev/null && left+=" $pid"
        done
    done
    [ -z "$left" ] || log "  killed processes left on the hosts:$left"
}

# Where the ranks run (host names, 2 per host): a check of each launcher before any benchmark.
for impl in $impls; do
    [ "${state[$impl]}" = ok ] || continue
    where=$(launch "$impl" 2 60 -cmd hostname </dev/null 2>"$out/raw/placement-$impl.err" | sort | uniq -c |
        awk '{ printf "%s%s x %s", (NR > 1 ? ", " : ""), $2, $1 }')
    log "placement $impl (-ppn 2): ${where:-FAILED (see raw/placement-$impl.err)}"
    echo "placement_$impl: ${where:-failed}" >>"$tmp/placement"
    reap_hosts
done

# --- metadata ------------------------------------------------------------------------------------------------
# Which transport Weft's jobs take between the hosts: WEFT_TRANSPORTS as the jobs get it (the caller's, or
# BENCH_NET_WEFT_ENV's), auto resolved by weft-info in weft-h1 by the rule the core applies (docs/tcp.md).
# shellcheck disable=SC2086
weft_info=$(net_exec h1 env ${BENCH_NET_WEFT_ENV:-} "$build/tools/weft-info" --parsable 2>/dev/null)
weft_sel=$(sed -n 's/^transport:selected://p' <<<"$weft_info")
case ${weft_sel:-auto} in
auto) weft_net=$(sed -n 's/^transport:auto:here://p' <<<"$weft_info")
      weft_why="auto: no RDMA device and no FI_PROVIDER gives tcp, else ofi" ;;
*ofi*) weft_net=ofi weft_why="chosen by WEFT_TRANSPORTS" ;;
*tcp*) weft_net=tcp weft_why="chosen by WEFT_TRANSPORTS" ;;
*) weft_net=none weft_why="WEFT_TRANSPORTS=$weft_sel cannot span hosts" ;;
esac
[ "$weft_net" = ofi ] && weft_net="ofi (libfabric; FI_PROVIDER=${FI_PROVIDER:-default choice})"
[ "$weft_net" = tcp ] && weft_net="tcp (Weft's own sockets, docs/tcp.md)"
{
    bench_meta
    cat "$tmp/placement" 2>/dev/null
    # Separate System V IPC and /dev/shm are what keep every peer off shared memory between the hosts.
    echo "ipc_namespaces: weft-h1 $(net_exec h1 readlink /proc/self/ns/ipc), weft-h2 $(net_exec h2 readlink /proc/self/ns/ipc), machine $(readlink /proc/self/ns/ipc)"
    echo "dev_shm: weft-h1 $(net_exec h1 stat -c %d:%i /dev/shm), weft-h2 $(net_exec h2 stat -c %d:%i /dev/shm) (device:inode)"
    echo "hosts: weft-h1, weft-h2 (tests/net/netns.sh: network namespaces on one machine, veth + bridge, own UTS, IPC, /dev/shm, PIDs); launchers run in weft-h1, remote ranks started through tests/net/rsh"
    echo "config_weft: mpiexec -launcher rsh --bind-to none -hosts $hosts -ppn P; WEFT_TRANSPORTS=${weft_sel}: $weft_net between hosts, shm within one${BENCH_NET_WEFT_ENV:+; environment $BENCH_NET_WEFT_ENV}"
    echo "weft_transport: $weft_net ($weft_why)"
    echo "config_mpich: Hydra -launcher ssh -launcher-exec tests/net/rsh -bind-to none; ch4:ucx, UCX_TLS=tcp,self,sm UCX_NET_DEVICES=eth0 (the hosts' IPC and /dev/shm are separate: UCX's sm transports cannot reach the other host, tcp carries it); ucp_disconnect_nb stubbed (bench/ucx_finalize_fix.c)"
    echo "config_openmpi: --mca plm_rsh_agent tests/net/rsh --bind-to none --mca pml ob1 --mca btl self,tcp,vader --mca btl_tcp_if_include eth0 --mca oob_tcp_if_include eth0"
    if [ "$bind" = core ]; then
        echo "binding: core (each program pins its process to CPU rank mod $ncpu; launchers do not bind)"
    else
        echo "binding: none (nobody binds)"
    fi
    echo "rounds: $rounds"
    echo "jobs: $jobs"
    echo "budgets: pingpong=${pp_budget}s/size rate=${rate_budget}s/T in $rate_reps reps mtlat=${lat_budget}s/N overlap=${ov_budget}s/case coll=${coll_budget}s/point; timeout ${limit}s per run"
} >"$out/meta.txt"

# --- runs ----------------------------------------------------------------------------------------------------
# job_run <job>: "ppn program args..." of the job.
job_run() {
    case $1 in
    pingpong) echo "1 pingpong -s 8,1K,64K,1M,4M -t $pp_budget $pin_arg" ;;
    rate)     echo "1 sqmr -n 1,4 -m builtin -t $rate_budget -r $rate_reps $pin_arg" ;;
    mtlat)    echo "1 mt_latency -n 1,8 -P NtoN -t $lat_budget $pin_arg" ;;
    overlap)  echo "1 mt_overlap -s 4M -t $ov_budget -l multiple $pin_arg" ;;
    coll)     echo "2 coll -m lat -c allreduce,bcast -s 8,1M -t $coll_budget $pin_arg" ;;
    startup)  echo "8 startup" ;;
    esac
}

echo "round,job,impl,status,seconds" >"$out/runs.csv"
peer_failures=0
t_start=$(date +%s)
for ((r = 1; r <= rounds; r++)); do
    order=$(bench_order $((r - 1)))
    for job in $jobs; do
        read -r ppn prog args < <(job_run "$job")
        for impl in $order; do
            stem=$out/raw/$job-$impl-r$r
            if [ "${state[$impl]}" != ok ]; then
                echo "$r,$job,$impl,missing,0" >>"$out/runs.csv"
                continue
            fi
            t0=$(date +%s%N)
            # In the background and waited for, so that a signal to this script is handled at once (bash
            # runs a trap only after the foreground command ends); the job must not hold the hosts' life pipe.
            # shellcheck disable=SC2086  # args: word splitting intended
            launch "$impl" "$ppn" "$limit" "$prog" $args >"$stem.out" 2>"$stem.err" </dev/null {NET_LIFE_FD}>&- &
            wait $!
            rc=$?
            ms=$((($(date +%s%N) - t0) / 1000000))
            secs=$((ms / 1000)).$(((ms % 1000) / 100))
            case $rc in
                0) status=ok ;;
                124|137) status=timeout ;;
                *) status=failed:$rc ;;
            esac
            if grep -q '^# [a-z_]* unsupported' "$stem.out"; then
                status=unsupported
            elif [ $rc -eq 0 ] && grep -q 'check=FAIL' "$stem.out"; then
                status=check-failed
            fi
            # start-up: the program prints nothing; its figure is the launcher's wall time, timed here
            [ "$job" = startup ] && [ "$status" = ok ] && echo "ranks=$((2 * ppn)) wall_ms=$ms" >>"$stem.out"
            echo "$r,$job,$impl,$status,$secs" >>"$out/runs.csv"
            log "round $r/$rounds $job $impl: $status ($secs s)"
            if [ "$status" != ok ]; then
                reap_hosts
                [ "$impl" = weft ] || peer_failures=$((peer_failures + 1))
            fi
        done
    done
done
{
    echo "runs_seconds: $(( $(date +%s) - t_start ))"
    echo "load_after: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "cpu_busy_after: $(cpu_busy)%"
} >>"$out/meta.txt"
net_down

# --- summary -------------------------------------------------------------------------------------------------
if ! python3 "$here/summarize_net.py" "$out"; then
    log "summary failed; raw outputs are in $out/raw"
    exit 1
fi
log "results: $out"
[ $peer_failures -eq 0 ]
