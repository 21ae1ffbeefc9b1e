/* PMI-1 wire backend: one request line, one response line ("cmd=... key=value ...\n"); see
 * tools/mpiexec/pmi_server.c for the server side of the same subset. */
#include "pmi/wi_pmi_int.h"
#include "util/wu_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static wu_status_t wi_pmi1_put(const char *key, const char *val)
{
    char line[WI_PMI_LINE_MAX];
    snprintf(line, sizeof(line), "cmd=put kvsname=%s key=%s value=%s\n", wi_pmi.kvsname_wire, key, val);
    return wi_pmi_call(line, "put_result", line, sizeof(line), NULL);
}

static wu_status_t wi_pmi1_get(int rank, const char *key, char *val, size_t len)
{
    char line[WI_PMI_LINE_MAX];
    int rc;
    (void)rank;
    snprintf(line, sizeof(line), "cmd=get kvsname=%s key=%s\n", wi_pmi.kvsname_wire, key);
    wu_status_t st = wi_pmi_call(line, "get_result", line, sizeof(line), &rc);
    if (st != WU_OK)
        return st;
    if (rc != 0)
        return WU_ERR_NOT_FOUND;
    if (!wi_pmi_field(line, "value", val, len)) {
        wu_log_error("PMI: get of %s answered without a value: '%.200s'", key, line);
        return WU_ERR_PMI;
    }
    return WU_OK;
}

static wu_status_t wi_pmi1_fence(void)
{
    char line[256];
    /* PMI-1 puts are stored by the server as they arrive, so the barrier is the whole fence. */
    return wi_pmi_call("cmd=barrier_in\n", "barrier_out", line, sizeof(line), NULL);
}

static void wi_pmi1_abort(int code, const char *msg)
{
    char line[64];
    (void)msg;
    snprintf(line, sizeof(line), "cmd=abort exitcode=%d\n", code);
    (void)wi_pmi_wire_send(line, strlen(line));   /* no answer comes: the launcher ends the job */
}

static wu_status_t wi_pmi1_finalize(void)
{
    char line[256];
    return wi_pmi_call("cmd=finalize\n", "finalize_ack", line, sizeof(line), NULL);
}

static const wi_pmi_ops_t wi_pmi1_ops = {
    .name = "pmi1",
    .put = wi_pmi1_put,
    .get = wi_pmi1_get,
    .fence = wi_pmi1_fence,
    .abort = wi_pmi1_abort,
    .finalize = wi_pmi1_finalize,
};

/* Hydra's -pmi-port mode: "cmd=initack pmiid=<PMI_ID>" is answered by cmd=initack and three
 * "cmd=set" lines giving size, rank and debug. */
static wu_status_t wi_pmi1_initack(void)
{
    char line[256], val[32];
    int id;
    if (!wi_pmi_env_int("PMI_ID", &id)) {
        wu_log_error("PMI: PMI_PORT is set but PMI_ID is not a valid id");
        return WU_ERR_PMI;
    }
    snprintf(line, sizeof(line), "cmd=initack pmiid=%d\n", id);
    wu_status_t st = wi_pmi_call(line, "initack", line, sizeof(line), NULL);
    wi_pmi.rank = wi_pmi.size = -1;
    for (int i = 0; st == WU_OK && i < 3; i++) {
        st = wi_pmi_wire_recv_line(line, sizeof(line));
        if (st == WU_OK && wi_pmi_field(line, "size", val, sizeof(val)))
            wi_pmi.size = atoi(val);
        else if (st == WU_OK && wi_pmi_field(line, "rank", val, sizeof(val)))
            wi_pmi.rank = atoi(val);
    }
    if (st == WU_OK && (wi_pmi.rank < 0 || wi_pmi.size <= wi_pmi.rank)) {
        wu_log_error("PMI: the process manager gave no valid rank and size");
        st = WU_ERR_PMI;
    }
    return st;
}

const wi_pmi_ops_t *wi_pmi1_init(bool port_mode)
{
    char line[WI_PMI_LINE_MAX], val[256];

    if (port_mode && wi_pmi1_initack() != WU_OK)
        return NULL;
    if (wi_pmi_call("cmd=init pmi_version=1 pmi_subversion=1\n", "response_to_init",
                    line, sizeof(line), NULL) != WU_OK)
        return NULL;
    if (wi_pmi_call("cmd=get_maxes\n", "maxes", line, sizeof(line), NULL) != WU_OK)
        return NULL;
    wi_pmi.keylen_max = 64;    /* PMI-1's usual limits, if the server does not say */
    wi_pmi.vallen_max = 256;
    if (wi_pmi_field(line, "keylen_max", val, sizeof(val)))
        wi_pmi.keylen_max = strtoul(val, NULL, 10);
    if (wi_pmi_field(line, "vallen_max", val, sizeof(val)))
        wi_pmi.vallen_max = strtoul(val, NULL, 10);
    if (wi_pmi.vallen_max > WI_PMI_VAL_WIRE)
        wi_pmi.vallen_max = WI_PMI_VAL_WIRE;
    if (wi_pmi.vallen_max < 32 || wi_pmi.keylen_max < 16) {
        wu_log_error("PMI: the process manager's limits are too small (keylen_max %zu, vallen_max %zu)",
                     wi_pmi.keylen_max, wi_pmi.vallen_max);
        return NULL;
    }
    if (wi_pmi_call("cmd=get_my_kvsname\n", "my_kvsname", line, sizeof(line), NULL) != WU_OK)
        return NULL;
    if (!wi_pmi_field(line, "kvsname", wi_pmi.kvsname_wire, sizeof(wi_pmi.kvsname_wire)) ||
        !wi_pmi.kvsname_wire[0]) {
        wu_log_error("PMI: get_my_kvsname answer has no kvsname: '%.200s'", line);
        return NULL;
    }
    /* The MPMD section; a launcher that does not answer leaves it 0 (one application). */
    int rc = 0;
    if (wi_pmi_call("cmd=get_appnum\n", "appnum", line, sizeof(line), &rc) == WU_OK && rc == 0 &&
        wi_pmi_field(line, "appnum", val, sizeof(val)))
        wi_pmi.appnum = atoi(val);
    return &wi_pmi1_ops;
}
