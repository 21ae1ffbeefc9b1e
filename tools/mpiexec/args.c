/* mpiexec's command line. */
#include "mpiexec.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MX_NPROCS_MAX 4096

static const char mx_usage[] =
    "Usage: mpiexec [options] program [args...] [: [local options] program [args...]]...\n"
    "\n"
    "Runs the program as the ranks of one MPI job on this host, serving them PMI-1.\n"
    "\n"
    "Local options (apply to the program that follows them):\n"
    "  -n, -np N           number of ranks running this program (default 1)\n"
    "  -env VAR VALUE      set VAR=VALUE in the environment of these ranks\n"
    "Global options (anywhere before the first program):\n"
    "  -genv VAR VALUE     set VAR=VALUE in the environment of every rank\n"
    "  --tag-output        prefix every output line with \"[rank] \" (also -tag-output,\n"
    "                      -prepend-rank, -l)\n"
    "  --timeout SECONDS   end the job after SECONDS (also WEFT_TIMEOUT or MPIEXEC_TIMEOUT in the\n"
    "                      environment); mpiexec then exits with status 124\n"
    "  --bind-to WHAT      which CPUs each rank may run on (also -bind-to, or WEFT_BIND in the\n"
    "                      environment); WHAT is one of\n"
    "                        auto  (default) if there are no more ranks than CPUs mpiexec may run\n"
    "                              on, rank i of N gets CPUs [i*C/N, (i+1)*C/N) of those C CPUs;\n"
    "                              with more ranks than CPUs, no binding\n"
    "                        core  one CPU per rank: rank i gets CPU i%C, even when oversubscribed\n"
    "                        none  no binding\n"
    "  --report-bindings   print on stderr which CPUs each rank is bound to\n"
    "  -h, --help          print this help\n"
    "  --version           print the version\n"
    "\n"
    "Every rank gets PMI_FD, PMI_RANK, PMI_SIZE, MPI_LOCALRANKID and MPI_LOCALNRANKS, and a bound\n"
    "rank WEFT_BOUND_CPUS, its CPUs as a list like 0-3,8 (unset when not bound). stdin goes to\n"
    "rank 0; stdout and stderr of every rank come out whole lines at a time.\n"
    "\n"
    "Exit status: 0 when every rank exits 0; otherwise that of the first rank to fail (its exit\n"
    "code, 128+N for a signal N, its MPI_Abort code if in 1..255 (1 for any other abort code,\n"
    "0 included), or 1 for exiting without MPI_Finalize),\n"
    "124 on timeout, 128+N when mpiexec is stopped by signal N, 127 if the program is not found.\n"
    "When one rank fails, mpiexec ends the others (SIGTERM, then SIGKILL) and says which failed.\n";

static bool mx_parse_long(const char *opt, const char *s, long lo, long hi, long *v_p)
{
    char *end;
    errno = 0;
    long v = s ? strtol(s, &end, 10) : 0;
    if (!s || !*s || *end || errno || v < lo || v > hi) {
        fprintf(stderr, "mpiexec: %s wants a number from %ld to %ld, got '%s'\n", opt, lo, hi,
                s ? s : "(nothing)");
        return false;
    }
    *v_p = v;
    return true;
}

static bool mx_env_add(mx_env_t *env, const char *opt, const char *name, const char *val)
{
    if (!name || !val || !*name || strchr(name, '=')) {
        fprintf(stderr, "mpiexec: %s wants a variable name and a value\n", opt);
        return false;
    }
    char **vars = realloc(env->vars, (size_t)(env->nvars + 1) * sizeof(*vars));
    size_t n = strlen(name) + strlen(val) + 2;
    char *s = malloc(n);
    if (!vars || !s) {
        fprintf(stderr, "mpiexec: out of memory\n");
        exit(1);
    }
    snprintf(s, n, "%s=%s", name, val);
    vars[env->nvars++] = s;
    env->vars = vars;
    return true;
}

static void mx_env_free(mx_env_t *env)
{
    for (int i = 0; i < env->nvars; i++)
        free(env->vars[i]);
    free(env->vars);
    env->vars = NULL;
    env->nvars = 0;
}

static bool mx_parse_bind(const char *opt, const char *s, mx_bind_t *v_p)
{
    static const char *const names[] = {
        [MX_BIND_AUTO] = "auto", [MX_BIND_CORE] = "core", [MX_BIND_NONE] = "none",
    };
    for (size_t i = 0; s && i < sizeof(names) / sizeof(names[0]); i++) {
        if (!strcmp(s, names[i])) {
            *v_p = (mx_bind_t)i;
            return true;
        }
    }
    fprintf(stderr, "mpiexec: %s wants auto, core or none, got '%s'\n", opt, s ? s : "(nothing)");
    return false;
}

/* The timeout when --timeout is not given: WEFT_TIMEOUT, then MPIEXEC_TIMEOUT. */
static bool mx_timeout_from_env(long *v_p)
{
    const char *names[] = { "WEFT_TIMEOUT", "MPIEXEC_TIMEOUT" };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        const char *s = getenv(names[i]);
        if (s && *s)
            return mx_parse_long(names[i], s, 0, INT_MAX / 1000, v_p);
    }
    *v_p = 0;
    return true;
}

/* The options up to the first program are global; each ':' starts a section with its own -n and
 * -env. On failure opts may hold a part of the command line; the caller frees it. */
