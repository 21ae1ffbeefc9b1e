/* mpiexec: launches the ranks of one job, serves them PMI-1 and forwards their stdio.
 * Single-threaded: one poll() loop in mpiexec.c drives everything; nothing here is synchronized.
 *
 * Three modes of the same binary (docs/launch.md):
 *   local  (no -hosts/-f) the ranks are mpiexec's children on this host, as always
 *   front  (-hosts/-f) one proxy per host, started by a launcher (ssh, rsh, fork); the front end
 *          holds the job's PMI server, judges exits and prints the output
 *   proxy  (mpiexec --weft-proxy ...) spawns the ranks of its host and relays their PMI lines,
 *          output and exits to the front end over one TCP connection (wire.c)
 *
 *   args.c        command line -> mx_opts_t
 *   mpiexec.c     spawning, CPU binding, the event loop, failure handling, exit status, /dev/shm
 *                 cleanup
 *   pmi_server.c  the PMI-1 and PMI-2 server: per-rank commands, the key-value store, barriers
 *   iofwd.c       stdout/stderr of every rank, line by line, and stdin to rank 0
 *   wire.c        the framed messages between front end and proxies
 *   hosts.c       front end: placement of ranks on hosts, launching and serving the proxies
 *   proxy.c       proxy mode
 */
#ifndef MX_MPIEXEC_H
#define MX_MPIEXEC_H

#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MX_KVSNAME_MAX 64

/* ---- options (args.c) ---- */

typedef struct {
    char **vars;          /* "NAME=VALUE" */
    int nvars;
} mx_env_t;

/* One program of the command line; several are separated by ':' (MPMD). */
typedef struct {
    int nprocs;
    char **argv;          /* NULL-terminated, points into the command line */
    mx_env_t env;         /* -env */
    const char *wdir;     /* -wdir: the ranks' working directory (NULL: mpiexec's) */
    struct mx_hostspec *hosts;   /* -hosts after ':' (or --weft-section-hosts): this section's
                                  * hosts; NULL: the global list */
    int nhosts;
} mx_section_t;

/* --bind-to, WEFT_BIND: which CPUs each rank may run on (see mx_bind_share in mpiexec.c). */
typedef enum {
    MX_BIND_AUTO,         /* a disjoint share of mpiexec's CPUs per rank, unless oversubscribed */
    MX_BIND_CORE,         /* one CPU per rank, round robin, even when oversubscribed */
    MX_BIND_NONE,
} mx_bind_t;

/* Which of mpiexec's variables go to proxies on other hosts (-genvall, -genvnone, -genvlist). */
typedef enum {
    MX_ENV_ALL,
    MX_ENV_NONE,
    MX_ENV_LIST,
} mx_envmode_t;

typedef enum {
    MX_LAUNCH_SSH,
    MX_LAUNCH_RSH,
    MX_LAUNCH_FORK,
    MX_LAUNCH_SLURM,
} mx_launcher_t;

#define MX_NPROCS_MAX 4096    /* the most ranks of a job, and slots of a host */
#define MX_RPP_MAX 15         /* --ranks-per-process: glibc has 16 link-map namespaces, one is the base */

typedef struct mx_hostspec {
    char *name;
    int slots;            /* 0: not given (-ppn, else 1) */
} mx_hostspec_t;

typedef struct {
    mx_section_t *sections;
    int nsections;
    int nranks;           /* sum of nprocs */
    mx_env_t genv;        /* -genv */
    bool tag_output;
    long timeout_s;       /* 0: none */
    mx_bind_t bind;
    bool report_bindings; /* one line per rank on stderr: where it is bound */
    int rpp;              /* --ranks-per-process; 0: one rank per process */
    /* several hosts */
    mx_hostspec_t *hosts; /* -hosts, -f; NULL: this host only (local mode) */
    int nhosts;
    int ppn;              /* -ppn; 0: the hosts' slots */
    mx_launcher_t launcher;
    bool launcher_given;
    const char *launcher_exec;   /* -launcher-exec; NULL: ssh, rsh or srun from PATH */
    const char *iface;           /* -iface: the interface whose address proxies connect to */
    mx_envmode_t envmode;
    char *envlist;               /* -genvlist: comma-separated names */
    int skip;                    /* --weft-skip: slots of the global list already taken (the
                                  * spawning job's ranks): placement starts after them */
    bool multi;                  /* a host list anywhere (global or a section's): front end */
} mx_opts_t;

