/* The front end of a job on several hosts (-hosts, -f): where each rank runs, one proxy per host,
 * and the proxies' connections.
 *
 * A proxy is this same program run as `mpiexec --weft-proxy ADDR PORT INDEX` on its host: forked
 * for this host, else through the launcher (ssh -x HOST 'cmd', rsh HOST 'cmd', srun -w HOST cmd).
 * Its stdin is a pipe from us carrying one line, the job's secret (random, never on a command
 * line); it connects to ADDR:PORT (our listening socket), says HELLO with the secret and its
 * index, and gets its share of the job (MX_MSG_SPEC). Then it relays PMI lines, output and exits
 * (proxy.c); the PMI server, the judging of exits and the output all stay here, in the one loop
 * of mpiexec.c. A proxy whose connection or launcher goes away with ranks still running fails
 * the job (status 255, as ssh's own failures). */
#include "mpiexec.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

enum { MX_EV_LISTEN = MX_EV_EXT, MX_EV_PENDING, MX_EV_HOST, MX_EV_FSTDIN };

#define MX_FINISH_MS 5000    /* after the last rank: how long proxies may take to exit */

static char mx_front_addr[256];   /* what proxies connect to */
static int mx_front_port;

/* ---- placement ---------------------------------------------------------------------------- */

bool mx_host_is_here(const char *name)
{
    char me[256];
    if (!strcmp(name, "localhost") || !strncmp(name, "127.", 4))
        return true;
    if (gethostname(me, sizeof(me)) != 0)
        return false;
    me[sizeof(me) - 1] = '\0';
    return !strcmp(name, me);
}

/* PMI_process_mapping: runs of consecutive ranks on one host, as (node, nodes, ranks per node)
 * blocks; consecutive blocks of equal size on consecutive nodes merge. */
static char *mx_front_mapping(const mx_state_t *s)
{
    size_t cap = 64 + (size_t)s->job.nranks * 40, at = 0;
    char *map = malloc(cap);
    if (!map)
        return NULL;
    at += (size_t)snprintf(map, cap, "(vector");
    int node0 = -1, nodes = 0, per = 0;
    for (int r = 0; r <= s->job.nranks;) {
        int node = r < s->job.nranks ? s->job.ranks[r].host : -1, run = 0;
        while (r + run < s->job.nranks && s->job.ranks[r + run].host == node)
            run++;
        if (node >= 0 && node0 >= 0 && run == per && node == node0 + nodes) {
            nodes++;
        } else {
            if (node0 >= 0)
                at += (size_t)snprintf(map + at, cap - at, ",(%d,%d,%d)", node0, nodes, per);
            node0 = node, nodes = 1, per = run;
        }
        if (node < 0)
            break;
        r += run;
    }
    snprintf(map + at, cap - at, ")");
    return map;
}

/* The proxy (index into s->hosts) of host name, added if new: a host named twice, in the global
 * list or in sections' lists, has one proxy. */
static int mx_front_host(mx_state_t *s, const char *name)
{
    mx_opts_t *o = s->job.opts;
    int h;
    for (h = 0; h < s->nhosts && strcmp(s->hosts[h].name, name); h++)
        ;
    if (h == s->nhosts) {
        s->hosts[h].name = (char *)name;
        s->hosts[h].local = o->launcher == MX_LAUNCH_FORK || mx_host_is_here(name);
        mx_link_init(&s->hosts[h].link, -1);
        s->nhosts++;
    }
    return h;
}

/* A position in a host list: entry i, with `used` ranks of its share of this round placed. */
typedef struct {
    int i, used;
} mx_cursor_t;

/* The entry of list (n hosts) the next rank goes to, moving the cursor past it. */
static int mx_cursor_next(const mx_opts_t *o, const mx_hostspec_t *list, int n, mx_cursor_t *c)
{
    for (;;) {
        int take = o->ppn ? o->ppn : list[c->i].slots ? list[c->i].slots : 1;
        if (c->used < take) {
            c->used++;
            return c->i;
        }
        c->i = (c->i + 1) % n;
        c->used = 0;
    }
}

