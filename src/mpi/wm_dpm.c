/* Dynamic processes (docs/dynamic.md): ports, connect/accept, spawn, join, the name service,
 * the parent communicator.
 *
 * Every way of joining two groups ends in wm_dpm_establish: the two roots hold a TCP connection
 * (to a port, a spawned job's connect-back, or the user's socket for join), exchange their groups'
 * entries ("IP:PORT job rank" of each member: its socket-transport address and its identity),
 * agree on a context id free in both jobs, and broadcast the outcome to their groups; each member
 * then maps the remote entries to peer ids (core/wc_dyn.h) and builds the intercommunicator.
 *
 * Concurrency: the port table and the list of spawned launchers are guarded by wm_dpm_mu; the
 * calls themselves are collective over their communicator and may run in several threads on
 * different communicators.
 */
#include "mpi/wm_internal.h"
#include "mpi/wm_info.h"
#include "core/wc_dyn.h"
#include "transport/sock/wx_sock.h"
#include "util/wu_log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define WM_DPM_ENTRY   256              /* one member's entry */
#define WM_DPM_PREFIX  "weft-port:"
#define WM_DPM_MAGIC   0x57465044u      /* "WFPD": first word of a root's message */

typedef struct wm_port {
    struct wm_port *next;
    int  fd;
    char name[MPI_MAX_PORT_NAME];
} wm_port_t;

static pthread_mutex_t wm_dpm_mu = PTHREAD_MUTEX_INITIALIZER;
static wm_port_t *wm_ports;            /* wm_dpm_mu */
static pid_t wm_spawned[64];           /* wm_dpm_mu: launchers of spawned jobs still running */
static int wm_nspawned;
static MPI_Comm wm_parent = MPI_COMM_NULL;   /* set once by MPI_Init of a spawned process */

extern char **environ;

/* ---- sockets -------------------------------------------------------------------------------- */

/* A listening socket on the address of the socket transport; its port name in name. */
static int wm_dpm_listen(char *name, size_t len)
{
    char ipbuf[INET_ADDRSTRLEN];
    const char *ip = wx_sock_default_ip(ipbuf, sizeof(ipbuf));
    struct sockaddr_in sa = { .sin_family = AF_INET };
    socklen_t sl = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (inet_pton(AF_INET, ip, &sa.sin_addr) != 1 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
        listen(fd, 16) || getsockname(fd, (struct sockaddr *)&sa, &sl)) {
        close(fd);
        return -1;
    }
    snprintf(name, len, WM_DPM_PREFIX "%s:%u", ip, (unsigned)ntohs(sa.sin_port));
    return fd;
}

/* Parse a port name into sa; false if it is not one of ours. */
static bool wm_dpm_port_parse(const char *name, struct sockaddr_in *sa)
{
    char host[64];
    unsigned port;
    if (strncmp(name, WM_DPM_PREFIX, strlen(WM_DPM_PREFIX)) ||
        sscanf(name + strlen(WM_DPM_PREFIX), "%63[0-9.]:%u", host, &port) != 2 || port == 0 ||
        port > 65535)
        return false;
    *sa = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    return inet_pton(AF_INET, host, &sa->sin_addr) == 1;
}

/* Wait until fd is ready for events, keeping this process's progress going (others may need it:
 * world rank 0 serves context ids). watch: a launcher whose end means the wait is over. Returns
 * 1 ready, 0 the launcher ended (*status_p), -1 error. */
static int wm_dpm_wait_fd(int fd, short events, pid_t watch, int *status_p)
{
    for (;;) {
        struct pollfd p = { .fd = fd, .events = events };
        int r = poll(&p, 1, 2);
        if (r > 0)
            return (p.revents & (events | POLLHUP | POLLERR)) ? 1 : -1;
        if (r < 0 && errno != EINTR)
            return -1;
        if (watch > 0 && waitpid(watch, status_p, WNOHANG) == watch)
            return 0;
        wc_progress();
    }
}

static bool wm_dpm_io(int fd, void *buf, size_t len, bool out)
{
    char *p = buf;
    while (len > 0) {
        if (wm_dpm_wait_fd(fd, out ? POLLOUT : POLLIN, 0, NULL) != 1)
            return false;
        ssize_t r = out ? send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT)
                        : recv(fd, p, len, MSG_DONTWAIT);
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            continue;
        if (r <= 0)
            return false;
        p += r;
        len -= (size_t)r;
    }
    return true;
}

static bool wm_dpm_put32(int fd, uint32_t a, uint32_t b)
{
    uint32_t m[2] = { a, b };
    return wm_dpm_io(fd, m, sizeof(m), true);
}

