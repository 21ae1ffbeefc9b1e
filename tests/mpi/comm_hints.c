/* Info hints of communicators: mpi_assert_no_any_source, mpi_assert_no_any_tag and
 * mpi_assert_allow_overtaking given to MPI_Comm_dup_with_info / MPI_Comm_idup_with_info. The
 * communicator must work as any other for exact receives, including many unexpected messages
 * received in an order other than their arrival, must report its hints through MPI_Comm_get_info, and
 * must not match traffic of its parent. With --weft: a wildcard receive or probe on a communicator
 * asserted not to use wildcards is refused with MPI_ERR_ARG (the standard makes it erroneous). */
#include "mpitest.h"

#define NMSG 300

static void exchange(MPI_Comm c, const char *what)
{
    int rank, size;
    MT_CALL(MPI_Comm_rank(c, &rank));
    MT_CALL(MPI_Comm_size(c, &size));
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    /* a message on the parent with the same tags must not be received here */
    MT_CALL(MPI_Barrier(c));
    static int out[NMSG], in[NMSG];
    MPI_Request req[NMSG];
    for (int i = 0; i < NMSG; i++) {
        out[i] = rank * 100000 + i;
        MT_CALL(MPI_Isend(&out[i], 1, MPI_INT, right, i % 17, c, &req[i]));
    }
    MT_CALL(MPI_Barrier(c));   /* everything is unexpected at the receiver by now (eager) */
    /* receive by tag in reverse tag order: within a tag, messages stay in order */
    int got[17] = {0};
    for (int t = 16; t >= 0; t--) {
        for (int i = t; i < NMSG; i += 17) {
            MPI_Status st;
            MT_CALL(MPI_Recv(&in[i], 1, MPI_INT, left, t, c, &st));
            MT_EQ(what, left * 100000 + i, in[i]);
            MT_EQ("status source", left, st.MPI_SOURCE);
            MT_EQ("status tag", t, st.MPI_TAG);
            got[t]++;
        }
    }
    MT_CALL(MPI_Waitall(NMSG, req, MPI_STATUSES_IGNORE));
}

static void check_info(MPI_Comm c)
{
    MPI_Info used;
    MT_CALL(MPI_Comm_get_info(c, &used));
    const char *keys[2] = {"mpi_assert_no_any_source", "mpi_assert_no_any_tag"};
    for (int k = 0; k < 2; k++) {
        char val[MPI_MAX_INFO_VAL];
        int len = MPI_MAX_INFO_VAL, flag = 0;
        MT_CALL(MPI_Info_get_string(used, keys[k], &len, val, &flag));
        MT_TRUE(flag && strcmp(val, "true") == 0, "Comm_get_info %s expected \"true\" got %s", keys[k],
                flag ? val : "(absent)");
    }
    MT_CALL(MPI_Info_free(&used));
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Info info;
    MT_CALL(MPI_Info_create(&info));
    MT_CALL(MPI_Info_set(info, "mpi_assert_no_any_source", "true"));
    MT_CALL(MPI_Info_set(info, "mpi_assert_no_any_tag", "true"));
    MT_CALL(MPI_Info_set(info, "mpi_assert_allow_overtaking", "true"));

    MPI_Comm exact, iexact, plain;
    MT_CALL(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &exact));
    MPI_Request r;
    MT_CALL(MPI_Comm_idup_with_info(MPI_COMM_WORLD, info, &iexact, &r));
    MT_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
    MT_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &plain));
    MT_CALL(MPI_Info_free(&info));

    /* traffic on the parent with the same tags, received last */
    int size = mt_size, right = (mt_rank + 1) % size, left = (mt_rank + size - 1) % size;
    int parent_out = -mt_rank - 1, parent_in = 0;
    MPI_Request pr[2];
    MT_CALL(MPI_Isend(&parent_out, 1, MPI_INT, right, 3, MPI_COMM_WORLD, &pr[0]));

    exchange(exact, "message on the dup_with_info communicator");
    exchange(iexact, "message on the idup_with_info communicator");
    exchange(plain, "message on the plain duplicate");
    check_info(exact);
    check_info(iexact);

    MT_CALL(MPI_Irecv(&parent_in, 1, MPI_INT, left, 3, MPI_COMM_WORLD, &pr[1]));
    MT_CALL(MPI_Waitall(2, pr, MPI_STATUSES_IGNORE));
    MT_EQ("message on the parent", -left - 1, parent_in);

    if (mt_weft) {
        MT_CALL(MPI_Comm_set_errhandler(exact, MPI_ERRORS_RETURN));
        int x = 0, flag = 0;
        MT_EQ("MPI_Recv(MPI_ANY_SOURCE) on a no_any_source communicator", MPI_ERR_ARG,
              mt_class(MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 0, exact, MPI_STATUS_IGNORE)));
        MT_EQ("MPI_Irecv(MPI_ANY_TAG) on a no_any_tag communicator", MPI_ERR_ARG,
              mt_class(MPI_Irecv(&x, 1, MPI_INT, left, MPI_ANY_TAG, exact, &r)));
        MT_EQ("MPI_Iprobe(MPI_ANY_SOURCE) on a no_any_source communicator", MPI_ERR_ARG,
              mt_class(MPI_Iprobe(MPI_ANY_SOURCE, 0, exact, &flag, MPI_STATUS_IGNORE)));
        /* the plain duplicate still takes wildcards */
        MT_CALL(MPI_Sendrecv(&mt_rank, 1, MPI_INT, right, 5, &x, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                             plain, MPI_STATUS_IGNORE));
        MT_EQ("wildcard receive on the plain duplicate", left, x);
    }
    MT_CALL(MPI_Comm_free(&exact));
    MT_CALL(MPI_Comm_free(&iexact));
    MT_CALL(MPI_Comm_free(&plain));
    MT_CALL(MPI_Finalize());
    return 0;
}
