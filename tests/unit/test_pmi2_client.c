/* The PMI-2 client (src/pmi/wi_pmi2.c) against a fake server that answers badly: for each case a
 * child process runs wi_pmi_init (WEFT_PMI=pmi2, PMI_FD = one end of a socketpair) while this
 * process plays the server on the other end, answers the init line, then answers fullinit with
 * the case's bytes and keeps the socket open. The child must fail init with WU_ERR_PMI and exit
 * within 10 s: no crash, no hang, no success. A last case answers everything well and checks
 * put, get (found, absent, a found answer without a value) and fence. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "pmi/wi_pmi.h"

static int failures;

#define FAIL(...)                                                                                \
    do {                                                                                         \
        fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                          \
        fprintf(stderr, __VA_ARGS__);                                                            \
        fputc('\n', stderr);                                                                     \
        failures++;                                                                              \
    } while (0)

/* The server's end: reads a PMI-1 line or one PMI-2 message; false at EOF. */
static bool srv_read_line(int fd, char *buf, size_t len)
{
    size_t n = 0;
    while (n + 1 < len) {
        if (read(fd, buf + n, 1) != 1)
            return false;
        if (buf[n] == '\n')
            break;
        n++;
    }
    buf[n] = '\0';
    return true;
}

static bool srv_read_msg(int fd, char *buf, size_t len)
{
    char hdr[7] = "";
    size_t got = 0, blen;
    while (got < 6) {
        ssize_t r = read(fd, hdr + got, 6 - got);
        if (r <= 0)
            return false;
        got += (size_t)r;
    }
    blen = strtoul(hdr, NULL, 10);
    if (blen == 0 || blen >= len)
        return false;
    for (got = 0; got < blen;) {
        ssize_t r = read(fd, buf + got, blen - got);
        if (r <= 0)
            return false;
        got += (size_t)r;
    }
    buf[blen] = '\0';
    return true;
}

static void srv_send(int fd, const char *s, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, s, len);
        if (w <= 0)
            return;
        s += w;
        len -= (size_t)w;
    }
}

static void srv_msg(int fd, const char *body)
{
    char hdr[24];
    snprintf(hdr, sizeof(hdr), "%-6zu", strlen(body));
    srv_send(fd, hdr, 6);
    srv_send(fd, body, strlen(body));
}

/* Waits up to 10 s for the child; its exit status, or -1 (killed: it hung) or 128+signal. */
static int reap(pid_t pid)
{
    int status;
    for (int i = 0; i < 1000; i++) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        struct timespec ts = { 0, 10 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
}

/* The child: init over PMI_FD=fd; exits 0 when init fails with WU_ERR_PMI, 1 when it succeeds,
 * 2 for another status. With `good`, exercises the key-value store instead. */
static void child(int fd, bool good)
{
    char num[16], val[64];
    int rank, size;
    bool singleton;
    snprintf(num, sizeof(num), "%d", fd);
    setenv("PMI_FD", num, 1);
    setenv("PMI_RANK", "0", 1);
    setenv("PMI_SIZE", "1", 1);
    setenv("WEFT_PMI", "pmi2", 1);
    wu_status_t st = wi_pmi_init(&rank, &size, &singleton);
    if (!good)
        _exit(st == WU_ERR_PMI ? 0 : st == WU_OK ? 1 : 2);
    if (st != WU_OK || rank != 0 || size != 1 || singleton || strcmp(wi_pmi_method(), "pmi2"))
        _exit(10);
    if (wi_pmi_put("k", "v 1;") != WU_OK)
        _exit(11);
    if (wi_pmi_fence() != WU_OK)
        _exit(12);
    if (wi_pmi_get(0, "k", val, sizeof(val)) != WU_OK || strcmp(val, "v 1;"))
        _exit(13);
    if (wi_pmi_get(0, "absent", val, sizeof(val)) != WU_ERR_NOT_FOUND)
        _exit(14);
    if (wi_pmi_get(0, "novalue", val, sizeof(val)) != WU_ERR_PMI)
        _exit(15);
    if (wi_pmi_finalize() != WU_OK)
        _exit(16);
    _exit(0);
}

typedef struct {
    const char *what;
    const char *init_answer;   /* the PMI-1 line answering init */
    const char *hdr;           /* the 6-byte header answering fullinit; NULL: the body's length */
    const char *body;          /* then these bytes */
    size_t body_len;           /* 0: strlen(body) */
    bool close_after;          /* close the server's end after sending */
} bad_case_t;

#define INIT_OK "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n"
#define FIR "cmd=fullinit-response;"

static const bad_case_t bad_cases[] = {
    { "init refused", "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=-1\n", NULL, NULL },
    { "init answered as PMI-1 only", "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n",
      NULL, NULL },
    { "init answered by another command", "cmd=barrier_out\n", NULL, NULL },
    { "closed after init", INIT_OK, NULL, NULL, 0, true },
    { "garbage header", INIT_OK, "abcdef", FIR "rc=0;" },
    { "header too large", INIT_OK, "999999", FIR "rc=0;" },
    { "header 0", INIT_OK, "0     ", FIR "rc=0;" },
    { "body shorter than announced, then closed", INIT_OK, "40    ", FIR, 0, true },
    { "body not closed by ';'", INIT_OK, NULL, FIR "rc=0;rank=0;size=1" },
    { "body with a NUL byte", INIT_OK, NULL, FIR "r\0=0;", 27 },
    { "body without cmd=", INIT_OK, NULL, "rc=0;x=1;" },
    { "another command", INIT_OK, NULL, "cmd=kvs-fence-response;rc=0;" },
    { "rc=-1", INIT_OK, NULL, FIR "rc=-1;errmsg=no;" },
    { "rc not a number", INIT_OK, NULL, FIR "rc=x;" },
    { "no rank", INIT_OK, NULL, FIR "rc=0;size=1;" },
    { "rank not this process's", INIT_OK, NULL, FIR "rc=0;rank=3;size=4;" },
    { "size 0", INIT_OK, NULL, FIR "rc=0;rank=0;size=0;" },
    { "rank 99999999999", INIT_OK, NULL, FIR "rc=0;rank=99999999999;size=1;" },
    { "no job id", INIT_OK, NULL, FIR "rc=0;rank=0;size=1;" },   /* then job-getid: see run_bad */
};

/* A socketpair whose server end gives up reading after 10 s (a hung client must not hang us). */
static bool pair(int sv[2])
{
    struct timeval tv = { 10, 0 };
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0 ||
        setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0) {
        FAIL("socketpair: %s", strerror(errno));
        return false;
    }
    return true;
}