static bool wm_dpm_get32(int fd, uint32_t *a, uint32_t *b)
{
    uint32_t m[2];
    if (!wm_dpm_io(fd, m, sizeof(m), false))
        return false;
    *a = m[0];
    *b = m[1];
    return true;
}

/* ---- the two roots' exchange ---------------------------------------------------------------- */

/* Over fd: send our n entries, receive theirs (*remote_p, malloc'd), agree on a context id. The
 * acceptor drives the agreement: it proposes an id of its job; the connector answers the first id
 * free in its job at or above it; until both are equal (docs/dynamic.md). */
static bool wm_dpm_roots(int fd, bool acceptor, const char *mine, int n, char **remote_p, int *rn_p,
                         uint32_t *ctx_p)
{
    uint32_t magic, rn;
    if (!wm_dpm_put32(fd, WM_DPM_MAGIC, (uint32_t)n) ||
        !wm_dpm_io(fd, (void *)mine, (size_t)n * WM_DPM_ENTRY, true) ||
        !wm_dpm_get32(fd, &magic, &rn) || magic != WM_DPM_MAGIC || rn == 0 || rn > 1u << 20)
        return false;
    char *remote = malloc((size_t)rn * WM_DPM_ENTRY);
    if (!remote || !wm_dpm_io(fd, remote, (size_t)rn * WM_DPM_ENTRY, false)) {
        free(remote);
        return false;
    }
    /* two roots of one job (halves of a job meeting at a port) share one counter: an id the
     * acceptor took is free for both */
    char job[WM_DPM_ENTRY], their_job[WM_DPM_ENTRY];
    memset(job, 0, sizeof(job));
    snprintf(job, sizeof(job), "%s", wc_dyn_job());
    if (!wm_dpm_io(fd, job, sizeof(job), true) || !wm_dpm_io(fd, their_job, sizeof(their_job), false)) {
        free(remote);
        return false;
    }
    their_job[sizeof(their_job) - 1] = '\0';
    bool same_job = !strcmp(job, their_job);
    wc_ep_t *ep = wc_ep_default();
    uint32_t v, fin, cand;
    bool ok = true;
    if (acceptor) {
        cand = wc_ctx_alloc_min(ep, 2, 0);
        for (;;) {
            if (!(ok = wm_dpm_put32(fd, cand, 0) && wm_dpm_get32(fd, &v, &fin)))
                break;
            if (v == cand)
                break;
            cand = wc_ctx_alloc_min(ep, 2, v);
            if (cand == v)
                break;
        }
        ok = ok && wm_dpm_put32(fd, cand, 1);
    } else {
        for (;;) {
            if (!(ok = wm_dpm_get32(fd, &v, &fin)))
                break;
            if (fin) {
                cand = v;
                break;
            }
            if (!(ok = wm_dpm_put32(fd, same_job ? v : wc_ctx_alloc_min(ep, 2, v), 0)))
                break;
        }
    }
    if (!ok) {
        free(remote);
        return false;
    }
    *remote_p = remote;
    *rn_p = (int)rn;
    *ctx_p = cand;
    return true;
}

/* Collective over intracommunicator c: join c's group with the group behind the root's link fd
 * (root only; -1 when the root could not get one, fail_cls and why then say why). */