/* Ranks in order, section by section: each host of the section's list (its own after ':', else
 * the global one) takes -ppn or its slots, round after round. Sections on the global list go on
 * where the previous one stopped, after the first --weft-skip slots; a section with its own list
 * starts at its first host. Without a global list (only sections' lists), it is this host. */
static bool mx_front_place(mx_state_t *s)
{
    mx_opts_t *o = s->job.opts;
    static char me[256];
    mx_hostspec_t here = { .name = me, .slots = 0 };
    const mx_hostspec_t *global = o->hosts;
    int nglobal = o->nhosts, total = o->nhosts + 1;
    if (!global) {
        if (gethostname(me, sizeof(me) - 1) != 0)
            strcpy(me, "localhost");
        global = &here;
        nglobal = 1;
    }
    for (int k = 0; k < o->nsections; k++)
        total += o->sections[k].nhosts;
    int *index = malloc((size_t)total * sizeof(int));
    s->hosts = calloc((size_t)total, sizeof(mx_host_t));
    if (!index || !s->hosts)
        goto oom;
    mx_cursor_t gc = { 0, 0 };
    for (int k = 0; k < o->skip; k++)
        (void)mx_cursor_next(o, global, nglobal, &gc);
    for (int k = 0, r = 0; k < o->nsections; k++) {
        mx_section_t *sec = &o->sections[k];
        const mx_hostspec_t *list = sec->hosts ? sec->hosts : global;
        int n = sec->hosts ? sec->nhosts : nglobal;
        mx_cursor_t lc = { 0, 0 }, *c = sec->hosts ? &lc : &gc;
        for (int i = 0; i < n; i++)
            index[i] = mx_front_host(s, list[i].name);
        for (int j = 0; j < sec->nprocs; j++, r++) {
            int e = mx_cursor_next(o, list, n, c);
            mx_host_t *h = &s->hosts[index[e]];
            if (!h->ranks && !(h->ranks = malloc((size_t)s->job.nranks * sizeof(int))))
                goto oom;
            mx_rank_t *rk = &s->job.ranks[r];
            rk->host = index[e];
            rk->local = h->nranks;
            rk->pid = 1;   /* running as far as we know; its pid comes with MX_MSG_STARTED */
            mx_stream_init(&rk->out, -1, STDOUT_FILENO, r);   /* fed by mx_stream_feed */
            mx_stream_init(&rk->err, -1, STDERR_FILENO, r);
            h->ranks[h->nranks++] = r;
        }
    }
    free(index);
    if (!(s->job.process_mapping = mx_front_mapping(s)))
        goto oom;
    return true;
oom:
    fprintf(stderr, "mpiexec: out of memory\n");
    exit(1);
}

/* ---- the listening socket ----------------------------------------------------------------- */

static bool mx_iface_addr(const char *iface, struct in_addr *a_p)
{
    struct ifaddrs *list, *i;
    bool found = false;
    if (getifaddrs(&list) != 0) {
        fprintf(stderr, "mpiexec: -iface %s: cannot list the interfaces: %s\n", iface, strerror(errno));
        return false;
    }
    for (i = list; i && !found; i = i->ifa_next) {
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && !strcmp(i->ifa_name, iface)) {
            *a_p = ((struct sockaddr_in *)i->ifa_addr)->sin_addr;
            found = true;
        }
    }
    freeifaddrs(list);
    if (!found)
        fprintf(stderr, "mpiexec: -iface %s: no such interface with an IPv4 address\n", iface);
    return found;
}

static bool mx_front_listen(mx_state_t *s)
{
    mx_opts_t *o = s->job.opts;
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY) };
    socklen_t alen = sizeof(a);
    if (o->iface && !mx_iface_addr(o->iface, &a.sin_addr))
        return false;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 128) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &alen) != 0) {
        fprintf(stderr, "mpiexec: cannot listen for the proxies: %s\n", strerror(errno));
        if (fd >= 0)
            close(fd);
        return false;
    }
    s->listen_fd = fd;
    mx_front_port = ntohs(a.sin_port);
    if (o->iface) {
        inet_ntop(AF_INET, &a.sin_addr, mx_front_addr, sizeof(mx_front_addr));
    } else if (gethostname(mx_front_addr, sizeof(mx_front_addr)) != 0) {
        fprintf(stderr, "mpiexec: gethostname: %s\n", strerror(errno));
        return false;
    }
    mx_front_addr[sizeof(mx_front_addr) - 1] = '\0';
    return true;
}