/* Parses argv into opts; on a usage error prints why and returns false, holding nothing. Exits for
 * -h/--version. After success, mx_args_free releases what opts holds. */
bool mx_args_parse(int argc, char **argv, mx_opts_t *opts);
void mx_args_free(mx_opts_t *opts);
/* Sets, for the ranks, what MPI_Comm_spawn needs to start a job as this one was started
 * (WEFT_MPIEXEC, and on several hosts WEFT_MPIEXEC_HOSTS, _LAUNCHER, _LAUNCHER_EXEC, _IFACE;
 * docs/dynamic.md); on several hosts also as -genv, so that -genvnone keeps them. */
void mx_args_export(mx_opts_t *opts);

/* ---- output forwarding (iofwd.c) ---- */

/* One output pipe of a rank. Bytes are held until a whole line is in, then written to `out` with
 * one write, so lines of different ranks never mix. */
typedef struct {
    int fd;               /* read end; -1 once closed */
    int out;              /* STDOUT_FILENO or STDERR_FILENO */
    int rank;
    bool at_line_start;
    char *buf;            /* a partial line */
    size_t len, cap;
} mx_stream_t;

/* stdin of mpiexec, forwarded to rank 0. */
typedef struct {
    int to_fd;            /* write end of rank 0's stdin pipe; -1 when closed */
    bool eof;             /* our stdin is finished */
    bool remote;          /* proxy: the bytes come from the front end, not from our fd 0 */
    char buf[65536];
    size_t len;
} mx_stdin_t;

/* Where output goes instead of our fd 1 and 2 (proxy mode: to the front end); NULL: fd 1, 2. */
typedef void mx_io_sink_fn_t(int rank, int out, const char *data, size_t len);
void mx_io_set_sink(mx_io_sink_fn_t *sink);
void mx_io_set_tag(bool tag);
void mx_stream_feed(mx_stream_t *s, const char *data, size_t len);   /* bytes from a proxy */
void mx_stream_init(mx_stream_t *s, int fd, int out, int rank);
void mx_stream_read(mx_stream_t *s);         /* fd is readable; closes it at EOF */
void mx_stream_drain(mx_stream_t *s);        /* reads what is there without blocking */
void mx_stream_close(mx_stream_t *s);        /* flushes a partial line and closes */
bool mx_stdin_wants_input(const mx_stdin_t *in);
void mx_stdin_read(mx_stdin_t *in);          /* our fd 0 is readable */
void mx_stdin_write(mx_stdin_t *in);         /* rank 0's pipe is writable */
void mx_stdin_close(mx_stdin_t *in);

/* ---- ranks and the job ---- */

typedef struct {
    int rank;
    int local;            /* index among the ranks of its host (MPI_LOCALRANKID) */
    int host;             /* front end: index of its proxy in mx_state_t.hosts; else 0 */
    int appnum;           /* index of its section on the command line */
    pid_t pid;            /* 0 once reaped; front end: the pid on its host, or 1 until known */
    int wait_status;
    /* PMI connection */
    int pmi_fd;           /* our end of the socketpair; -1 once closed */
    char *pmi_buf;        /* partial command line */
    size_t pmi_len;
    bool pmi_skip_line;   /* discarding an over-long line */
    bool pmi_in_mcmd;     /* inside a multi-line "mcmd=" command */
    bool pmi_v2;          /* said "cmd=init pmi_version=2": PMI-2 messages from then on */
    bool pmi_init;        /* sent cmd=init */
    bool pmi_finalized;   /* sent cmd=finalize */
    bool in_barrier;
    bool aborted;         /* sent cmd=abort */
    int abort_code;
    mx_stream_t out, err;
} mx_rank_t;

typedef struct mx_kvs mx_kvs_t;

typedef struct mx_job mx_job_t;
/* Sends a PMI answer line (with its '\n') to a rank whose PMI socket is elsewhere (front end). */
typedef void mx_pmi_send_fn_t(mx_job_t *job, mx_rank_t *r, const char *line, size_t len);
/* Takes a PMI command line of a rank instead of the local server (proxy: to the front end). */
typedef void mx_pmi_relay_fn_t(mx_job_t *job, mx_rank_t *r, const char *line);

