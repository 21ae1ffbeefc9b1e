/* weft-info: what this Weft was built with and how the environment configures it (after Open MPI's
 * ompi_info). Needs no job: it reads the WEFT_* variables of its own environment, the table of
 * src/util/wu_config_vars.h, and the progression settings derived from them.
 *
 *   weft-info [--all]          everything (the default)
 *   weft-info --vars           only the WEFT_* variables
 *   weft-info --pvars          only MPI_T's performance variables
 *   weft-info --parsable       key:value lines (with --vars: only the variables), for scripts
 * Control variables (MPI_T) are the WEFT_* variables; both lists come from the tables MPI_T uses
 * (src/mpi/wm_t.h), so the two agree.
 */
#include "mpi/wm_t.h"
#include "progress/wp_engine.h"
#include "thread/wt_thread.h"
#include "wt_thread_config.h"   /* WT_BACKENDS_AVAILABLE */
#include "transport/ofi/wx_ofi.h"
#include "transport/sock/wx_tcp.h"
#include "util/wu_config.h"
#include "weft_version.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool parsable;

static const char *type_name(wu_config_type_t t)
{
    switch (t) {
    case WU_CONFIG_INT:  return "int";
    case WU_CONFIG_SIZE: return "size";
    case WU_CONFIG_BOOL: return "bool";
    case WU_CONFIG_STR:  return "string";
    }
    return "?";
}

/* A section title, or nothing when parsable. */
static void title(const char *t)
{
    if (!parsable)
        printf("%s\n", t);
}

/* One fact: "  label value (note)" for people, "key:value" for scripts. */
static void fact(const char *key, const char *label, const char *value, const char *note)
{
    if (parsable)
        printf("%s:%s\n", key, value);
    else if (note)
        printf("  %-28s %s (%s)\n", label, value, note);
    else
        printf("  %-28s %s\n", label, value);
}

static void fact_num(const char *key, const char *label, long value)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%ld", value);
    fact(key, label, buf, NULL);
}

static const char *const ofi_kind[] = { "hardware", "tcp;ofi_rxm", "tcp", "other", "one node only" };

#define OFI_SEEN_MAX 64
typedef struct ofi_seen {
    int n;
    char chosen[160];
    char offers[OFI_SEEN_MAX][160];   /* printed already: libfabric repeats an offer per variant */
} ofi_seen_t;

static void ofi_offer(const char *prov, const char *fabric, const char *domain, int rank, bool rma,
                      bool chosen, void *arg)
{
    ofi_seen_t *seen = arg;
    char key[48], label[48], note[160], id[160];
    snprintf(id, sizeof(id), "%s (fabric %s, domain %s)", prov, fabric, domain);
    if (chosen)
        snprintf(seen->chosen, sizeof(seen->chosen), "%s", id);
    for (int i = 0; i < seen->n && i < OFI_SEEN_MAX; i++)
        if (!strcmp(seen->offers[i], id))
            return;
    if (seen->n < OFI_SEEN_MAX)
        snprintf(seen->offers[seen->n], sizeof(seen->offers[0]), "%s", id);
    seen->n++;
    snprintf(key, sizeof(key), "transport:ofi:provider:%d", seen->n);
    snprintf(label, sizeof(label), "  offer %d:", seen->n);
    snprintf(note, sizeof(note), "fabric %s, domain %s, %s, %s%s", fabric, domain, ofi_kind[rank],
             rma ? "RMA" : "no RMA", chosen ? "; chosen" : "");
    fact(key, label, prov, note);
}

/* Whether ofi was built, what libfabric offers here and which offer a job would take. */
static void print_ofi(void)
{
    if (!wx_ofi_built) {
        fact("transport:ofi", "ofi:", "no", "built without libfabric: ranks on several nodes "
             "cannot run");
        return;
    }
    fact("transport:ofi", "ofi:", "yes", "libfabric, between nodes (WEFT_TRANSPORTS)");
    const char *fp = getenv("FI_PROVIDER");
    fact("transport:ofi:fi_provider", "ofi FI_PROVIDER:", fp ? fp : "(unset)",
         fp ? "libfabric offers only these" : "every provider is offered");
    static ofi_seen_t seen;
    if (wx_ofi_providers(ofi_offer, &seen) != WU_OK || seen.n == 0) {
        fact("transport:ofi:chosen", "ofi chosen:", "none",
             "no provider has reliable datagrams, messages and send-after-send order");
        return;
    }
    fact("transport:ofi:chosen", "ofi chosen:", seen.chosen,
         "preferred: hardware (verbs, efa, cxi, psm3, opx, psm2), then tcp;ofi_rxm, tcp, "
         "others, shm; first of libfabric's order within a kind");
}

