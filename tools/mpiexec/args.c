/* mpiexec's command line. */
#include "mpiexec.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char mx_usage[] =
    "Usage: mpiexec [options] program [args...] [: [local options] program [args...]]...\n"
    "\n"
    "Runs the program as the ranks of one MPI job, serving them PMI-1 or PMI-2: on this host, or\n"
    "with -hosts or -f on several, through one proxy per host (docs/launch.md).\n"
    "\n"
    "Local options (apply to the program that follows them):\n"
    "  -n, -np N           number of ranks running this program (default 1)\n"
    "  -env VAR VALUE      set VAR=VALUE in the environment of these ranks\n"
    "  -wdir DIR           run these ranks in directory DIR (used by MPI_Comm_spawn)\n"
    "  -hosts H1,H2:N,...  after ':', the hosts of this program's ranks, placed as below from the\n"
    "                      first of them; a program without it takes the global hosts, going on\n"
    "                      where the previous such program stopped (also -host)\n"
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
    "  --ranks-per-process K   run K consecutive ranks of a section as threads of one process,\n"
    "                      each with private globals (docs/ranks-as-threads.md); K from 1 to 15;\n"
    "                      the program must be linked by `mpicc -ranks-as-threads`; ranks so\n"
    "                      grouped are not bound; on several hosts, the ranks of each host are\n"
    "                      grouped in their order on that host (also -rpp)\n"
    "Several hosts (global options; binding then applies per host, to the ranks of that host):\n"
    "  -hosts H1,H2,...    run on these hosts; H:N gives host H N slots (default 1)\n"
    "  -f FILE             the hosts, one per line as HOST or HOST:SLOTS (# starts a comment);\n"
    "                      also -hostfile, -machinefile\n"
    "  -ppn N              N ranks per host in each round, instead of the hosts' slots\n"
    "                      Ranks go in order: the first host's share, then the next host's, and\n"
    "                      round again while ranks remain.\n"
    "  -launcher NAME      how proxies are started on other hosts: ssh (default), rsh, fork or\n"
    "                      slurm (srun); this host's proxy is always forked (also -bootstrap).\n"
    "                      In a Slurm allocation without -hosts/-f: its hosts and tasks, srun\n"
    "  -launcher-exec CMD  the program used as ssh, rsh or srun (also -bootstrap-exec)\n"
    "  -iface NAME         proxies connect back to the IPv4 address of interface NAME (default:\n"
    "                      this host's name)\n"
    "  -genvall            pass mpiexec's whole environment to the ranks on every host (default)\n"
    "  -genvnone           pass none of it (the ranks get what the launcher gives the proxy)\n"
    "  -genvlist A,B,...   pass only these variables\n"
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
    "124 on timeout, 128+N when mpiexec is stopped by signal N, 127 if the program is not found,\n"
    "255 when the proxy of a host is lost (cannot be started, or ends with ranks running).\n"
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

/* Adds "NAME[:SLOTS]" to the list *hosts_p of *n_p hosts. */
static bool mx_host_add(mx_hostspec_t **hosts_p, int *n_p, const char *opt, const char *spec,
                        size_t len)
{
    char name[256];
    long slots = 0;
    if (len == 0)
        return true;
    if (len >= sizeof(name)) {
        fprintf(stderr, "mpiexec: %s: host name too long: '%.*s'\n", opt, (int)len, spec);
        return false;
    }
    memcpy(name, spec, len);
    name[len] = '\0';
    char *colon = strchr(name, ':');
    if (colon) {
        *colon = '\0';
        if (!mx_parse_long(opt, colon + 1, 1, MX_NPROCS_MAX, &slots))
            return false;
    }
    if (!*name) {
        fprintf(stderr, "mpiexec: %s: empty host name\n", opt);
        return false;
    }
    mx_hostspec_t *h = realloc(*hosts_p, (size_t)(*n_p + 1) * sizeof(*h));
    char *dup = strdup(name);
    if (!h || !dup) {
        fprintf(stderr, "mpiexec: out of memory\n");
        exit(1);
    }
    *hosts_p = h;
    h[(*n_p)++] = (mx_hostspec_t){ .name = dup, .slots = (int)slots };
    return true;
}

