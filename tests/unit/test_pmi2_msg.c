/* The PMI-2 message parser and builder (src/pmi/wi_pmi2_msg.c), shared by the client and mpiexec's
 * server: length headers (both paddings, garbage, 0, too large), well-formed bodies (escaped ';',
 * empty values, repeated keys), every malformed shape (error with a reason, never a crash), a
 * build-then-parse round trip, the builder's overflow, then a seeded fuzz run over random and
 * mutated bodies: each parse either fails with a reason or yields pairs that lie inside the body.
 * Usage: test_pmi2_msg [seed] (default: from the clock; printed either way). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "pmi/wi_pmi2_msg.h"

static int failures;

#define FAIL(...)                                                                                \
    do {                                                                                         \
        fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                          \
        fprintf(stderr, __VA_ARGS__);                                                            \
        fputc('\n', stderr);                                                                     \
        if (++failures > 20)                                                                     \
            exit(1);                                                                             \
    } while (0)

static void expect_hdr(const char *hdr, long want)
{
    size_t len = 0;
    const char *why = NULL;
    bool ok = wi_pmi2_hdr_parse(hdr, &len, &why);
    if (want < 0 && ok)
        FAIL("header '%.6s': expected an error, got length %zu", hdr, len);
    else if (want < 0 && (!why || !*why))
        FAIL("header '%.6s': error without a reason", hdr);
    else if (want >= 0 && (!ok || len != (size_t)want))
        FAIL("header '%.6s': expected length %ld, got %s (%s)", hdr, want, ok ? "another" : "an error",
             ok ? "" : why);
}

/* Parses a copy of body; returns whether it parsed (msg points into a static copy). */
static bool parse(const char *body, wi_pmi2_msg_t *m, const char **why_p)
{
    static char buf[WI_PMI2_BODY_MAX + 1];
    size_t n = strlen(body);
    memcpy(buf, body, n);
    *why_p = NULL;
    return wi_pmi2_parse(buf, n, m, why_p);
}

static void expect_bad(const char *body)
{
    wi_pmi2_msg_t m;
    const char *why;
    if (parse(body, &m, &why))
        FAIL("body '%s': expected an error, parsed cmd=%s with %d pairs", body, m.cmd, m.npairs);
    else if (!why || !*why)
        FAIL("body '%s': error without a reason", body);
}

static void expect_pair(const wi_pmi2_msg_t *m, const char *key, const char *want)
{
    const char *got = wi_pmi2_get(m, key);
    if (!want && got)
        FAIL("key %s: expected absent, got '%s'", key, got);
    else if (want && (!got || strcmp(got, want)))
        FAIL("key %s: expected '%s', got '%s'", key, want, got ? got : "(absent)");
}

static void fixed_cases(void)
{
    wi_pmi2_msg_t m;
    const char *why;
    int v;

    expect_hdr("12    ", 12);
    expect_hdr("    12", 12);
    expect_hdr("  12  ", 12);
    expect_hdr("65536 ", 65536);
    expect_hdr("65537 ", -1);
    expect_hdr("999999", -1);
    expect_hdr("0     ", -1);
    expect_hdr("      ", -1);
    expect_hdr("1 2   ", -1);
    expect_hdr("12a   ", -1);
    expect_hdr("-5    ", -1);
    expect_hdr("cmd=in", -1);
    expect_hdr("\n12   ", -1);

    if (!parse("cmd=kvs-get;key=node-0;srcid=-1;", &m, &why))
        FAIL("simple body refused: %s", why);
    else {
        if (strcmp(m.cmd, "kvs-get") || m.npairs != 2)
            FAIL("simple body: cmd %s pairs %d", m.cmd, m.npairs);
        expect_pair(&m, "key", "node-0");
        expect_pair(&m, "srcid", "-1");
        expect_pair(&m, "jobid", NULL);
        if (!wi_pmi2_get_int(&m, "srcid", &v) || v != -1)
            FAIL("srcid as int: expected -1");
        if (wi_pmi2_get_int(&m, "key", &v))
            FAIL("key parsed as an int");
    }
    if (!parse("cmd=kvs-fence;", &m, &why) || strcmp(m.cmd, "kvs-fence") || m.npairs != 0)
        FAIL("body with no pairs: %s", why ? why : "wrong result");
    if (!parse("cmd=x;value=a;;b;;;empty=;found=true;", &m, &why))
        FAIL("escaped ';' refused: %s", why);
    else {
        expect_pair(&m, "value", "a;b;");
        expect_pair(&m, "empty", "");
        if (!wi_pmi2_get_bool(&m, "found") || wi_pmi2_get_bool(&m, "value"))
            FAIL("booleans read wrong");
    }
    if (!parse("cmd=x;k=1;k=2;", &m, &why))
        FAIL("repeated key refused: %s", why);
    else
        expect_pair(&m, "k", "1");
    if (!parse("cmd=x;v=a=b;", &m, &why))
        FAIL("'=' inside a value refused: %s", why);
    else
        expect_pair(&m, "v", "a=b");

    expect_bad("");
    expect_bad("cmd");
    expect_bad("cmd=");
    expect_bad("cmd=;");
    expect_bad("cmd=x");                 /* the command not closed */
    expect_bad("cmd=x;key");             /* a pair without '=' */
    expect_bad("cmd=x;key;");
    expect_bad("cmd=x;key=v");           /* a value not closed */
    expect_bad("cmd=x;key=v;;");         /* the ';' is escaped: still open */
    expect_bad("cmd=x;=v;");             /* an empty key */
    expect_bad("cmx=x;");
    expect_bad(" cmd=x;");
    expect_bad("key=v;cmd=x;");

    /* a NUL inside the body */
    char nul[] = "cmd=x;k=a\0b;";
    if (wi_pmi2_parse(nul, sizeof(nul) - 1, &m, &why))
        FAIL("body with a NUL byte parsed");

    /* too many pairs */
    char many[4096];
    size_t at = (size_t)snprintf(many, sizeof(many), "cmd=x;");
    for (int i = 0; i <= WI_PMI2_PAIRS_MAX; i++)
        at += (size_t)snprintf(many + at, sizeof(many) - at, "k%d=%d;", i, i);
    expect_bad(many);
}

