/* The hosts of a Slurm allocation, for `-launcher slurm` without -hosts/-f and for mpiexec run
 * inside an allocation (salloc, sbatch) with neither hosts nor launcher given, as Hydra does.
 *
 * Slurm describes the allocation in the environment of the job:
 *   SLURM_JOB_NODELIST    a host list expression: "n[01-03,7],gpu-[1-2]-a,login" (older Slurm:
 *                         SLURM_NODELIST); brackets hold comma-separated numbers and ranges
 *                         whose zero padding is kept ("[08-10]" gives 08 09 10), and a name may
 *                         have several bracket groups ("r[1-2]n[1-2]": r1n1 r1n2 r2n1 r2n2);
 *   SLURM_TASKS_PER_NODE  the tasks of each host in the same order, runs compressed: "2(x3),1"
 *                         is 2,2,2,1 (older: SLURM_JOB_CPUS_PER_NODE, same syntax, CPUs).
 * The tasks per host become the hosts' slots, so `-n` without `-ppn` fills the allocation as
 * Slurm laid it out. Single-threaded: called once while the arguments are parsed. */
#include "mpiexec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MX_SLURM_MAX_HOSTS 65536   /* more than any allocation; bounds a malformed expression */

typedef struct {
    char **names;
    int n;
    bool bad;            /* out of memory or too many hosts */
} mx_namelist_t;

static void mx_names_add(mx_namelist_t *l, const char *name)
{
    if (l->bad)
        return;
    char **v = l->n < MX_SLURM_MAX_HOSTS ? realloc(l->names, (size_t)(l->n + 1) * sizeof(*v)) : NULL;
    char *dup = v ? strdup(name) : NULL;
    if (!v || !dup) {
        if (v)
            l->names = v;
        l->bad = true;
        return;
    }
    l->names = v;
    l->names[l->n++] = dup;
}

static void mx_names_free(mx_namelist_t *l)
{
    for (int i = 0; i < l->n; i++)
        free(l->names[i]);
    free(l->names);
    *l = (mx_namelist_t){ 0 };
}

/* Expands one name with bracket groups, `item` (len bytes), appending to `prefix` (of length
 * plen in a buffer of MX_SLURM_NAME bytes). Returns false on a malformed expression. */
#define MX_SLURM_NAME 256
static bool mx_expand_item(const char *item, size_t len, char *prefix, size_t plen,
                           mx_namelist_t *out)
{
    size_t lit = 0;
    while (lit < len && item[lit] != '[')
        lit++;
    if (plen + lit >= MX_SLURM_NAME)
        return false;
    memcpy(prefix + plen, item, lit);
    plen += lit;
    prefix[plen] = '\0';
    if (lit == len) {
        if (plen == 0)
            return false;
        mx_names_add(out, prefix);
        return true;
    }
    const char *close = memchr(item + lit, ']', len - lit);
    if (!close)
        return false;
    const char *rest = close + 1;
    size_t rest_len = len - (size_t)(rest - item);
    /* each comma-separated part of the group: N or A-B */
    for (const char *p = item + lit + 1; p < close;) {
        const char *end = memchr(p, ',', (size_t)(close - p));
        if (!end)
            end = close;
        const char *dash = memchr(p, '-', (size_t)(end - p));
        const char *a_end = dash ? dash : end;
        size_t width = (size_t)(a_end - p);
        if (width == 0 || width > 18 || (dash && (dash + 1 == end || end - dash - 1 > 18)))
            return false;
        char num[20];
        unsigned long long a, b;
        char *stop;
        memcpy(num, p, width);
        num[width] = '\0';
        if (num[0] < '0' || num[0] > '9')
            return false;
        a = strtoull(num, &stop, 10);
        if (*stop)
            return false;
        b = a;
        if (dash) {
            size_t w2 = (size_t)(end - dash - 1);
            memcpy(num, dash + 1, w2);
            num[w2] = '\0';
            if (num[0] < '0' || num[0] > '9')
                return false;
            b = strtoull(num, &stop, 10);
            if (*stop || b < a || b - a >= MX_SLURM_MAX_HOSTS)
                return false;
        }
        for (unsigned long long v = a; v <= b; v++) {
            int w = snprintf(prefix + plen, MX_SLURM_NAME - plen, "%0*llu", (int)width, v);
            if (w < 0 || (size_t)w >= MX_SLURM_NAME - plen)
                return false;
            if (!mx_expand_item(rest, rest_len, prefix, plen + (size_t)w, out))
                return false;
            if (out->bad)
                return true;
        }
        p = end + (end < close);
    }
    prefix[plen] = '\0';
    return true;
}