bool mx_front_setup(mx_state_t *s)
{
    unsigned char rnd[16];
    if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
        fprintf(stderr, "mpiexec: getrandom: %s\n", strerror(errno));
        return false;
    }
    for (int i = 0; i < 16; i++)
        snprintf(s->secret + 2 * i, 3, "%02x", rnd[i]);
    for (int i = 0; i < MX_PENDING_MAX; i++)
        mx_link_init(&s->pending[i], -1);
    mx_front_place(s);
    return mx_front_listen(s);
}

int mx_front_max_fds(const mx_state_t *s)
{
    return 2 + s->nhosts + MX_PENDING_MAX;
}

/* ---- launching ---------------------------------------------------------------------------- */

/* Appends word to buf quoted for a POSIX shell (the remote side of ssh runs one). */
static void mx_shell_quote(char *buf, size_t cap, const char *word)
{
    size_t at = strlen(buf);
    if (at > 0 && at + 1 < cap)
        buf[at++] = ' ';
    if (at + 1 < cap)
        buf[at++] = '\'';
    for (const char *p = word; *p && at + 6 < cap; p++) {
        if (*p == '\'') {   /* ' ends the quote, \' is a quote, ' starts the next */
            memcpy(buf + at, "'\\''", 4);
            at += 4;
        } else {
            buf[at++] = *p;
        }
    }
    if (at + 1 < cap)
        buf[at++] = '\'';
    buf[at] = '\0';
}

static bool mx_front_launch_one(mx_state_t *s, int h)
{
    mx_opts_t *o = s->job.opts;
    mx_host_t *host = &s->hosts[h];
    char exe[4096], port[16], idx[16], remote[8192] = "";
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0) {
        fprintf(stderr, "mpiexec: cannot find its own program: %s\n", strerror(errno));
        return false;
    }
    exe[n] = '\0';
    snprintf(port, sizeof(port), "%d", mx_front_port);
    snprintf(idx, sizeof(idx), "%d", h);
    const char *proxy[] = { exe, "--weft-proxy", mx_front_addr, port, idx, NULL };
    const char *argv[16];
    int argc = 0;
    if (host->local) {
        for (int i = 0; proxy[i]; i++)
            argv[argc++] = proxy[i];
    } else if (o->launcher == MX_LAUNCH_SLURM) {
        static char nodelist[300];
        snprintf(nodelist, sizeof(nodelist), "--nodelist=%s", host->name);
        argv[argc++] = o->launcher_exec ? o->launcher_exec : "srun";
        argv[argc++] = nodelist;
        argv[argc++] = "--nodes=1";
        argv[argc++] = "--ntasks=1";
        for (int i = 0; proxy[i]; i++)
            argv[argc++] = proxy[i];
    } else {
        for (int i = 0; proxy[i]; i++)
            mx_shell_quote(remote, sizeof(remote), proxy[i]);
        if (o->launcher == MX_LAUNCH_RSH) {
            argv[argc++] = o->launcher_exec ? o->launcher_exec : "rsh";
        } else {
            argv[argc++] = o->launcher_exec ? o->launcher_exec : "ssh";
            argv[argc++] = "-x";
        }
        argv[argc++] = host->name;
        argv[argc++] = remote;
    }
    argv[argc] = NULL;

    int sec[2];
    if (pipe2(sec, O_CLOEXEC) != 0) {
        fprintf(stderr, "mpiexec: pipe: %s\n", strerror(errno));
        return false;
    }
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "mpiexec: cannot start the proxy for %s: %s\n", host->name, strerror(errno));
        close(sec[0]);
        close(sec[1]);
        return false;
    }
    if (pid == 0) {
        sigprocmask(SIG_SETMASK, &s->oldmask, NULL);
        signal(SIGPIPE, SIG_DFL);
        (void)setpgid(0, 0);   /* a terminal's Ctrl-C is for mpiexec alone, as with the ranks */
        /* A launcher dies with us (its proxy then sees EOF). A forked proxy sees the EOF itself
         * and can still remove this host's /dev/shm files, which SIGKILL would prevent. */
        if (!host->local)
            prctl(PR_SET_PDEATHSIG, SIGKILL);
        if ((!host->local && getppid() != s->self) || dup2(sec[0], STDIN_FILENO) < 0)
            _exit(255);
        execvp(argv[0], (char *const *)argv);
        fprintf(stderr, "mpiexec: cannot run '%s' to start the proxy on %s: %s\n", argv[0],
                host->name, strerror(errno));
        _exit(255);
    }
    close(sec[0]);
    char line[40];
    int len = snprintf(line, sizeof(line), "%s\n", s->secret);
    if (write(sec[1], line, (size_t)len) != len)   /* a fresh pipe holds it: never blocks */
        fprintf(stderr, "mpiexec: cannot pass the secret to the proxy for %s\n", host->name);
    close(sec[1]);
    host->launcher_pid = pid;
    return true;
}

