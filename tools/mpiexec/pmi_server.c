/* The PMI-1 and PMI-2 server side. PMI-1: each rank's socket carries newline-terminated
 * "cmd=<name> key=value ..." lines; each command but abort gets one answer line. One key-value
 * space (the job's kvsname).
 *
 *   init pmi_version=1 pmi_subversion=1   response_to_init pmi_version=1 pmi_subversion=1 rc=0
 *   get_maxes                       maxes kvsname_max=64 keylen_max=64 vallen_max=1024 rc=0
 *   get_my_kvsname                  my_kvsname kvsname=weft-<pid>-<hex> rc=0
 *   get_appnum / get_universe_size  appnum appnum=<section> / universe_size size=<ranks>
 *   put kvsname= key= value=        put_result rc=0 msg=success (a later put replaces)
 *   get kvsname= key=               get_result rc=0 msg=success value=...  (rc=-1 if absent;
 *                                   PMI_process_mapping is predefined: which ranks share a node)
 *   barrier_in                      barrier_out, once every rank of the job has entered
 *   finalize                        finalize_ack
 *   abort exitcode=N                no answer; mpiexec ends the job with status N
 * Multi-line "mcmd=spawn" requests are refused; unknown commands get "<cmd>_result rc=-1".
 *
 * PMI-2: a rank whose init says pmi_version=2 gets "response_to_init pmi_version=2
 * pmi_subversion=0 rc=0" and speaks length-prefixed messages from then on (src/pmi/wi_pmi2_msg.h;
 * its answers are built the same way); a rank whose first bytes are a PMI-2 message is taken as
 * PMI-2 without the init line:
 *   fullinit pmirank=       fullinit-response rank size appnum debugged=FALSE pmiverbose=FALSE
 *   job-getid               job-getid-response jobid=<kvsname>
 *   kvs-put key value       kvs-put-response (into the same store as PMI-1's put)
 *   kvs-get key             kvs-get-response found=TRUE value= | found=FALSE (never waits)
 *   kvs-fence               kvs-fence-response once every rank has entered (PMI-1's barrier: a
 *                           job may mix both protocols)
 *   info-getjobattr key     PMI_process_mapping, universeSize; info-putnodeattr and
 *   info-getnodeattr        a table per host (wait=TRUE is not waited for: found=FALSE)
 *   finalize                finalize-response;  abort [exitcode] [message]: no answer
 * Anything else (spawn, name-publish, job-connect...) gets "<cmd>-response rc=-1". A malformed
 * message gets "error-response rc=-1" with the reason; a bad length header closes the rank's PMI
 * connection (the stream cannot be followed any more), which its launcher judges as a failure.
 *
 * On several hosts the server runs in the front end: proxies relay the lines (job->pmi_relay on
 * their side, mx_pmi_line here) and the answers go back through job->pmi_send. */
#include "mpiexec.h"
#include "pmi/wi_pmi2_msg.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MX_PMI_LINE_MAX  8192
#define MX_PMI_KEY_MAX   64     /* as Hydra: keylen_max, counting the NUL */
#define MX_PMI_VAL_MAX   1024   /* vallen_max, counting the NUL */
#define MX_KVS_BUCKETS   1024

typedef struct mx_kv {
    struct mx_kv *next;
    char *key, *val;
} mx_kv_t;

struct mx_kvs {
    mx_kv_t *bucket[MX_KVS_BUCKETS];
};

static unsigned mx_kvs_hash(const char *s)
{
    unsigned h = 2166136261u;   /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h % MX_KVS_BUCKETS;
}

static mx_kv_t *mx_kvs_find(mx_kvs_t *kvs, const char *key)
{
    for (mx_kv_t *kv = kvs->bucket[mx_kvs_hash(key)]; kv; kv = kv->next)
        if (!strcmp(kv->key, key))
            return kv;
    return NULL;
}

/* Stores key=val, replacing an earlier value. */
static void mx_kvs_put(mx_kvs_t *kvs, const char *key, const char *val)
{
    mx_kv_t *kv = mx_kvs_find(kvs, key);
    char *v = strdup(val);
    if (!kv && v) {
        unsigned h = mx_kvs_hash(key);
        kv = calloc(1, sizeof(*kv));
        if (kv && !(kv->key = strdup(key))) {
            free(kv);
            kv = NULL;
        }
        if (kv) {
            kv->next = kvs->bucket[h];
            kvs->bucket[h] = kv;
        }
    }
    if (!kv || !v) {
        fprintf(stderr, "mpiexec: out of memory\n");
        exit(1);
    }
    free(kv->val);
    kv->val = v;
}

