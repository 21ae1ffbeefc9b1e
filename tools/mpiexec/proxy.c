/* Proxy mode: `mpiexec --weft-proxy ADDR PORT INDEX`, started by the front end (hosts.c) on one
 * host of the job, its stdin a pipe carrying the job's secret.
 *
 * It connects to ADDR:PORT, shows the secret, gets its share of the job and runs those ranks with
 * the same code as a single-host mpiexec (mpiexec.c: binding among this host's ranks, process
 * group, PR_SET_PDEATHSIG, the loop), except that it judges nothing: PMI lines go to the front
 * end and its answers come back (job->pmi_relay), output goes up whole lines at a time
 * (mx_io_set_sink), each rank's start and end are reported, and the front end says which ranks
 * to signal. Losing the front end (EOF) kills every rank here at once. At the end it removes
 * /dev/shm/<kvsname>* of this host. */
#include "mpiexec.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum { MX_EV_UP = MX_EV_EXT };

#define MX_PROXY_WAIT_MS 30000   /* for the secret, the connection and the spec */

static mx_state_t *mx_proxy;     /* the one state of this process, for the output sink */

/* ---- the relays --------------------------------------------------------------------------- */

static void mx_proxy_sink(int rank, int out, const char *data, size_t len)
{
    while (len > 0) {
        size_t n = len < MX_MSG_MAX ? len : MX_MSG_MAX;
        mx_link_send(&mx_proxy->up, MX_MSG_OUT, rank, out == STDERR_FILENO ? 2 : 1, data, n);
        data += n;
        len -= n;
    }
}

static void mx_proxy_relay(mx_job_t *job, mx_rank_t *r, const char *line)
{
    mx_state_t *s = job->owner;
    mx_link_send(&s->up, MX_MSG_PMI, r->rank, 0, line, strlen(line));
}

void mx_proxy_started(mx_state_t *s, mx_rank_t *r)
{
    mx_link_send(&s->up, MX_MSG_STARTED, r->rank, (int32_t)r->pid, NULL, 0);
}

void mx_proxy_ended(mx_state_t *s, mx_rank_t *r, int status)
{
    mx_link_send(&s->up, MX_MSG_EXIT, r->rank, status, NULL, 0);
}

/* ---- messages from the front end ---------------------------------------------------------- */

static mx_rank_t *mx_proxy_rank(mx_state_t *s, int rank)
{
    for (int i = 0; i < s->job.nranks; i++)
        if (s->job.ranks[i].rank == rank)
            return &s->job.ranks[i];
    return NULL;
}

static void mx_proxy_message(mx_state_t *s, const mx_msg_t *m, const char *data)
{
    mx_rank_t *r = mx_proxy_rank(s, m->rank);
    switch (m->type) {
    case MX_MSG_PMI:
        if (r)
            mx_pmi_write(r, data, m->len);
        break;
    case MX_MSG_STDIN:
        if (s->in.to_fd >= 0 && m->len <= sizeof(s->in.buf) - s->in.len) {
            memcpy(s->in.buf + s->in.len, data, m->len);
            s->in.len += m->len;
        }
        s->stdin_ack_owed = true;   /* sent once it is written (or dropped) */
        break;
    case MX_MSG_STDIN_EOF:
        s->in.eof = true;
        if (s->in.len == 0)
            mx_stdin_close(&s->in);
        break;
    case MX_MSG_SIGNAL:
        if (m->rank < 0) {
            if (s->pgid > 0)
                (void)kill(-s->pgid, m->value);
            for (int i = 0; i < s->job.nranks; i++)
                if (s->job.ranks[i].pid > 0)
                    (void)kill(s->job.ranks[i].pid, m->value);
        } else if (r && r->pid > 0) {
            (void)kill(r->pid, m->value);
        }
        break;
    default:
        break;
    }
}