static void run_bad(const bad_case_t *c)
{
    int sv[2];
    char buf[70000];
    if (!pair(sv))
        return;
    pid_t pid = fork();
    if (pid == 0) {
        close(sv[0]);
        child(sv[1], false);
    }
    close(sv[1]);
    if (srv_read_line(sv[0], buf, sizeof(buf)) && !strncmp(buf, "cmd=init", 8)) {
        srv_send(sv[0], c->init_answer, strlen(c->init_answer));
        if (!strcmp(c->init_answer, INIT_OK) && srv_read_msg(sv[0], buf, sizeof(buf))) {
            if (strncmp(buf, "cmd=fullinit;", 13))
                FAIL("%s: the client sent '%s' instead of fullinit", c->what, buf);
            if (c->body) {
                size_t blen = c->body_len ? c->body_len : strlen(c->body);
                char hdr[24];
                snprintf(hdr, sizeof(hdr), "%-6zu", blen);
                srv_send(sv[0], c->hdr ? c->hdr : hdr, 6);
                srv_send(sv[0], c->body, blen);
            }
            /* a fullinit accepted: job-getid comes next, answered without a job id */
            if (!c->close_after && srv_read_msg(sv[0], buf, sizeof(buf)) &&
                !strncmp(buf, "cmd=job-getid;", 14))
                srv_msg(sv[0], "cmd=job-getid-response;rc=0;");
        }
    } else {
        FAIL("%s: the client did not start with the init line: '%s'", c->what, buf);
    }
    if (c->close_after)
        close(sv[0]);
    int rc = reap(pid);   /* the socket stays open otherwise: a client waiting for more hangs */
    if (!c->close_after)
        close(sv[0]);
    if (rc != 0)
        FAIL("%s: the client %s", c->what,
             rc == -1 ? "hung (killed after 10 s)" : rc == 1 ? "accepted the answer" :
             rc >= 128 ? "crashed" : "failed with another status than WU_ERR_PMI");
}

static void run_good(void)
{
    int sv[2];
    char buf[70000];
    if (!pair(sv))
        return;
    pid_t pid = fork();
    if (pid == 0) {
        close(sv[0]);
        child(sv[1], true);
    }
    close(sv[1]);
    char stored[1100] = "";
    if (srv_read_line(sv[0], buf, sizeof(buf)))
        srv_send(sv[0], INIT_OK, strlen(INIT_OK));
    while (srv_read_msg(sv[0], buf, sizeof(buf))) {
        if (!strncmp(buf, "cmd=fullinit;", 13))
            srv_msg(sv[0], "cmd=fullinit-response;rc=0;rank=0;size=1;appnum=-1;");
        else if (!strncmp(buf, "cmd=job-getid;", 14))
            srv_msg(sv[0], "cmd=job-getid-response;jobid=job.1;rc=0;");
        else if (!strncmp(buf, "cmd=kvs-put;", 12)) {
            char *v = strstr(buf, "value=");
            snprintf(stored, sizeof(stored), "%s", v ? v + 6 : "");
            stored[strcspn(stored, ";")] = '\0';
            srv_msg(sv[0], strstr(buf, "key=k-0;") ? "cmd=kvs-put-response;rc=0;"
                                                   : "cmd=kvs-put-response;rc=-1;");
        } else if (!strncmp(buf, "cmd=kvs-fence;", 14))
            srv_msg(sv[0], "cmd=kvs-fence-response;rc=0;");
        else if (!strncmp(buf, "cmd=kvs-get;", 12)) {
            char ans[1300];
            if (strstr(buf, "key=k-0;"))
                snprintf(ans, sizeof(ans), "cmd=kvs-get-response;rc=0;found=TRUE;value=%s;", stored);
            else if (strstr(buf, "key=novalue-0;"))
                snprintf(ans, sizeof(ans), "cmd=kvs-get-response;rc=0;found=TRUE;");
            else
                snprintf(ans, sizeof(ans), "cmd=kvs-get-response;rc=0;found=FALSE;");
            srv_msg(sv[0], ans);
        } else if (!strncmp(buf, "cmd=finalize;", 13))
            srv_msg(sv[0], "cmd=finalize-response;rc=0;");
        else
            srv_msg(sv[0], "cmd=unknown-response;rc=-1;");
    }
    close(sv[0]);
    int rc = reap(pid);
    if (rc != 0)
        FAIL("well-behaved server: the client failed step %d (10 init, 11 put, 12 fence, 13 get, "
             "14 absent key, 15 found without value, 16 finalize; -1 hung, >=128 crashed)", rc);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++)
        run_bad(&bad_cases[i]);
    run_good();
    if (failures) {
        fprintf(stderr, "test_pmi2_client: %d failures\n", failures);
        return 1;
    }
    printf("test_pmi2_client: ok (%zu bad servers, 1 good)\n", sizeof(bad_cases) / sizeof(bad_cases[0]));
    return 0;
}
