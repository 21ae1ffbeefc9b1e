/* Connect/accept, the name service and Comm_join between two separate mpiexec jobs
 * (dpm_port.sh starts both):
 *   dpm_port server DIR   opens a port, publishes it as "weft-test-<DIR's inode>" and writes it to
 *                         DIR/port; accepts; then rank 0 listens on a TCP socket (port number in
 *                         DIR/join) for Comm_join
 *   dpm_port client DIR   looks the port up (Lookup_name, checked against DIR/port), connects; rank
 *                         0 connects to the server's socket and calls Comm_join
 * Both: point-to-point and an allreduce over the intercommunicator, Intercomm_merge and a dup of
 * it, Comm_disconnect; Lookup_name of an unknown service gives MPI_ERR_NAME. */
#include "mpitest.h"

#include <arpa/inet.h>
#include <stdbool.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static void write_file(const char *path, const char *text)
{
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    MT_TRUE(f && fputs(text, f) >= 0 && fclose(f) == 0 && rename(tmp, path) == 0, "cannot write %s", path);
}

static void read_file(const char *path, char *out, size_t len)
{
    for (int i = 0; i < 60000; i++) {
        FILE *f = fopen(path, "r");
        if (f) {
            size_t n = fread(out, 1, len - 1, f);
            fclose(f);
            out[n] = '\0';
            return;
        }
        usleep(1000);
    }
    MT_FAIL("%s never appeared", path);
}

static void exchange(MPI_Comm inter, bool server)
{
    int rank, rsize;
    MT_CALL(MPI_Comm_rank(inter, &rank));
    MT_CALL(MPI_Comm_remote_size(inter, &rsize));
    /* every process sends its rank to the remote process of the same rank (modulo) */
    int out = (server ? 1000 : 2000) + rank, in = -1;
    int peer = rank % rsize;
    MPI_Request r[2];
    MT_CALL(MPI_Irecv(&in, 1, MPI_INT, MPI_ANY_SOURCE, 5, inter, &r[0]));
    MT_CALL(MPI_Isend(&out, 1, MPI_INT, peer, 5, inter, &r[1]));
    /* the remote ranks sending to us: those r with r % our size == rank; expect at least one
     * when sizes match (they do in the test) */
    MT_CALL(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    MT_EQ("value from the other job", (server ? 2000 : 1000) + rank, in);
    int one = server ? 1 : 100, sum = 0;
    MT_CALL(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, inter));
    MT_EQ("allreduce over the jobs", server ? 100 * rsize : rsize, sum);
    MPI_Comm merged, dup;
    int msize, mrank, rs = 0;
    MT_CALL(MPI_Intercomm_merge(inter, server ? 0 : 1, &merged));
    MT_CALL(MPI_Comm_size(merged, &msize));
    MT_CALL(MPI_Comm_rank(merged, &mrank));
    MT_EQ("merged rank", server ? mt_rank : rsize + mt_rank, mrank);
    MT_CALL(MPI_Comm_dup(merged, &dup));
    MT_CALL(MPI_Allreduce(&mrank, &rs, 1, MPI_INT, MPI_SUM, dup));
    MT_EQ("sum of merged ranks", msize * (msize - 1) / 2, rs);
    MT_CALL(MPI_Comm_free(&dup));
    MT_CALL(MPI_Comm_free(&merged));
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));   /* errors of no object */
    MT_TRUE(argc > 2, "usage: dpm_port server|client DIR");
    bool server = !strcmp(argv[1], "server");
    const char *dir = argv[2];
    char path[4096], port[MPI_MAX_PORT_NAME] = "", service[128];
    struct stat st;
    MT_TRUE(stat(dir, &st) == 0, "no directory %s", dir);
    snprintf(service, sizeof(service), "weft-test-%llu", (unsigned long long)st.st_ino);
    snprintf(path, sizeof(path), "%s/port", dir);
    MPI_Comm inter;
    if (server) {
        if (mt_rank == 0) {
            MT_CALL(MPI_Open_port(MPI_INFO_NULL, port));
            MT_CALL(MPI_Publish_name(service, MPI_INFO_NULL, port));
            write_file(path, port);
        }
        MT_CALL(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter));
        if (mt_rank == 0) {
            MT_CALL(MPI_Unpublish_name(service, MPI_INFO_NULL, port));
            MT_CALL(MPI_Close_port(port));
        }
    } else {
        if (mt_rank == 0) {
            char fromfile[MPI_MAX_PORT_NAME];
            read_file(path, fromfile, sizeof(fromfile));
            MT_CALL(MPI_Lookup_name(service, MPI_INFO_NULL, port));
            MT_TRUE(!strcmp(port, fromfile), "Lookup_name gave \"%s\", the file \"%s\"", port, fromfile);
            char junk[MPI_MAX_PORT_NAME];
            int rc = MPI_Lookup_name("weft-test-no-such-service", MPI_INFO_NULL, junk);
            MT_EQ("class of Lookup_name of an unknown service (MPI_ERR_NAME)", MPI_ERR_NAME, mt_class(rc));
            rc = MPI_Comm_connect("not-a-port", MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
            MT_EQ("class of a connect to a bad port name (MPI_ERR_PORT)", MPI_ERR_PORT, mt_class(rc));
        }
        MT_CALL(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter));
    }
    exchange(inter, server);
    MT_CALL(MPI_Comm_disconnect(&inter));

    /* Comm_join between the two rank 0s over a TCP connection */
    if (mt_rank == 0) {
        int fd;
        snprintf(path, sizeof(path), "%s/join", dir);
        if (server) {
            /* on every address: the client may be on another host (tests/net/test_spawn.sh) */
            int l = socket(AF_INET, SOCK_STREAM, 0);
            struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY) };
            socklen_t sl = sizeof(sa);
            MT_TRUE(l >= 0 && bind(l, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(l, 1) == 0 &&
                    getsockname(l, (struct sockaddr *)&sa, &sl) == 0, "cannot listen");
            char num[300], host[256] = "localhost";
            gethostname(host, sizeof(host) - 1);
            snprintf(num, sizeof(num), "%s %u", host, (unsigned)ntohs(sa.sin_port));
            write_file(path, num);
            fd = accept(l, NULL, NULL);
            close(l);
        } else {
            char num[300], host[256] = "";
            unsigned pnum = 0;
            read_file(path, num, sizeof(num));
            MT_TRUE(sscanf(num, "%255s %u", host, &pnum) == 2, "bad join file: %s", num);
            struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *res = NULL;
            MT_TRUE(getaddrinfo(host, NULL, &hints, &res) == 0 && res, "cannot resolve %s", host);
            struct sockaddr_in sa = *(struct sockaddr_in *)res->ai_addr;
            freeaddrinfo(res);
            sa.sin_port = htons((uint16_t)pnum);
            fd = socket(AF_INET, SOCK_STREAM, 0);
            MT_TRUE(fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0, "cannot connect");
        }
        MPI_Comm j;
        MT_CALL(MPI_Comm_join(fd, &j));
        int rsize = 0, v = server ? 7 : 9, w = 0;
        MT_CALL(MPI_Comm_remote_size(j, &rsize));
        MT_EQ("join's remote size", 1, rsize);
        MT_CALL(MPI_Sendrecv(&v, 1, MPI_INT, 0, 3, &w, 1, MPI_INT, 0, 3, j, MPI_STATUS_IGNORE));
        MT_EQ("value over the joined communicator", server ? 9 : 7, w);
        MT_CALL(MPI_Comm_disconnect(&j));
        close(fd);
    }
    return mt_finish(server ? "dpm_port server" : "dpm_port client");
}