static void mx_host_lost(mx_state_t *s, int h, const char *why);

bool mx_front_launch(mx_state_t *s)
{
    for (int h = 0; h < s->nhosts; h++) {
        if (s->hosts[h].nranks > 0 && !mx_front_launch_one(s, h)) {
            for (; h < s->nhosts; h++)   /* no proxy will ever report these ranks */
                if (s->hosts[h].nranks > 0)
                    mx_host_lost(s, h, "its proxy could not be started");
            return false;
        }
    }
    return true;
}

/* ---- the job's share of one proxy --------------------------------------------------------- */

typedef struct {
    char *buf;
    size_t len, cap;
} mx_strs_t;

static void mx_strs_add(mx_strs_t *b, const char *str)
{
    size_t n = strlen(str) + 1;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n)
            cap *= 2;
        char *p = realloc(b->buf, cap);
        if (!p) {
            fprintf(stderr, "mpiexec: out of memory\n");
            exit(1);
        }
        b->buf = p, b->cap = cap;
    }
    memcpy(b->buf + b->len, str, n);
    b->len += n;
}

static void mx_strs_int(mx_strs_t *b, long v)
{
    char num[24];
    snprintf(num, sizeof(num), "%ld", v);
    mx_strs_add(b, num);
}

/* Variables never passed: they describe mpiexec's own process or host. */
static bool mx_env_private(const char *var)
{
    static const char *const names[] = { "PMI_", "HOSTNAME=", "PWD=", "OLDPWD=", "SHLVL=", "_=",
                                         "WEFT_BOUND_CPUS=", "MPI_LOCALRANKID=", "MPI_LOCALNRANKS=",
                                         "WEFT_HOST_ADDR=" };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (!strncmp(var, names[i], strlen(names[i])))
            return true;
    return false;
}

static bool mx_env_listed(const char *list, const char *var)
{
    size_t n = strcspn(var, "=");
    for (const char *p = list; *p;) {
        size_t m = strcspn(p, ",");
        if (m == n && !strncmp(p, var, n))
            return true;
        p += m + (p[m] == ',');
    }
    return false;
}

/* The spec, strings in this order: kvsname, size, nlocal, cwd, bind, report_bindings,
 * ranks_per_process; the count
 * and the NAME=VALUE of the passed environment, then of -genv; the count of sections, then for
 * each the count and words of argv, the count and NAME=VALUE of -env, -wdir (empty: none); then
 * rank, local index and section of each rank of the host. proxy.c reads it. */