static void mx_proxy_lost(mx_state_t *s)
{
    if (s->up.fd < 0)
        return;
    mx_link_close(&s->up);
    if (s->alive > 0) {
        fprintf(stderr, "mpiexec (proxy on %s): lost the connection to mpiexec; killing the ranks here\n",
                s->hostname);
        s->failed = true;
        s->exit_code = 1;
        mx_terminate(s, SIGKILL, true);
    }
}

static bool mx_proxy_messages(mx_state_t *s);

int mx_proxy_poll(mx_state_t *s, struct pollfd *pfd, int *kind, int *who, int np)
{
    (void)who;
    /* What came with the spec (stdin for rank 0, say) was read before the ranks existed. */
    if (s->up.in_len > 0 && !mx_proxy_messages(s))
        mx_proxy_lost(s);
    if (s->stdin_ack_owed && s->in.len == 0) {
        s->stdin_ack_owed = false;
        mx_link_send(&s->up, MX_MSG_STDIN_ACK, 0, 0, NULL, 0);
    }
    if (s->up.fd >= 0) {
        pfd[np] = (struct pollfd){ .fd = s->up.fd, .events = POLLIN | (s->up.out_len ? POLLOUT : 0) };
        kind[np++] = MX_EV_UP;
    }
    return np;
}

/* Handles the whole messages already read; false if the link carries garbage. */
static bool mx_proxy_messages(mx_state_t *s)
{
    mx_msg_t m;
    char *data;
    size_t used;
    while (s->up.fd >= 0 && mx_link_next(&s->up, &m, &data, &used)) {
        if (m.type == 0)
            return false;
        mx_proxy_message(s, &m, data);
        mx_link_consume(&s->up, used);
    }
    return true;
}

void mx_proxy_event(mx_state_t *s, int kind, int who, short revents)
{
    (void)kind, (void)who;
    if ((revents & POLLOUT) && !mx_link_flush(&s->up)) {
        mx_proxy_lost(s);
        return;
    }
    if (!(revents & (POLLIN | POLLHUP | POLLERR)))
        return;
    bool open = mx_link_read(&s->up);
    if (!mx_proxy_messages(s) || !open)
        mx_proxy_lost(s);
}

/* ---- start-up ----------------------------------------------------------------------------- */

/* The secret: one line on stdin. Then stdin is /dev/null; rank 0's comes from the front end. */
static bool mx_proxy_secret(char *secret, size_t len)
{
    size_t at = 0;
    int64_t end = mx_now_ms() + MX_PROXY_WAIT_MS;
    while (at + 1 < len) {
        struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
        int64_t left = end - mx_now_ms();
        char c;
        if (left <= 0 || poll(&p, 1, (int)left) <= 0 || read(STDIN_FILENO, &c, 1) != 1)
            return false;
        if (c == '\n')
            break;
        secret[at++] = c;
    }
    secret[at] = '\0';
    int fd = open("/dev/null", O_RDONLY);
    if (fd >= 0) {
        dup2(fd, STDIN_FILENO);
        if (fd != STDIN_FILENO)
            close(fd);
    }
    return at == 32;
}