static void mx_hosts_free(mx_hostspec_t **hosts_p, int *n_p)
{
    for (int i = 0; i < *n_p; i++)
        free((*hosts_p)[i].name);
    free(*hosts_p);
    *hosts_p = NULL;
    *n_p = 0;
}

/* "H1,H2:N,..." into the list *hosts_p. */
static bool mx_hosts_list(mx_hostspec_t **hosts_p, int *n_p, const char *opt, const char *list)
{
    if (!list || !*list) {
        fprintf(stderr, "mpiexec: %s wants a list of hosts\n", opt);
        return false;
    }
    for (const char *p = list;;) {
        size_t n = strcspn(p, ",");
        if (!mx_host_add(hosts_p, n_p, opt, p, n))
            return false;
        if (!p[n])
            return true;
        p += n + 1;
    }
}

static bool mx_hosts_file(mx_opts_t *opts, const char *opt, const char *path)
{
    char line[512];
    FILE *f = path ? fopen(path, "r") : NULL;
    int before = opts->nhosts;
    if (!f) {
        fprintf(stderr, "mpiexec: %s: cannot read '%s': %s\n", opt, path ? path : "(nothing)",
                path ? strerror(errno) : "no file named");
        return false;
    }
    while (fgets(line, sizeof(line), f)) {
        char *p = line + strspn(line, " \t");
        size_t n = strcspn(p, " \t\r\n#");
        if (!mx_host_add(&opts->hosts, &opts->nhosts, opt, p, n)) {
            fclose(f);
            return false;
        }
    }
    fclose(f);
    if (opts->nhosts == before) {
        fprintf(stderr, "mpiexec: %s: no host in '%s'\n", opt, path);
        return false;
    }
    return true;
}