static void mx_front_send_spec(mx_state_t *s, int h)
{
    mx_opts_t *o = s->job.opts;
    mx_host_t *host = &s->hosts[h];
    mx_strs_t b = { 0 };
    char cwd[4096];
    if (!getcwd(cwd, sizeof(cwd)))
        strcpy(cwd, "/");
    mx_strs_add(&b, s->job.kvsname);
    mx_strs_int(&b, s->job.size);
    mx_strs_int(&b, host->nranks);
    mx_strs_add(&b, cwd);
    mx_strs_int(&b, o->bind);
    mx_strs_int(&b, o->report_bindings);
    mx_strs_int(&b, o->rpp);
    int nenv = 0;
    for (char **e = environ; *e; e++)
        nenv += !mx_env_private(*e) && (o->envmode == MX_ENV_ALL ||
                                        (o->envmode == MX_ENV_LIST && mx_env_listed(o->envlist, *e)));
    mx_strs_int(&b, nenv);
    for (char **e = environ; *e; e++)
        if (!mx_env_private(*e) && (o->envmode == MX_ENV_ALL ||
                                    (o->envmode == MX_ENV_LIST && mx_env_listed(o->envlist, *e))))
            mx_strs_add(&b, *e);
    mx_strs_int(&b, o->genv.nvars);
    for (int i = 0; i < o->genv.nvars; i++)
        mx_strs_add(&b, o->genv.vars[i]);
    mx_strs_int(&b, o->nsections);
    for (int i = 0; i < o->nsections; i++) {
        mx_section_t *sec = &o->sections[i];
        int n = 0;
        while (sec->argv[n])
            n++;
        mx_strs_int(&b, n);
        for (int j = 0; j < n; j++)
            mx_strs_add(&b, sec->argv[j]);
        mx_strs_int(&b, sec->env.nvars);
        for (int j = 0; j < sec->env.nvars; j++)
            mx_strs_add(&b, sec->env.vars[j]);
        mx_strs_add(&b, sec->wdir ? sec->wdir : "");
    }
    for (int i = 0; i < host->nranks; i++) {
        mx_rank_t *r = &s->job.ranks[host->ranks[i]];
        mx_strs_int(&b, r->rank);
        mx_strs_int(&b, r->local);
        mx_strs_int(&b, r->appnum);
    }
    mx_link_send(&host->link, MX_MSG_SPEC, -1, 0, b.buf, b.len);
    free(b.buf);
}

/* ---- the proxies' messages ---------------------------------------------------------------- */

/* The proxy of host h is gone: its ranks not reported ended have failed. */
static void mx_host_lost(mx_state_t *s, int h, const char *why)
{
    mx_host_t *host = &s->hosts[h];
    mx_link_close(&host->link);
    if (host->lost)
        return;
    host->lost = true;
    for (int i = 0; i < host->nranks; i++)
        mx_rank_lost(s, &s->job.ranks[host->ranks[i]], why);
}

static mx_rank_t *mx_host_rank(mx_state_t *s, int h, int rank)
{
    if (rank < 0 || rank >= s->job.nranks || s->job.ranks[rank].host != h)
        return NULL;
    return &s->job.ranks[rank];
}

static void mx_host_message(mx_state_t *s, int h, const mx_msg_t *m, const char *data)
{
    mx_rank_t *r = mx_host_rank(s, h, m->rank);
    char line[8193];
    switch (m->type) {
    case MX_MSG_STARTED:
        if (r && r->pid > 0)
            r->pid = m->value;
        break;
    case MX_MSG_PMI:
        if (r && m->len < sizeof(line)) {
            memcpy(line, data, m->len);
            line[m->len] = '\0';
            mx_pmi_line(&s->job, r, line);
        }
        break;
    case MX_MSG_OUT:
        if (r)
            mx_stream_feed(m->value == 2 ? &r->err : &r->out, data, m->len);
        break;
    case MX_MSG_EXIT:
        if (r && r->pid > 0) {
            s->hosts[h].reported++;
            mx_rank_ended(s, r, m->value);
        }
        break;
    case MX_MSG_STDIN_ACK:
        s->stdin_inflight = false;
        break;
    default:
        break;
    }
}

/* Reads and handles what host h sent; false when its connection is closed. */
static bool mx_host_read(mx_state_t *s, int h)
{
    mx_link_t *l = &s->hosts[h].link;
    bool open = mx_link_read(l);
    mx_msg_t m;
    char *data;
    size_t used;
    while (l->fd >= 0 && mx_link_next(l, &m, &data, &used)) {
        if (m.type == 0)
            return false;
        mx_host_message(s, h, &m, data);
        if (l->fd >= 0)
            mx_link_consume(l, used);
    }
    return open && l->fd >= 0;
}

