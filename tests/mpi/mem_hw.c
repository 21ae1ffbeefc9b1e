/* MPI_Alloc_mem / MPI_Free_mem (MPI 4.1 §9.2, with the "mpi_minimum_memory_alignment" info key) and
 * the hardware queries of MPI 4.1: MPI_Get_hw_resource_info and MPI_Comm_split_type with
 * MPI_COMM_TYPE_RESOURCE_GUIDED guided by "mpi_hw_resource_type" or "mpi_pset_name".
 * Usage: mem_hw [--weft] */
#include "mpitest.h"

static void check_alloc(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    /* sizes 0, 1, odd, 1 MiB: writable over the whole size, and freed */
    const MPI_Aint sizes[] = {0, 1, 77, 1 << 20};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        unsigned char *p = NULL;
        MT_CALL(MPI_Alloc_mem(sizes[i], MPI_INFO_NULL, &p));
        MT_TRUE(p != NULL || sizes[i] == 0, "MPI_Alloc_mem(%ld) gave NULL", (long)sizes[i]);
        if (sizes[i]) {
            mt_fill(p, (size_t)sizes[i], 7 + i);
            mt_verify(p, (size_t)sizes[i], 7 + i, "allocated memory");
        }
        MT_CALL(MPI_Free_mem(p));
    }
    /* the alignment asked for through info is honoured */
    MPI_Info info;
    MT_CALL(MPI_Info_create(&info));
    const char *aligns[] = {"1", "64", "4096", "65536"};
    for (size_t i = 0; i < sizeof(aligns) / sizeof(aligns[0]); i++) {
        MT_CALL(MPI_Info_set(info, "mpi_minimum_memory_alignment", aligns[i]));
        void *p = NULL;
        MT_CALL(MPI_Alloc_mem(100, info, &p));
        MT_EQ("address modulo the alignment asked for", 0, (uintptr_t)p % strtoul(aligns[i], NULL, 10));
        MT_CALL(MPI_Free_mem(p));
    }
    /* a buffer from MPI_Alloc_mem carries messages like any other */
    int *buf = NULL;
    MT_CALL(MPI_Alloc_mem(4 * sizeof(int), MPI_INFO_NULL, &buf));
    int next = (mt_rank + 1) % mt_size, prev = (mt_rank + mt_size - 1) % mt_size;
    int out[4] = {mt_rank, 1, 2, 3};
    MT_CALL(MPI_Sendrecv(out, 4, MPI_INT, next, 5, buf, 4, MPI_INT, prev, 5, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE));
    MT_EQ("value received into MPI_Alloc_mem memory", prev, buf[0]);
    MT_EQ("value received into MPI_Alloc_mem memory", 3, buf[3]);
    MT_CALL(MPI_Free_mem(buf));
    MT_CALL(MPI_Free_mem(NULL));   /* free(NULL) semantics: nothing to do */
    if (mt_weft) {
        /* errors Weft reports (the standard leaves them to the implementation) */
        void *p = NULL;
        MT_CLASS_EQ("MPI_Alloc_mem of a negative size", MPI_ERR_ARG, MPI_Alloc_mem(-1, MPI_INFO_NULL, &p));
        MT_CALL(MPI_Info_set(info, "mpi_minimum_memory_alignment", "48"));
        int rc = MPI_Alloc_mem(64, info, &p);
        MT_TRUE(rc != MPI_SUCCESS, "MPI_Alloc_mem accepted an alignment of 48 (not a power of two)");
    }
    MT_CALL(MPI_Info_free(&info));
}

