/* Dynamic processes: MPI_Comm_spawn / spawn_multiple and the parent intercommunicator.
 *
 *   dpm_spawn spawn N        spawn N copies of this program; point-to-point both ways, a
 *                            broadcast, an allreduce and a barrier over the intercommunicator,
 *                            Intercomm_merge (parents first), Comm_dup of the merged
 *                            communicator (a context id agreed by two jobs), Comm_disconnect
 *   dpm_spawn nested N       the same, and every child job spawns one grandchild that answers it
 *   dpm_spawn multiple DIR   spawn_multiple: 1 copy with wdir=DIR, 2 copies found by info path
 *   dpm_spawn selfconnect    two halves of one job connect/accept through a port
 *   dpm_spawn missing        spawning a program that does not exist: MPI_ERR_SPAWN, errcodes
 *   dpm_spawn singleton      (run without mpiexec) spawn fails with MPI_ERR_SPAWN
 * The children run "dpm_spawn child ..." and check their side.
 *
 * Across hosts (tests/net/test_spawn.sh), from the environment: DPM_SPAWN_HOST, info "host" of
 * spawn/nested/missing; DPM_SPAWN_HOSTS "H0,H1", info "host" of the two commands of multiple; and
 * DPM_EXPECT_HOSTS "H0,H1,...", the host each child (by its world rank) must run on. */
#include "mpitest.h"

#include <limits.h>
#include <unistd.h>

static char self_path[PATH_MAX];

/* The parents' side of the exchange over inter (nc children). */
static void parent_side(MPI_Comm inter, int nc)
{
    int rsize, rank;
    MT_CALL(MPI_Comm_remote_size(inter, &rsize));
    MT_CALL(MPI_Comm_rank(inter, &rank));
    MT_EQ("remote size", nc, rsize);
    if (rank == 0) {
        for (int i = 0; i < nc; i++) {
            int v = 100 + i, back = -1;
            MT_CALL(MPI_Send(&v, 1, MPI_INT, i, 7, inter));
            MT_CALL(MPI_Recv(&back, 1, MPI_INT, i, 8, inter, MPI_STATUS_IGNORE));
            MT_EQ("child's answer", 2 * v + i, back);
        }
    }
    int b = 4242;
    MT_CALL(MPI_Bcast(&b, 1, MPI_INT, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter));
    int one = 1, sum = 0;
    MT_CALL(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, inter));
    MT_EQ("allreduce over the intercommunicator (children's 10s)", 10 * nc, sum);
    MT_CALL(MPI_Barrier(inter));
    MPI_Comm merged, dup;
    int msize, mrank;
    MT_CALL(MPI_Intercomm_merge(inter, 0, &merged));
    MT_CALL(MPI_Comm_size(merged, &msize));
    MT_CALL(MPI_Comm_rank(merged, &mrank));
    MT_EQ("merged size", mt_size + nc, msize);
    MT_EQ("merged rank (parents first)", mt_rank, mrank);
    MT_CALL(MPI_Comm_dup(merged, &dup));
    int r = mrank, rs = 0;
    MT_CALL(MPI_Allreduce(&r, &rs, 1, MPI_INT, MPI_SUM, dup));
    MT_EQ("sum of merged ranks", msize * (msize - 1) / 2, rs);
    MT_CALL(MPI_Comm_free(&dup));
    MT_CALL(MPI_Comm_free(&merged));
}