bool mx_pmi_init(mx_job_t *job)
{
    char map[64];
    job->kvs = calloc(1, sizeof(*job->kvs));
    if (!job->kvs)
        return false;
    /* MPICH's key telling which ranks share a node: (vector,(first node, nodes, ranks per node)). */
    snprintf(map, sizeof(map), "(vector,(0,1,%d))", job->nranks);
    mx_kvs_put(job->kvs, "PMI_process_mapping", job->process_mapping ? job->process_mapping : map);
    return true;
}

void mx_pmi_free(mx_job_t *job)
{
    if (!job->kvs)
        return;
    for (int b = 0; b < MX_KVS_BUCKETS; b++) {
        while (job->kvs->bucket[b]) {
            mx_kv_t *kv = job->kvs->bucket[b];
            job->kvs->bucket[b] = kv->next;
            free(kv->key);
            free(kv->val);
            free(kv);
        }
    }
    free(job->kvs);
    job->kvs = NULL;
}

/* ---- answering ---------------------------------------------------------------------------- */

/* Sends one answer line. The socket is non-blocking; answers are small, so the wait for room
 * happens only with a client that sends without reading. */
static void mx_pmi_reply(mx_job_t *job, mx_rank_t *r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void mx_pmi_reply(mx_job_t *job, mx_rank_t *r, const char *fmt, ...)
{
    char line[MX_PMI_LINE_MAX];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n > sizeof(line) - 2)
        n = (int)sizeof(line) - 2;
    line[n++] = '\n';
    if (job->pmi_send)
        job->pmi_send(job, r, line, (size_t)n);
    else
        mx_pmi_write(r, line, (size_t)n);
}

void mx_pmi_write(mx_rank_t *r, const char *line, size_t n)
{
    size_t off = 0;
    while (r->pmi_fd >= 0 && off < n) {
        ssize_t w = send(r->pmi_fd, line + off, n - off, MSG_NOSIGNAL);
        if (w > 0) {
            off += (size_t)w;
        } else if (w < 0 && errno == EINTR) {
            continue;
        } else if (w < 0 && errno == EAGAIN) {
            struct pollfd p = { .fd = r->pmi_fd, .events = POLLOUT };
            if (poll(&p, 1, 1000) <= 0)
                break;
        } else {
            break;   /* the rank is gone; its exit is handled when it is reaped */
        }
    }
}

/* Copies the value of field `name` of line into out[len]; NULL if absent or too long. A value
 * runs to the next space. */
static const char *mx_pmi_field(char *line, const char *name, char *out, size_t len)
{
    size_t nlen = strlen(name);
    for (char *p = line; *p;) {
        while (*p == ' ')
            p++;
        size_t tlen = strcspn(p, " ");
        if (tlen > nlen && !strncmp(p, name, nlen) && p[nlen] == '=') {
            size_t vlen = tlen - nlen - 1;
            if (vlen >= len)
                return NULL;
            memcpy(out, p + nlen + 1, vlen);
            out[vlen] = '\0';
            return out;
        }
        p += tlen;
    }
    return NULL;
}

/* ---- PMI-2 -------------------------------------------------------------------------------- */

#define MX_PMI2_MSG_MAX (MX_PMI_LINE_MAX + 2 * MX_PMI_VAL_MAX)

static void mx_pmi2_simple(mx_job_t *job, mx_rank_t *r, const char *cmd, int rc,
                           const char *errmsg);

/* Sends the answer built in o; one too long for its buffer (a huge PMI_process_mapping) becomes
 * an error answer rather than none, which would leave the rank waiting. */
static void mx_pmi2_send(mx_job_t *job, mx_rank_t *r, wi_pmi2_out_t *o, const char *cmd)
{
    size_t n = wi_pmi2_end(o);
    if (n == 0) {
        mx_pmi2_simple(job, r, cmd, -1, "answer too long for weft mpiexec");
        return;
    }
    if (job->pmi_send)
        job->pmi_send(job, r, o->buf, n);
    else
        mx_pmi_write(r, o->buf, n);
}

