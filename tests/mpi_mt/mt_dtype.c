/* Datatypes from many threads at once: every worker thread builds types (some nested on types
 * shared by all threads), commits them, packs and unpacks through them checking every byte, asks
 * the shared types for their contents (which creates and frees datatype objects), and frees its
 * types, n times. The shared types are freed by the main thread while the workers' types built
 * from them are still alive, so their lifetime rests on the structural references.
 * Arguments: n (iterations per thread, default 300), --threads=T. */
#include "mttest.h"

static long n_iter = 300;
static MPI_Datatype shared_vec, shared_struct;

/* The type map of vector(4, 2, 3, int): int offsets of the 8 ints. */
static const int vec_ints[8] = { 0, 1, 3, 4, 6, 7, 9, 10 };

static void worker(int tid, void *arg)
{
    (void)arg;
    int buf[64], out[64], ref[64];
    char pk[512];
    for (long it = 0; it < n_iter; it++) {
        mtt_at("iteration %ld step %ld", it, 0);
        /* contiguous(k, shared vector): k copies, 11 ints apart */
        int k = 1 + (int)((tid + it) % 5);
        MPI_Datatype t;
        MT_CALL(MPI_Type_contiguous(k, shared_vec, &t));
        MT_CALL(MPI_Type_commit(&t));
        for (int i = 0; i < 64; i++)
            buf[i] = (int)(mtt_seed(tid, it, i, 0) & 0x7fffffff);
        int pos = 0;
        MT_CALL(MPI_Pack(buf, 1, t, pk, sizeof pk, &pos, MPI_COMM_WORLD));
        MT_TRUE(pos == k * 8 * (int)sizeof(int), "packed bytes expected %d got %d",
                k * 8 * (int)sizeof(int), pos);
        for (int c = 0, j = 0; c < k; c++)
            for (int e = 0; e < 8; e++, j++)
                ref[j] = buf[c * 11 + vec_ints[e]];   /* extent of the vector: 11 ints */
        MT_TRUE(memcmp(pk, ref, pos) == 0, "packed data of contiguous(%d, vector) differ", k);
        memset(out, 0, sizeof out);
        int upos = 0;
        MT_CALL(MPI_Unpack(pk, pos, &upos, out, 1, t, MPI_COMM_WORLD));
        for (int c = 0; c < k; c++)
            for (int e = 0; e < 8; e++)
                MT_TRUE(out[c * 11 + vec_ints[e]] == buf[c * 11 + vec_ints[e]],
                        "unpacked int %d of copy %d differs", vec_ints[e], c);
        mtt_at("iteration %ld step %ld", it, 1);
        /* contents of the shared struct: clones of its members, freed at once */
        int ni, na, nd, comb;
        MT_CALL(MPI_Type_get_envelope(shared_struct, &ni, &na, &nd, &comb));
        MT_TRUE(comb == MPI_COMBINER_STRUCT && ni == 3 && na == 2 && nd == 2,
                "shared struct envelope expected (STRUCT, 3, 2, 2) got (%d, %d, %d, %d)", comb, ni,
                na, nd);
        int ints[3];
        MPI_Aint ad[2];
        MPI_Datatype ty[2];
        MT_CALL(MPI_Type_get_contents(shared_struct, 3, 2, 2, ints, ad, ty));
        int sz;
        MT_CALL(MPI_Type_size(ty[1], &sz));
        MT_TRUE(sz == 8 * (int)sizeof(int), "size of the struct's vector member expected %d got %d",
                8 * (int)sizeof(int), sz);
        MT_CALL(MPI_Type_free(&ty[1]));
        /* a struct of the new type and a double */
        int bl[2] = { 1, 1 };
        MPI_Aint d[2] = { 0, 512 };
        MPI_Datatype st[2] = { t, MPI_DOUBLE }, s2;
        MT_CALL(MPI_Type_create_struct(2, bl, d, st, &s2));
        MT_CALL(MPI_Type_free(&t));   /* s2 keeps it */
        MT_CALL(MPI_Type_commit(&s2));
        MT_CALL(MPI_Type_size(s2, &sz));
        MT_TRUE(sz == k * 8 * (int)sizeof(int) + 8, "struct size expected %d got %d",
                k * 8 * (int)sizeof(int) + 8, sz);
        MT_CALL(MPI_Type_free(&s2));
    }
}

int main(int argc, char **argv)
{
    long nums[1] = { 300 };
    mtt_args(argc, argv, nums, 1);
    n_iter = nums[0];
    mtt_init(&argc, &argv);
    MT_CALL(MPI_Type_vector(4, 2, 3, MPI_INT, &shared_vec));
    MT_CALL(MPI_Type_commit(&shared_vec));
    int bl[2] = { 2, 1 };
    MPI_Aint d[2] = { 0, 64 };
    MPI_Datatype st[2] = { MPI_INT, shared_vec };
    MT_CALL(MPI_Type_create_struct(2, bl, d, st, &shared_struct));
    mtt_run(mtt_nthreads, worker, NULL);
    MT_CALL(MPI_Type_free(&shared_vec));
    MT_CALL(MPI_Type_free(&shared_struct));
    return mtt_finish("mt_dtype");
}