static int wm_dpm_establish(const char *fn, wm_comm_t *c, int root, int fd, bool acceptor,
                            int fail_cls, const char *why, MPI_Comm *newcomm)
{
    MPI_Comm comm = wm_comm_handle(c);
    const char *addr = NULL;
    char entry[WM_DPM_ENTRY];
    memset(entry, 0, sizeof(entry));
    wu_status_t st = wc_dyn_addr(&addr);
    if (st != WU_OK)
        wu_log_fatal("%s: the socket transport did not start (%s)", fn, wu_status_str(st));
    snprintf(entry, sizeof(entry), "%s %d %s", addr, wc_world.rank, wc_dyn_job());
    char *all = c->rank == root ? malloc((size_t)c->size * WM_DPM_ENTRY) : NULL;
    if (c->rank == root && !all)
        wu_log_fatal("%s: no memory for %d entries", fn, c->size);
    PMPI_Gather(entry, WM_DPM_ENTRY, MPI_CHAR, all, WM_DPM_ENTRY, MPI_CHAR, root, comm);
    int hdr[3] = { MPI_SUCCESS, 0, 0 };
    char *remote = NULL;
    char msg[300] = "";
    if (c->rank == root) {
        uint32_t ctx = 0;
        int rn = 0;
        if (fd < 0) {
            hdr[0] = fail_cls;
            snprintf(msg, sizeof(msg), "%s", why);
        } else if (!wm_dpm_roots(fd, acceptor, all, c->size, &remote, &rn, &ctx)) {
            hdr[0] = MPI_ERR_PORT;
            snprintf(msg, sizeof(msg), "the other group's root broke the connection");
        }
        hdr[1] = rn;
        hdr[2] = (int)ctx;
    }
    free(all);
    PMPI_Bcast(hdr, 3, MPI_INT, root, comm);
    if (hdr[0] != MPI_SUCCESS) {
        free(remote);
        return wm_error(c, hdr[0], fn, "%s", c->rank == root ? msg : "failed at the root");
    }
    if (c->rank != root && !(remote = malloc((size_t)hdr[1] * WM_DPM_ENTRY)))
        wu_log_fatal("%s: no memory", fn);
    PMPI_Bcast(remote, hdr[1] * WM_DPM_ENTRY, MPI_CHAR, root, comm);
    int rn = hdr[1];
    int *ids = malloc(sizeof(int) * (size_t)rn);
    int *local = wm_comm_local_ranks(c);
    if (!ids || !local)
        wu_log_fatal("%s: no memory", fn);
    for (int i = 0; i < rn; i++) {
        char a[WM_DPM_ENTRY], job[WM_DPM_ENTRY];
        int jr;
        char *e = remote + (size_t)i * WM_DPM_ENTRY;
        e[WM_DPM_ENTRY - 1] = '\0';
        if (sscanf(e, "%255s %d %255s", a, &jr, job) != 3 || wc_dyn_peer(a, &ids[i]) != WU_OK)
            wu_log_fatal("%s: bad entry \"%.80s\" from the other group", fn, e);
        wc_dyn_peer_name(ids[i], job, jr);
    }
    wm_comm_t *d = wm_comm_new(c, (uint32_t)hdr[2], local, c->size, ids, rn, true);
    free(ids);
    free(local);
    free(remote);
    if (!d)
        return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for the intercommunicator");
    *newcomm = wm_comm_handle(d);
    return MPI_SUCCESS;
}

/* Checks of accept/connect/spawn: c an intracommunicator, root one of its ranks. */
#define WM_DPM_CHECK(fn, comm, c, root, newcomm)                                        \
    WM_COMM_CHECK(fn, comm, c);                                                          \
    if (c->inter)                                                                        \
        return wm_error(c, MPI_ERR_COMM, fn, "comm is an intercommunicator");           \
    if ((root) < 0 || (root) >= c->size)                                                 \
        return wm_error(c, MPI_ERR_ROOT, fn, "root %d is not a rank of comm (size %d)",  \
                        (root), c->size);                                                \
    if (!(newcomm))                                                                      \
        return wm_error(c, MPI_ERR_ARG, fn, "newcomm is NULL")

/* ---- ports ---------------------------------------------------------------------------------- */

int wm_impl_MPI_Open_port(MPI_Info info, char *port_name)
{
    static const char fn[] = "MPI_Open_port";
    WM_CHECK_INIT(fn);
    (void)info;
    if (!port_name)
        return wm_error(NULL, MPI_ERR_ARG, fn, "port_name is NULL");
    wm_port_t *p = calloc(1, sizeof(*p));
    if (!p)
        return wm_error(NULL, MPI_ERR_NO_MEM, fn, "no memory");
    p->fd = wm_dpm_listen(p->name, sizeof(p->name));
    if (p->fd < 0) {
        free(p);
        return wm_error(NULL, MPI_ERR_PORT, fn, "cannot listen on a TCP port: %s", strerror(errno));
    }
    pthread_mutex_lock(&wm_dpm_mu);
    p->next = wm_ports;
    wm_ports = p;
    pthread_mutex_unlock(&wm_dpm_mu);
    strcpy(port_name, p->name);
    return MPI_SUCCESS;
}

int wm_impl_MPI_Close_port(const char *port_name)
{
    static const char fn[] = "MPI_Close_port";
    WM_CHECK_INIT(fn);
    if (!port_name)
        return wm_error(NULL, MPI_ERR_ARG, fn, "port_name is NULL");
    pthread_mutex_lock(&wm_dpm_mu);
    wm_port_t **pp = &wm_ports, *p;
    while ((p = *pp) && strcmp(p->name, port_name))
        pp = &p->next;
    if (p)
        *pp = p->next;
    pthread_mutex_unlock(&wm_dpm_mu);
    if (!p)
        return wm_error(NULL, MPI_ERR_PORT, fn, "port \"%.80s\" is not open in this process",
                        port_name);
    close(p->fd);
    free(p);
    return MPI_SUCCESS;
}