/* An answer with rc and, when rc != 0, errmsg. */
static void mx_pmi2_simple(mx_job_t *job, mx_rank_t *r, const char *cmd, int rc, const char *errmsg)
{
    char buf[512];
    wi_pmi2_out_t o;
    wi_pmi2_begin(&o, buf, sizeof(buf), cmd);
    wi_pmi2_add_int(&o, "rc", rc);
    if (rc != 0 && errmsg)
        wi_pmi2_add(&o, "errmsg", errmsg);
    mx_pmi2_send(job, r, &o, cmd);   /* cmd and errmsg are short: it fits */
}

/* found=TRUE value=val, or found=FALSE when val is NULL. */
static void mx_pmi2_found(mx_job_t *job, mx_rank_t *r, const char *cmd, const char *val)
{
    char buf[MX_PMI2_MSG_MAX];
    wi_pmi2_out_t o;
    wi_pmi2_begin(&o, buf, sizeof(buf), cmd);
    wi_pmi2_add_int(&o, "rc", 0);
    wi_pmi2_add(&o, "found", val ? "TRUE" : "FALSE");
    if (val)
        wi_pmi2_add(&o, "value", val);
    mx_pmi2_send(job, r, &o, cmd);
}

/* A node attribute lives in the job's store under "\001node<host>:<key>", a name no put can
 * produce (puts refuse control characters). */
static void mx_pmi2_node_key(const mx_rank_t *r, const char *key, char *out, size_t len)
{
    snprintf(out, len, "\001node%d:%s", r->host, key);
}

static bool mx_pmi_key_ok(const char *key)
{
    for (const unsigned char *p = (const unsigned char *)key; *p; p++)
        if (*p < 0x20)
            return false;
    return *key != '\0';
}

static void mx_pmi_barrier_in(mx_job_t *job, mx_rank_t *r);

static void mx_pmi2_message(mx_job_t *job, mx_rank_t *r, char *body)
{
    wi_pmi2_msg_t m;
    const char *why, *key, *val;
    char cmd[80], nkey[MX_PMI_KEY_MAX + 32];
    int v;
    if (!wi_pmi2_parse(body, strlen(body), &m, &why)) {
        fprintf(stderr, "mpiexec: rank %d sent a malformed PMI-2 message (%s): '%.80s'\n", r->rank,
                why, body);
        mx_pmi2_simple(job, r, "error-response", -1, why);
        return;
    }
    snprintf(cmd, sizeof(cmd), "%.60s-response", m.cmd);
    key = wi_pmi2_get(&m, "key");
    val = wi_pmi2_get(&m, "value");

    if (!strcmp(m.cmd, "fullinit")) {
        if (wi_pmi2_get(&m, "pmirank") && (!wi_pmi2_get_int(&m, "pmirank", &v) || v != r->rank)) {
            mx_pmi2_simple(job, r, cmd, -1, "pmirank is not this process's rank (PMI_RANK)");
            return;
        }
        char buf[512];
        wi_pmi2_out_t o;
        wi_pmi2_begin(&o, buf, sizeof(buf), cmd);
        wi_pmi2_add_int(&o, "rc", 0);
        wi_pmi2_add_int(&o, "pmi-version", 2);
        wi_pmi2_add_int(&o, "pmi-subversion", 0);
        wi_pmi2_add_int(&o, "rank", r->rank);
        wi_pmi2_add_int(&o, "size", job->size);
        wi_pmi2_add_int(&o, "appnum", r->appnum);
        wi_pmi2_add(&o, "debugged", "FALSE");
        wi_pmi2_add(&o, "pmiverbose", "FALSE");
        mx_pmi2_send(job, r, &o, cmd);
    } else if (!strcmp(m.cmd, "job-getid")) {
        char buf[512];
        wi_pmi2_out_t o;
        wi_pmi2_begin(&o, buf, sizeof(buf), cmd);
        wi_pmi2_add_int(&o, "rc", 0);
        wi_pmi2_add(&o, "jobid", job->kvsname);
        mx_pmi2_send(job, r, &o, cmd);
    } else if (!strcmp(m.cmd, "kvs-put") || !strcmp(m.cmd, "info-putnodeattr")) {
        if (!key || !mx_pmi_key_ok(key) || strlen(key) >= MX_PMI_KEY_MAX)
            mx_pmi2_simple(job, r, cmd, -1, "key missing, longer than 63 bytes or not printable");
        else if (!val || strlen(val) >= MX_PMI_VAL_MAX)
            mx_pmi2_simple(job, r, cmd, -1, "value missing or longer than 1023 bytes");
        else {
            if (m.cmd[0] == 'i')
                mx_pmi2_node_key(r, key, nkey, sizeof(nkey));
            mx_kvs_put(job->kvs, m.cmd[0] == 'i' ? nkey : key, val);
            mx_pmi2_simple(job, r, cmd, 0, NULL);
        }
    } else if (!strcmp(m.cmd, "kvs-get") || !strcmp(m.cmd, "info-getnodeattr")) {
        mx_kv_t *kv = NULL;
        if (!key) {
            mx_pmi2_simple(job, r, cmd, -1, "key missing");
            return;
        }
        if (m.cmd[0] == 'i')
            mx_pmi2_node_key(r, key, nkey, sizeof(nkey));
        if (strlen(key) < MX_PMI_KEY_MAX)
            kv = mx_kvs_find(job->kvs, m.cmd[0] == 'i' ? nkey : key);
        mx_pmi2_found(job, r, cmd, kv ? kv->val : NULL);
    } else if (!strcmp(m.cmd, "info-getjobattr")) {
        char num[16];
        mx_kv_t *kv = NULL;
        snprintf(num, sizeof(num), "%d", job->size);
        if (key && !strcmp(key, "PMI_process_mapping"))
            kv = mx_kvs_find(job->kvs, key);
        mx_pmi2_found(job, r, cmd, kv ? kv->val : key && !strcmp(key, "universeSize") ? num : NULL);
    } else if (!strcmp(m.cmd, "kvs-fence")) {
        mx_pmi_barrier_in(job, r);
    } else if (!strcmp(m.cmd, "finalize")) {
        r->pmi_finalized = true;
        mx_pmi2_simple(job, r, cmd, 0, NULL);
    } else if (!strcmp(m.cmd, "abort")) {
        r->aborted = true;
        r->abort_code = wi_pmi2_get_int(&m, "exitcode", &v) ? v : 1;
        job->abort_seen = true;
    } else {
        fprintf(stderr, "mpiexec: rank %d sent the unsupported PMI-2 command '%.60s'\n", r->rank, m.cmd);
        mx_pmi2_simple(job, r, cmd, -1, "not supported by weft mpiexec");
    }
}

