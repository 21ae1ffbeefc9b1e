#!/bin/bash
# PMI-2 against real servers: our mpiexec (on one host and through proxies) or MPICH's Hydra, with
# WEFT_PMI=pmi2 forcing the client's choice; PMI-1 stays the default there. With `mpiexec`, a rank
# written in bash also speaks PMI-2 by hand to check the server's answers, malformed messages
# included (an error answer or a closed connection, never a hang).
# usage: test_pmi2.sh mpiexec|hydra MPIEXEC PMI_PROBE MPI_PROBE
. "$(dirname "$0")/lib.sh"
MODE=$1 MPIEXEC=$2 P=$3 M=$4
unset WEFT_PMI PMI_JOBID PMIX_NAMESPACE PMIX_RANK
export LC_ALL=C

lines() {   # lines N FMT: "rank 0 of N: FMT" ... sorted
    local n=$1 i
    for ((i = 0; i < n; i++)); do printf "rank %d of %d: %s\n" "$i" "$n" "$2"; done | LC_ALL=C sort
}

if [ "$MODE" = hydra ]; then
    LAUNCH=$(command -v mpiexec.mpich || command -v mpiexec.hydra) ||
        skip "mpiexec.mpich (MPICH's Hydra) is not installed"
    HOSTS_ARGS=(-pmi-port)
    NAME="Hydra"
else
    LAUNCH=$MPIEXEC
    HOSTS_ARGS=(-hosts h1,h2 -launcher fork)
    NAME="mpiexec"
fi

run "$LAUNCH" -n 2 "$P" method
expect_rc 0 "$NAME: default protocol"
expect_eq "$NAME: PMI-1 is the default (no PMI_JOBID)" "$(lines 2 'method pmi1')" "$(sorted "$T_OUT")"

run env WEFT_PMI=pmi2 "$LAUNCH" -n 3 "$P" method
expect_rc 0 "$NAME: WEFT_PMI=pmi2"
expect_eq "$NAME: WEFT_PMI=pmi2 speaks PMI-2" "$(lines 3 'method pmi2')" "$(sorted "$T_OUT")"

run env WEFT_PMI=pmi2 "$LAUNCH" -n 3 "$P" exchange
expect_rc 0 "$NAME: PMI-2 exchange on 3 ranks"
expect_eq "$NAME: PMI-2 exchange" "$(lines 3 'exchange ok')" "$(sorted "$T_OUT")"

run env WEFT_PMI=pmi2 "$LAUNCH" "${HOSTS_ARGS[@]}" -n 4 "$P" exchange
expect_rc 0 "$NAME ${HOSTS_ARGS[*]}: PMI-2 exchange on 4 ranks"
expect_eq "$NAME ${HOSTS_ARGS[*]}: PMI-2 exchange" "$(lines 4 'exchange ok')" "$(sorted "$T_OUT")"

run env WEFT_PMI=pmi2 "$LAUNCH" -n 4 "$M" ring
expect_rc 0 "$NAME: MPI ring and Allreduce over PMI-2 on 4 ranks"
expect_eq "$NAME: MPI ring over PMI-2" "$(lines 4 'ring ok')" "$(sorted "$T_OUT")"

run env WEFT_PMI=pmi2 "$LAUNCH" "${HOSTS_ARGS[@]}" -n 4 "$M" ring
expect_rc 0 "$NAME ${HOSTS_ARGS[*]}: MPI ring over PMI-2"
expect_eq "$NAME ${HOSTS_ARGS[*]}: MPI ring over PMI-2" "$(lines 4 'ring ok')" "$(sorted "$T_OUT")"

if [ "$MODE" = hydra ]; then
    # Hydra 4.0.2 has no PMI-2 abort handler: it tears the job down with its own status.
    run env WEFT_PMI=pmi2 "$LAUNCH" -n 2 "$P" abort 5 1
    [ "$T_RC" != 0 ] && [ "$T_RC" != 137 ] || { show_run; fail "Hydra: a PMI-2 abort must fail the job (got $T_RC)"; }
    echo "PASS: $T_NAME"
    exit 0
fi

# ---- the knob ---------------------------------------------------------------------------------
run env WEFT_PMI=pmi2 "$P" method
expect_rc 0 "WEFT_PMI=pmi2 without a launcher"
expect_eq "WEFT_PMI=pmi2 without a launcher: a singleton" "rank 0 of 1: method singleton" "$T_OUT"

run env WEFT_PMI=pmi1 PMI_JOBID=x "$LAUNCH" -n 2 "$P" method
expect_rc 0 "WEFT_PMI=pmi1 with PMI_JOBID set"
expect_eq "WEFT_PMI=pmi1 wins over PMI_JOBID" "$(lines 2 'method pmi1')" "$(sorted "$T_OUT")"