/* The listening socket of an open port, or -1. */
static int wm_dpm_port_fd(const char *name)
{
    int fd = -1;
    pthread_mutex_lock(&wm_dpm_mu);
    for (wm_port_t *p = wm_ports; p; p = p->next)
        if (!strcmp(p->name, name))
            fd = p->fd;
    pthread_mutex_unlock(&wm_dpm_mu);
    return fd;
}

/* Accept one connection on lfd; watch: a launcher whose exit ends the wait (spawn). */
static int wm_dpm_accept_fd(int lfd, pid_t watch, char *why, size_t len)
{
    for (;;) {
        int status = 0;
        int r = wm_dpm_wait_fd(lfd, POLLIN, watch, &status);
        if (r == 0) {
            if (WIFEXITED(status))
                snprintf(why, len, "the children's mpiexec exited with status %d before they "
                         "connected%s", WEXITSTATUS(status),
                         WEXITSTATUS(status) == 127 ? " (program not found)" : "");
            else
                snprintf(why, len, "the children's mpiexec was killed by signal %d before they "
                         "connected", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
            return -1;
        }
        if (r < 0) {
            snprintf(why, len, "the port's socket failed: %s", strerror(errno));
            return -1;
        }
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd >= 0) {
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
            return fd;
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED) {
            snprintf(why, len, "accept failed: %s", strerror(errno));
            return -1;
        }
    }
}

int wm_impl_MPI_Comm_accept(const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                            MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_accept";
    WM_DPM_CHECK(fn, comm, c, root, newcomm);
    (void)info;
    int fd = -1;
    char why[200] = "";
    if (c->rank == root) {
        int lfd = port_name ? wm_dpm_port_fd(port_name) : -1;
        if (lfd < 0)
            snprintf(why, sizeof(why), "port \"%.80s\" is not open in this process (MPI_Open_port)",
                     port_name ? port_name : "(null)");
        else
            fd = wm_dpm_accept_fd(lfd, 0, why, sizeof(why));
    }
    int rc = wm_dpm_establish(fn, c, root, fd, true, MPI_ERR_PORT, why, newcomm);
    if (fd >= 0)
        close(fd);
    return rc;
}

static int wm_dpm_connect_fd(const char *port_name, char *why, size_t len)
{
    struct sockaddr_in sa;
    if (!port_name || !wm_dpm_port_parse(port_name, &sa)) {
        snprintf(why, len, "\"%.80s\" is not a port name of Weft (MPI_Open_port)",
                 port_name ? port_name : "(null)");
        return -1;
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        snprintf(why, len, "cannot connect to port \"%.80s\": %s", port_name, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

int wm_impl_MPI_Comm_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                             MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_connect";
    WM_DPM_CHECK(fn, comm, c, root, newcomm);
    (void)info;
    int fd = -1;
    char why[200] = "";
    if (c->rank == root)
        fd = wm_dpm_connect_fd(port_name, why, sizeof(why));
    int rc = wm_dpm_establish(fn, c, root, fd, false, MPI_ERR_PORT, why, newcomm);
    if (fd >= 0)
        close(fd);
    return rc;
}

/* ---- join ----------------------------------------------------------------------------------- */

/* Both ends send their identity over the user's socket; the lower in the order every job agrees
 * on accepts. The socket then carries the roots' exchange; it is left open for the user. */
int wm_impl_MPI_Comm_join(int fd, MPI_Comm *intercomm)
{
    static const char fn[] = "MPI_Comm_join";
    WM_CHECK_INIT(fn);
    if (!intercomm)
        return wm_error(NULL, MPI_ERR_ARG, fn, "intercomm is NULL");
    if (fd < 0 || fcntl(fd, F_GETFD) < 0)
        return wm_error(NULL, MPI_ERR_ARG, fn, "fd %d is not an open descriptor", fd);
    char mine[WM_DPM_ENTRY], theirs[WM_DPM_ENTRY];
    memset(mine, 0, sizeof(mine));
    snprintf(mine, sizeof(mine), "%s %d", wc_dyn_job(), wc_world.rank);
    int fl = fcntl(fd, F_GETFL);
    if (!wm_dpm_io(fd, mine, sizeof(mine), true) || !wm_dpm_io(fd, theirs, sizeof(theirs), false))
        return wm_error(NULL, MPI_ERR_ARG, fn, "the socket %d broke while exchanging identities", fd);
    theirs[sizeof(theirs) - 1] = '\0';
    int c = strcmp(mine, theirs);
    if (c == 0)
        return wm_error(NULL, MPI_ERR_ARG, fn, "fd %d is connected to this very process", fd);
    int rc = wm_dpm_establish(fn, &wm_comm_self, 0, fd, c < 0, MPI_ERR_ARG, "", intercomm);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl);
    return rc;
}

/* ---- spawn ---------------------------------------------------------------------------------- */

/* argv of one command (MPI_ARGV_NULL: none), counted. */
static int wm_argv_len(char **argv)
{
    int n = 0;
    while (argv && argv[n])
        n++;
    return n;
}

/* out = a "/" b, cut to len. */
static void wm_path_join(char *out, size_t len, const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la + 1 + lb + 1 > len) {
        out[0] = '\0';
        return;
    }
    memcpy(out, a, la);
    out[la] = '/';
    memcpy(out + la + 1, b, lb + 1);
}