static void mx_pmi_barrier_in(mx_job_t *job, mx_rank_t *r)
{
    if (r->in_barrier)
        return;
    r->in_barrier = true;
    if (++job->barrier_count < job->nranks)
        return;
    for (int i = 0; i < job->nranks; i++) {
        if (job->ranks[i].in_barrier) {
            job->ranks[i].in_barrier = false;
            if (job->ranks[i].pmi_v2)
                mx_pmi2_simple(job, &job->ranks[i], "kvs-fence-response", 0, NULL);
            else
                mx_pmi_reply(job, &job->ranks[i], "cmd=barrier_out");
        }
    }
    job->barrier_count = 0;
}

void mx_pmi_line(mx_job_t *job, mx_rank_t *r, char *line)
{
    char cmd[64], kvs[256], key[MX_PMI_KEY_MAX + 1], val[MX_PMI_VAL_MAX + 1], num[32];

    /* The front end's side of a rank that started in PMI-2 without the init line (its proxy
     * switched when it saw the header): "cmd=NAME;" is PMI-2, "cmd=NAME ..." PMI-1. */
    if (!r->pmi_init && !r->pmi_v2 && !strncmp(line, "cmd=", 4) &&
        line[4 + strcspn(line + 4, " ;")] == ';')
        r->pmi_v2 = r->pmi_init = true;
    if (r->pmi_v2) {
        mx_pmi2_message(job, r, line);
        return;
    }
    if (r->pmi_in_mcmd) {              /* the lines of a multi-line command, up to endcmd */
        if (!strcmp(line, "endcmd")) {
            r->pmi_in_mcmd = false;
            mx_pmi_reply(job, r, "cmd=spawn_result rc=-1 errmsg=spawn_is_not_supported_by_weft_mpiexec");
        }
        return;
    }
    if (!strncmp(line, "mcmd=", 5)) {
        r->pmi_in_mcmd = true;
        return;
    }
    if (!mx_pmi_field(line, "cmd", cmd, sizeof(cmd))) {
        fprintf(stderr, "mpiexec: rank %d sent a malformed PMI line '%.80s'\n", r->rank, line);
        mx_pmi_reply(job, r, "cmd=error rc=-1 msg=malformed_line");
        return;
    }

    if (!strcmp(cmd, "init")) {
        int version = mx_pmi_field(line, "pmi_version", num, sizeof(num)) ? atoi(num) : 0;
        r->pmi_init = true;
        if (version == 2) {
            r->pmi_v2 = true;
            mx_pmi_reply(job, r, "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0");
        } else {
            mx_pmi_reply(job, r, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=%d",
                         version == 1 ? 0 : -1);
        }
    } else if (!strcmp(cmd, "get_maxes")) {
        mx_pmi_reply(job, r, "cmd=maxes kvsname_max=%d keylen_max=%d vallen_max=%d rc=0",
                     MX_KVSNAME_MAX, MX_PMI_KEY_MAX, MX_PMI_VAL_MAX);
    } else if (!strcmp(cmd, "get_my_kvsname")) {
        mx_pmi_reply(job, r, "cmd=my_kvsname kvsname=%s rc=0", job->kvsname);
    } else if (!strcmp(cmd, "get_appnum")) {
        mx_pmi_reply(job, r, "cmd=appnum appnum=%d rc=0", r->appnum);
    } else if (!strcmp(cmd, "get_universe_size")) {
        mx_pmi_reply(job, r, "cmd=universe_size size=%d rc=0", job->nranks);
    } else if (!strcmp(cmd, "put")) {
        if (!mx_pmi_field(line, "kvsname", kvs, sizeof(kvs)) || strcmp(kvs, job->kvsname))
            mx_pmi_reply(job, r, "cmd=put_result rc=-1 msg=unknown_kvsname");
        else if (!mx_pmi_field(line, "key", key, sizeof(key) - 1) || !mx_pmi_key_ok(key))
            mx_pmi_reply(job, r, "cmd=put_result rc=-1 msg=key_missing_or_longer_than_%d",
                         MX_PMI_KEY_MAX - 1);
        else if (!mx_pmi_field(line, "value", val, sizeof(val) - 1))
            mx_pmi_reply(job, r, "cmd=put_result rc=-1 msg=value_missing_or_longer_than_%d",
                         MX_PMI_VAL_MAX - 1);
        else {
            mx_kvs_put(job->kvs, key, val);
            mx_pmi_reply(job, r, "cmd=put_result rc=0 msg=success");
        }
    } else if (!strcmp(cmd, "get")) {
        mx_kv_t *kv = NULL;
        if (!mx_pmi_field(line, "kvsname", kvs, sizeof(kvs)) || strcmp(kvs, job->kvsname))
            mx_pmi_reply(job, r, "cmd=get_result rc=-1 msg=unknown_kvsname");
        else if (!mx_pmi_field(line, "key", key, sizeof(key)) || !(kv = mx_kvs_find(job->kvs, key)))
            mx_pmi_reply(job, r, "cmd=get_result rc=-1 msg=key_not_found value=unknown");
        else
            mx_pmi_reply(job, r, "cmd=get_result rc=0 msg=success value=%s", kv->val);
    } else if (!strcmp(cmd, "barrier_in")) {
        mx_pmi_barrier_in(job, r);
    } else if (!strcmp(cmd, "finalize")) {
        r->pmi_finalized = true;
        mx_pmi_reply(job, r, "cmd=finalize_ack");
    } else if (!strcmp(cmd, "abort")) {
        r->aborted = true;
        r->abort_code = mx_pmi_field(line, "exitcode", num, sizeof(num)) ? atoi(num) : 1;
        job->abort_seen = true;
    } else {
        fprintf(stderr, "mpiexec: rank %d sent the unsupported PMI command '%s'\n", r->rank, cmd);
        mx_pmi_reply(job, r, "cmd=%s_result rc=-1 msg=unsupported_command", cmd);
    }
}

