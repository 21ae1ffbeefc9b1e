/* PMI-2 wire messages, parsed and built; shared by the client (wi_pmi2.c) and mpiexec's server
 * (tools/mpiexec/pmi_server.c). Pure functions on caller buffers: no I/O, no allocation, no
 * logging, nothing shared (any thread may call them on its own buffers).
 *
 * A message is a 6-byte header giving the body's length in ASCII decimal (padded with spaces on
 * either side, as MPICH pads on the left and Slurm on the right), then the body:
 * "cmd=NAME;key=value;key=value;". Every pair ends with ';'; a ';' inside a value is written ";;".
 * Keys are non-empty and hold neither '=' nor ';'. The body holds no NUL byte. (Before the first
 * PMI-2 message, the client sends the PMI-1 line "cmd=init pmi_version=2 pmi_subversion=0\n" and
 * the server answers it as a PMI-1 line.)
 */
#ifndef WI_PMI2_MSG_H
#define WI_PMI2_MSG_H

#include <stdbool.h>
#include <stddef.h>

#define WI_PMI2_HDR_LEN   6
#define WI_PMI2_BODY_MAX  65536   /* longest body accepted or built */
#define WI_PMI2_PAIRS_MAX 64      /* pairs after cmd (spawn would need more; it is refused) */

typedef struct {
    const char *cmd;
    int npairs;
    struct {
        const char *key, *val;
    } pair[WI_PMI2_PAIRS_MAX];
} wi_pmi2_msg_t;

/* The body length announced by hdr[0..5]; false (with *why_p) unless it is 1..WI_PMI2_BODY_MAX
 * written in decimal digits with only spaces around them. */
bool wi_pmi2_hdr_parse(const char hdr[WI_PMI2_HDR_LEN], size_t *len_p, const char **why_p);

/* Parses body[0..len) in place (it is unescaped and cut into NUL-terminated strings; body must
 * have room for len + 1 bytes). On success msg points into body; false (with *why_p) when the
 * body is malformed: no leading "cmd=", a pair without '=' or without its closing ';', an empty
 * key, a NUL byte, more than WI_PMI2_PAIRS_MAX pairs. */
bool wi_pmi2_parse(char *body, size_t len, wi_pmi2_msg_t *msg, const char **why_p);

/* The value of key in msg (the first if repeated), or NULL. */
const char *wi_pmi2_get(const wi_pmi2_msg_t *msg, const char *key);
/* The value of key as an int; false if absent or not a decimal integer. */
bool wi_pmi2_get_int(const wi_pmi2_msg_t *msg, const char *key, int *v_p);
/* True if key is present and "TRUE" (any case). */
bool wi_pmi2_get_bool(const wi_pmi2_msg_t *msg, const char *key);

/* Building a message in buf[cap]: wi_pmi2_begin leaves room for the header and writes
 * "cmd=NAME;", wi_pmi2_add appends "key=value;" (escaping ';' in value), wi_pmi2_end writes the
 * header and returns the message's total length; 0 when it did not fit (each call is then a no-op). */
typedef struct {
    char *buf;
    size_t cap, len;
    bool overflow;
} wi_pmi2_out_t;

void wi_pmi2_begin(wi_pmi2_out_t *o, char *buf, size_t cap, const char *cmd);
void wi_pmi2_add(wi_pmi2_out_t *o, const char *key, const char *val);
void wi_pmi2_add_int(wi_pmi2_out_t *o, const char *key, long val);
size_t wi_pmi2_end(wi_pmi2_out_t *o);

#endif
