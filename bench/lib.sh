# Shared by the bench/run_*.sh scripts (source it): building the programs for the three implementations,
# launching them alike, and the metadata every results directory starts with. See bench/README.md.
#
# The caller sets: here (bench/), build (Weft's CMake build dir), out (results dir), tmp (scratch dir),
# impls (e.g. "weft mpich openmpi"), ncpu. bench_build fills the arrays bindir[impl] and state[impl].

log() { printf '%s\n' "$*" | tee -a "$out/run.log" >&2; }

# bench_outdir <prefix>: sets out (BENCH_OUT, else bench/results/<prefix><timestamp>, with raw/) and tmp (a
# scratch directory removed when the script exits). Exits 2 if either cannot be made.
bench_outdir() {
    out=${BENCH_OUT:-$here/results/$1$(date +%Y%m%d-%H%M%S)}
    mkdir -p "$out/raw" || exit 2
    tmp=$(mktemp -d "/tmp/weft-bench-${1:-pt2pt-}XXXXXX") || exit 2
    trap 'rm -rf "$tmp"' EXIT
}

# bench_build <programs...>: Weft through the CMake target bench_programs, the peers with their mpicc.
# bench_extra_src[impl], when the caller sets it, names further sources compiled into each program of that
# peer (run_net.sh: MPICH's finalize workaround).
bench_build() {
    declare -gA bindir state bench_extra_src
    local impl p cc
    for impl in $impls; do
        case $impl in
        weft)
            bindir[weft]=$build/bench
            if [ ! -f "$build/CMakeCache.txt" ]; then
                state[weft]="missing (no CMake build in $build)"
            elif ! cmake --build "$build" --target bench_programs mpiexec >"$out/build-weft.log" 2>&1; then
                state[weft]="missing (build failed, see build-weft.log)"
            elif [ ! -x "$build/tools/mpiexec" ]; then
                state[weft]="missing (no $build/tools/mpiexec)"
            else
                state[weft]=ok
            fi ;;
        mpich|openmpi)
            cc=mpicc.$impl
            bindir[$impl]=$tmp/$impl
            mkdir -p "${bindir[$impl]}"
            state[$impl]=ok
            if ! command -v "$cc" >/dev/null || ! command -v "mpiexec.$impl" >/dev/null; then
                state[$impl]="missing ($cc or mpiexec.$impl not installed)"
                continue
            fi
            for p in "$@"; do
                # -Wno-stringop-overflow: GCC misreads MPICH's MPI_STATUSES_IGNORE as a zero-size array.
                if ! "$cc" -O2 -pthread -Wno-stringop-overflow -o "${bindir[$impl]}/bench_$p" "$here/$p.c" \
                        ${bench_extra_src[$impl]:-} >>"$out/build-$impl.log" 2>&1; then
                    state[$impl]="missing (build failed, see build-$impl.log)"
                fi
            done ;;
        *)
            echo "unknown implementation '$impl' in BENCH_IMPLS" >&2
            exit 2 ;;
        esac
    done
    for impl in $impls; do
        log "build $impl: ${state[$impl]}"
    done
}

# Percent of all CPUs busy over one second, from /proc/stat: how much else is running right now.
cpu_busy() {
    local a b
    a=($(head -1 /proc/stat))
    sleep 1
    b=($(head -1 /proc/stat))
    local idle=$(( (b[4] + b[5]) - (a[4] + a[5]) )) total=0 i
    for ((i = 1; i < ${#a[@]}; i++)); do
        total=$((total + b[i] - a[i]))
    done
    [ $total -gt 0 ] && echo $((100 * (total - idle) / total)) || echo 0
}

# bench_meta: the common lines of meta.txt (machine, load, versions, states); the caller appends its own.
bench_meta() {
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    local cpu_model commit impl
    cpu_model=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ //')
    echo "host: $(uname -srm), $ncpu CPUs ($cpu_model)"
    echo "load_before: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "cpu_busy_before: $(cpu_busy)%"
    commit=$(git -C "$here/.." rev-parse --short HEAD 2>/dev/null || echo unknown)
    git -C "$here/.." diff --quiet HEAD 2>/dev/null || commit="$commit (+ uncommitted changes)"
    echo "weft_commit: $commit"
    echo "mpich: $(mpichversion 2>/dev/null | sed -n 's/^MPICH \(Version\|Device\):[[:space:]]*//p' | tr '\n' ' ')"
    echo "openmpi: $(mpiexec.openmpi --version 2>/dev/null | head -1)"
    echo "impls: $impls"
    for impl in $impls; do
        echo "state_$impl: ${state[$impl]}"
    done
}

# bench_launch <impl> <nranks> <timeout> <program> args...: launchers do not bind (programs pin themselves
# with -p where asked); Open MPI on ob1 + vader (shared memory), oversubscribed when ranks > CPUs.
bench_launch() {
    local impl=$1 n=$2 t=$3 prog=$4
    shift 4
    local exe=${bindir[$impl]}/bench_$prog
    case $impl in
    weft)
        timeout -k 5 "$t" "$build/tools/mpiexec" -n "$n" --bind-to none --timeout "$t" "$exe" "$@" ;;
    mpich)
        timeout -k 5 "$t" mpiexec.mpich -n "$n" -bind-to none "$exe" "$@" ;;
    openmpi)
        local over=
        [ "$n" -gt "$ncpu" ] && over=--oversubscribe
        OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
        timeout -k 5 "$t" mpiexec.openmpi -n "$n" $over --bind-to none --mca pml ob1 --mca btl self,vader \
            "$exe" "$@" ;;
    esac
}

# bench_order <round>: the implementations in the order of this round (rotated each round).
bench_order() {
    local r=$1 arr=($impls) n i
    n=${#arr[@]}
    for ((i = 0; i < n; i++)); do
        printf '%s ' "${arr[$(( (i + r) % n ))]}"
    done
}