/* The list of types a process may split on, as MPI_Get_hw_resource_info gives it. */
static void check_hw_info(void)
{
    MPI_Info hw;
    MT_CALL(MPI_Get_hw_resource_info(&hw));
    MT_TRUE(hw != MPI_INFO_NULL, "MPI_Get_hw_resource_info gave MPI_INFO_NULL");
    if (mt_weft) {
        char val[512];
        int len = (int)sizeof(val), flag = 0;
        MT_CALL(MPI_Info_get_string(hw, "mpi_hw_resource_type", &len, val, &flag));
        MT_TRUE(flag, "hw info has no mpi_hw_resource_type key");
        MT_TRUE(strncmp(val, "mpi_shared_memory", 17) == 0, "mpi_hw_resource_type \"%s\" does not start "
                "with mpi_shared_memory", val);
        /* every type listed splits this process into a communicator; all ranks must take part in
         * each split, so rank 0's list (broadcast) drives the loop, and a rank whose binding
         * differs may get MPI_COMM_NULL for some: only the lister's own result is checked */
        char all[512];
        memcpy(all, val, sizeof(all));
        MT_CALL(MPI_Bcast(all, (int)sizeof(all), MPI_CHAR, 0, MPI_COMM_WORLD));
        MPI_Info info;
        MT_CALL(MPI_Info_create(&info));
        for (char *save = NULL, *t = strtok_r(all, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            MT_CALL(MPI_Info_set(info, "mpi_hw_resource_type", t));
            MPI_Comm sub;
            MT_CALL(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &sub));
            if (mt_rank == 0)
                MT_TRUE(sub != MPI_COMM_NULL, "HW_GUIDED split on listed type %s gave MPI_COMM_NULL", t);
            if (sub != MPI_COMM_NULL)
                MT_CALL(MPI_Comm_free(&sub));
        }
        MT_CALL(MPI_Info_free(&info));
    }
    MT_CALL(MPI_Info_free(&hw));
}

static int comm_size_or_zero(MPI_Comm c)
{
    int n = 0;
    if (c != MPI_COMM_NULL)
        MT_CALL(MPI_Comm_size(c, &n));
    return n;
}

static void check_resource_guided(void)
{
    MPI_Comm shared, sub;
    MT_CALL(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared));
    /* no info, or no key it knows: MPI_COMM_NULL */
    MT_CALL(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED, 0, MPI_INFO_NULL, &sub));
    MT_TRUE(sub == MPI_COMM_NULL, "RESOURCE_GUIDED without info gave a communicator");
    MPI_Info info;
    MT_CALL(MPI_Info_create(&info));
    MT_CALL(MPI_Info_set(info, "mpi_hw_resource_type", "no-such-resource"));
    MT_CALL(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED, 0, info, &sub));
    MT_TRUE(sub == MPI_COMM_NULL, "RESOURCE_GUIDED on an unknown resource gave a communicator");
    /* mpi_shared_memory: the same processes as MPI_COMM_TYPE_SHARED */
    MT_CALL(MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory"));
    MT_CALL(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED, 0, info, &sub));
    MT_EQ("size of RESOURCE_GUIDED mpi_shared_memory vs SHARED", comm_size_or_zero(shared),
          comm_size_or_zero(sub));
    int cmp = MPI_UNEQUAL;
    MT_CALL(MPI_Comm_compare(shared, sub, &cmp));
    MT_EQ("RESOURCE_GUIDED mpi_shared_memory vs SHARED: MPI_CONGRUENT", MPI_CONGRUENT, cmp);
    MT_CALL(MPI_Comm_free(&sub));
    /* a pset name takes precedence over the hardware type */
    MT_CALL(MPI_Info_set(info, "mpi_pset_name", "mpi://SELF"));
    MT_CALL(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED, 0, info, &sub));
    MT_EQ("size with mpi_pset_name mpi://SELF", 1, comm_size_or_zero(sub));
    MT_CALL(MPI_Comm_free(&sub));
    MT_CALL(MPI_Info_set(info, "mpi_pset_name", "mpi://WORLD"));
    MT_CALL(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED, 0, info, &sub));
    MT_EQ("size with mpi_pset_name mpi://WORLD", mt_size, comm_size_or_zero(sub));
    MT_CALL(MPI_Comm_free(&sub));
    MT_CALL(MPI_Info_free(&info));
    MT_CALL(MPI_Comm_free(&shared));
}

/* HW_UNGUIDED names the resource it followed in the info argument (MPI 4.0); split_type works on
 * intercommunicators (SHARED and UNDEFINED). */