/* The program to run for command cmd: with info "path", the first directory of it holding cmd
 * (when cmd names no directory); with "wdir", relative to it. Into out. */
static void wm_spawn_program(const char *cmd, const char *path, const char *wdir, char *out,
                             size_t len)
{
    snprintf(out, len, "%s", cmd);
    if (strchr(cmd, '/')) {
        if (cmd[0] != '/' && wdir) {
            wm_path_join(out, len, wdir, cmd);
        }
        return;
    }
    if (path) {
        char *dirs = strdup(path), *save = NULL;
        for (char *d = dirs ? strtok_r(dirs, ":", &save) : NULL; d; d = strtok_r(NULL, ":", &save)) {
            char cand[PATH_MAX];
            wm_path_join(cand, sizeof(cand), d, cmd);
            if (cand[0] && access(cand, X_OK) == 0) {
                if (cand[0] != '/' && wdir)
                    wm_path_join(out, len, wdir, cand);
                else
                    snprintf(out, len, "%s", cand);
                break;
            }
        }
        free(dirs);
    } else if (wdir) {
        char cand[PATH_MAX];
        wm_path_join(cand, sizeof(cand), wdir, cmd);
        if (cand[0] && access(cand, X_OK) == 0)
            snprintf(out, len, "%s", cand);
    }
}

/* Is host (info "host") this machine? */
static bool wm_spawn_host_here(const char *host)
{
    char me[256] = "";
    gethostname(me, sizeof(me) - 1);
    return !strcmp(host, "localhost") || !strncmp(host, "127.", 4) || !strcmp(host, me);
}

/* At the root: start "mpiexec [hosts, launcher] -n N1 [-hosts H1] [-wdir D] P1 args : ..." with
 * WEFT_PARENT_PORT; returns its pid or -1 with why. On several hosts (our job's, exported by
 * mpiexec as WEFT_MPIEXEC_HOSTS, or info "host" naming another host) the children's mpiexec runs
 * as the front end of a job on those hosts, started by our job's launcher; by default its ranks
 * take the slots after ours (--weft-skip), as Hydra places spawned processes. */
