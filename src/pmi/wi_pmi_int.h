/* Inside the PMI layer: the backends behind wi_pmi.h and what they share.
 *
 *   wi_pmi.c        choice of backend (WEFT_PMI and the environment), keys, value escaping and
 *                   splitting, the singleton's local table
 *   wi_pmi_wire.c   blocking I/O on the launcher's socket (PMI_FD or PMI_PORT), shared by both
 *                   wire protocols
 *   wi_pmi1.c       PMI-1 (text lines)
 *   wi_pmi2.c       PMI-2 (length-prefixed messages, wi_pmi2_msg.c)
 *   wi_pmix.c       PMIx, through libpmix (built only when CMake found it: WEFT_HAVE_PMIX)
 *
 * A backend's init fills wi_pmi's rank, size, limits, kvsname_wire and appnum and returns its
 * operations table. The operations take wire keys ("K-r", "K-r.i") and wire values (escaped by
 * wi_pmi.c: only [A-Za-z0-9] and "-_.,:/+@()[]{}%*", so never ' ', ';' or '='), at most
 * vallen_max - 1 bytes.
 *
 * Concurrency contract: as wi_pmi.h: one thread at a time; the state is not synchronized.
 */
#ifndef WI_PMI_INT_H
#define WI_PMI_INT_H

#include "pmi/wi_pmi.h"

#include <stdint.h>

#define WI_PMI_LINE_MAX   8192   /* longest PMI-1 line we send or accept */
#define WI_PMI_VAL_WIRE   1024   /* longest value we send even if the server allows more */

typedef struct {
    const char *name;                                     /* "pmi1", "pmi2", "pmix", "singleton" */
    wu_status_t (*put)(const char *key, const char *val);
    /* WU_ERR_NOT_FOUND, without logging, when absent; rank is the rank that put key. */
    wu_status_t (*get)(int rank, const char *key, char *val, size_t len);
    wu_status_t (*fence)(void);
    void (*abort)(int code, const char *msg);             /* tells the launcher, if it can */
    wu_status_t (*finalize)(void);
} wi_pmi_ops_t;

typedef struct {
    bool initialized;
    bool finalized;
    const wi_pmi_ops_t *ops;
    int fd;                                  /* the launcher's socket; -1: none */
    int rank, size;
    size_t keylen_max, vallen_max;           /* including the terminating NUL */
    char kvsname_wire[256];                  /* the job's name as the launcher spells it */
    char kvsname[WI_PMI_KVSNAME_MAX + 1];    /* file-name-safe copy */
    int appnum;
    char rbuf[WI_PMI_LINE_MAX];              /* received bytes not yet consumed */
    size_t rlen;
} wi_pmi_state_t;

extern wi_pmi_state_t wi_pmi;

/* wi_pmi_wire.c */
wu_status_t wi_pmi_wire_send(const char *buf, size_t len);
wu_status_t wi_pmi_wire_recv_line(char *line, size_t len);        /* without its '\n' */
wu_status_t wi_pmi_wire_recv_exact(char *buf, size_t len);
/* The value of field `name` of a PMI-1 line ("a=1 b=2") into out[len]; false if absent. */
bool wi_pmi_field(const char *line, const char *name, char *out, size_t len);
/* Sends a PMI-1 request line and reads the answer, which must be "cmd=<expect> ...". An answer
 * with rc other than 0 is an error unless rc_p is given (rc is returned there). */
wu_status_t wi_pmi_call(const char *req, const char *expect, char *resp, size_t len, int *rc_p);
bool wi_pmi_env_int(const char *name, int *v_p);
/* Connects to PMI_PORT ("host:port") into wi_pmi.fd. */
wu_status_t wi_pmi_wire_connect(const char *hostport);

/* Backends: each returns its table, or NULL after logging why. */
const wi_pmi_ops_t *wi_pmi1_init(bool port_mode);
const wi_pmi_ops_t *wi_pmi2_init(bool port_mode);
#ifdef WEFT_HAVE_PMIX
const wi_pmi_ops_t *wi_pmix_init(void);
#endif

#endif
