/* MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) and the guided split "mpi_shared_memory" give one
 * communicator per node, holding exactly the ranks of that node, in key order; on
 * MPI_COMM_WORLD and on a communicator whose ranks are interleaved across the nodes.
 *
 * The expectation comes from outside the library: two ranks share a node when their
 * MPI_Get_processor_name agree and, with --weft, when WEFT_NODE_SPLIT=k (the test hook that makes
 * one machine several nodes) gives them the same world rank / k. */
#include "mpitest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ident {
    char host[MPI_MAX_PROCESSOR_NAME];
    int sim;            /* world rank / WEFT_NODE_SPLIT (% -WEFT_NODE_SPLIT when < 0), or 0 */
} ident_t;

static int same_node(const ident_t *a, const ident_t *b)
{
    return strcmp(a->host, b->host) == 0 && a->sim == b->sim;
}

/* Split c by type (SHARED, or HW_GUIDED with info) with key `key` and check the result against
 * ids (indexed by world rank). keys: every rank's key, by rank of c. */
static void check_split(MPI_Comm c, const ident_t *ids, int split_type, MPI_Info info, int key,
                        const char *what)
{
    int n, me;
    MT_CALL(MPI_Comm_size(c, &n));
    MT_CALL(MPI_Comm_rank(c, &me));
    MPI_Group cg, wg;
    MT_CALL(MPI_Comm_group(c, &cg));
    MT_CALL(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    int *crank = malloc(sizeof(int) * (size_t)n), *wrank = malloc(sizeof(int) * (size_t)n);
    int *keys = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        crank[i] = i;
    MT_CALL(MPI_Group_translate_ranks(cg, n, crank, wg, wrank));
    MT_CALL(MPI_Allgather(&key, 1, MPI_INT, keys, 1, MPI_INT, c));

    MPI_Comm d;
    MT_CALL(MPI_Comm_split_type(c, split_type, key, info, &d));
    MT_TRUE(d != MPI_COMM_NULL, "%s: MPI_COMM_NULL", what);
    int dn, dme;
    MT_CALL(MPI_Comm_size(d, &dn));
    MT_CALL(MPI_Comm_rank(d, &dme));
    /* expected members: the ranks of c on my node, ordered by (key, rank in c) */
    int *exp = malloc(sizeof(int) * (size_t)n), ne = 0;
    const ident_t *mine = &ids[wrank[me]];
    for (int i = 0; i < n; i++)
        if (same_node(&ids[wrank[i]], mine))
            exp[ne++] = i;
    for (int i = 1; i < ne; i++)   /* insertion sort by key, stable on rank */
        for (int j = i; j > 0 && keys[exp[j - 1]] > keys[exp[j]]; j--) {
            int t = exp[j];
            exp[j] = exp[j - 1];
            exp[j - 1] = t;
        }
    MT_TRUE(dn == ne, "%s: node communicator of %d ranks, expected %d (host %s, node %d)", what,
            dn, ne, mine->host, mine->sim);
    MPI_Group dg;
    MT_CALL(MPI_Comm_group(d, &dg));
    int *drank = malloc(sizeof(int) * (size_t)dn), *got = malloc(sizeof(int) * (size_t)dn);
    for (int i = 0; i < dn; i++)
        drank[i] = i;
    MT_CALL(MPI_Group_translate_ranks(dg, dn, drank, cg, got));
    for (int i = 0; i < dn; i++)
        MT_TRUE(got[i] == exp[i], "%s: rank %d of the node communicator is rank %d of the parent, "
                "expected %d", what, i, got[i], exp[i]);
    MT_TRUE(exp[dme] == me, "%s: my rank %d in the node communicator is wrong", what, dme);
    /* the node communicator works: a sum over it */
    int one = 1, sum = 0;
    MT_CALL(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, d));
    MT_EQ("sum over the node communicator", dn, sum);
    MT_CALL(MPI_Group_free(&dg));
    MT_CALL(MPI_Comm_free(&d));
    MT_CALL(MPI_Group_free(&cg));
    MT_CALL(MPI_Group_free(&wg));
    free(crank);
    free(wrank);
    free(keys);
    free(exp);
    free(drank);
    free(got);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    mt_init_args(argc, argv, 0);
    ident_t me = { .sim = 0 };
    int len = 0;
    MT_CALL(MPI_Get_processor_name(me.host, &len));
    const char *split = getenv("WEFT_NODE_SPLIT");
    if (mt_weft && split && atoi(split) > 0)
        me.sim = mt_rank / atoi(split);
    else if (mt_weft && split && atoi(split) < 0)
        me.sim = mt_rank % -atoi(split);   /* nodes of round-robin ranks */
    ident_t *ids = malloc(sizeof(ident_t) * (size_t)mt_size);
    MT_CALL(MPI_Allgather(&me, (int)sizeof(me), MPI_BYTE, ids, (int)sizeof(me), MPI_BYTE,
                          MPI_COMM_WORLD));
    MPI_Info info;
    MT_CALL(MPI_Info_create(&info));
    MT_CALL(MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory"));

    check_split(MPI_COMM_WORLD, ids, MPI_COMM_TYPE_SHARED, MPI_INFO_NULL, 0, "world, shared");
    check_split(MPI_COMM_WORLD, ids, MPI_COMM_TYPE_SHARED, MPI_INFO_NULL, mt_size - mt_rank,
                "world, shared, keys reversed");
    check_split(MPI_COMM_WORLD, ids, MPI_COMM_TYPE_HW_GUIDED, info, 0,
                "world, mpi_shared_memory");
    /* ranks dealt round-robin: even world ranks first, then odd ones */
    MPI_Comm rr;
    MT_CALL(MPI_Comm_split(MPI_COMM_WORLD, 0, (mt_rank % 2) * mt_size + mt_rank, &rr));
    check_split(rr, ids, MPI_COMM_TYPE_SHARED, MPI_INFO_NULL, 0, "round-robin, shared");
    check_split(rr, ids, MPI_COMM_TYPE_HW_GUIDED, info, mt_rank % 3, "round-robin, guided");
    MT_CALL(MPI_Comm_free(&rr));
    /* a type no rank takes part with: MPI_COMM_NULL everywhere */
    MPI_Comm none;
    MT_CALL(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, 0, MPI_INFO_NULL, &none));
    MT_TRUE(none == MPI_COMM_NULL, "MPI_UNDEFINED gave a communicator");
    MT_CALL(MPI_Info_free(&info));
    free(ids);
    return mt_finish("comm_nodes");
}