static pid_t wm_spawn_launch(int count, char *cmds[], char **argvs[], const int maxprocs[],
                             const MPI_Info infos[], const char *port, char *why, size_t len)
{
    const char *mpiexec = getenv("WEFT_MPIEXEC");
    if (!mpiexec || !*mpiexec) {
        snprintf(why, len, "this process was not started by Weft's mpiexec (it is a singleton or "
                 "runs under another launcher), and only Weft's mpiexec can start new processes");
        return -1;
    }
    const char *jhosts = getenv("WEFT_MPIEXEC_HOSTS");
    const char *launcher = getenv("WEFT_MPIEXEC_LAUNCHER");
    const char *lexec = getenv("WEFT_MPIEXEC_LAUNCHER_EXEC");
    const char *iface = getenv("WEFT_MPIEXEC_IFACE");
    bool multi = jhosts && *jhosts, remote = false;
    const char **hosts = calloc((size_t)count, sizeof(char *));
    if (!hosts) {
        snprintf(why, len, "no memory");
        return -1;
    }
    for (int i = 0; i < count; i++) {
        MPI_Info in = infos ? infos[i] : MPI_INFO_NULL;
        const char *h = in != MPI_INFO_NULL ? wm_info_value(in, "host") : NULL;
        if (h && !*h)
            h = NULL;
        if (h && !wm_spawn_host_here(h))
            remote = multi = true;
        hosts[i] = h;
    }
    for (const char *p = multi && jhosts ? jhosts : ""; *p && !remote;) {   /* "h1:2,h2:2" */
        char h[256];
        size_t n = strcspn(p, ":,");
        snprintf(h, sizeof(h), "%.*s", (int)(n < sizeof(h) ? n : sizeof(h) - 1), p);
        remote = !wm_spawn_host_here(h);
        p += n;
        p += strcspn(p, ",");
        p += *p == ',';
    }
    if (remote && !(launcher && !strcmp(launcher, "fork")) &&
        !strncmp(port, WM_DPM_PREFIX "127.", strlen(WM_DPM_PREFIX "127."))) {
        snprintf(why, len, "the children may run on other hosts, but this process listens on a "
                 "loopback address only (%.60s): set WEFT_SOCK_IF_ADDR to an address of this host, or "
                 "start the job with mpiexec -iface", port + strlen(WM_DPM_PREFIX));
        free(hosts);
        return -1;
    }
    size_t nargs = 16;
    for (int i = 0; i < count; i++)
        nargs += 8 + (size_t)wm_argv_len(argvs ? argvs[i] : NULL);
    char **av = calloc(nargs, sizeof(char *));
    char (*progs)[PATH_MAX] = malloc(PATH_MAX * (size_t)count);
    char (*ns)[16] = malloc(16 * (size_t)count);
    char skip[16];
    if (!av || !progs || !ns) {
        free(av), free(progs), free(ns), free(hosts);
        snprintf(why, len, "no memory");
        return -1;
    }
    int k = 0;
    av[k++] = (char *)mpiexec;
    if (multi) {
        if (jhosts && *jhosts) {
            snprintf(skip, sizeof(skip), "%d", wc_world.size);
            av[k++] = "-hosts";
            av[k++] = (char *)jhosts;
            av[k++] = "--weft-skip";
            av[k++] = skip;
        }
        if (launcher && *launcher) {
            av[k++] = "-launcher";
            av[k++] = (char *)launcher;
        }
        if (lexec && *lexec) {
            av[k++] = "-launcher-exec";
            av[k++] = (char *)lexec;
        }
        if (iface && *iface) {
            av[k++] = "-iface";
            av[k++] = (char *)iface;
        }
    }
    for (int i = 0; i < count; i++) {
        MPI_Info in = infos ? infos[i] : MPI_INFO_NULL;
        const char *wdir = in != MPI_INFO_NULL ? wm_info_value(in, "wdir") : NULL;
        const char *path = in != MPI_INFO_NULL ? wm_info_value(in, "path") : NULL;
        if (i)
            av[k++] = ":";
        snprintf(ns[i], sizeof(ns[i]), "%d", maxprocs[i]);
        av[k++] = "-n";
        av[k++] = ns[i];
        if (multi && hosts[i]) {
            av[k++] = "--weft-section-hosts";
            av[k++] = (char *)hosts[i];
        }
        if (wdir) {
            av[k++] = "-wdir";
            av[k++] = (char *)wdir;
        }
        wm_spawn_program(cmds[i], path, wdir, progs[i], PATH_MAX);
        av[k++] = progs[i];
        for (int a = 0; argvs && a < wm_argv_len(argvs[i]); a++)
            av[k++] = argvs[i][a];
    }
    av[k] = NULL;
    free(hosts);
    /* the environment: ours, without what describes our own job, plus the parent's port */
    int ne = 0;
    while (environ[ne])
        ne++;
    char **envp = calloc((size_t)ne + 2, sizeof(char *));
    char portvar[MPI_MAX_PORT_NAME + 32];
    snprintf(portvar, sizeof(portvar), "WEFT_PARENT_PORT=%s", port);
    int m = 0;
    for (int i = 0; envp && i < ne; i++) {
        const char *e = environ[i];
        if (!strncmp(e, "PMI_", 4) || !strncmp(e, "PMIX_", 5) || !strncmp(e, "MPI_LOCAL", 9) ||
            !strncmp(e, "WEFT_PARENT_PORT=", 17) || !strncmp(e, "WEFT_BOUND_CPUS=", 16))
            continue;
        envp[m++] = environ[i];
    }
    if (envp)
        envp[m++] = portvar;
    /* PR_SET_PDEATHSIG fires when the forking *thread* ends: only the main thread's end is the
     * process's (mpi4py.futures spawns from a helper thread that ends before the process) */
    bool main_thread = getpid() == (pid_t)syscall(SYS_gettid);
    pid_t pid = envp ? fork() : -1;
    if (pid == 0) {
        /* only async-signal-safe calls until exec */
        int nul = open("/dev/null", O_RDONLY);
        if (nul >= 0)
            dup2(nul, 0);
        for (int fd = 3; fd < 1024; fd++)
            close(fd);
        if (main_thread)
            prctl(PR_SET_PDEATHSIG, SIGTERM);
        execve(mpiexec, av, envp);
        _exit(127);
    }
    int err = errno;
    free(envp), free(av), free(progs), free(ns);
    if (pid < 0) {
        snprintf(why, len, "fork failed: %s", strerror(err));
        return -1;
    }
    return pid;
}