/* True for the PMI-1 line that switches a rank to PMI-2. */
static bool mx_pmi_is_init_v2(char *line)
{
    char cmd[16], num[16];
    return mx_pmi_field(line, "cmd", cmd, sizeof(cmd)) && !strcmp(cmd, "init") &&
           mx_pmi_field(line, "pmi_version", num, sizeof(num)) && atoi(num) == 2;
}

/* Hands one command to the server, or to the relay (proxy). */
static void mx_pmi_dispatch(mx_job_t *job, mx_rank_t *r, char *cmd)
{
    if (job->pmi_relay)
        job->pmi_relay(job, r, cmd);
    else
        mx_pmi_line(job, r, cmd);
}

/* Takes the PMI-2 message at the head of buf[0..avail) if it is whole: its size in *used_p. False
 * when more bytes are needed; closes the connection on a bad header. */
static bool mx_pmi2_take(mx_job_t *job, mx_rank_t *r, char *buf, size_t avail, size_t *used_p)
{
    static char body[MX_PMI_LINE_MAX];
    const char *why = "";
    size_t blen = 0;
    if (avail < WI_PMI2_HDR_LEN)
        return false;
    if (!wi_pmi2_hdr_parse(buf, &blen, &why) || blen >= sizeof(body) - WI_PMI2_HDR_LEN) {
        fprintf(stderr, "mpiexec: rank %d sent a malformed PMI-2 message (%s); closing its PMI "
                "connection\n", r->rank, blen >= sizeof(body) - WI_PMI2_HDR_LEN ?
                "longer than mpiexec accepts" : why);
        mx_pmi_close(job, r);
        return false;
    }
    if (avail < WI_PMI2_HDR_LEN + blen)
        return false;
    *used_p = WI_PMI2_HDR_LEN + blen;
    memcpy(body, buf + WI_PMI2_HDR_LEN, blen);
    body[blen] = '\0';
    if (memchr(body, '\0', blen)) {
        fprintf(stderr, "mpiexec: rank %d sent a PMI-2 message holding a NUL byte\n", r->rank);
        mx_pmi2_simple(job, r, "error-response", -1, "the message holds a NUL byte");
        return true;
    }
    mx_pmi_dispatch(job, r, body);
    return true;
}