static void round_trip(void)
{
    char buf[256];
    wi_pmi2_out_t o;
    wi_pmi2_msg_t m;
    const char *why;
    size_t blen;
    wi_pmi2_begin(&o, buf, sizeof(buf), "kvs-put");
    wi_pmi2_add(&o, "key", "k-1");
    wi_pmi2_add(&o, "value", ";x;;y=z;");
    wi_pmi2_add_int(&o, "n", -42);
    size_t n = wi_pmi2_end(&o);
    if (n == 0 || !wi_pmi2_hdr_parse(buf, &blen, &why) || blen + WI_PMI2_HDR_LEN != n) {
        FAIL("built message: length %zu, header '%.6s'", n, buf);
        return;
    }
    if (!wi_pmi2_parse(buf + WI_PMI2_HDR_LEN, blen, &m, &why)) {
        FAIL("built message does not parse: %s", why);
        return;
    }
    if (strcmp(m.cmd, "kvs-put"))
        FAIL("round trip: cmd %s", m.cmd);
    expect_pair(&m, "key", "k-1");
    expect_pair(&m, "value", ";x;;y=z;");
    expect_pair(&m, "n", "-42");

    char small[24];
    wi_pmi2_begin(&o, small, sizeof(small), "kvs-put");
    wi_pmi2_add(&o, "value", "a value too long for the buffer");
    if (wi_pmi2_end(&o) != 0)
        FAIL("builder overflow not reported");
}

/* Random bodies from an alphabet rich in separators, and mutations of a valid body: every parse
 * ends (the sanitizer build checks it stays inside the buffer) with a reason or with pairs whose
 * keys are non-empty and hold no '=' or ';' separators. */
static void fuzz(unsigned seed)
{
    static const char alphabet[] = "cmd=;;==ab-_ \n\t\x01\xff";
    static char buf[512];
    srand(seed);
    for (int iter = 0; iter < 200000; iter++) {
        size_t n = (size_t)(rand() % 64);
        if (iter % 2) {
            n = (size_t)snprintf(buf, sizeof(buf), "cmd=kvs-get;jobid=j;srcid=3;key=k;");
            for (int k = rand() % 4; k >= 0; k--)
                buf[rand() % (int)n] = alphabet[rand() % (int)(sizeof(alphabet) - 1)];
            if (rand() % 3 == 0)
                n = (size_t)(rand() % (int)n);
        } else {
            for (size_t i = 0; i < n; i++)
                buf[i] = alphabet[rand() % (int)(sizeof(alphabet) - 1)];
        }
        wi_pmi2_msg_t m;
        const char *why = NULL;
        if (!wi_pmi2_parse(buf, n, &m, &why)) {
            if (!why || !*why)
                FAIL("seed %u iteration %d: error without a reason", seed, iter);
            continue;
        }
        if (!*m.cmd)
            FAIL("seed %u iteration %d: empty command accepted", seed, iter);
        for (int i = 0; i < m.npairs; i++) {
            const char *k = m.pair[i].key, *val = m.pair[i].val;
            if (!*k || strpbrk(k, "=;") || k < buf || k > buf + n || val < buf || val > buf + n)
                FAIL("seed %u iteration %d: bad pair %d", seed, iter, i);
        }
        char hdr[WI_PMI2_HDR_LEN];
        size_t len;
        for (int i = 0; i < WI_PMI2_HDR_LEN; i++)
            hdr[i] = alphabet[rand() % (int)(sizeof(alphabet) - 1)];
        if (wi_pmi2_hdr_parse(hdr, &len, &why) && (len == 0 || len > WI_PMI2_BODY_MAX))
            FAIL("seed %u iteration %d: header gave length %zu", seed, iter, len);
    }
}

int main(int argc, char **argv)
{
    unsigned seed = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : (unsigned)time(NULL);
    printf("test_pmi2_msg: seed %u\n", seed);
    fixed_cases();
    round_trip();
    fuzz(seed);
    if (failures) {
        fprintf(stderr, "test_pmi2_msg: %d failures\n", failures);
        return 1;
    }
    printf("test_pmi2_msg: ok\n");
    return 0;
}
