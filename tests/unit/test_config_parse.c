/* The WEFT_* parser (src/util/wu_config.c): fixed cases (empty is the default, suffixes, overflow,
 * negative, malformed, words), the combinations refused, the job-settings encoding that ranks
 * compare at start-up, then a seeded fuzz run: random strings for every variable must each give
 * either a value inside the variable's range or an error naming the variable and the accepted
 * range. Usage: test_config_parse [seed] (default: from the clock; printed either way). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "util/wu_config.h"

static int failures;

#define FAIL(...)                                                                                \
    do {                                                                                         \
        fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                          \
        fprintf(stderr, __VA_ARGS__);                                                            \
        fputc('\n', stderr);                                                                     \
        if (++failures > 20)                                                                     \
            exit(1);                                                                             \
    } while (0)

static void expect_ok(wu_config_id_t id, const char *s, long want)
{
    char why[512] = "";
    long v = -12345;
    wu_status_t st = wu_config_parse(id, s, &v, why, sizeof(why));
    if (st != WU_OK || v != want)
        FAIL("WEFT_%s=\"%s\": expected %ld, got status %d value %ld (%s)", wu_config_desc(id)->name,
             s, want, (int)st, v, why);
}

static void expect_err(wu_config_id_t id, const char *s, const char *reason)
{
    char why[512] = "", name[96];
    long v = -12345;
    wu_status_t st = wu_config_parse(id, s, &v, why, sizeof(why));
    snprintf(name, sizeof(name), "WEFT_%s=", wu_config_desc(id)->name);
    if (st != WU_ERR_INVALID)
        FAIL("WEFT_%s=\"%s\": expected an error (%s), got status %d value %ld",
             wu_config_desc(id)->name, s, reason, (int)st, v);
    else if (!strstr(why, name) || !strstr(why, reason) || !strstr(why, "accepted: "))
        FAIL("WEFT_%s=\"%s\": the message should name the variable, say \"%s\" and the range: %s",
             wu_config_desc(id)->name, s, reason, why);
    if (v != -12345)
        FAIL("WEFT_%s=\"%s\": the output was written on failure", wu_config_desc(id)->name, s);
}

static void test_fixed(void)
{
    expect_ok(WU_CONFIG_SHM_EAGER_MAX, "", 16384);       /* empty: the default */
    expect_ok(WU_CONFIG_SHM_EAGER_MAX, NULL, 16384);
    expect_ok(WU_CONFIG_SHM_EAGER_MAX, "16k", 16384);
    expect_ok(WU_CONFIG_SHM_EAGER_MAX, "8M", 8L << 20);
    expect_ok(WU_CONFIG_SHM_EAGER_MAX, "0", 0);
    expect_ok(WU_CONFIG_SHM_EAGER_MAX, "64m", 64L << 20);
    expect_ok(WU_CONFIG_SHM_CMA_MIN, "1t", 1L << 40);
    expect_err(WU_CONFIG_SHM_EAGER_MAX, "9999999999999g", "too large");
    expect_err(WU_CONFIG_SHM_EAGER_MAX, "99999999999999999999999", "too large");
    expect_err(WU_CONFIG_SHM_EAGER_MAX, "64m1", "not a size");
    expect_err(WU_CONFIG_SHM_EAGER_MAX, "65m", "out of range");
    expect_err(WU_CONFIG_SHM_EAGER_MAX, "-1", "out of range");
    expect_err(WU_CONFIG_SHM_EAGER_MAX, "0x10", "not a size");
    expect_err(WU_CONFIG_SHM_EAGER_MAX, " 16", "not a number");
    expect_err(WU_CONFIG_SHM_EAGER_MAX, "16 ", "not a size");
    expect_err(WU_CONFIG_SHM_EAGER_MAX, "k", "not a number");
    expect_err(WU_CONFIG_SHM_EAGER_MAX, "16kb", "not a size");
    expect_err(WU_CONFIG_SPIN_US, "10k", "not a number");   /* suffixes are for sizes */
    expect_err(WU_CONFIG_SPIN_US, "-5", "out of range");
    expect_ok(WU_CONFIG_SPIN_US, "", 10);
    expect_err(WU_CONFIG_OFI_FRAG_SIZE, "1023", "out of range");
    expect_ok(WU_CONFIG_OFI_FRAG_SIZE, "1k", 1024);
    expect_err(WU_CONFIG_OFI_RX_BUFS, "1", "out of range");
    expect_ok(WU_CONFIG_DEBUG, "yes", 1);
    expect_ok(WU_CONFIG_DEBUG, "off", 0);
    expect_ok(WU_CONFIG_DEBUG, "", 0);
    expect_err(WU_CONFIG_DEBUG, "2", "not a boolean");
    expect_ok(WU_CONFIG_WAIT_YIELD, "auto", 0);
    expect_ok(WU_CONFIG_WAIT_YIELD, "1", 1);
    expect_ok(WU_CONFIG_WAIT_YIELD, "0", 2);
    expect_ok(WU_CONFIG_WAIT_YIELD, "", 0);
    expect_err(WU_CONFIG_WAIT_YIELD, "maybe", "not one of the accepted words");
    expect_err(WU_CONFIG_WAIT_YIELD, "aut", "not one of the accepted words");
    expect_err(WU_CONFIG_WAIT_YIELD, "auto|1", "not one of the accepted words");
    expect_ok(WU_CONFIG_TRANSPORTS, "self,ofi", 3);
    expect_ok(WU_CONFIG_TRANSPORTS, "shm,tcp", 5);   /* the tcp transport (docs/tcp.md) */
    expect_err(WU_CONFIG_TRANSPORTS, "self,udp", "not one of the accepted words");
    expect_ok(WU_CONFIG_OFI_ADDR_FILE, "/tmp/any thing", 0);   /* free text */

    /* the environment: empty is unset, and reads as the default */
    setenv("WEFT_PROGRESS_IDLE_LEVEL", "", 1);
    if (wu_config_is_set(WU_CONFIG_PROGRESS_IDLE_LEVEL) ||
        strcmp(wu_config_str(WU_CONFIG_PROGRESS_IDLE_LEVEL), "package"))
        FAIL("an empty WEFT_PROGRESS_IDLE_LEVEL should be unset, reading \"package\"");
    setenv("WEFT_PROGRESS_IDLE_LEVEL", "core", 1);
    if (!wu_config_is_set(WU_CONFIG_PROGRESS_IDLE_LEVEL) ||
        strcmp(wu_config_str(WU_CONFIG_PROGRESS_IDLE_LEVEL), "core"))
        FAIL("WEFT_PROGRESS_IDLE_LEVEL=core should be set, reading \"core\"");
    unsetenv("WEFT_PROGRESS_IDLE_LEVEL");

    char why[512], range[200];
    if (!strstr(wu_config_range_str(WU_CONFIG_WAIT_YIELD, range, sizeof(range)), "auto, 1 or 0"))
        FAIL("WAIT_YIELD range: %s", range);
    if (!strstr(wu_config_range_str(WU_CONFIG_SHM_EAGER_MAX, range, sizeof(range)), "0 to 64m"))
        FAIL("SHM_EAGER_MAX range: %s", range);

    long vals[WU_CONFIG_COUNT];
    for (int i = 0; i < WU_CONFIG_COUNT; i++)
        if (wu_config_parse((wu_config_id_t)i, NULL, &vals[i], why, sizeof(why)) != WU_OK)
            FAIL("the default of WEFT_%s does not parse: %s", wu_config_desc(i)->name, why);
    if (wu_config_check_values(vals, why, sizeof(why)) != WU_OK)
        FAIL("the defaults are refused: %s", why);
    vals[WU_CONFIG_SHM_EAGER_MAX] = 0;
    if (wu_config_check_values(vals, why, sizeof(why)) != WU_OK)
        FAIL("eager 0 with fragments of 32k is refused: %s", why);
    vals[WU_CONFIG_SHM_FRAG_SIZE] = 0;
    if (wu_config_check_values(vals, why, sizeof(why)) != WU_ERR_INVALID ||
        !strstr(why, "WEFT_SHM_EAGER_MAX") || !strstr(why, "WEFT_SHM_FRAG_SIZE"))
        FAIL("eager and fragment size both 0 should be refused naming both: %s", why);
}