void mx_pmi_read(mx_job_t *job, mx_rank_t *r)
{
    if (r->pmi_fd < 0)
        return;
    if (!r->pmi_buf && !(r->pmi_buf = malloc(MX_PMI_LINE_MAX))) {
        fprintf(stderr, "mpiexec: out of memory\n");
        exit(1);
    }
    while (r->pmi_fd >= 0) {
        ssize_t n = read(r->pmi_fd, r->pmi_buf + r->pmi_len, MX_PMI_LINE_MAX - r->pmi_len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        if (n <= 0) {
            mx_pmi_close(job, r);
            return;
        }
        r->pmi_len += (size_t)n;
        char *start = r->pmi_buf;
        for (;;) {
            size_t avail = r->pmi_len - (size_t)(start - r->pmi_buf), used, blen;
            const char *why;
            /* A client that starts with a PMI-2 message, without the PMI-1 init line, is
             * answered in PMI-2 rather than left waiting for a '\n' that never comes. */
            if (!r->pmi_init && !r->pmi_v2 && avail >= WI_PMI2_HDR_LEN + 4 &&
                wi_pmi2_hdr_parse(start, &blen, &why) && !strncmp(start + WI_PMI2_HDR_LEN, "cmd=", 4))
                r->pmi_v2 = r->pmi_init = true;
            if (r->pmi_v2) {
                if (!mx_pmi2_take(job, r, start, avail, &used))
                    break;
                start += used;
            } else {
                char *nl = memchr(start, '\n', avail);
                if (!nl)
                    break;
                *nl = '\0';
                if (nl > start && nl[-1] == '\r')
                    nl[-1] = '\0';
                if (!r->pmi_skip_line) {
                    bool v2 = mx_pmi_is_init_v2(start);
                    mx_pmi_dispatch(job, r, start);
                    r->pmi_v2 |= v2;   /* the proxy's own copy of the rank switches too */
                }
                r->pmi_skip_line = false;
                start = nl + 1;
            }
            if (r->pmi_fd < 0)
                return;
        }
        if (r->pmi_fd < 0)   /* closed on a bad PMI-2 header: pmi_buf is gone */
            return;
        r->pmi_len -= (size_t)(start - r->pmi_buf);
        memmove(r->pmi_buf, start, r->pmi_len);
        if (r->pmi_len == MX_PMI_LINE_MAX) {   /* PMI-2 messages this long were refused above */
            fprintf(stderr, "mpiexec: rank %d sent a PMI line longer than %d bytes; ignoring it\n",
                    r->rank, MX_PMI_LINE_MAX);
            r->pmi_skip_line = true;
            r->pmi_len = 0;
        }
    }
}

void mx_pmi_close(mx_job_t *job, mx_rank_t *r)
{
    if (r->pmi_fd >= 0)
        close(r->pmi_fd);
    r->pmi_fd = -1;
    free(r->pmi_buf);
    r->pmi_buf = NULL;
    r->pmi_len = 0;
}
