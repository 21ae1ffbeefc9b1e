/* PMI-2 wire backend: after the PMI-1 line "cmd=init pmi_version=2 pmi_subversion=0", every
 * request and answer is a length-prefixed message (wi_pmi2_msg.h). Served by Hydra on the same
 * PMI_FD as PMI-1, by Slurm's mpi/pmi2 plugin (srun --mpi=pmi2) and by our mpiexec.
 *
 *   fullinit pmirank=R (PMI_PORT: pmiid=pmirank=PMI_ID) [pmijobid=J] threaded=FALSE
 *                                      -> rank, size, appnum (Slurm: -1, taken as 0)
 *   job-getid                          -> jobid (the kvs name)
 *   kvs-put key value / kvs-get key    -> found=TRUE|FALSE, value
 *   kvs-fence (+ a kvs-get, see wi_pmi2_fence) / finalize / abort isworld exitcode message
 * Slurm needs pmijobid (its PMI_JOBID) and threaded in fullinit and does not unescape ";;":
 * our values never hold ';' (wi_pmi_int.h). */
#include "pmi/wi_pmi2_msg.h"
#include "pmi/wi_pmi_int.h"
#include "util/wu_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WI_PMI2_VAL_MAX 1024   /* PMI-2's value limit, counting the NUL */
#define WI_PMI2_KEY_MAX 64

static char wi_pmi2_tx[WI_PMI_LINE_MAX];
static char wi_pmi2_rx[WI_PMI2_BODY_MAX + 1];

/* Sends the request built in o and reads the answer into msg (pointing into wi_pmi2_rx), which
 * must be cmd=<expect> with rc 0 (absent counts as 0). */
static wu_status_t wi_pmi2_call(wi_pmi2_out_t *o, const char *expect, wi_pmi2_msg_t *msg)
{
    char hdr[WI_PMI2_HDR_LEN];
    const char *why;
    size_t len = wi_pmi2_end(o), blen;
    int rc = 0;
    if (len == 0) {
        wu_log_error("PMI-2: request '%s' is longer than %d bytes", expect, WI_PMI2_BODY_MAX);
        return WU_ERR_INVALID;
    }
    wu_status_t st = wi_pmi_wire_send(o->buf, len);
    if (st == WU_OK)
        st = wi_pmi_wire_recv_exact(hdr, sizeof(hdr));
    if (st != WU_OK)
        return st;
    if (!wi_pmi2_hdr_parse(hdr, &blen, &why)) {
        wu_log_error("PMI-2: bad answer to %s from the process manager: %s ('%.6s')", expect, why, hdr);
        return WU_ERR_PMI;
    }
    st = wi_pmi_wire_recv_exact(wi_pmi2_rx, blen);
    if (st != WU_OK)
        return st;
    wi_pmi2_rx[blen] = '\0';
    wu_debug("PMI-2: %.200s -> %.200s", o->buf + WI_PMI2_HDR_LEN, wi_pmi2_rx);
    if (!wi_pmi2_parse(wi_pmi2_rx, blen, msg, &why)) {
        wu_log_error("PMI-2: bad answer to %s from the process manager: %s", expect, why);
        return WU_ERR_PMI;
    }
    if (strcmp(msg->cmd, expect)) {
        wu_log_error("PMI-2: expected cmd=%s from the process manager, got cmd=%.100s", expect, msg->cmd);
        return WU_ERR_PMI;
    }
    if (wi_pmi2_get(msg, "rc") && (!wi_pmi2_get_int(msg, "rc", &rc) || rc != 0)) {
        const char *err = wi_pmi2_get(msg, "errmsg");
        wu_log_error("PMI-2: %s failed: rc=%s%s%.200s", expect, wi_pmi2_get(msg, "rc"),
                     err ? " " : "", err ? err : "");
        return WU_ERR_PMI;
    }
    return WU_OK;
}

static wu_status_t wi_pmi2_put(const char *key, const char *val)
{
    wi_pmi2_out_t o;
    wi_pmi2_msg_t m;
    wi_pmi2_begin(&o, wi_pmi2_tx, sizeof(wi_pmi2_tx), "kvs-put");
    wi_pmi2_add(&o, "key", key);
    wi_pmi2_add(&o, "value", val);
    return wi_pmi2_call(&o, "kvs-put-response", &m);
}

static wu_status_t wi_pmi2_get_raw(int rank, const char *key, char *val, size_t len)
{
    wi_pmi2_out_t o;
    wi_pmi2_msg_t m;
    wi_pmi2_begin(&o, wi_pmi2_tx, sizeof(wi_pmi2_tx), "kvs-get");
    wi_pmi2_add(&o, "jobid", wi_pmi.kvsname_wire);
    wi_pmi2_add_int(&o, "srcid", rank);
    wi_pmi2_add(&o, "key", key);
    wu_status_t st = wi_pmi2_call(&o, "kvs-get-response", &m);
    if (st != WU_OK)
        return st;
    if (!wi_pmi2_get_bool(&m, "found"))
        return WU_ERR_NOT_FOUND;
    const char *v = wi_pmi2_get(&m, "value");
    if (!v) {
        wu_log_error("PMI-2: kvs-get of %s answered found without a value", key);
        return WU_ERR_PMI;
    }
    snprintf(val, len, "%s", v);
    return WU_OK;
}

/* kvs-fence makes the puts before it visible to the gets after it, but Hydra answers it at once
 * (a get of a key not yet there waits until every process has fenced as often as the caller):
 * the get of a key nobody puts that follows makes the fence a barrier there too. Elsewhere (Slurm,
 * our mpiexec) kvs-fence is a barrier itself and that get is answered at once. */