static int mx_proxy_connect(const char *host, const char *port)
{
    struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *list, *a;
    int rc = getaddrinfo(host, port, &hints, &list), fd = -1;
    if (rc != 0) {
        fprintf(stderr, "mpiexec (proxy): cannot resolve %s: %s\n", host, gai_strerror(rc));
        return -1;
    }
    for (a = list; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
            rc = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(list);
    if (fd < 0) {
        fprintf(stderr, "mpiexec (proxy): cannot connect to %s:%s: %s\n", host, port, strerror(rc));
        return -1;
    }
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    (void)fcntl(fd, F_SETFL, O_NONBLOCK);
    return fd;
}

/* Waits for the spec; returns its data (a copy the caller keeps) and its length. */
static char *mx_proxy_spec(mx_state_t *s, size_t *len_p)
{
    int64_t end = mx_now_ms() + MX_PROXY_WAIT_MS;
    for (;;) {
        mx_msg_t m;
        char *data;
        size_t used;
        if (mx_link_next(&s->up, &m, &data, &used)) {
            if (m.type != MX_MSG_SPEC)
                return NULL;
            char *copy = malloc(m.len + 1);
            if (!copy)
                return NULL;
            memcpy(copy, data, m.len);
            copy[m.len] = '\0';
            *len_p = m.len;
            mx_link_consume(&s->up, used);
            return copy;
        }
        struct pollfd p = { .fd = s->up.fd, .events = POLLIN | (s->up.out_len ? POLLOUT : 0) };
        int64_t left = end - mx_now_ms();
        if (left <= 0 || poll(&p, 1, (int)left) <= 0)
            return NULL;
        if ((p.revents & POLLOUT) && !mx_link_flush(&s->up))
            return NULL;
        if ((p.revents & (POLLIN | POLLHUP | POLLERR)) && !mx_link_read(&s->up))
            return NULL;
    }
}

/* Reads the strings of the spec, in the order hosts.c writes them. */
typedef struct {
    char *at, *end;
    bool bad;
} mx_spec_t;

static char *mx_spec_str(mx_spec_t *p)
{
    if (p->at >= p->end) {
        p->bad = true;
        return "";
    }
    char *s = p->at;
    p->at += strlen(s) + 1;
    return s;
}

static long mx_spec_int(mx_spec_t *p, long lo, long hi)
{
    char *end;
    char *s = mx_spec_str(p);
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < lo || v > hi) {
        p->bad = true;
        return lo;
    }
    return v;
}

static void mx_spec_env(mx_spec_t *p, mx_env_t *env)
{
    int n = (int)mx_spec_int(p, 0, 1 << 20);
    env->vars = calloc((size_t)n + 1, sizeof(char *));
    if (!env->vars) {
        p->bad = true;
        return;
    }
    for (int i = 0; i < n && !p->bad; i++)
        env->vars[env->nvars++] = strdup(mx_spec_str(p));
}

static bool mx_proxy_job(mx_state_t *s, mx_opts_t *o, char *spec, size_t len)
{
    mx_spec_t p = { .at = spec, .end = spec + len };
    snprintf(s->job.kvsname, sizeof(s->job.kvsname), "%s", mx_spec_str(&p));
    s->job.size = (int)mx_spec_int(&p, 1, 1 << 20);
    s->job.nranks = s->job.nlocal = (int)mx_spec_int(&p, 1, 1 << 20);
    const char *cwd = mx_spec_str(&p);
    o->bind = (mx_bind_t)mx_spec_int(&p, MX_BIND_AUTO, MX_BIND_NONE);
    o->report_bindings = mx_spec_int(&p, 0, 1);
    o->rpp = (int)mx_spec_int(&p, 0, MX_RPP_MAX);
    mx_env_t pass = { 0 };
    mx_spec_env(&p, &pass);
    for (int i = 0; i < pass.nvars && !p.bad; i++)   /* over the launcher's environment */
        putenv(pass.vars[i]);
    free(pass.vars);   /* the strings now belong to the environment */
    mx_spec_env(&p, &o->genv);
    o->nsections = (int)mx_spec_int(&p, 1, 1 << 16);
    if (p.bad || !(o->sections = calloc((size_t)o->nsections, sizeof(mx_section_t))))
        return false;
    for (int i = 0; i < o->nsections && !p.bad; i++) {
        int n = (int)mx_spec_int(&p, 1, 1 << 16);
        if (p.bad || !(o->sections[i].argv = calloc((size_t)n + 1, sizeof(char *))))
            return false;
        for (int j = 0; j < n; j++)
            o->sections[i].argv[j] = mx_spec_str(&p);
        mx_spec_env(&p, &o->sections[i].env);
        const char *wdir = mx_spec_str(&p);
        o->sections[i].wdir = *wdir ? wdir : NULL;
    }
    if (p.bad || !(s->job.ranks = calloc((size_t)s->job.nranks, sizeof(mx_rank_t))))
        return false;
    for (int i = 0; i < s->job.nranks; i++) {
        mx_rank_t *r = &s->job.ranks[i];
        r->rank = (int)mx_spec_int(&p, 0, s->job.size - 1);
        r->local = (int)mx_spec_int(&p, 0, s->job.nranks - 1);
        r->appnum = (int)mx_spec_int(&p, 0, o->nsections - 1);
    }
    o->nranks = s->job.nranks;
    if (!p.bad && chdir(cwd) != 0)
        fprintf(stderr, "mpiexec (proxy on %s): cannot enter %s: %s; the ranks run in the proxy's "
                "directory\n", s->hostname, cwd, strerror(errno));
    return !p.bad;
}

