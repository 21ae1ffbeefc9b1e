/* PMI-2 message parsing and building; see wi_pmi2_msg.h. */
#include "pmi/wi_pmi2_msg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

bool wi_pmi2_hdr_parse(const char hdr[WI_PMI2_HDR_LEN], size_t *len_p, const char **why_p)
{
    size_t i = 0, v = 0;
    while (i < WI_PMI2_HDR_LEN && hdr[i] == ' ')
        i++;
    size_t digits = 0;
    for (; i < WI_PMI2_HDR_LEN && hdr[i] >= '0' && hdr[i] <= '9'; i++, digits++)
        v = v * 10 + (size_t)(hdr[i] - '0');
    while (i < WI_PMI2_HDR_LEN && hdr[i] == ' ')
        i++;
    if (i < WI_PMI2_HDR_LEN || digits == 0) {
        *why_p = "the length header is not a decimal number";
        return false;
    }
    if (v == 0 || v > WI_PMI2_BODY_MAX) {
        *why_p = "the announced length is 0 or too large";
        return false;
    }
    *len_p = v;
    return true;
}

/* Unescapes the value starting at *p (up to end) in place, NUL-terminates it and moves *p past
 * its closing ';'. False if no closing ';'. */
static bool wi_pmi2_take_value(char **p, char *end)
{
    char *r = *p, *w = *p;
    while (r < end) {
        if (*r == ';') {
            if (r + 1 < end && r[1] == ';') {
                *w++ = ';';
                r += 2;
                continue;
            }
            *w = '\0';
            *p = r + 1;
            return true;
        }
        *w++ = *r++;
    }
    return false;
}

bool wi_pmi2_parse(char *body, size_t len, wi_pmi2_msg_t *msg, const char **why_p)
{
    char *end = body + len, *p = body;
    if (memchr(body, '\0', len)) {
        *why_p = "the message holds a NUL byte";
        return false;
    }
    body[len] = '\0';
    if (len < 5 || strncmp(body, "cmd=", 4) != 0) {
        *why_p = "the message does not start with cmd=";
        return false;
    }
    p += 4;
    msg->cmd = p;
    if (!wi_pmi2_take_value(&p, end) || !*msg->cmd) {
        *why_p = "the command name is empty or not closed by ';'";
        return false;
    }
    msg->npairs = 0;
    while (p < end) {
        char *key = p, *eq = p;
        while (eq < end && *eq != '=' && *eq != ';')
            eq++;
        if (eq == end || *eq != '=') {
            *why_p = "a pair has no '='";
            return false;
        }
        if (eq == key) {
            *why_p = "a pair has an empty key";
            return false;
        }
        if (msg->npairs == WI_PMI2_PAIRS_MAX) {
            *why_p = "the message has too many pairs";
            return false;
        }
        *eq = '\0';
        p = eq + 1;
        const char *val = p;
        if (!wi_pmi2_take_value(&p, end)) {
            *why_p = "a value is not closed by ';'";
            return false;
        }
        msg->pair[msg->npairs].key = key;
        msg->pair[msg->npairs].val = val;
        msg->npairs++;
    }
    return true;
}

const char *wi_pmi2_get(const wi_pmi2_msg_t *msg, const char *key)
{
    for (int i = 0; i < msg->npairs; i++)
        if (!strcmp(msg->pair[i].key, key))
            return msg->pair[i].val;
    return NULL;
}

bool wi_pmi2_get_int(const wi_pmi2_msg_t *msg, const char *key, int *v_p)
{
    const char *s = wi_pmi2_get(msg, key);
    char *e;
    if (!s || !*s)
        return false;
    long v = strtol(s, &e, 10);
    if (*e || v < -2147483647L - 1 || v > 2147483647L)
        return false;
    *v_p = (int)v;
    return true;
}

bool wi_pmi2_get_bool(const wi_pmi2_msg_t *msg, const char *key)
{
    const char *s = wi_pmi2_get(msg, key);
    return s && !strcasecmp(s, "TRUE");
}

/* ---- building ----------------------------------------------------------------------------- */

static void wi_pmi2_put(wi_pmi2_out_t *o, const char *s, bool escape)
{
    for (; *s && !o->overflow; s++) {
        size_t need = escape && *s == ';' ? 2 : 1;
        if (o->len + need >= o->cap || o->len + need - WI_PMI2_HDR_LEN > WI_PMI2_BODY_MAX) {
            o->overflow = true;
            return;
        }
        o->buf[o->len++] = *s;
        if (need == 2)
            o->buf[o->len++] = ';';
    }
}

void wi_pmi2_begin(wi_pmi2_out_t *o, char *buf, size_t cap, const char *cmd)
{
    o->buf = buf;
    o->cap = cap;
    o->len = WI_PMI2_HDR_LEN;
    o->overflow = cap <= WI_PMI2_HDR_LEN;
    wi_pmi2_put(o, "cmd=", false);
    wi_pmi2_put(o, cmd, false);
    wi_pmi2_put(o, ";", false);
}

void wi_pmi2_add(wi_pmi2_out_t *o, const char *key, const char *val)
{
    wi_pmi2_put(o, key, false);
    wi_pmi2_put(o, "=", false);
    wi_pmi2_put(o, val, true);
    wi_pmi2_put(o, ";", false);
}

void wi_pmi2_add_int(wi_pmi2_out_t *o, const char *key, long val)
{
    char num[24];
    snprintf(num, sizeof(num), "%ld", val);
    wi_pmi2_add(o, key, num);
}

size_t wi_pmi2_end(wi_pmi2_out_t *o)
{
    char hdr[WI_PMI2_HDR_LEN + 1];
    if (o->overflow)
        return 0;
    snprintf(hdr, sizeof(hdr), "%-6zu", o->len - WI_PMI2_HDR_LEN);
    memcpy(o->buf, hdr, WI_PMI2_HDR_LEN);
    o->buf[o->len] = '\0';
    return o->len;
}