struct mx_job {
    mx_opts_t *opts;
    mx_rank_t *ranks;
    int nranks;           /* ranks held here: the whole job, or a proxy's share of it */
    int size;             /* ranks in the job */
    int nlocal;           /* MPI_LOCALNRANKS */
    char *process_mapping;       /* PMI_process_mapping; NULL: every rank on one node */
    mx_pmi_send_fn_t *pmi_send;  /* NULL: answers go to r->pmi_fd */
    mx_pmi_relay_fn_t *pmi_relay;
    void *owner;                 /* the mx_state_t */
    char kvsname[MX_KVSNAME_MAX];
    mx_kvs_t *kvs;
    int barrier_count;    /* ranks inside the current barrier */
    int exited_count;     /* ranks reaped */
    bool abort_seen;      /* some rank sent cmd=abort and the job has not been failed for it yet */
};

/* ---- PMI server (pmi_server.c) ---- */

bool mx_pmi_init(mx_job_t *job);
void mx_pmi_read(mx_job_t *job, mx_rank_t *r);   /* pmi_fd is readable; closes it at EOF */
void mx_pmi_close(mx_job_t *job, mx_rank_t *r);
void mx_pmi_free(mx_job_t *job);
/* One command from a proxy: a PMI-1 line, or the body of a PMI-2 message once r->pmi_v2. */
void mx_pmi_line(mx_job_t *job, mx_rank_t *r, char *line);

/* ---- links between front end and proxies (wire.c) ---- */

enum {
    MX_MSG_HELLO = 1,     /* P->F  value: proxy index; data: the job's secret */
    MX_MSG_SPEC,          /* F->P  data: the proxy's share of the job (hosts.c, proxy.c) */
    MX_MSG_STARTED,       /* P->F  rank; value: its pid */
    MX_MSG_PMI,           /* P->F  rank; data: a command line. F->P: an answer line with '\n' */
    MX_MSG_OUT,           /* P->F  rank; value: 1 stdout, 2 stderr; data: bytes */
    MX_MSG_EXIT,          /* P->F  rank; value: its wait status */
    MX_MSG_STDIN,         /* F->P  data: bytes for rank 0 (one message in flight) */
    MX_MSG_STDIN_ACK,     /* P->F  the last MX_MSG_STDIN is written to rank 0 (or dropped) */
    MX_MSG_STDIN_EOF,     /* F->P */
    MX_MSG_SIGNAL,        /* F->P  rank (-1: every process of the host); value: the signal */
};

typedef struct {
    uint32_t type;
    int32_t rank;
    int32_t value;
    uint32_t len;
} mx_msg_t;

#define MX_MSG_MAX (1u << 20)   /* largest data of one message */

/* One TCP connection. Sending queues and writes what the socket takes; the loop polls POLLOUT
 * while out_len > 0 and calls mx_link_flush. Never blocks. */
typedef struct {
    int fd;               /* -1 once closed */
    char *in;
    size_t in_len, in_cap;
    char *out;
    size_t out_len, out_cap;
} mx_link_t;

void mx_link_init(mx_link_t *l, int fd);
void mx_link_send(mx_link_t *l, uint32_t type, int32_t rank, int32_t value, const void *data,
                  size_t len);
bool mx_link_flush(mx_link_t *l);   /* false: the connection broke */
/* Reads what is there; false at EOF or error. */
bool mx_link_read(mx_link_t *l);
/* The next whole message, its data in *data_p (valid until the next call); false if none yet. */
bool mx_link_next(mx_link_t *l, mx_msg_t *m, char **data_p, size_t *consumed_p);
void mx_link_consume(mx_link_t *l, size_t n);
void mx_link_close(mx_link_t *l);
/* Blocks until all queued bytes are written or ms elapse. */
void mx_link_drain(mx_link_t *l, int ms);

/* ---- the state of one mpiexec (mpiexec.c) ---- */

typedef enum {
    MX_MODE_LOCAL,
    MX_MODE_FRONT,
    MX_MODE_PROXY,
} mx_mode_t;