run env PMI_JOBID=x "$LAUNCH" -n 2 "$P" method
expect_rc 0 "PMI_JOBID set (as Slurm's mpi/pmi2 does)"
expect_eq "auto picks PMI-2 when PMI_JOBID is set" "$(lines 2 'method pmi2')" "$(sorted "$T_OUT")"

run env WEFT_PMI=pmix "$LAUNCH" -n 2 "$P" method
expect_rc 99 "WEFT_PMI=pmix under a launcher without PMIx"
expect_match "WEFT_PMI=pmix under a launcher without PMIx: why" \
    "error: PMI: WEFT_PMI=pmix, but the launcher offers no PMIx" "$T_ERR"

run env WEFT_PMI=pmi3 "$LAUNCH" -n 2 "$M" ring
[ "$T_RC" != 0 ] || { show_run; fail "WEFT_PMI=pmi3 must fail MPI_Init"; }
expect_match "WEFT_PMI=pmi3: the message names the variable and the accepted words" \
    "WEFT_PMI=pmi3: not one of the accepted words; accepted: auto, pmix, pmi2 or pmi1" "$T_ERR"

run env WEFT_PMI=pmi2 "$LAUNCH" -n 2 "$P" abort 5 1
expect_rc 5 "PMI-2: rank 1 aborts with code 5"
expect_mpiexec_msg "PMI-2 abort" '^mpiexec: rank 1 \(pid [0-9]+\) called MPI_Abort with code 5; terminating the job$'

run env WEFT_PMI=pmi2 "$LAUNCH" -n 2 "$P" exit 3 1 nofinalize
expect_rc 3 "PMI-2: rank 1 exits 3 before finalize"

run env WEFT_PMI=pmi2 "$LAUNCH" -n 2 "$P" exit 0 1 nofinalize
expect_rc 1 "PMI-2: rank 1 exits 0 without finalize"

# ---- the server's answers, by hand --------------------------------------------------------------
cat >"$T_DIR/raw.sh" <<'EOF'
export LC_ALL=C
fd=$PMI_FD
send() { printf '%-6d%s' "${#1}" "$1" >&"$fd"; }
recv() {
    local hdr body
    IFS= read -r -N 6 -t 20 hdr <&"$fd" || { echo "(no answer)"; return; }
    IFS= read -r -N "$((10#${hdr// /}))" -t 20 body <&"$fd" || { echo "(short answer)"; return; }
    echo "$body"
}
ask() { send "$1"; echo "$(recv)"; }
printf 'cmd=init pmi_version=2 pmi_subversion=0\n' >&"$fd"
IFS= read -r -t 20 line <&"$fd"; echo "$line"
ask "cmd=fullinit;pmirank=$PMI_RANK;threaded=FALSE;"
ask "cmd=fullinit;pmirank=7;threaded=FALSE;"
ask "cmd=job-getid;" | sed 's/jobid=weft-[0-9]*-[0-9a-f]*;/jobid=JOB;/'
ask "cmd=kvs-put;key=k1;value=v;;1;"
ask "cmd=kvs-put;key"
ask "cmd=kvs-put;key=k2;value=unterminated"
ask "key=v;cmd=kvs-put;"
ask "cmd=kvs-put;=v;"
ask "cmd=kvs-put;value=nokey;"
ask "cmd=kvs-get;key=k1;"
ask "cmd=kvs-get;jobid=x;srcid=0;key=absent;"
ask "cmd=info-putnodeattr;key=na;value=1;"
ask "cmd=info-getnodeattr;key=na;"
ask "cmd=info-getnodeattr;key=nb;wait=TRUE;"
ask "cmd=info-getjobattr;key=PMI_process_mapping;"
ask "cmd=info-getjobattr;key=universeSize;"
ask "cmd=name-publish;name=a;port=b;"
ask "cmd=kvs-fence;"
case "$1" in
nul)    printf '%-6dcmd=kvs-put;key=a\0b;value=c;' 28 >&"$fd"; echo "$(recv)"; ask "cmd=finalize;" ;;
header) printf 'abcdefcmd=finalize;' >&"$fd"; echo "$(recv)" ;;
long)   printf '999999cmd=finalize;' >&"$fd"; echo "$(recv)" ;;
*)      ask "cmd=finalize;" ;;
esac
EOF
RAW_WANT='cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0
cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;rank=0;size=1;appnum=0;debugged=FALSE;pmiverbose=FALSE;
cmd=fullinit-response;rc=-1;errmsg=pmirank is not this process'"'"'s rank (PMI_RANK);
cmd=job-getid-response;rc=0;jobid=JOB;
cmd=kvs-put-response;rc=0;
cmd=error-response;rc=-1;errmsg=a pair has no '"'"'='"'"';
cmd=error-response;rc=-1;errmsg=a value is not closed by '"'"';;'"'"';
cmd=error-response;rc=-1;errmsg=the message does not start with cmd=;
cmd=error-response;rc=-1;errmsg=a pair has an empty key;
cmd=kvs-put-response;rc=-1;errmsg=key missing, longer than 63 bytes or not printable;
cmd=kvs-get-response;rc=0;found=TRUE;value=v;;1;
cmd=kvs-get-response;rc=0;found=FALSE;
cmd=info-putnodeattr-response;rc=0;
cmd=info-getnodeattr-response;rc=0;found=TRUE;value=1;
cmd=info-getnodeattr-response;rc=0;found=FALSE;
cmd=info-getjobattr-response;rc=0;found=TRUE;value=(vector,(0,1,1));
cmd=info-getjobattr-response;rc=0;found=TRUE;value=1;
cmd=name-publish-response;rc=-1;errmsg=not supported by weft mpiexec;
cmd=kvs-fence-response;rc=0;'