static bool mx_parse_launcher(const char *opt, const char *s, mx_launcher_t *v_p)
{
    static const char *const names[] = {
        [MX_LAUNCH_SSH] = "ssh", [MX_LAUNCH_RSH] = "rsh", [MX_LAUNCH_FORK] = "fork",
        [MX_LAUNCH_SLURM] = "slurm",
    };
    for (size_t i = 0; s && i < sizeof(names) / sizeof(names[0]); i++) {
        if (!strcmp(s, names[i])) {
            *v_p = (mx_launcher_t)i;
            return true;
        }
    }
    fprintf(stderr, "mpiexec: %s wants ssh, rsh, fork or slurm, got '%s'\n", opt, s ? s : "(nothing)");
    return false;
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
            } else if (!strcmp(a, "-wdir") || !strcmp(a, "--wdir") || !strcmp(a, "-dir")) {
                if (!next || !*next) {
                    fprintf(stderr, "mpiexec: %s wants a directory\n", a);
                    goto free_sec;
                }
                sec.wdir = next;
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
            } else if (first && (!strcmp(a, "-hosts") || !strcmp(a, "--hosts") || !strcmp(a, "-host"))) {
                if (!mx_hosts_list(&opts->hosts, &opts->nhosts, a, next))
                    goto free_sec;
                i++;
            } else if (!strcmp(a, "-hosts") || !strcmp(a, "--hosts") || !strcmp(a, "-host") ||
                       !strcmp(a, "--weft-section-hosts")) {
                /* after ':' (or, from MPI_Comm_spawn, in any section): this section's hosts */
                if (sec.hosts) {
                    fprintf(stderr, "mpiexec: %s given twice for one program\n", a);
                    goto free_sec;
                }
                if (!mx_hosts_list(&sec.hosts, &sec.nhosts, a, next))
                    goto free_sec;
                i++;
            } else if (first && !strcmp(a, "--weft-skip")) {
                if (!mx_parse_long(a, next, 0, MX_NPROCS_MAX * 64L, &v))
                    goto free_sec;
                opts->skip = (int)v;
                i++;
            } else if (first && (!strcmp(a, "-f") || !strcmp(a, "-hostfile") ||
                                 !strcmp(a, "--hostfile") || !strcmp(a, "-machinefile"))) {
                if (!mx_hosts_file(opts, a, next))
                    goto free_sec;
                i++;
            } else if (first && (!strcmp(a, "--ranks-per-process") || !strcmp(a, "-ranks-per-process") ||
                                 !strcmp(a, "-rpp"))) {
                if (!mx_parse_long(a, next, 1, MX_RPP_MAX, &v))
                    goto free_sec;
                opts->rpp = (int)v;
                i++;
            } else if (first && (!strcmp(a, "-ppn") || !strcmp(a, "--ppn") || !strcmp(a, "-perhost"))) {
                if (!mx_parse_long(a, next, 1, MX_NPROCS_MAX, &v))
                    goto free_sec;
                opts->ppn = (int)v;
                i++;
            } else if (first && (!strcmp(a, "-launcher") || !strcmp(a, "--launcher") ||
                                 !strcmp(a, "-bootstrap"))) {
                if (!mx_parse_launcher(a, next, &opts->launcher))
                    goto free_sec;
                opts->launcher_given = true;
                i++;
            } else if (first && (!strcmp(a, "-launcher-exec") || !strcmp(a, "--launcher-exec") ||
                                 !strcmp(a, "-bootstrap-exec"))) {
                if (!next || !*next) {
                    fprintf(stderr, "mpiexec: %s wants a program\n", a);
                    goto free_sec;
                }
                opts->launcher_exec = next;
                i++;
            } else if (first && (!strcmp(a, "-iface") || !strcmp(a, "--iface") || !strcmp(a, "-netif"))) {
                if (!next || !*next) {
                    fprintf(stderr, "mpiexec: %s wants an interface name\n", a);
                    goto free_sec;
                }
                opts->iface = next;
                i++;
            } else if (first && (!strcmp(a, "-genvall") || !strcmp(a, "--genvall"))) {
                opts->envmode = MX_ENV_ALL;
            } else if (first && (!strcmp(a, "-genvnone") || !strcmp(a, "--genvnone"))) {
                opts->envmode = MX_ENV_NONE;
            } else if (first && (!strcmp(a, "-genvlist") || !strcmp(a, "--genvlist"))) {
                if (!next || !*next) {
                    fprintf(stderr, "mpiexec: %s wants a list of variable names\n", a);
                    goto free_sec;
                }
                free(opts->envlist);
                if (!(opts->envlist = strdup(next))) {
                    fprintf(stderr, "mpiexec: out of memory\n");
                    exit(1);
                }
                opts->envmode = MX_ENV_LIST;
                i++;
            } else if (!strcmp(a, "--")) {
                i++;
                break;
            } else if (a[0] == '-' && a[1] != '\0') {
                fprintf(stderr, "mpiexec: unknown option '%s'%s (try --help)\n", a,
                        first ? "" : " (only -n, -env, -wdir and -hosts may follow ':')");
                goto free_sec;
            } else {
                break;
            }
        }
        if (i >= argc || !strcmp(argv[i], ":")) {
            fprintf(stderr, "mpiexec: no program to run (try --help)\n");
            goto free_sec;
        }
        if (sec.hosts)
            opts->multi = true;
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
        mx_hosts_free(&sec.hosts, &sec.nhosts);
        return false;
    }
    if (opts->nsections == 0) {
        fputs(mx_usage, stderr);
        return false;
    }
    if (timeout >= 0)
        opts->timeout_s = timeout;
    /* Inside a Slurm allocation, or asked for srun without hosts: the allocation's hosts. */
    if (!opts->hosts && !opts->multi && opts->launcher_given && opts->launcher == MX_LAUNCH_SLURM) {
        if (mx_slurm_hosts(opts, "-launcher slurm") < 0)
            return false;
    } else if (!opts->hosts && !opts->multi && !opts->launcher_given && !opts->launcher_exec &&
               mx_slurm_in_allocation()) {
        if (mx_slurm_hosts(opts, "mpiexec in a Slurm allocation") < 0)
            return false;
    }
    if (opts->hosts)
        opts->multi = true;
    if (!opts->multi && (opts->ppn || opts->launcher_given || opts->launcher_exec || opts->iface ||
                         opts->skip)) {
        fprintf(stderr, "mpiexec: -ppn, -launcher, -launcher-exec and -iface need -hosts or -f\n");
        return false;
    }
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
        mx_hosts_free(&opts->sections[i].hosts, &opts->sections[i].nhosts);
    }
    free(opts->sections);
    mx_env_free(&opts->genv);
    mx_hosts_free(&opts->hosts, &opts->nhosts);
    free(opts->envlist);
    memset(opts, 0, sizeof(*opts));
}