/* Front end: one host of the job and its proxy. */
typedef struct {
    char *name;           /* as given on the command line */
    bool local;           /* this host: the proxy is forked, not launched */
    int nranks;           /* ranks placed here */
    int *ranks;           /* their ranks, ascending */
    pid_t launcher_pid;   /* ssh, rsh, srun or the forked proxy; 0 once reaped */
    int launcher_status;
    mx_link_t link;       /* fd -1 until the proxy connects with the secret, and once lost */
    bool connected;
    bool lost;            /* its unreported ranks were counted as failed */
    int reported;         /* ranks whose exit it reported */
} mx_host_t;

#define MX_PENDING_MAX 64

typedef struct {
    mx_mode_t mode;
    mx_job_t job;
    mx_stdin_t in;
    int sigfd;
    sigset_t oldmask;
    pid_t self;               /* mpiexec's pid */
    pid_t pgid;               /* the ranks' process group */
    int alive;                /* ranks not yet reaped */
    bool failed;              /* the job's fate is decided; later deaths are consequences */
    int exit_code;
    int term_stage;           /* 0 running, 1 polite signal sent, 2 SIGKILL sent */
    bool term_all;            /* ending every process, not only the unfinalized ranks */
    int64_t kill_at;          /* ms: SIGKILL time in stage 1 */
    int64_t timeout_at;       /* ms: --timeout deadline, 0 if none */
    int64_t linger_until;     /* ms: after the last rank is reaped */
    int *cpus;                /* the CPUs mpiexec may run on, ascending; NULL when not binding */
    int ncpus;
    /* front end (hosts.c) */
    mx_host_t *hosts;
    int nhosts;
    int listen_fd;
    mx_link_t pending[MX_PENDING_MAX];   /* connections that have not shown the secret yet */
    char secret[33];
    bool stdin_inflight, stdin_eof;
    /* proxy (proxy.c) */
    mx_link_t up;
    bool stdin_ack_owed;
    char hostname[256];
} mx_state_t;

/* mpiexec.c, for hosts.c and proxy.c */
int64_t mx_now_ms(void);
void mx_fail(mx_state_t *s, mx_rank_t *culprit, bool all, int code, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void mx_terminate(mx_state_t *s, int sig, bool all);
void mx_rank_ended(mx_state_t *s, mx_rank_t *r, int status);
void mx_rank_lost(mx_state_t *s, mx_rank_t *r, const char *why);
int mx_run(mx_state_t *s);   /* sets up signals, starts the job, runs the loop; the exit status */
void mx_clean_shm(const char *kvsname);

/* slurm.c: the hosts of the Slurm allocation mpiexec runs in (SLURM_JOB_NODELIST) with their
 * tasks as slots, and the slurm launcher. mx_slurm_hosts fills opts->hosts and returns how many
 * (0: the allocation is this host only and nothing asks for proxies: local mode), or prints why
 * it cannot, naming `why` (the option or situation), and returns -1. */
bool mx_slurm_in_allocation(void);
int mx_slurm_hosts(mx_opts_t *opts, const char *why);

/* hosts.c: the front end */
bool mx_host_is_here(const char *name);          /* localhost, 127.x or this host's name */
#define MX_EV_EXT 16          /* event kinds from here on belong to hosts.c or proxy.c */
bool mx_front_setup(mx_state_t *s);               /* placement, listening socket, ranks */
bool mx_front_launch(mx_state_t *s);              /* one proxy per host */
int mx_front_poll(mx_state_t *s, struct pollfd *pfd, int *kind, int *who, int np);
void mx_front_event(mx_state_t *s, int kind, int who, short revents);
bool mx_front_reaped(mx_state_t *s, pid_t pid, int status);
void mx_front_signal(mx_state_t *s, int host, int rank, int sig);   /* rank -1: all there */
void mx_front_finish(mx_state_t *s);              /* waits (bounded) for proxies and launchers */
int mx_front_max_fds(const mx_state_t *s);

/* proxy.c */
int mx_proxy_main(int argc, char **argv);
int mx_proxy_poll(mx_state_t *s, struct pollfd *pfd, int *kind, int *who, int np);
void mx_proxy_event(mx_state_t *s, int kind, int who, short revents);
void mx_proxy_started(mx_state_t *s, mx_rank_t *r);
void mx_proxy_ended(mx_state_t *s, mx_rank_t *r, int status);

/* pmi_server.c: writes one answer line to a local rank's PMI socket */
void mx_pmi_write(mx_rank_t *r, const char *line, size_t len);

#endif