static int wm_spawn_common(const char *fn, int count, char *cmds[], char **argvs[],
                           const int maxprocs[], const MPI_Info infos[], int root, MPI_Comm comm,
                           MPI_Comm *intercomm, int errcodes[])
{
    WM_DPM_CHECK(fn, comm, c, root, intercomm);
    int fd = -1, total = 0;
    char why[300] = "";
    if (c->rank == root) {
        if (count <= 0) {
            snprintf(why, sizeof(why), "count %d: no command", count);
        } else {
            for (int i = 0; i < count && !why[0]; i++) {
                if (!cmds || !cmds[i] || !cmds[i][0])
                    snprintf(why, sizeof(why), "command %d is empty", i);
                else if (maxprocs[i] <= 0)
                    snprintf(why, sizeof(why), "maxprocs %d of command %d", maxprocs[i], i);
                else
                    total += maxprocs[i];
            }
        }
        char port[MPI_MAX_PORT_NAME];
        int lfd = why[0] ? -1 : wm_dpm_listen(port, sizeof(port));
        if (!why[0] && lfd < 0)
            snprintf(why, sizeof(why), "cannot listen on a TCP port: %s", strerror(errno));
        pid_t pid = lfd < 0 ? -1
                            : wm_spawn_launch(count, cmds, argvs, maxprocs, infos, port, why,
                                              sizeof(why));
        if (pid > 0) {
            fd = wm_dpm_accept_fd(lfd, pid, why, sizeof(why));
            if (fd >= 0) {
                pthread_mutex_lock(&wm_dpm_mu);
                if (wm_nspawned < (int)(sizeof(wm_spawned) / sizeof(wm_spawned[0])))
                    wm_spawned[wm_nspawned++] = pid;
                pthread_mutex_unlock(&wm_dpm_mu);
            } else {
                kill(pid, SIGTERM);
                waitpid(pid, NULL, 0);
            }
        }
        if (lfd >= 0)
            close(lfd);
    }
    int rc = wm_dpm_establish(fn, c, root, fd, true, MPI_ERR_SPAWN, why, intercomm);
    if (fd >= 0)
        close(fd);
    int n = total;
    PMPI_Bcast(&n, 1, MPI_INT, root, comm);
    if (errcodes != MPI_ERRCODES_IGNORE) {
        for (int i = 0; i < n; i++)
            errcodes[i] = rc == MPI_SUCCESS ? MPI_SUCCESS : MPI_ERR_SPAWN;
    }
    if (rc != MPI_SUCCESS)
        *intercomm = MPI_COMM_NULL;
    return rc;
}

int wm_impl_MPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info,
                           int root, MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[])
{
    char *cmds[1] = { (char *)command };
    char **argvs[1] = { argv };
    return wm_spawn_common("MPI_Comm_spawn", 1, cmds, argv == MPI_ARGV_NULL ? NULL : argvs,
                           &maxprocs, &info, root, comm, intercomm, array_of_errcodes);
}

int wm_impl_MPI_Comm_spawn_multiple(int count, char *array_of_commands[],
                                    char **array_of_argv[], const int array_of_maxprocs[],
                                    const MPI_Info array_of_info[], int root, MPI_Comm comm,
                                    MPI_Comm *intercomm, int array_of_errcodes[])
{
    return wm_spawn_common("MPI_Comm_spawn_multiple", count, array_of_commands,
                           array_of_argv == MPI_ARGVS_NULL ? NULL : array_of_argv,
                           array_of_maxprocs, array_of_info, root, comm, intercomm,
                           array_of_errcodes);
}

/* ---- the parent ----------------------------------------------------------------------------- */

int wm_dpm_init_parent(void)
{
    const char *port = getenv("WEFT_PARENT_PORT");
    if (!port || !*port)
        return MPI_SUCCESS;
    char p[MPI_MAX_PORT_NAME];
    snprintf(p, sizeof(p), "%s", port);
    unsetenv("WEFT_PARENT_PORT");   /* not for this job's own children */
    return PMPI_Comm_connect(p, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &wm_parent);
}