/* The start-up comparison: equal strings agree, one differing value is named. */
static void test_job_diff(void)
{
    char mine[512], theirs[512], a[64], b[64];
    wu_config_id_t id;
    wu_config_job_encode(mine, sizeof(mine));
    if (wu_config_job_diff(mine, mine, &id, a, b, sizeof(a)) != WU_ERR_NOT_FOUND)
        FAIL("a settings string differs from itself: %s", mine);
    /* rebuild it with SHM_CMA = "0" (word 2) in place of this process's value */
    size_t n = (size_t)snprintf(theirs, sizeof(theirs), "cfg1");
    for (int i = 0; i < WU_CONFIG_COUNT; i++) {
        if (wu_config_desc(i)->scope != WU_CONFIG_JOB)
            continue;
        long v = wu_config_int(i);
        if (i == WU_CONFIG_SHM_CMA)
            v = v == 2 ? 1 : 2;
        n += (size_t)snprintf(theirs + n, sizeof(theirs) - n, ":%ld", v);
    }
    if (wu_config_job_diff(mine, theirs, &id, a, b, sizeof(a)) != WU_OK || id != WU_CONFIG_SHM_CMA)
        FAIL("a different WEFT_SHM_CMA was not found: %s vs %s", mine, theirs);
    else if (strcmp(b, wu_config_int(WU_CONFIG_SHM_CMA) == 2 ? "1" : "0"))
        FAIL("the other value of WEFT_SHM_CMA reads %s", b);
    char shorter[512];
    snprintf(shorter, sizeof(shorter), "%s", mine);
    *strrchr(shorter, ':') = '\0';   /* the same values, one fewer */
    if (wu_config_job_diff(mine, shorter, &id, a, b, sizeof(a)) != WU_ERR_INVALID)
        FAIL("a settings string with one value fewer was accepted: %s", shorter);
    if (wu_config_job_diff(mine, "garbage", &id, a, b, sizeof(a)) != WU_ERR_INVALID)
        FAIL("garbage was accepted as settings");
}