static void check_unguided_and_inter(void)
{
    MPI_Info info;
    MT_CALL(MPI_Info_create(&info));
    MPI_Comm sub;
    MT_CALL(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, mt_rank, info, &sub));
    if (sub != MPI_COMM_NULL) {
        char val[256];
        int len = (int)sizeof(val), flag = 0, n = 0;
        MT_CALL(MPI_Info_get_string(info, "mpi_hw_resource_type", &len, val, &flag));
        MT_TRUE(flag && val[0], "HW_UNGUIDED gave a communicator but no mpi_hw_resource_type in info");
        MT_CALL(MPI_Comm_size(sub, &n));
        MT_TRUE(n < mt_size, "HW_UNGUIDED communicator of %d ranks is not smaller than %d", n, mt_size);
        MT_CALL(MPI_Comm_free(&sub));
    }
    MT_CALL(MPI_Info_free(&info));
    if (mt_size < 2)
        return;
    /* an intercommunicator between the even and the odd ranks */
    MPI_Comm half, inter;
    MT_CALL(MPI_Comm_split(MPI_COMM_WORLD, mt_rank % 2, mt_rank, &half));
    MT_CALL(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, mt_rank % 2 ? 0 : 1, 77, &inter));
    /* expected: the ranks of my node, of my parity (local group) and of the other (remote group);
     * MPI_COMM_NULL when the remote group is empty */
    int want_l = 0, want_r = 0, other0 = -1;
    for (int r = 0; r < mt_size; r++) {
        if (!mt_same_node(r, mt_rank))
            continue;
        if (r % 2 == mt_rank % 2) {
            want_l++;
        } else {
            want_r++;
            if (other0 < 0)
                other0 = r;
        }
    }
    MT_CALL(MPI_Comm_split_type(inter, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &sub));
    if (want_r == 0) {
        MT_TRUE(sub == MPI_COMM_NULL, "split_type SHARED of an intercommunicator with no rank of the other "
                                      "side on this node gave a communicator");
    } else {
        MT_TRUE(sub != MPI_COMM_NULL, "split_type SHARED of an intercommunicator gave MPI_COMM_NULL with %d "
                                      "rank(s) of the other side on this node", want_r);
        int is_inter = 0, lsize = 0, rsize = 0;
        MT_CALL(MPI_Comm_test_inter(sub, &is_inter));
        MT_EQ("split_type of an intercommunicator is an intercommunicator", 1, is_inter);
        MT_CALL(MPI_Comm_size(sub, &lsize));
        MT_CALL(MPI_Comm_remote_size(sub, &rsize));
        MT_EQ("local size (my side's ranks on this node)", want_l, lsize);
        MT_EQ("remote size (the other side's ranks on this node)", want_r, rsize);
        int v = mt_rank, got = -1;   /* a message over it: local rank 0 of each side swap */
        int lr;
        MT_CALL(MPI_Comm_rank(sub, &lr));
        if (lr == 0) {
            MT_CALL(MPI_Sendrecv(&v, 1, MPI_INT, 0, 3, &got, 1, MPI_INT, 0, 3, sub, MPI_STATUS_IGNORE));
            MT_EQ("rank 0 of the other side on this node", other0, got);
        }
        MT_CALL(MPI_Comm_free(&sub));
    }
    MT_CALL(MPI_Comm_split_type(inter, MPI_UNDEFINED, 0, MPI_INFO_NULL, &sub));
    MT_TRUE(sub == MPI_COMM_NULL, "split_type MPI_UNDEFINED of an intercommunicator gave a communicator");
    MT_CALL(MPI_Comm_free(&inter));
    MT_CALL(MPI_Comm_free(&half));
}

int main(int argc, char **argv)
{
    mt_init_args(argc, argv, 0);
    mt_init(&argc, &argv);
    mt_nodes_init();
    check_alloc();
    check_hw_info();
    check_resource_guided();
    check_unguided_and_inter();
    return mt_finish("mem_hw");
}