static void child_side(MPI_Comm parent, int nparents)
{
    int rank, rsize;
    MT_CALL(MPI_Comm_rank(parent, &rank));
    MT_CALL(MPI_Comm_remote_size(parent, &rsize));
    MT_EQ("parents' group size", nparents, rsize);
    int v = -1;
    MT_CALL(MPI_Recv(&v, 1, MPI_INT, 0, 7, parent, MPI_STATUS_IGNORE));
    MT_EQ("parent's value", 100 + rank, v);
    v = 2 * v + rank;
    MT_CALL(MPI_Send(&v, 1, MPI_INT, 0, 8, parent));
    int b = 0;
    MT_CALL(MPI_Bcast(&b, 1, MPI_INT, 0, parent));
    MT_EQ("broadcast from the parents", 4242, b);
    int ten = 10, sum = 0;
    MT_CALL(MPI_Allreduce(&ten, &sum, 1, MPI_INT, MPI_SUM, parent));
    MT_EQ("allreduce over the intercommunicator (parents' 1s)", nparents, sum);
    MT_CALL(MPI_Barrier(parent));
    MPI_Comm merged, dup;
    int msize, mrank;
    MT_CALL(MPI_Intercomm_merge(parent, 1, &merged));
    MT_CALL(MPI_Comm_size(merged, &msize));
    MT_CALL(MPI_Comm_rank(merged, &mrank));
    MT_EQ("merged size", nparents + mt_size, msize);
    MT_EQ("merged rank (children after the parents)", nparents + mt_rank, mrank);
    MT_CALL(MPI_Comm_dup(merged, &dup));
    int r = mrank, rs = 0;
    MT_CALL(MPI_Allreduce(&r, &rs, 1, MPI_INT, MPI_SUM, dup));
    MT_EQ("sum of merged ranks", msize * (msize - 1) / 2, rs);
    MT_CALL(MPI_Comm_free(&dup));
    MT_CALL(MPI_Comm_free(&merged));
}

/* Entry i of a comma-separated list, into out ("" if none). */
static void list_item(const char *list, int i, char *out, size_t len)
{
    const char *p = list;
    for (; i > 0 && p; i--)
        p = (p = strchr(p, ',')) ? p + 1 : NULL;
    snprintf(out, len, "%.*s", p ? (int)strcspn(p, ",") : 0, p ? p : "");
}

static int run_child(int argc, char **argv)
{
    const char *expect = getenv("DPM_EXPECT_HOSTS");
    if (expect && *expect) {
        char want[256], me[256] = "";
        list_item(expect, mt_rank, want, sizeof(want));
        gethostname(me, sizeof(me) - 1);
        MT_TRUE(!strcmp(want, me), "child %d runs on %s, expected %s (DPM_EXPECT_HOSTS=%s)",
                mt_rank, me, want, expect);
        unsetenv("DPM_EXPECT_HOSTS");   /* not for our own children */
    }
    MPI_Comm parent;
    MT_CALL(MPI_Comm_get_parent(&parent));
    MT_TRUE(parent != MPI_COMM_NULL, "a spawned process expected a parent communicator");
    int inter = 0;
    MT_CALL(MPI_Comm_test_inter(parent, &inter));
    MT_EQ("parent is an intercommunicator", 1, inter);
    const char *mode = argc > 2 ? argv[2] : "";
    if (!strcmp(mode, "wdir")) {   /* the working directory from info wdir */
        char cwd[PATH_MAX];
        MT_TRUE(getcwd(cwd, sizeof(cwd)) && argc > 3 && !strcmp(cwd, argv[3]),
                "cwd %s expected %s", cwd, argc > 3 ? argv[3] : "?");
    }
    if (!strcmp(mode, "grandchild")) {
        int v = 0;
        MT_CALL(MPI_Recv(&v, 1, MPI_INT, 0, 9, parent, MPI_STATUS_IGNORE));
        v += 1;
        MT_CALL(MPI_Send(&v, 1, MPI_INT, 0, 9, parent));
        MT_CALL(MPI_Comm_disconnect(&parent));
        MT_CALL(MPI_Finalize());
        return 0;
    }
    int np = argc > 4 ? atoi(argv[4]) : 1;
    if (!strcmp(mode, "plain") || !strcmp(mode, "nest"))
        np = atoi(argv[3]);
    child_side(parent, np);
    if (!strcmp(mode, "nest")) {
        char *args[] = { "child", "grandchild", NULL };
        MPI_Comm gc;
        int err = -1;
        MT_CALL(MPI_Comm_spawn(self_path, args, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &gc, &err));
        MT_EQ("grandchild's errcode", MPI_SUCCESS, err);
        if (mt_rank == 0) {
            int v = 41, back = 0;
            MT_CALL(MPI_Send(&v, 1, MPI_INT, 0, 9, gc));
            MT_CALL(MPI_Recv(&back, 1, MPI_INT, 0, 9, gc, MPI_STATUS_IGNORE));
            MT_EQ("grandchild's answer", 42, back);
        }
        MT_CALL(MPI_Comm_disconnect(&gc));
    }
    MT_CALL(MPI_Comm_disconnect(&parent));
    MT_CALL(MPI_Comm_get_parent(&parent));
    MT_TRUE(parent == MPI_COMM_NULL, "after Comm_disconnect, Comm_get_parent expected MPI_COMM_NULL");
    MT_CALL(MPI_Finalize());
    return 0;
}