/* Expands a Slurm host list expression into out; false when it is malformed. */
static bool mx_slurm_expand(const char *expr, mx_namelist_t *out)
{
    char prefix[MX_SLURM_NAME];
    const char *p = expr;
    while (*p) {
        /* the item ends at the first comma outside brackets */
        size_t n = 0;
        int depth = 0;
        while (p[n] && (depth > 0 || p[n] != ',')) {
            if (p[n] == '[' && ++depth > 1)
                return false;
            if (p[n] == ']' && --depth < 0)
                return false;
            n++;
        }
        if (depth != 0 || n == 0 || !mx_expand_item(p, n, prefix, 0, out))
            return false;
        p += n;
        if (*p == ',' && !*++p)
            return false;
    }
    return out->n > 0 || out->bad;
}

/* Parses "2(x3),1" into counts[0..n); false when malformed or when it does not give n counts. */
static bool mx_slurm_counts(const char *s, int *counts, int n)
{
    int at = 0;
    while (*s) {
        char *end;
        errno = 0;
        long c = strtol(s, &end, 10);
        if (end == s || errno || c < 1 || c > MX_NPROCS_MAX)
            return false;
        long rep = 1;
        s = end;
        if (*s == '(') {
            if (s[1] != 'x')
                return false;
            rep = strtol(s + 2, &end, 10);
            if (end == s + 2 || *end != ')' || rep < 1 || rep > n - at)
                return false;
            s = end + 1;
        }
        if (rep > n - at)
            return false;
        for (long i = 0; i < rep; i++)
            counts[at++] = (int)c;
        if (*s == ',')
            s++;
        else if (*s)
            return false;
    }
    return at == n;
}

bool mx_slurm_in_allocation(void)
{
    const char *l = getenv("SLURM_JOB_NODELIST");
    if (!l || !*l)
        l = getenv("SLURM_NODELIST");
    return l && *l && getenv("SLURM_JOB_ID");
}

int mx_slurm_hosts(mx_opts_t *opts, const char *why)
{
    const char *var = "SLURM_JOB_NODELIST", *list = getenv(var);
    if (!list || !*list)
        list = getenv(var = "SLURM_NODELIST");
    if (!list || !*list) {
        fprintf(stderr, "mpiexec: %s needs -hosts or -f outside a Slurm allocation "
                "(SLURM_JOB_NODELIST is not set)\n", why);
        return -1;
    }
    mx_namelist_t names = { 0 };
    if (!mx_slurm_expand(list, &names) || names.bad) {
        fprintf(stderr, "mpiexec: %s: cannot read %s='%s' (%s)\n", why, var, list,
                names.bad ? "more hosts than mpiexec takes, or out of memory" : "not a Slurm host list");
        mx_names_free(&names);
        return -1;
    }
    const char *cvar = "SLURM_TASKS_PER_NODE", *cs = getenv(cvar);
    if (!cs || !*cs)
        cs = getenv(cvar = "SLURM_JOB_CPUS_PER_NODE");
    int *counts = calloc((size_t)names.n, sizeof(*counts));
    if (!counts) {
        mx_names_free(&names);
        fprintf(stderr, "mpiexec: out of memory\n");
        return -1;
    }
    if (cs && *cs && !mx_slurm_counts(cs, counts, names.n)) {
        fprintf(stderr, "mpiexec: %s: %s='%s' does not give one count for each of the %d hosts of "
                "%s='%s'\n", why, cvar, cs, names.n, var, list);
        free(counts);
        mx_names_free(&names);
        return -1;
    }
    int here = 0;
    for (int i = 0; i < names.n; i++)
        here += mx_host_is_here(names.names[i]);
    int r = 0;
    if (here == names.n && !opts->launcher_given && !opts->ppn && !opts->iface) {
        /* only this host: the ranks are our children, as without an allocation */
        r = 0;
    } else {
        mx_hostspec_t *h = calloc((size_t)names.n, sizeof(*h));
        if (!h) {
            fprintf(stderr, "mpiexec: out of memory\n");
            r = -1;
        } else {
            for (int i = 0; i < names.n; i++) {
                h[i] = (mx_hostspec_t){ .name = names.names[i], .slots = counts[i] };
                names.names[i] = NULL;
            }
            opts->hosts = h;
            opts->nhosts = names.n;
            opts->launcher = MX_LAUNCH_SLURM;
            r = names.n;
        }
    }
    free(counts);
    mx_names_free(&names);
    return r;
}