static wu_status_t wi_pmi2_fence(void)
{
    wi_pmi2_out_t o;
    wi_pmi2_msg_t m;
    char val[8];
    wi_pmi2_begin(&o, wi_pmi2_tx, sizeof(wi_pmi2_tx), "kvs-fence");
    wu_status_t st = wi_pmi2_call(&o, "kvs-fence-response", &m);
    if (st == WU_OK)
        st = wi_pmi2_get_raw(0, "weft-barrier", val, sizeof(val));   /* no wire key "K-r" */
    return st == WU_ERR_NOT_FOUND ? WU_OK : st;
}

static void wi_pmi2_abort(int code, const char *msg)
{
    wi_pmi2_out_t o;
    wi_pmi2_begin(&o, wi_pmi2_tx, sizeof(wi_pmi2_tx), "abort");
    wi_pmi2_add(&o, "isworld", "TRUE");
    wi_pmi2_add_int(&o, "exitcode", code);
    wi_pmi2_add(&o, "message", msg && *msg ? msg : "aborted");
    size_t len = wi_pmi2_end(&o);
    if (len == 0) {   /* a very long message: send the abort without it */
        wi_pmi2_begin(&o, wi_pmi2_tx, sizeof(wi_pmi2_tx), "abort");
        wi_pmi2_add(&o, "isworld", "TRUE");
        wi_pmi2_add_int(&o, "exitcode", code);
        len = wi_pmi2_end(&o);
    }
    (void)wi_pmi_wire_send(wi_pmi2_tx, len);   /* no answer comes: the launcher ends the job */
}

static wu_status_t wi_pmi2_finalize(void)
{
    wi_pmi2_out_t o;
    wi_pmi2_msg_t m;
    wi_pmi2_begin(&o, wi_pmi2_tx, sizeof(wi_pmi2_tx), "finalize");
    return wi_pmi2_call(&o, "finalize-response", &m);
}

static const wi_pmi_ops_t wi_pmi2_ops = {
    .name = "pmi2",
    .put = wi_pmi2_put,
    .get = wi_pmi2_get_raw,
    .fence = wi_pmi2_fence,
    .abort = wi_pmi2_abort,
    .finalize = wi_pmi2_finalize,
};

const wi_pmi_ops_t *wi_pmi2_init(bool port_mode)
{
    char line[256], val[32];
    wi_pmi2_out_t o;
    wi_pmi2_msg_t m;
    int id, rank = -1, size, appnum = 0;

    if (wi_pmi_call("cmd=init pmi_version=2 pmi_subversion=0\n", "response_to_init", line,
                    sizeof(line), NULL) != WU_OK)
        return NULL;
    if (!wi_pmi_field(line, "pmi_version", val, sizeof(val)) || atoi(val) != 2) {
        wu_log_error("PMI-2: the process manager does not speak PMI-2: '%.200s'", line);
        return NULL;
    }

    wi_pmi2_begin(&o, wi_pmi2_tx, sizeof(wi_pmi2_tx), "fullinit");
    if (port_mode) {
        if (!wi_pmi_env_int("PMI_ID", &id)) {
            wu_log_error("PMI-2: PMI_PORT is set but PMI_ID is not a valid id");
            return NULL;
        }
        /* Hydra names the process by pmirank even here, where PMI_ID is its rank */
        wi_pmi2_add_int(&o, "pmiid", id);
        wi_pmi2_add_int(&o, "pmirank", id);
    } else {
        wi_pmi2_add_int(&o, "pmirank", wi_pmi.rank);
    }
    const char *jobid = getenv("PMI_JOBID");
    if (jobid && *jobid)
        wi_pmi2_add(&o, "pmijobid", jobid);
    wi_pmi2_add(&o, "threaded", "FALSE");
    if (wi_pmi2_call(&o, "fullinit-response", &m) != WU_OK)
        return NULL;
    if (!wi_pmi2_get_int(&m, "rank", &rank) || !wi_pmi2_get_int(&m, "size", &size) || rank < 0 ||
        size <= rank || (!port_mode && (rank != wi_pmi.rank || size != wi_pmi.size))) {
        wu_log_error("PMI-2: fullinit gave rank %s size %s, not a valid rank of the job%s",
                     wi_pmi2_get(&m, "rank") ? wi_pmi2_get(&m, "rank") : "(none)",
                     wi_pmi2_get(&m, "size") ? wi_pmi2_get(&m, "size") : "(none)",
                     port_mode ? "" : " given by PMI_RANK and PMI_SIZE");
        return NULL;
    }
    wi_pmi.rank = rank;
    wi_pmi.size = size;
    if (wi_pmi2_get_int(&m, "appnum", &appnum) && appnum > 0)
        wi_pmi.appnum = appnum;

    wi_pmi2_begin(&o, wi_pmi2_tx, sizeof(wi_pmi2_tx), "job-getid");
    if (wi_pmi2_call(&o, "job-getid-response", &m) != WU_OK)
        return NULL;
    const char *kvs = wi_pmi2_get(&m, "jobid");
    if (!kvs || !*kvs || strlen(kvs) >= sizeof(wi_pmi.kvsname_wire)) {
        wu_log_error("PMI-2: job-getid gave no usable job id");
        return NULL;
    }
    strcpy(wi_pmi.kvsname_wire, kvs);
    wi_pmi.keylen_max = WI_PMI2_KEY_MAX;
    wi_pmi.vallen_max = WI_PMI2_VAL_MAX;
    return &wi_pmi2_ops;
}
