#!/bin/bash
# osu_rma.sh MPIEXEC MPICC MPICXX WORKDIR: the OSU micro-benchmarks' one-sided programs run to
# completion on Weft at 2 ranks (issue 14), each with every window flavor (-w) and synchronization
# (-s) it offers, small sizes and few iterations.
#
# The OSU source is not in Debian, PyPI or any registry this machine reaches, so it cannot be
# fetched here: give it as WEFT_OSU_SRC (a release tarball, osu-micro-benchmarks-X.Y.tar.gz, or
# its unpacked directory), or leave a tarball in one of the places listed in `candidates` below.
# Without it the test is skipped (exit 77) and says so.
#
# Which -w and -s values a program takes differs between programs and OSU releases: they are read
# from the program's own help (-h), as whole words (create allocate dynamic; pscw fence lock flush
# flush_local lock_all). A run passes when the job exits 0 and prints at least one result line
# (size, then a number; the atomics print the 8-byte line); it is bounded by a timeout.
set -u
mpiexec=$(realpath -m "$1") mpicc=$(realpath -m "$2") mpicxx=$(realpath -m "$3") work=$(realpath -m "$4")
progs="osu_put_latency osu_get_latency osu_put_bw osu_get_bw osu_put_bibw osu_acc_latency
       osu_fop_latency osu_cas_latency osu_get_acc_latency"
per_run=${WEFT_OSU_TIMEOUT:-60}

skip() { echo "SKIP: $*"; exit 77; }

src=${WEFT_OSU_SRC:-}
if [ -z "$src" ]; then
    candidates=("${XDG_CACHE_HOME:-$HOME/.cache}"/weft/osu-micro-benchmarks-*.tar.* \
                /usr/local/src/osu-micro-benchmarks-* /usr/src/osu-micro-benchmarks-* \
                /opt/osu-micro-benchmarks-*)
    for c in "${candidates[@]}"; do
        [ -e "$c" ] && src=$c
    done
fi
[ -n "$src" ] || skip "the OSU micro-benchmarks source is not available offline (no registry here has it); set WEFT_OSU_SRC to a release tarball or its directory"
[ -e "$src" ] || { echo "FAIL: WEFT_OSU_SRC=$src does not exist"; exit 1; }

# Build once per source into WORKDIR (the build tree), with Weft's compiler wrappers.
mkdir -p "$work" || exit 1
exec 9>"$work/.lock"
flock -w 900 9 || { echo "FAIL: timed out waiting for another build of OSU in $work"; exit 1; }
stamp="$work/built-from"
if [ "$(cat "$stamp" 2>/dev/null)" != "$src $(stat -c %Y "$src")" ]; then
    rm -rf "$work/src" && mkdir -p "$work/src" || exit 1
    if [ -d "$src" ]; then
        cp -a "$src/." "$work/src/" || exit 1
    elif ! tar -xf "$src" -C "$work/src" --strip-components=1; then
        echo "FAIL: cannot unpack $src"; exit 1
    fi
    echo "building OSU from $src with $mpicc"
    if ! (cd "$work/src" && ./configure CC="$mpicc" CXX="$mpicxx" >"$work/configure.log" 2>&1); then
        tail -20 "$work/configure.log"; echo "FAIL: OSU's configure failed (log: $work/configure.log)"
        exit 1
    fi
    # Only the one-sided programs (7.x: c/mpi/one-sided, 5.x: mpi/one-sided); the whole tree
    # if that directory cannot be built alone.
    dir=$(find "$work/src" -type d -path '*mpi/one-sided' | head -1)
    if ! { [ -n "$dir" ] && make -C "$dir" -j 2 >"$work/make.log" 2>&1; } &&
       ! make -C "$work/src" -j 2 >>"$work/make.log" 2>&1; then
        tail -30 "$work/make.log"; echo "FAIL: building OSU failed (log: $work/make.log)"
        exit 1
    fi
    echo "$src $(stat -c %Y "$src")" >"$stamp"
fi

fails=0 runs=0
for p in $progs; do
    exe=$(find "$work/src" -type f -perm -u+x -name "$p" | head -1)
    if [ -z "$exe" ]; then
        echo "FAIL: $p was not built"; fails=$((fails + 1)); continue
    fi
    help=$(timeout -k 5 "$per_run" "$mpiexec" -n 2 --timeout "$per_run" "$exe" -h 2>&1)
    wins=$(grep -ow -E 'create|allocate|dynamic' <<<"$help" | sort -u | tr '\n' ' ')
    syncs=$(grep -ow -E 'pscw|fence|lock|flush|flush_local|lock_all' <<<"$help" | sort -u | tr '\n' ' ')
    if [ -z "$syncs" ]; then
        echo "FAIL: $p -h names no synchronization option:"; echo "$help" | head -20
        fails=$((fails + 1)); continue
    fi
    # Small sizes where the release has -m ([MIN:]MAX), few iterations always.
    size=()
    grep -qE '(^|[[:space:]])-m[[:space:],]' <<<"$help" && size=(-m 4096)
    for w in ${wins:-default}; do
        wopt=()
        [ "$w" != default ] && wopt=(-w "$w")
        for s in $syncs; do
            runs=$((runs + 1))
            cmd=("$mpiexec" -n 2 --timeout "$per_run" "$exe" "${wopt[@]}" -s "$s" "${size[@]}" -i 20 -x 2)
            out=$(timeout -k 5 $((per_run + 10)) "${cmd[@]}" 2>&1)
            rc=$?
            if [ $rc -ne 0 ] || ! grep -qE '^[0-9]+[[:space:]]+[0-9.]+' <<<"$out"; then
                echo "FAIL: ${cmd[*]} (exit $rc)"; echo "$out" | tail -15
                fails=$((fails + 1))
            else
                echo "ok: $p ${wopt[*]} -s $s ($(grep -cE '^[0-9]+[[:space:]]+[0-9.]+' <<<"$out") result lines)"
            fi
        done
    done
done
echo "osu_rma: $runs runs, $fails failed"
[ $fails -eq 0 ] && [ $runs -gt 0 ]