static void mx_pmi_to_host(mx_job_t *job, mx_rank_t *r, const char *line, size_t len)
{
    mx_state_t *s = job->owner;
    mx_link_send(&s->hosts[r->host].link, MX_MSG_PMI, r->rank, 0, line, len);
}

/* A connection shows the secret and its host index: it becomes that host's link. */
static void mx_pending_read(mx_state_t *s, int i)
{
    mx_link_t *l = &s->pending[i];
    mx_msg_t m;
    char *data;
    size_t used;
    bool open = mx_link_read(l);
    if (!mx_link_next(l, &m, &data, &used)) {
        if (!open || l->in_len > 64)
            mx_link_close(l);
        return;
    }
    unsigned diff = m.type != MX_MSG_HELLO || m.len != 32;
    for (size_t k = 0; k < 32 && m.len == 32; k++)   /* in constant time */
        diff |= (unsigned char)data[k] ^ (unsigned char)s->secret[k];
    int h = m.value;
    if (diff || h < 0 || h >= s->nhosts || s->hosts[h].connected || s->hosts[h].nranks == 0) {
        mx_link_close(l);
        return;
    }
    mx_link_consume(l, used);
    mx_host_t *host = &s->hosts[h];
    host->link = *l;
    host->connected = true;
    mx_link_init(l, -1);
    s->job.pmi_send = mx_pmi_to_host;
    mx_front_send_spec(s, h);
    if (host->link.in_len > 0 && !mx_host_read(s, h))
        mx_host_lost(s, h, "its proxy closed the connection");
}

static void mx_front_accept(mx_state_t *s)
{
    int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0)
        return;
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    for (int i = 0; i < MX_PENDING_MAX; i++) {
        if (s->pending[i].fd < 0) {
            mx_link_init(&s->pending[i], fd);
            return;
        }
    }
    close(fd);   /* more strangers than proxies */
}

/* ---- stdin -> rank 0, one message in flight ----------------------------------------------- */

static bool mx_front_wants_stdin(const mx_state_t *s)
{
    const mx_rank_t *r0 = &s->job.ranks[0];
    return !s->stdin_eof && !s->stdin_inflight && r0->pid > 0 && s->hosts[r0->host].connected &&
           s->hosts[r0->host].link.fd >= 0;
}

static void mx_front_stdin(mx_state_t *s)
{
    char buf[16384];
    mx_link_t *l = &s->hosts[s->job.ranks[0].host].link;
    ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        s->stdin_eof = true;
        mx_link_send(l, MX_MSG_STDIN_EOF, 0, 0, NULL, 0);
        return;
    }
    s->stdin_inflight = true;
    mx_link_send(l, MX_MSG_STDIN, 0, 0, buf, (size_t)n);
}

/* ---- the loop's hooks --------------------------------------------------------------------- */

int mx_front_poll(mx_state_t *s, struct pollfd *pfd, int *kind, int *who, int np)
{
    if (s->listen_fd >= 0) {
        pfd[np] = (struct pollfd){ .fd = s->listen_fd, .events = POLLIN };
        kind[np++] = MX_EV_LISTEN;
    }
    for (int i = 0; i < MX_PENDING_MAX; i++) {
        if (s->pending[i].fd >= 0) {
            pfd[np] = (struct pollfd){ .fd = s->pending[i].fd, .events = POLLIN };
            kind[np] = MX_EV_PENDING, who[np++] = i;
        }
    }
    for (int h = 0; h < s->nhosts; h++) {
        mx_link_t *l = &s->hosts[h].link;
        if (l->fd >= 0) {
            pfd[np] = (struct pollfd){ .fd = l->fd, .events = POLLIN | (l->out_len ? POLLOUT : 0) };
            kind[np] = MX_EV_HOST, who[np++] = h;
        }
    }
    if (mx_front_wants_stdin(s)) {
        pfd[np] = (struct pollfd){ .fd = STDIN_FILENO, .events = POLLIN };
        kind[np++] = MX_EV_FSTDIN;
    }
    return np;
}

