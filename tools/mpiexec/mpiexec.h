/* mpiexec: launches the ranks of one job on this host, serves them PMI-1 and forwards their stdio.
 * Single-threaded: one poll() loop in mpiexec.c drives everything; nothing here is synchronized.
 *
 *   args.c        command line -> mx_opts_t
 *   mpiexec.c     spawning, CPU binding, the event loop, failure handling, exit status, /dev/shm
 *                 cleanup
 *   pmi_server.c  the PMI-1 server: per-rank command lines, the key-value store, barriers
 *   iofwd.c       stdout/stderr of every rank, line by line, and stdin to rank 0
 */
#ifndef MX_MPIEXEC_H
#define MX_MPIEXEC_H

#include <stdbool.h>
#include <stddef.h>
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
} mx_section_t;

/* --bind-to, WEFT_BIND: which CPUs each rank may run on (see mx_bind_share in mpiexec.c). */
typedef enum {
    MX_BIND_AUTO,         /* a disjoint share of mpiexec's CPUs per rank, unless oversubscribed */
    MX_BIND_CORE,         /* one CPU per rank, round robin, even when oversubscribed */
    MX_BIND_NONE,
} mx_bind_t;

typedef struct {
    mx_section_t *sections;
    int nsections;
    int nranks;           /* sum of nprocs */
    mx_env_t genv;        /* -genv */
    bool tag_output;
    long timeout_s;       /* 0: none */
    mx_bind_t bind;
    bool report_bindings; /* one line per rank on stderr: where it is bound */
} mx_opts_t;

/* Parses argv into opts; on a usage error prints why and returns false, holding nothing. Exits for
 * -h/--version. After success, mx_args_free releases what opts holds. */
bool mx_args_parse(int argc, char **argv, mx_opts_t *opts);
void mx_args_free(mx_opts_t *opts);

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
    char buf[65536];
    size_t len;
} mx_stdin_t;

void mx_io_set_tag(bool tag);
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
    int appnum;           /* index of its section on the command line */
    pid_t pid;            /* 0 once reaped */
    int wait_status;
    /* PMI connection */
    int pmi_fd;           /* our end of the socketpair; -1 once closed */
    char *pmi_buf;        /* partial command line */
    size_t pmi_len;
    bool pmi_skip_line;   /* discarding an over-long line */
    bool pmi_in_mcmd;     /* inside a multi-line "mcmd=" command */
    bool pmi_init;        /* sent cmd=init */
    bool pmi_finalized;   /* sent cmd=finalize */
    bool in_barrier;
    bool aborted;         /* sent cmd=abort */
    int abort_code;
    mx_stream_t out, err;
} mx_rank_t;

typedef struct mx_kvs mx_kvs_t;

typedef struct {
    mx_opts_t *opts;
    mx_rank_t *ranks;
    int nranks;
    char kvsname[MX_KVSNAME_MAX];
    mx_kvs_t *kvs;
    int barrier_count;    /* ranks inside the current barrier */
    int exited_count;     /* ranks reaped */
    bool abort_seen;      /* some rank sent cmd=abort and the job has not been failed for it yet */
} mx_job_t;

/* ---- PMI server (pmi_server.c) ---- */

bool mx_pmi_init(mx_job_t *job);
void mx_pmi_read(mx_job_t *job, mx_rank_t *r);   /* pmi_fd is readable; closes it at EOF */
void mx_pmi_close(mx_job_t *job, mx_rank_t *r);
void mx_pmi_free(mx_job_t *job);

#endif
