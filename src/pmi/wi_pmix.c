/* PMIx backend, through libpmix (srun --mpi=pmix; any PMIx server). Built only when CMake found
 * libpmix (WEFT_HAVE_PMIX). Wire keys are PMIx keys of this process (PMIx_Put, PMIX_GLOBAL), made
 * visible by PMIx_Commit + PMIx_Fence with PMIX_COLLECT_DATA; a get reads the putting rank's key
 * from the local store (PMIX_OPTIONAL: after the fence everything is there, and a missing key is
 * not waited for). The kvs name is the namespace. */
#include "pmi/wi_pmi_int.h"
#include "util/wu_log.h"

#include <pmix.h>
#include <stdio.h>
#include <string.h>

static pmix_proc_t wi_pmix_me;

static wu_status_t wi_pmix_put(const char *key, const char *val)
{
    pmix_value_t v;
    v.type = PMIX_STRING;
    v.data.string = (char *)val;   /* PMIx_Put copies it */
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key, &v);
    if (rc != PMIX_SUCCESS) {
        wu_log_error("PMIx: PMIx_Put of %s failed: %s", key, PMIx_Error_string(rc));
        return WU_ERR_PMI;
    }
    return WU_OK;
}

static wu_status_t wi_pmix_get(int rank, const char *key, char *val, size_t len)
{
    pmix_proc_t p;
    pmix_info_t info;
    pmix_value_t *v = NULL;
    bool optional = true;
    PMIX_LOAD_PROCID(&p, wi_pmix_me.nspace, (pmix_rank_t)rank);
    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_OPTIONAL, &optional, PMIX_BOOL);
    pmix_status_t rc = PMIx_Get(&p, key, &info, 1, &v);
    PMIX_INFO_DESTRUCT(&info);
    if (rc == PMIX_ERR_NOT_FOUND)
        return WU_ERR_NOT_FOUND;
    if (rc != PMIX_SUCCESS || !v || v->type != PMIX_STRING || !v->data.string) {
        wu_log_error("PMIx: PMIx_Get of %s of rank %d failed: %s", key, rank,
                     rc != PMIX_SUCCESS ? PMIx_Error_string(rc) : "not a string");
        if (v)
            PMIX_VALUE_RELEASE(v);
        return WU_ERR_PMI;
    }
    snprintf(val, len, "%s", v->data.string);
    PMIX_VALUE_RELEASE(v);
    return WU_OK;
}

static wu_status_t wi_pmix_fence(void)
{
    pmix_info_t info;
    bool collect = true;
    pmix_status_t rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS) {
        wu_log_error("PMIx: PMIx_Commit failed: %s", PMIx_Error_string(rc));
        return WU_ERR_PMI;
    }
    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    rc = PMIx_Fence(NULL, 0, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS) {
        wu_log_error("PMIx: PMIx_Fence failed: %s", PMIx_Error_string(rc));
        return WU_ERR_PMI;
    }
    return WU_OK;
}

static void wi_pmix_abort(int code, const char *msg)
{
    (void)PMIx_Abort(code, msg && *msg ? msg : "aborted", NULL, 0);
}

static wu_status_t wi_pmix_finalize(void)
{
    pmix_status_t rc = PMIx_Finalize(NULL, 0);
    if (rc != PMIX_SUCCESS) {
        wu_log_error("PMIx: PMIx_Finalize failed: %s", PMIx_Error_string(rc));
        return WU_ERR_PMI;
    }
    return WU_OK;
}

static const wi_pmi_ops_t wi_pmix_ops = {
    .name = "pmix",
    .put = wi_pmix_put,
    .get = wi_pmix_get,
    .fence = wi_pmix_fence,
    .abort = wi_pmix_abort,
    .finalize = wi_pmix_finalize,
};

/* A job-level uint32 attribute (rank: PMIX_RANK_WILDCARD) or a process one; false if absent. */
static bool wi_pmix_get_u32(pmix_rank_t rank, const char *key, uint32_t *v_p)
{
    pmix_proc_t p;
    pmix_value_t *v = NULL;
    PMIX_LOAD_PROCID(&p, wi_pmix_me.nspace, rank);
    pmix_status_t rc = PMIx_Get(&p, key, NULL, 0, &v);
    bool ok = rc == PMIX_SUCCESS && v && v->type == PMIX_UINT32;
    if (ok)
        *v_p = v->data.uint32;
    if (v)
        PMIX_VALUE_RELEASE(v);
    return ok;
}

const wi_pmi_ops_t *wi_pmix_init(void)
{
    uint32_t size, appnum;
    pmix_status_t rc = PMIx_Init(&wi_pmix_me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        wu_log_error("PMIx: PMIx_Init failed: %s", PMIx_Error_string(rc));
        return NULL;
    }
    if (!wi_pmix_get_u32(PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, &size) || size == 0 ||
        size > INT32_MAX || wi_pmix_me.rank >= size) {
        wu_log_error("PMIx: no valid job size for rank %u of namespace %s", wi_pmix_me.rank,
                     wi_pmix_me.nspace);
        PMIx_Finalize(NULL, 0);
        return NULL;
    }
    wi_pmi.rank = (int)wi_pmix_me.rank;
    wi_pmi.size = (int)size;
    if (wi_pmix_get_u32(wi_pmix_me.rank, PMIX_APPNUM, &appnum) && appnum < INT32_MAX)
        wi_pmi.appnum = (int)appnum;
    snprintf(wi_pmi.kvsname_wire, sizeof(wi_pmi.kvsname_wire), "%s", wi_pmix_me.nspace);
    wi_pmi.keylen_max = PMIX_MAX_KEYLEN + 1;
    wi_pmi.vallen_max = WI_PMI_VAL_WIRE;
    return &wi_pmix_ops;
}