int main(int argc, char **argv)
{
    ssize_t n = readlink("/proc/self/exe", self_path, sizeof(self_path) - 1);
    if (n <= 0)
        return 1;
    self_path[n] = '\0';
    mt_init(&argc, &argv);
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    const char *mode = argc > 1 ? argv[1] : "spawn";
    if (!strcmp(mode, "child"))
        return run_child(argc, argv);
    MPI_Comm parent;
    MT_CALL(MPI_Comm_get_parent(&parent));
    MT_TRUE(parent == MPI_COMM_NULL, "a process that was not spawned expected no parent");
    int *usize = NULL, flag = 0;
    MT_CALL(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &usize, &flag));
    MT_EQ("MPI_UNIVERSE_SIZE is set", 1, flag);
    MT_TRUE(*usize >= mt_size, "MPI_UNIVERSE_SIZE %d below the world size %d", *usize, mt_size);

    if (!strcmp(mode, "spawn") || !strcmp(mode, "nested")) {
        int nc = argc > 2 ? atoi(argv[2]) : 2;
        char np[16];
        snprintf(np, sizeof(np), "%d", mt_size);
        char *args[] = { "child", !strcmp(mode, "nested") ? "nest" : "plain", np, NULL };
        int err[8];
        MPI_Comm inter;
        MPI_Info info = MPI_INFO_NULL;
        const char *host = getenv("DPM_SPAWN_HOST");
        if (host && *host) {
            MT_CALL(MPI_Info_create(&info));
            MT_CALL(MPI_Info_set(info, "host", host));
        }
        MT_CALL(MPI_Comm_spawn(self_path, args, nc, info, 0, MPI_COMM_WORLD, &inter, err));
        if (info != MPI_INFO_NULL)
            MT_CALL(MPI_Info_free(&info));
        for (int i = 0; i < nc; i++)
            MT_EQ("errcode", MPI_SUCCESS, err[i]);
        parent_side(inter, nc);
        MT_CALL(MPI_Comm_disconnect(&inter));
        MT_TRUE(inter == MPI_COMM_NULL, "Comm_disconnect expected MPI_COMM_NULL");
    } else if (!strcmp(mode, "multiple")) {
        const char *dir = argc > 2 ? argv[2] : "/tmp";
        char bindir[PATH_MAX], *slash;
        snprintf(bindir, sizeof(bindir), "%s", self_path);
        slash = strrchr(bindir, '/');
        *slash = '\0';
        char np[16];
        snprintf(np, sizeof(np), "%d", mt_size);
        char *cmds[2] = { self_path, slash + 1 };
        char *a0[] = { "child", "wdir", (char *)dir, np, NULL };
        char *a1[] = { "child", "path", "-", np, NULL };
        char **argvs[2] = { a0, a1 };
        int maxp[2] = { 1, 2 }, err[3] = { -1, -1, -1 };
        MPI_Info infos[2];
        MT_CALL(MPI_Info_create(&infos[0]));
        MT_CALL(MPI_Info_create(&infos[1]));
        const char *hosts = getenv("DPM_SPAWN_HOSTS");
        char h0[256] = "localhost", h1[256] = "";
        if (hosts && *hosts) {
            list_item(hosts, 0, h0, sizeof(h0));
            list_item(hosts, 1, h1, sizeof(h1));
        }
        MT_CALL(MPI_Info_set(infos[0], "wdir", dir));
        MT_CALL(MPI_Info_set(infos[0], "host", h0));
        MT_CALL(MPI_Info_set(infos[1], "path", bindir));
        if (h1[0])
            MT_CALL(MPI_Info_set(infos[1], "host", h1));
        MPI_Comm inter;
        MT_CALL(MPI_Comm_spawn_multiple(2, cmds, argvs, maxp, infos, 0, MPI_COMM_WORLD, &inter, err));
        for (int i = 0; i < 3; i++)
            MT_EQ("errcode", MPI_SUCCESS, err[i]);
        MT_CALL(MPI_Info_free(&infos[0]));
        MT_CALL(MPI_Info_free(&infos[1]));
        parent_side(inter, 3);
        MT_CALL(MPI_Comm_disconnect(&inter));
    } else if (!strcmp(mode, "selfconnect")) {
        /* two halves of one job meet through a port, as two jobs would */
        MPI_Comm half, inter;
        char port[MPI_MAX_PORT_NAME] = "";
        MT_TRUE(mt_size >= 2, "selfconnect needs 2 ranks");
        int color = mt_rank % 2, hrank;
        MT_CALL(MPI_Comm_split(MPI_COMM_WORLD, color, mt_rank, &half));
        MT_CALL(MPI_Comm_rank(half, &hrank));
        if (mt_rank == 0)
            MT_CALL(MPI_Open_port(MPI_INFO_NULL, port));
        MT_CALL(MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, MPI_COMM_WORLD));
        if (color == 0)
            MT_CALL(MPI_Comm_accept(port, MPI_INFO_NULL, 0, half, &inter));
        else
            MT_CALL(MPI_Comm_connect(port, MPI_INFO_NULL, 0, half, &inter));
        int rsize, v = mt_rank, sum = 0;
        MT_CALL(MPI_Comm_remote_size(inter, &rsize));
        MT_EQ("remote half's size", color ? (mt_size + 1) / 2 : mt_size / 2, rsize);
        MT_CALL(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, inter));
        int expect = 0;
        for (int r = 0; r < mt_size; r++)
            expect += r % 2 != color ? r : 0;
        MT_EQ("allreduce over the halves' intercommunicator", expect, sum);
        MPI_Comm merged, dup;
        MT_CALL(MPI_Intercomm_merge(inter, color, &merged));
        MT_CALL(MPI_Comm_dup(merged, &dup));
        int one = 1, n = 0;
        MT_CALL(MPI_Allreduce(&one, &n, 1, MPI_INT, MPI_SUM, dup));
        MT_EQ("merged size", mt_size, n);
        MT_CALL(MPI_Comm_free(&dup));
        MT_CALL(MPI_Comm_free(&merged));
        MT_CALL(MPI_Comm_disconnect(&inter));
        MT_CALL(MPI_Comm_free(&half));
        if (mt_rank == 0)
            MT_CALL(MPI_Close_port(port));
    } else if (!strcmp(mode, "missing") || !strcmp(mode, "singleton")) {
        int err[2] = { -1, -1 };
        MPI_Comm inter = MPI_COMM_WORLD;
        const char *prog = !strcmp(mode, "missing") ? "/nonexistent/weft-no-such-program" : self_path;
        MPI_Info info = MPI_INFO_NULL;
        const char *host = getenv("DPM_SPAWN_HOST");
        if (host && *host) {   /* a host the launcher cannot reach (tests/net/test_spawn.sh) */
            MT_CALL(MPI_Info_create(&info));
            MT_CALL(MPI_Info_set(info, "host", host));
        }
        int rc = MPI_Comm_spawn(prog, MPI_ARGV_NULL, 2, info, 0, MPI_COMM_WORLD, &inter, err);
        if (info != MPI_INFO_NULL)
            MT_CALL(MPI_Info_free(&info));
        int cls = mt_class(rc);
        MT_EQ("class of a failed spawn (MPI_ERR_SPAWN)", MPI_ERR_SPAWN, cls);
        MT_EQ("errcodes[0]", MPI_ERR_SPAWN, err[0]);
        MT_EQ("errcodes[1]", MPI_ERR_SPAWN, err[1]);
        MT_TRUE(inter == MPI_COMM_NULL, "a failed spawn expected intercomm MPI_COMM_NULL");
        if (mt_rank == 0) {
            char msg[MPI_MAX_ERROR_STRING];
            int len = 0;
            MPI_Error_string(rc, msg, &len);
            printf("spawn failed as expected: %s\n", msg);
        }
    } else {
        MT_FAIL("unknown mode %s", mode);
    }
    return mt_finish("dpm_spawn");
}