/* name=value into our environment and, on several hosts, into -genv (after the user's). */
static void mx_export_one(mx_opts_t *opts, const char *name, const char *value)
{
    setenv(name, value, 1);
    if (opts->multi)
        (void)mx_env_add(&opts->genv, "mpiexec", name, value);
}

void mx_args_export(mx_opts_t *opts)
{
    static const char *const launchers[] = {
        [MX_LAUNCH_SSH] = "ssh", [MX_LAUNCH_RSH] = "rsh", [MX_LAUNCH_FORK] = "fork",
        [MX_LAUNCH_SLURM] = "slurm",
    };
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n > 0) {
        self[n] = '\0';
        mx_export_one(opts, "WEFT_MPIEXEC", self);
    }
    /* what an outer job exported describes that job's hosts, not this one's */
    unsetenv("WEFT_MPIEXEC_HOSTS");
    unsetenv("WEFT_MPIEXEC_LAUNCHER");
    unsetenv("WEFT_MPIEXEC_LAUNCHER_EXEC");
    unsetenv("WEFT_MPIEXEC_IFACE");
    if (!opts->multi)
        return;
    if (opts->hosts) {   /* each host with its share of a round, as placed */
        size_t cap = 1, at = 0;
        for (int i = 0; i < opts->nhosts; i++)
            cap += strlen(opts->hosts[i].name) + 16;
        char *list = malloc(cap);
        if (!list) {
            fprintf(stderr, "mpiexec: out of memory\n");
            exit(1);
        }
        list[0] = '\0';
        for (int i = 0; i < opts->nhosts; i++) {
            int take = opts->ppn ? opts->ppn : opts->hosts[i].slots ? opts->hosts[i].slots : 1;
            at += (size_t)snprintf(list + at, cap - at, "%s%s:%d", i ? "," : "",
                                   opts->hosts[i].name, take);
        }
        mx_export_one(opts, "WEFT_MPIEXEC_HOSTS", list);
        free(list);
    }
    mx_export_one(opts, "WEFT_MPIEXEC_LAUNCHER", launchers[opts->launcher]);
    if (opts->launcher_exec) {
        /* a relative path names a file of our directory; the spawning rank may run elsewhere */
        char abs[4096];
        if (strchr(opts->launcher_exec, '/') && realpath(opts->launcher_exec, abs))
            mx_export_one(opts, "WEFT_MPIEXEC_LAUNCHER_EXEC", abs);
        else
            mx_export_one(opts, "WEFT_MPIEXEC_LAUNCHER_EXEC", opts->launcher_exec);
    }
    if (opts->iface)
        mx_export_one(opts, "WEFT_MPIEXEC_IFACE", opts->iface);
}