run "$LAUNCH" -n 1 bash "$T_DIR/raw.sh" plain
expect_rc 0 "PMI-2 by hand: a well-behaved end"
expect_eq "PMI-2 by hand: the server's answers" "$RAW_WANT
cmd=finalize-response;rc=0;" "$T_OUT"

run "$LAUNCH" "${HOSTS_ARGS[@]}" -n 1 bash "$T_DIR/raw.sh" plain
expect_rc 0 "PMI-2 by hand through a proxy"
expect_eq "PMI-2 by hand through a proxy: the same answers" "$RAW_WANT
cmd=finalize-response;rc=0;" "$T_OUT"

run "$LAUNCH" -n 1 bash "$T_DIR/raw.sh" nul
expect_rc 0 "PMI-2 by hand: a NUL byte in a message"
expect_eq "PMI-2 by hand: a NUL byte is refused, the connection goes on" "$RAW_WANT
cmd=error-response;rc=-1;errmsg=the message holds a NUL byte;
cmd=finalize-response;rc=0;" "$T_OUT"

# A client that skips the PMI-1 init line and starts in PMI-2 is answered in PMI-2, not left
# hanging.
cat >"$T_DIR/noinit.sh" <<'EOF'
export LC_ALL=C
fd=$PMI_FD
ask() {
    local hdr body
    printf '%-6d%s' "${#1}" "$1" >&"$fd"
    IFS= read -r -N 6 -t 20 hdr <&"$fd" || { echo "(no answer)"; return; }
    IFS= read -r -N "$((10#${hdr// /}))" -t 20 body <&"$fd"
    echo "$body"
}
ask "cmd=fullinit;pmirank=$PMI_RANK;threaded=FALSE;"
ask "cmd=finalize;"
EOF
for where in local proxy; do
    args=()
    [ "$where" = proxy ] && args=("${HOSTS_ARGS[@]}")
    run "$LAUNCH" "${args[@]}" -n 1 bash "$T_DIR/noinit.sh"
    expect_rc 0 "PMI-2 without the init line ($where)"
    expect_eq "PMI-2 without the init line ($where): answered in PMI-2" \
        "cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;rank=0;size=1;appnum=0;debugged=FALSE;pmiverbose=FALSE;
cmd=finalize-response;rc=0;" "$T_OUT"
done

for bad in header long; do
    for where in local proxy; do
        args=()
        [ "$where" = proxy ] && args=("${HOSTS_ARGS[@]}")
        run "$LAUNCH" "${args[@]}" -n 1 bash "$T_DIR/raw.sh" "$bad"
        expect_rc 1 "PMI-2 by hand ($where): a bad length header ($bad) ends the rank's PMI connection"
        expect_eq "PMI-2 by hand ($where): no answer after a bad header ($bad)" "$RAW_WANT
(no answer)" "$T_OUT"
        grep -q "^mpiexec: rank 0 sent a malformed PMI-2 message" "$T_DIR/err" ||
            { show_run; fail "PMI-2 by hand ($where, $bad): mpiexec did not say why it closed the connection"; }
        [ "$T_SECS" -lt 15 ] || { show_run; fail "PMI-2 by hand ($where, $bad): took ${T_SECS}s"; }
    done
done
echo "PASS: $T_NAME"