static void print_build(void)
{
    char note[96];
    title("Weft");
    fact("weft:version", "version:", WEFT_VERSION, NULL);
    fact("weft:abi", "MPI ABI:", "MPI 5.0 standard ABI", "libmpi_abi.so.1");
    title("Threading");
#ifdef WEFT_THREADS_RUNTIME
    fact("thread:backend", "backend:", WT_BACKEND_NAME,
         "chosen at start-up: environment WEFT_THREADS (pthreads|pth)");
#else
    fact("thread:backend", "backend:", WT_BACKEND_NAME, "chosen at build time: cmake WEFT_THREADS");
#endif
    fact("thread:backends", "backends on this machine:", WT_BACKENDS_AVAILABLE,
         "found at configure time; argobots: not supported (no Debian 12 package, no backend here)");
    fact("thread:wait", "sleeping waits:", WT_BACKEND_WAIT, NULL);
    fact("thread:gate", "locks taken:", "at MPI_THREAD_MULTIPLE or with progress threads",
         "otherwise a lock is one branch");
    title("Transports");
    fact("transport:shm", "shm:", "yes", "shared-memory rings, one per ordered pair of ranks");
    snprintf(note, sizeof(note), "WEFT_SHM_CMA=%s", wu_config_str(WU_CONFIG_SHM_CMA));
    fact("transport:shm:cma", "shm single copy (CMA):", "probed at start-up", note);
    fact("transport:self", "self:", "yes", "in the core: a rank sending to itself");
    fact("transport:tcp", "tcp:", "yes", "Weft's own TCP streams, between nodes (WEFT_TRANSPORTS)");
    print_ofi();
    /* WEFT_TRANSPORTS=auto's rule between nodes, and what it gives on this node (no libfabric is
     * loaded to decide it) */
    char why[200];
    bool tcp = wx_tcp_auto_preferred(why, sizeof(why));
    if (!tcp && !wx_ofi_built)
        snprintf(why + strlen(why), sizeof(why) - strlen(why), ", but no libfabric in this build: tcp");
    fact("transport:auto:rule", "auto between nodes:",
         "tcp if /sys/class/infiniband is absent or empty and FI_PROVIDER is unset, else ofi", NULL);
    fact("transport:auto:here", "auto here:", tcp || !wx_ofi_built ? "tcp" : "ofi", why);
    fact("transport:selected", "WEFT_TRANSPORTS:", wu_config_str(WU_CONFIG_TRANSPORTS),
         "auto|self,shm|shm,tcp|shm,ofi|self,tcp|self,ofi");
}

static void print_progress(void)
{
    wp_engine_config_t cfg;
    wp_engine_config_from_env(&cfg);
    title("Progression (from WEFT_PROGRESS_*)");
    fact_num("progress:explicit_poll", "explicit_poll:", cfg.explicit_poll);
    fact_num("progress:idle_threads", "idle_threads:", cfg.idle_threads);
    fact("progress:idle_level", "idle_level:", cfg.idle_level ? cfg.idle_level : "", NULL);
    fact_num("progress:idle_pause_us", "idle_pause_us:", (long)cfg.idle_pause_us);
    fact_num("progress:timer_thread", "timer_thread:", cfg.timer_thread);
    fact_num("progress:timer_period_us", "timer_period_us:", (long)cfg.timer_period_us);
}

static const char *scope_name(wu_config_scope_t s)
{
    switch (s) {
    case WU_CONFIG_RANK:   return "rank";
    case WU_CONFIG_RUN:    return "rank, writable at run time (MPI_T_cvar_write)";
    case WU_CONFIG_JOB:    return "job (the same on every rank, checked at start-up)";
    case WU_CONFIG_LAUNCH: return "mpiexec";
    }
    return "?";
}