MPI_Comm wm_dpm_parent(void)
{
    if (wm_parent != MPI_COMM_NULL && !wm_comm_get(wm_parent))
        wm_parent = MPI_COMM_NULL;   /* disconnected or freed */
    return wm_parent;
}

void wm_dpm_finalize(void)
{
    /* a spawned job ends before its parent's process does (its launcher is our child) */
    for (int i = 0; i < wm_nspawned; i++) {
        while (waitpid(wm_spawned[i], NULL, WNOHANG) == 0) {
            wc_progress();
            usleep(1000);
        }
    }
    wm_nspawned = 0;
    pthread_mutex_lock(&wm_dpm_mu);
    while (wm_ports) {
        wm_port_t *p = wm_ports;
        wm_ports = p->next;
        close(p->fd);
        free(p);
    }
    pthread_mutex_unlock(&wm_dpm_mu);
}

/* ---- the name service ----------------------------------------------------------------------- */

/* Names live as files in one directory of the file system (WEFT_NAME_DIR, else
 * $HOME/.weft-names): every job of the user on the machine (or sharing the directory) sees them. */
static bool wm_name_file(const char *service, char *out, size_t len, bool mkdirs)
{
    const char *dir = getenv("WEFT_NAME_DIR");
    char def[PATH_MAX];
    if (!dir || !*dir) {
        const char *home = getenv("HOME");
        if (!home || !*home)
            return false;
        snprintf(def, sizeof(def), "%s/.weft-names", home);
        dir = def;
    }
    if (mkdirs)
        mkdir(dir, 0700);
    int n = snprintf(out, len, "%s/", dir);
    for (const char *s = service; *s && (size_t)n + 4 < len; s++) {
        unsigned char ch = (unsigned char)*s;
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
            ch == '-' || ch == '_' || ch == '.')
            out[n++] = (char)ch;
        else
            n += snprintf(out + n, len - (size_t)n, "%%%02x", ch);
    }
    out[n] = '\0';
    return true;
}

int wm_impl_MPI_Publish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    static const char fn[] = "MPI_Publish_name";
    WM_CHECK_INIT(fn);
    (void)info;
    char f[PATH_MAX], tmp[PATH_MAX + 32];
    if (!service_name || !port_name)
        return wm_error(NULL, MPI_ERR_ARG, fn, "%s is NULL", service_name ? "port_name" : "service_name");
    if (!wm_name_file(service_name, f, sizeof(f), true))
        return wm_error(NULL, MPI_ERR_SERVICE, fn, "no name directory (set WEFT_NAME_DIR or HOME)");
    snprintf(tmp, sizeof(tmp), "%s.%d.tmp", f, (int)getpid());
    FILE *fp = fopen(tmp, "w");
    if (!fp || fputs(port_name, fp) < 0 || fclose(fp) != 0 || rename(tmp, f) != 0) {
        int e = errno;
        unlink(tmp);
        return wm_error(NULL, MPI_ERR_SERVICE, fn, "cannot publish \"%.80s\" in %s: %s",
                        service_name, f, strerror(e));
    }
    return MPI_SUCCESS;
}

int wm_impl_MPI_Lookup_name(const char *service_name, MPI_Info info, char *port_name)
{
    static const char fn[] = "MPI_Lookup_name";
    WM_CHECK_INIT(fn);
    (void)info;
    char f[PATH_MAX];
    if (!service_name || !port_name)
        return wm_error(NULL, MPI_ERR_ARG, fn, "%s is NULL", service_name ? "port_name" : "service_name");
    FILE *fp = wm_name_file(service_name, f, sizeof(f), false) ? fopen(f, "r") : NULL;
    if (!fp)
        return wm_error(NULL, MPI_ERR_NAME, fn, "no service \"%.80s\" is published", service_name);
    size_t n = fread(port_name, 1, MPI_MAX_PORT_NAME - 1, fp);
    fclose(fp);
    port_name[n] = '\0';
    return MPI_SUCCESS;
}

int wm_impl_MPI_Unpublish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    static const char fn[] = "MPI_Unpublish_name";
    WM_CHECK_INIT(fn);
    (void)info, (void)port_name;
    char f[PATH_MAX];
    if (!service_name)
        return wm_error(NULL, MPI_ERR_ARG, fn, "service_name is NULL");
    if (!wm_name_file(service_name, f, sizeof(f), false) || unlink(f) != 0)
        return wm_error(NULL, MPI_ERR_SERVICE, fn, "service \"%.80s\" is not published",
                        service_name);
    return MPI_SUCCESS;
}