/* WEFT_HOST_ADDR for the ranks: this host's address on the way to the front end, which other hosts
 * reach it by; their socket transport listens there (dynamic processes across hosts,
 * docs/dynamic.md). Over what the front end passed: that one describes the front end's host. */
static void mx_proxy_host_addr(int fd)
{
    struct sockaddr_in a;
    socklen_t alen = sizeof(a);
    char ip[INET_ADDRSTRLEN];
    if (getsockname(fd, (struct sockaddr *)&a, &alen) == 0 && a.sin_family == AF_INET &&
        inet_ntop(AF_INET, &a.sin_addr, ip, sizeof(ip)))
        setenv("WEFT_HOST_ADDR", ip, 1);
    else
        unsetenv("WEFT_HOST_ADDR");
}

int mx_proxy_main(int argc, char **argv)
{
    static mx_state_t st;
    mx_state_t *s = &st;
    mx_opts_t opts = { 0 };
    char secret[64];
    int ret = 1;

    mx_proxy = s;
    s->mode = MX_MODE_PROXY;
    s->listen_fd = -1;
    mx_link_init(&s->up, -1);
    if (gethostname(s->hostname, sizeof(s->hostname)) != 0)
        strcpy(s->hostname, "?");
    s->hostname[sizeof(s->hostname) - 1] = '\0';
    if (argc != 5) {
        fprintf(stderr, "mpiexec --weft-proxy ADDR PORT INDEX: mpiexec starts it, not you\n");
        return 2;
    }
    if (!mx_proxy_secret(secret, sizeof(secret))) {
        fprintf(stderr, "mpiexec (proxy on %s): no secret on stdin\n", s->hostname);
        return 1;
    }
    int fd = mx_proxy_connect(argv[2], argv[3]);
    if (fd < 0)
        return 1;
    mx_link_init(&s->up, fd);
    mx_link_send(&s->up, MX_MSG_HELLO, -1, atoi(argv[4]), secret, strlen(secret));
    memset(secret, 0, sizeof(secret));
    size_t len;
    char *spec = mx_proxy_spec(s, &len);
    if (!spec || !mx_proxy_job(s, &opts, spec, len)) {
        fprintf(stderr, "mpiexec (proxy on %s): no valid job from %s:%s\n", s->hostname, argv[2], argv[3]);
        goto free_job;
    }
    mx_proxy_host_addr(s->up.fd);
    s->job.opts = &opts;
    s->job.owner = s;
    s->job.pmi_relay = mx_proxy_relay;
    s->in.remote = true;
    mx_io_set_sink(mx_proxy_sink);

    (void)mx_run(s);

    mx_link_drain(&s->up, 5000);
    ret = s->up.fd >= 0 ? 0 : 1;
free_job:
    mx_link_close(&s->up);
    free(s->job.ranks);
    for (int i = 0; i < opts.nsections; i++) {
        free(opts.sections[i].argv);
        for (int j = 0; j < opts.sections[i].env.nvars; j++)
            free(opts.sections[i].env.vars[j]);
        free(opts.sections[i].env.vars);
    }
    free(opts.sections);
    for (int j = 0; j < opts.genv.nvars; j++)
        free(opts.genv.vars[j]);
    free(opts.genv.vars);
    free(spec);
    return ret;
}