void mx_front_event(mx_state_t *s, int kind, int who, short revents)
{
    switch (kind) {
    case MX_EV_LISTEN:
        mx_front_accept(s);
        break;
    case MX_EV_PENDING:
        mx_pending_read(s, who);
        break;
    case MX_EV_HOST:
        if ((revents & POLLOUT) && !mx_link_flush(&s->hosts[who].link)) {
            mx_host_lost(s, who, "the connection to its proxy broke");
            break;
        }
        if ((revents & (POLLIN | POLLHUP | POLLERR)) && !mx_host_read(s, who))
            mx_host_lost(s, who, "its proxy closed the connection");
        break;
    case MX_EV_FSTDIN:
        if (mx_front_wants_stdin(s))
            mx_front_stdin(s);
        break;
    }
}

void mx_front_signal(mx_state_t *s, int h, int rank, int sig)
{
    mx_host_t *host = &s->hosts[h];
    if (host->link.fd >= 0)
        mx_link_send(&host->link, MX_MSG_SIGNAL, rank, sig, NULL, 0);
    else if (host->launcher_pid > 0 && !host->connected && (sig == SIGTERM || sig == SIGKILL))
        (void)kill(host->launcher_pid, sig);   /* its proxy has not connected yet */
}

bool mx_front_reaped(mx_state_t *s, pid_t pid, int status)
{
    for (int h = 0; h < s->nhosts; h++) {
        mx_host_t *host = &s->hosts[h];
        if (host->launcher_pid != pid)
            continue;
        host->launcher_pid = 0;
        host->launcher_status = status;
        /* What the proxy sent before it exited may still be on its way: read up to its EOF. */
        for (int64_t end = mx_now_ms() + 1000; host->link.fd >= 0;) {
            struct pollfd p = { .fd = host->link.fd, .events = POLLIN };
            int64_t left = end - mx_now_ms();
            if (left <= 0 || poll(&p, 1, (int)left) <= 0 || !mx_host_read(s, h))
                break;
        }
        char why[160];
        if (WIFSIGNALED(status))
            snprintf(why, sizeof(why), "the proxy's launcher (pid %ld) was killed by signal %d",
                     (long)pid, WTERMSIG(status));
        else
            snprintf(why, sizeof(why), "the proxy's launcher (pid %ld) exited with status %d%s",
                     (long)pid, WEXITSTATUS(status),
                     host->connected ? "" : " before the proxy connected");
        if (host->reported < host->nranks)
            mx_host_lost(s, h, why);
        else
            mx_link_close(&host->link);
        return true;
    }
    return false;
}

void mx_front_finish(mx_state_t *s)
{
    int64_t end = mx_now_ms() + MX_FINISH_MS;
    bool killed = false;
    for (;;) {
        int status, left = 0;
        pid_t pid;
        while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
            (void)mx_front_reaped(s, pid, status);
        for (int h = 0; h < s->nhosts; h++) {
            mx_link_t *l = &s->hosts[h].link;
            if (l->fd >= 0 && !mx_link_flush(l))
                mx_link_close(l);
            if (l->fd >= 0 && !mx_host_read(s, h))
                mx_link_close(l);
            left += s->hosts[h].launcher_pid > 0;
        }
        if (left == 0 || (killed && mx_now_ms() >= end))
            break;
        if (mx_now_ms() >= end) {   /* a proxy or launcher that does not end: make it */
            killed = true;
            for (int h = 0; h < s->nhosts; h++)
                if (s->hosts[h].launcher_pid > 0)
                    (void)kill(s->hosts[h].launcher_pid, SIGKILL);
            end = mx_now_ms() + 2000;
        }
        usleep(20000);
    }
    for (int h = 0; h < s->nhosts; h++) {
        mx_link_close(&s->hosts[h].link);
        free(s->hosts[h].ranks);
    }
    for (int i = 0; i < MX_PENDING_MAX; i++)
        mx_link_close(&s->pending[i]);
    if (s->listen_fd >= 0)
        close(s->listen_fd);
    s->listen_fd = -1;
    free(s->hosts);
    s->hosts = NULL;
    s->nhosts = 0;
}