static void print_vars(void)
{
    title("Variables (WEFT_*; docs/tuning.md)");
    for (int i = 0; i < WU_CONFIG_COUNT; i++) {
        const wu_config_desc_t *d = wu_config_desc((wu_config_id_t)i);
        char name[96], range[200], why[256];
        snprintf(name, sizeof(name), "WEFT_%s", d->name);
        wu_config_range_str((wu_config_id_t)i, range, sizeof(range));
        const char *raw = wu_config_str((wu_config_id_t)i);
        bool set = wu_config_is_set((wu_config_id_t)i);
        long v;
        bool valid = wu_config_parse((wu_config_id_t)i, raw, &v, why, sizeof(why)) == WU_OK;
        char effective[48] = "";
        if (d->type != WU_CONFIG_STR)
            snprintf(effective, sizeof(effective), "%ld", wu_config_int((wu_config_id_t)i));

        if (parsable) {
            printf("var:%s:value:%s\n", name, d->type == WU_CONFIG_STR ? raw : effective);
            printf("var:%s:type:%s\n", name, type_name(d->type));
            printf("var:%s:default:%s\n", name, d->def);
            printf("var:%s:range:%s\n", name, range);
            printf("var:%s:scope:%s\n", name, scope_name(d->scope));
            printf("var:%s:mpit:cvar %d, %s\n", name, i,
                   d->scope == WU_CONFIG_RUN ? "writable" : "read-only");
            printf("var:%s:source:%s\n", name, set ? "environment" : "default");
            if (!valid)
                printf("var:%s:error:%s\n", name, why);
            printf("var:%s:meaning:%s\n", name, d->desc);
            continue;
        }
        printf("  %s = %s", name, *raw ? raw : "\"\"");
        if (valid && d->type != WU_CONFIG_STR && strcmp(raw, effective) != 0)
            printf(" (= %s)", effective);
        printf("   [%s, default %s%s]\n", type_name(d->type), *d->def ? d->def : "\"\"",
               set ? ", set in the environment" : "");
        printf("      accepted: %s; scope: %s\n", range, scope_name(d->scope));
        printf("      MPI_T: control variable %d (%s), %s\n", i, wm_t_cvar_name(i),
               d->scope == WU_CONFIG_RUN ? "writable" : "read-only");
        if (!valid)
            printf("      INVALID: %s\n", why);
        printf("      %s\n", d->desc);
    }
}

static const char *pvar_class_name(int c)
{
    switch (c) {
    case MPI_T_PVAR_CLASS_COUNTER:       return "counter";
    case MPI_T_PVAR_CLASS_LEVEL:         return "level";
    case MPI_T_PVAR_CLASS_HIGHWATERMARK: return "high-water mark";
    }
    return "other";
}

/* MPI_T's performance variables, from the table MPI_T reads. */
static void print_pvars(void)
{
    title("Performance variables (MPI_T; docs/mpit.md)");
    for (int i = 0; i < wm_t_pvar_num(); i++) {
        const wm_t_pvar_t *p = wm_t_pvar(i);
        const char *how = p->continuous ? "continuous, read-only" : "started and stopped per handle";
        if (parsable) {
            printf("pvar:%s:index:%d\n", p->name, i);
            printf("pvar:%s:class:%s\n", p->name, pvar_class_name(p->var_class));
            printf("pvar:%s:category:%s\n", p->name, wm_t_cat((int)p->cat)->name);
            printf("pvar:%s:mode:%s\n", p->name, how);
            printf("pvar:%s:meaning:%s\n", p->name, p->desc);
            continue;
        }
        printf("  %-26s [%d, %s, %s; %s]\n      %s\n", p->name, i, pvar_class_name(p->var_class),
               "unsigned long long", how, p->desc);
    }
}

static void usage(FILE *f)
{
    fprintf(f, "usage: weft-info [--all | --vars | --pvars] [--parsable]\n"
               "  --all       version, threading, transports, progression and variables (default)\n"
               "  --vars      only the WEFT_* variables: value, type, default, range, meaning\n"
               "  --pvars     only MPI_T's performance variables\n"
               "  --parsable  key:value lines for scripts\n");
}

int main(int argc, char **argv)
{
    bool all = true, vars_only = true;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--all")) {
            all = true;
        } else if (!strcmp(argv[i], "--vars")) {
            all = false;
            vars_only = true;
        } else if (!strcmp(argv[i], "--pvars")) {
            all = false;
            vars_only = false;
        } else if (!strcmp(argv[i], "--parsable")) {
            parsable = true;
        } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "weft-info: unknown option %s\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    /* bad values are logged; the listing still shows every variable, and the status says so */
    wu_status_t st = wu_config_init();
    if (all) {
        print_build();
        print_progress();
    }
    if (all || vars_only)
        print_vars();
    if (all || !vars_only)
        print_pvars();
    return st == WU_OK ? 0 : 1;
}