static bool mx_args_parse_sections(int argc, char **argv, mx_opts_t *opts)
{
    long timeout = -1;
    bool bind_given = false;
    int i = 1;

    if (!mx_timeout_from_env(&opts->timeout_s))
        return false;
    while (i < argc) {
        mx_section_t sec = { .nprocs = 1 };
        bool first = opts->nsections == 0;
        /* options, up to the program name */
        for (; i < argc; i++) {
            const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
            long v;
            if (!strcmp(a, "-h") || !strcmp(a, "--help") || !strcmp(a, "-help")) {
                fputs(mx_usage, stdout);
                mx_env_free(&sec.env);
                mx_args_free(opts);
                exit(0);
            } else if (!strcmp(a, "--version") || !strcmp(a, "-version")) {
                printf("mpiexec (Weft) %s\n", WEFT_VERSION);
                mx_env_free(&sec.env);
                mx_args_free(opts);
                exit(0);
            } else if (!strcmp(a, "-n") || !strcmp(a, "-np") || !strcmp(a, "--np")) {
                if (!mx_parse_long(a, next, 1, MX_NPROCS_MAX, &v))
                    goto free_sec;
                sec.nprocs = (int)v;
                i++;
            } else if (!strcmp(a, "-env") || !strcmp(a, "--env")) {
                if (!mx_env_add(&sec.env, a, next, i + 2 < argc ? argv[i + 2] : NULL))
                    goto free_sec;
                i += 2;
            } else if (first && (!strcmp(a, "-genv") || !strcmp(a, "--genv"))) {
                if (!mx_env_add(&opts->genv, a, next, i + 2 < argc ? argv[i + 2] : NULL))
                    goto free_sec;
                i += 2;
            } else if (first && (!strcmp(a, "--tag-output") || !strcmp(a, "-tag-output") ||
                                 !strcmp(a, "-prepend-rank") || !strcmp(a, "-l"))) {
                opts->tag_output = true;
            } else if (first && (!strcmp(a, "--timeout") || !strcmp(a, "-timeout"))) {
                if (!mx_parse_long(a, next, 0, INT_MAX / 1000, &timeout))
                    goto free_sec;
                i++;
            } else if (first && !strncmp(a, "--timeout=", 10)) {
                if (!mx_parse_long("--timeout", a + 10, 0, INT_MAX / 1000, &timeout))
                    goto free_sec;
            } else if (first && (!strcmp(a, "--bind-to") || !strcmp(a, "-bind-to"))) {
                if (!mx_parse_bind(a, next, &opts->bind))
                    goto free_sec;
                bind_given = true;
                i++;
            } else if (first && !strncmp(a, "--bind-to=", 10)) {
                if (!mx_parse_bind("--bind-to", a + 10, &opts->bind))
                    goto free_sec;
                bind_given = true;
            } else if (first && (!strcmp(a, "--report-bindings") || !strcmp(a, "-report-bindings"))) {
                opts->report_bindings = true;
            } else if (!strcmp(a, "--")) {
                i++;
                break;
            } else if (a[0] == '-' && a[1] != '\0') {
                fprintf(stderr, "mpiexec: unknown option '%s'%s (try --help)\n", a,
                        first ? "" : " (only -n and -env may follow ':')");
                goto free_sec;
            } else {
                break;
            }
        }
        if (i >= argc || !strcmp(argv[i], ":")) {
            fprintf(stderr, "mpiexec: no program to run (try --help)\n");
            goto free_sec;
        }
        /* the program and its arguments, up to ':' */
        int start = i;
        while (i < argc && strcmp(argv[i], ":"))
            i++;
        sec.argv = calloc((size_t)(i - start + 1), sizeof(char *));
        mx_section_t *secs = realloc(opts->sections, (size_t)(opts->nsections + 1) * sizeof(*secs));
        if (!sec.argv || !secs) {
            fprintf(stderr, "mpiexec: out of memory\n");
            exit(1);
        }
        memcpy(sec.argv, argv + start, (size_t)(i - start) * sizeof(char *));
        opts->sections = secs;
        opts->sections[opts->nsections++] = sec;
        if (opts->nranks + sec.nprocs > MX_NPROCS_MAX) {
            fprintf(stderr, "mpiexec: at most %d ranks\n", MX_NPROCS_MAX);
            return false;
        }
        opts->nranks += sec.nprocs;
        if (i < argc)
            i++;   /* the ':' */
        continue;
free_sec:
        mx_env_free(&sec.env);
        return false;
    }
    if (opts->nsections == 0) {
        fputs(mx_usage, stderr);
        return false;
    }
    if (timeout >= 0)
        opts->timeout_s = timeout;
    if (!bind_given) {
        const char *e = getenv("WEFT_BIND");
        if (e && *e && !mx_parse_bind("WEFT_BIND", e, &opts->bind))
            return false;
    }
    return true;
}

bool mx_args_parse(int argc, char **argv, mx_opts_t *opts)
{
    memset(opts, 0, sizeof(*opts));
    opts->bind = MX_BIND_AUTO;
    if (!mx_args_parse_sections(argc, argv, opts)) {
        mx_args_free(opts);
        return false;
    }
    return true;
}

void mx_args_free(mx_opts_t *opts)
{
    for (int i = 0; i < opts->nsections; i++) {
        free(opts->sections[i].argv);
        mx_env_free(&opts->sections[i].env);
    }
    free(opts->sections);
    mx_env_free(&opts->genv);
    memset(opts, 0, sizeof(*opts));
}