static unsigned long long rng_state;
static unsigned rnd(unsigned n)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)((rng_state >> 33) % n);
}

/* A random string: mostly near-valid (digits, suffixes, signs, the variable's words), some noise. */
static void random_value(const wu_config_desc_t *d, char *s, size_t len)
{
    static const char alpha[] = "0123456789kmgtKMGTb-+xX .,|autoyesnocr\t\xff";
    size_t n = 0, want = rnd(24);
    if (d->words && rnd(3) == 0) {
        /* a word, maybe mangled */
        const char *w = d->words;
        for (unsigned k = rnd(5); k > 0 && strchr(w, '|'); k--)
            w = strchr(w, '|') + 1;
        n = strcspn(w, "|");
        if (n >= len)
            n = len - 1;
        memcpy(s, w, n);
        if (rnd(2) && n > 0)
            s[rnd((unsigned)n)] = alpha[rnd(sizeof(alpha) - 1)];
        s[n] = '\0';
        return;
    }
    for (; n < want && n + 1 < len; n++)
        s[n] = rnd(4) ? "0123456789"[rnd(10)] : alpha[rnd(sizeof(alpha) - 1)];
    s[n] = '\0';
}

static void test_fuzz(unsigned long long seed, int rounds)
{
    char s[64], why[512], name[96];
    rng_state = seed;
    for (int i = 0; i < WU_CONFIG_COUNT; i++) {
        const wu_config_desc_t *d = wu_config_desc((wu_config_id_t)i);
        snprintf(name, sizeof(name), "WEFT_%s=", d->name);
        for (int r = 0; r < rounds; r++) {
            random_value(d, s, sizeof(s));
            long v = LONG_MIN;
            wu_status_t st = wu_config_parse((wu_config_id_t)i, s, &v, why, sizeof(why));
            if (st == WU_ERR_INVALID) {
                if (!strstr(why, name) || !strstr(why, "accepted: "))
                    FAIL("seed %llu: WEFT_%s=\"%s\": error message lacks the name or range: %s",
                         seed, d->name, s, why);
                continue;
            }
            if (st != WU_OK) {
                FAIL("seed %llu: WEFT_%s=\"%s\": status %d", seed, d->name, s, (int)st);
                continue;
            }
            bool in = true;
            if (d->type == WU_CONFIG_INT || d->type == WU_CONFIG_SIZE)
                in = v >= d->min && v <= d->max;
            else if (d->type == WU_CONFIG_BOOL)
                in = v == 0 || v == 1;
            else if (d->words)
                in = v >= 0 && v < 16;
            if (!in)
                FAIL("seed %llu: WEFT_%s=\"%s\" gave %ld, outside the range", seed, d->name, s, v);
            /* plain decimal strings must give their own value */
            char *end;
            if ((d->type == WU_CONFIG_INT || d->type == WU_CONFIG_SIZE) && *s && s[0] != '-' &&
                strspn(s, "0123456789") == strlen(s) && strlen(s) < 18 &&
                strtoll(s, &end, 10) != v)
                FAIL("seed %llu: WEFT_%s=\"%s\" gave %ld", seed, d->name, s, v);
        }
    }
}

int main(int argc, char **argv)
{
    unsigned long long seed = argc > 1 ? strtoull(argv[1], NULL, 0) : (unsigned long long)time(NULL);
    printf("test_config_parse: seed %llu (rerun: test_config_parse %llu)\n", seed, seed);
    test_fixed();
    test_job_diff();
    test_fuzz(seed, 5000);
    if (failures) {
        fprintf(stderr, "test_config_parse: %d failure(s), seed %llu\n", failures, seed);
        return 1;
    }
    printf("test_config_parse: ok\n");
    return 0;
}
