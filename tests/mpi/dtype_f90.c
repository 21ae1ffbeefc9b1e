/* MPI_Type_create_f90_real / _complex / _integer (MPI 4.1 19.1.9): the envelope and contents of
 * each kind for several (p, r), MPI_UNDEFINED included; size and bounds of the sized type it
 * behaves as; distinct (p, r) give distinct types; communication between two ranks (blocking,
 * nonblocking, rendezvous-sized, through a dup); reductions with predefined operations, also
 * through a contiguous type; MPI_Type_dup and MPI_Type_contiguous of an F90 type (their contents
 * give back the F90 handle itself, as for any predefined type); packing. With
 * MPI_THREAD_MULTIPLE, threads create the same new types at once.
 *
 * Weft-only (--weft), as the standard leaves them to the implementation or MPICH 4.0 differs:
 * repeated calls with the same arguments return the same handle, also from concurrent threads
 * (the standard's advice to implementors; MPICH caches too); MPI_Type_free of an F90 type fails
 * with MPI_ERR_TYPE (it is erroneous; MPICH frees it); MPI_Type_commit leaves it unchanged; the
 * name is empty (MPICH agrees); MPI_Type_match_size still returns the named type; receiving an
 * F90 real as MPI_REAL4 (the standard says an F90 type matches only a type made with the same
 * (p, r) or a dup of one; neither Weft nor MPICH checks signatures); MPI_BAND on an F90 real
 * fails with MPI_ERR_OP; a reduction on a contiguous type of F90 integers (MPICH refuses predefined
 * operations on every derived type). Runs at 2 ranks; the parts between ranks need at least 2. */
#include "mpitest.h"

#include <complex.h>
#include <pthread.h>
#include <stdint.h>

#define U MPI_UNDEFINED
#define NT 8        /* threads of the concurrent part */
#define ROUNDS 8    /* rounds of the concurrent part: integer ranges 1..8, each new (MPICH keeps
                       at most 64 F90 types; the program makes 37) */
#define NK 4        /* types each thread asks for per round */
#define HANDLE(t) ((unsigned long long)(uintptr_t)(t))   /* for messages: a pointer or an int */

static MPI_Datatype f90(int combiner, int p, int r)
{
    MPI_Datatype t = MPI_DATATYPE_NULL;
    if (combiner == MPI_COMBINER_F90_REAL)
        MT_CALL(MPI_Type_create_f90_real(p, r, &t));
    else if (combiner == MPI_COMBINER_F90_COMPLEX)
        MT_CALL(MPI_Type_create_f90_complex(p, r, &t));
    else
        MT_CALL(MPI_Type_create_f90_integer(r, &t));
    return t;
}

/* Bytes of the integer kind with range r (the models of Weft and of gfortran-built MPICH). */
static int int_size(int r)
{
    return r <= 2 ? 1 : r <= 4 ? 2 : r <= 9 ? 4 : 8;
}

/* Envelope, contents, size and bounds of t, made by (combiner, p, r), of size bytes. */
static void check_f90(const char *what, MPI_Datatype t, int combiner, int p, int r, int size)
{
    int integer = combiner == MPI_COMBINER_F90_INTEGER;
    int ni = -1, na = -1, nd = -1, comb = -1;
    MT_CALL(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
    if (comb != combiner || ni != (integer ? 1 : 2) || na != 0 || nd != 0)
        MT_FAIL("%s: envelope expected (combiner %d, %d integers, 0 addresses, 0 datatypes) got "
                "(%d, %d, %d, %d)", what, combiner, integer ? 1 : 2, comb, ni, na, nd);
    MPI_Count cni = -1, cna = -1, cnl = -1, cnd = -1;
    MT_CALL(MPI_Type_get_envelope_c(t, &cni, &cna, &cnl, &cnd, &comb));
    if (comb != combiner || cni != ni || cna != 0 || cnl != 0 || cnd != 0)
        MT_FAIL("%s: MPI_Type_get_envelope_c expected (%d, %d, 0, 0, 0) got (%d, %lld, %lld, "
                "%lld, %lld)", what, combiner, ni, comb, (long long)cni, (long long)cna,
                (long long)cnl, (long long)cnd);
    int ints[4] = { -7, -7, -7, -7 };
    MPI_Aint addrs[1];
    MPI_Datatype types[1];
    MT_CALL(MPI_Type_get_contents(t, 4, 1, 1, ints, addrs, types));
    if (integer ? ints[0] != r || ints[1] != -7
                : ints[0] != p || ints[1] != r || ints[2] != -7)
        MT_FAIL("%s: contents expected (%d, %d) got (%d, %d, %d)", what, integer ? r : p,
                integer ? -7 : r, ints[0], ints[1], ints[2]);
    int sz = -1;
    MPI_Aint lb = -1, ext = -1, tlb = -1, text = -1;
    MT_CALL(MPI_Type_size(t, &sz));
    MT_CALL(MPI_Type_get_extent(t, &lb, &ext));
    MT_CALL(MPI_Type_get_true_extent(t, &tlb, &text));
    if (sz != size || lb != 0 || ext != size || tlb != 0 || text != size)
        MT_FAIL("%s: size, lb, extent, true lb, true extent expected (%d, 0, %d, 0, %d) got "
                "(%d, %ld, %ld, %ld, %ld)", what, size, size, size, sz, (long)lb, (long)ext,
                (long)tlb, (long)text);
    if (mt_weft) {
        char nm[MPI_MAX_OBJECT_NAME] = "x";
        int len = -1;
        MT_CALL(MPI_Type_get_name(t, nm, &len));
        MT_TRUE(len == 0 && nm[0] == '\0', "%s: name expected \"\" got \"%s\" (%d)", what, nm, len);
    }
}

/* ---- concurrent creation ----------------------------------------------------------------------- */

static pthread_barrier_t bar;
static MPI_Datatype got[ROUNDS][NT][NK];

/* Round k's types: each new but the last, which the main thread made before. */
static void round_kind(int k, int j, int *combiner, int *p, int *r, int *size)
{
    static const int comb[NK] = { MPI_COMBINER_F90_REAL, MPI_COMBINER_F90_COMPLEX,
                                  MPI_COMBINER_F90_INTEGER, MPI_COMBINER_F90_REAL };
    *combiner = comb[j];
    *p = j == 3 ? 6 : U;
    *r = j == 0 ? 100 + k : j == 1 ? 200 + k : j == 2 ? k + 1 : U;
    *size = j == 0 ? 8 : j == 1 ? 16 : j == 2 ? int_size(k + 1) : 4;
}

static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    for (int k = 0; k < ROUNDS; k++) {
        pthread_barrier_wait(&bar);
        for (int j = 0; j < NK; j++) {
            int c, p, r, sz;
            round_kind(k, (j + id) % NK, &c, &p, &r, &sz);   /* threads start on different kinds */
            got[k][id][(j + id) % NK] = f90(c, p, r);
        }
        for (int j = 0; j < NK; j++) {   /* queries of the shared objects, concurrently */
            int c, p, r, sz;
            round_kind(k, j, &c, &p, &r, &sz);
            check_f90("a type made concurrently", got[k][id][j], c, p, r, sz);
        }
    }
    return NULL;
}

static void concurrent(void)
{
    pthread_t th[NT];
    MPI_Datatype before = f90(MPI_COMBINER_F90_REAL, 6, U);
    pthread_barrier_init(&bar, NULL, NT);
    for (int i = 0; i < NT; i++)
        MT_TRUE(pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i) == 0,
                "pthread_create expected 0");
    for (int i = 0; i < NT; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&bar);
    if (!mt_weft)
        return;
    for (int k = 0; k < ROUNDS; k++)
        for (int j = 0; j < NK; j++)
            for (int i = 1; i < NT; i++)
                if (got[k][i][j] != got[k][0][j])
                    MT_FAIL("round %d type %d: thread %d expected the handle of thread 0 (%#llx) "
                            "got %#llx", k, j, i, HANDLE(got[k][0][j]), HANDLE(got[k][i][j]));
    for (int k = 0; k < ROUNDS; k++)
        MT_TRUE(got[k][0][3] == before, "MPI_Type_create_f90_real(6, MPI_UNDEFINED) in threads: "
                "expected the main thread's handle");
}

/* ---- one process ------------------------------------------------------------------------------- */

typedef struct kind {
    int combiner, p, r, size;
} kind_t;

static const kind_t kinds[] = {
    { MPI_COMBINER_F90_REAL, 6, U, 4 },      { MPI_COMBINER_F90_REAL, U, 37, 4 },
    { MPI_COMBINER_F90_REAL, 6, 37, 4 },     { MPI_COMBINER_F90_REAL, 7, U, 8 },
    { MPI_COMBINER_F90_REAL, U, 38, 8 },     { MPI_COMBINER_F90_REAL, 15, 307, 8 },
    { MPI_COMBINER_F90_COMPLEX, 6, U, 8 },   { MPI_COMBINER_F90_COMPLEX, U, 37, 8 },
    { MPI_COMBINER_F90_COMPLEX, 15, U, 16 }, { MPI_COMBINER_F90_COMPLEX, 15, 307, 16 },
    { MPI_COMBINER_F90_INTEGER, U, 1, 1 },   { MPI_COMBINER_F90_INTEGER, U, 2, 1 },
    { MPI_COMBINER_F90_INTEGER, U, 3, 2 },   { MPI_COMBINER_F90_INTEGER, U, 4, 2 },
    { MPI_COMBINER_F90_INTEGER, U, 9, 4 },   { MPI_COMBINER_F90_INTEGER, U, 10, 8 },
    { MPI_COMBINER_F90_INTEGER, U, 18, 8 },
};
#define NKINDS (int)(sizeof kinds / sizeof kinds[0])

static void local_checks(void)
{
    MPI_Datatype t[NKINDS];
    char what[96];
    for (int i = 0; i < NKINDS; i++) {
        const kind_t *k = &kinds[i];
        t[i] = f90(k->combiner, k->p, k->r);
        snprintf(what, sizeof what, "kind %d (combiner %d, p %d, r %d)", i, k->combiner, k->p, k->r);
        check_f90(what, t[i], k->combiner, k->p, k->r, k->size);
    }
    /* each (combiner, p, r) is its own type: its envelope gives back its own arguments */
    for (int i = 0; i < NKINDS; i++)
        for (int j = 0; j < i; j++)
            MT_TRUE(t[i] != t[j], "kinds %d and %d expected different handles", i, j);
    if (mt_weft) {
        for (int i = 0; i < NKINDS; i++) {
            const kind_t *k = &kinds[i];
            MPI_Datatype again = f90(k->combiner, k->p, k->r);
            MT_TRUE(again == t[i], "kind %d made again: expected the same handle %#llx got %#llx",
                    i, HANDLE(t[i]), HANDLE(again));
        }
        MPI_Datatype m = MPI_DATATYPE_NULL;
        MT_CALL(MPI_Type_match_size(MPI_TYPECLASS_REAL, 4, &m));
        MT_TRUE(m == MPI_REAL4, "MPI_Type_match_size(REAL, 4) expected MPI_REAL4");
    }

    MPI_Datatype f = t[0];   /* real (6, MPI_UNDEFINED): 4 bytes */
    if (mt_weft) {
        MPI_Datatype x = f;
        int rc = MPI_Type_free(&x);
        MT_CLASS_EQ("MPI_Type_free of an F90 real", MPI_ERR_TYPE, rc);
        MT_TRUE(x == f, "MPI_Type_free that failed expected the handle unchanged");
        char msg[MPI_MAX_ERROR_STRING] = "";
        int len = 0;
        MT_CALL(MPI_Error_string(rc, msg, &len));
        MT_TRUE(strstr(msg, "MPI_Type_free") && strstr(msg, "MPI_Type_create_f90_real(6, MPI_UNDEFINED)"),
                "MPI_Type_free message expected to name the call and the type got \"%s\"", msg);
        x = t[16];
        MT_CLASS_EQ("MPI_Type_free of an F90 integer", MPI_ERR_TYPE, MPI_Type_free(&x));
        MT_CALL(MPI_Type_commit(&x));
        MT_TRUE(x == t[16], "MPI_Type_commit of an F90 type expected the handle unchanged");
        check_f90("F90 real after a refused free", f, MPI_COMBINER_F90_REAL, 6, U, 4);
    }

    /* dup: a derived type whose contents are the F90 handle itself */
    MPI_Datatype d, types[2];
    int ni, na, nd, comb, ints[2], sz;
    MPI_Aint addrs[1];
    MT_CALL(MPI_Type_dup(f, &d));
    MT_CALL(MPI_Type_get_envelope(d, &ni, &na, &nd, &comb));
    if (comb != MPI_COMBINER_DUP || ni != 0 || na != 0 || nd != 1)
        MT_FAIL("envelope of a dup expected (DUP, 0, 0, 1) got (%d, %d, %d, %d)", comb, ni, na, nd);
    MT_CALL(MPI_Type_get_contents(d, 0, 0, 2, ints, addrs, types));
    MT_TRUE(types[0] == f, "contents of the dup expected the F90 handle itself (predefined)");
    MT_CALL(MPI_Type_size(d, &sz));
    MT_EQ("size of the dup", 4, sz);
    MT_CALL(MPI_Type_free(&d));
    check_f90("F90 real after its dup was freed", f, MPI_COMBINER_F90_REAL, 6, U, 4);

    /* contiguous of an F90 type */
    MPI_Datatype c4;
    MT_CALL(MPI_Type_contiguous(4, t[5], &c4));   /* 4 x real (15, 307) */
    MT_CALL(MPI_Type_get_envelope(c4, &ni, &na, &nd, &comb));
    if (comb != MPI_COMBINER_CONTIGUOUS || ni != 1 || na != 0 || nd != 1)
        MT_FAIL("envelope of contiguous(4, F90) expected (CONTIGUOUS, 1, 0, 1) got (%d, %d, %d, %d)",
                comb, ni, na, nd);
    MT_CALL(MPI_Type_get_contents(c4, 1, 0, 1, ints, addrs, types));
    MT_TRUE(ints[0] == 4 && types[0] == t[5],
            "contents of contiguous(4, F90) expected (4, the F90 handle) got (%d, %s)", ints[0],
            types[0] == t[5] ? "it" : "another handle");
    MT_CALL(MPI_Type_size(c4, &sz));
    MT_EQ("size of contiguous(4, F90 real(15, 307))", 32, sz);
    MT_CALL(MPI_Type_free(&c4));

    /* reduction on one process, pack and unpack */
    double a[3] = { 1.5, -2, 4 }, b[3] = { 0.5, 3, -8 };
    MT_CALL(MPI_Reduce_local(a, b, 3, t[5], MPI_SUM));
    MT_TRUE(b[0] == 2 && b[1] == 1 && b[2] == -4, "MPI_Reduce_local SUM on F90 real(15, 307) "
            "expected (2, 1, -4) got (%g, %g, %g)", b[0], b[1], b[2]);
    float in[3] = { 1, 2, 3 }, out[3] = { 0 };
    char pk[64];
    int pos = 0;
    MT_CALL(MPI_Pack(in, 3, f, pk, sizeof pk, &pos, MPI_COMM_SELF));
    int pos2 = 0;
    MT_CALL(MPI_Unpack(pk, pos, &pos2, out, 3, f, MPI_COMM_SELF));
    MT_TRUE(pos2 == pos && out[0] == 1 && out[1] == 2 && out[2] == 3,
            "MPI_Pack / MPI_Unpack of 3 F90 reals expected (1, 2, 3) got (%g, %g, %g)", out[0],
            out[1], out[2]);
    MPI_Aint esz = -1;
    MT_CALL(MPI_Pack_external_size("external32", 3, f, &esz));
    MT_EQ("MPI_Pack_external_size of 3 F90 reals (p 6)", 12, esz);
    if (mt_weft) {
        int rc = MPI_Reduce_local(in, out, 3, f, MPI_BAND);
        MT_CLASS_EQ("MPI_Reduce_local BAND on an F90 real", MPI_ERR_OP, rc);
    }
}

/* ---- between ranks ----------------------------------------------------------------------------- */

#define N 1000
#define NBIG 100000   /* 400 KB of reals: past the eager limit */

static void p2p_checks(void)
{
    MPI_Datatype fr = f90(MPI_COMBINER_F90_REAL, 6, U), fd = f90(MPI_COMBINER_F90_REAL, 15, 307);
    MPI_Datatype fc = f90(MPI_COMBINER_F90_COMPLEX, 6, U), fi = f90(MPI_COMBINER_F90_INTEGER, U, 9);
    MPI_Datatype fl = f90(MPI_COMBINER_F90_INTEGER, U, 18);
    static float r4[NBIG];
    static double r8[N];
    static float complex c8[N];
    static int32_t i4[N];
    static int64_t i8[N];
    MPI_Status st;
    int cnt;
    if (mt_rank == 0) {
        for (int i = 0; i < NBIG; i++)
            r4[i] = (float)i * 0.25f - 7;
        for (int i = 0; i < N; i++) {
            r8[i] = i * 1e-3 + 1e100;
            c8[i] = (float)i + (float)-i * I;
            i4[i] = i * 1000003;
            i8[i] = (int64_t)i << 40 | 5;
        }
        MT_CALL(MPI_Send(r4, N, fr, 1, 1, MPI_COMM_WORLD));
        if (mt_weft)
            MT_CALL(MPI_Send(r4, N, fr, 1, 2, MPI_COMM_WORLD));
        MT_CALL(MPI_Send(r8, N, fd, 1, 3, MPI_COMM_WORLD));
        MT_CALL(MPI_Send(c8, N, fc, 1, 4, MPI_COMM_WORLD));
        MT_CALL(MPI_Send(i4, N, fi, 1, 5, MPI_COMM_WORLD));
        MT_CALL(MPI_Send(i8, N, fl, 1, 6, MPI_COMM_WORLD));
        MPI_Request rq;
        MT_CALL(MPI_Isend(r4, NBIG, fr, 1, 7, MPI_COMM_WORLD, &rq));
        MT_CALL(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        MPI_Datatype d;
        MT_CALL(MPI_Type_dup(fr, &d));
        MT_CALL(MPI_Type_commit(&d));
        MT_CALL(MPI_Send(r4, N, d, 1, 8, MPI_COMM_WORLD));
        MT_CALL(MPI_Type_free(&d));
    } else if (mt_rank == 1) {
        /* the same (p, r) on this rank: the type that matches */
        memset(r4, 0, sizeof r4);
        MT_CALL(MPI_Recv(r4, N, fr, 0, 1, MPI_COMM_WORLD, &st));
        for (int i = 0; i < N; i++)
            if (r4[i] != (float)i * 0.25f - 7)
                MT_FAIL("F90 real %d received expected %g got %g", i, (float)i * 0.25f - 7, r4[i]);
        MT_CALL(MPI_Get_count(&st, fr, &cnt));
        MT_EQ("MPI_Get_count of F90 reals", N, cnt);
        MT_CALL(MPI_Get_elements(&st, fr, &cnt));
        MT_EQ("MPI_Get_elements of F90 reals", N, cnt);
        if (mt_weft) {   /* received as MPI_REAL4: same bytes, not a type match by the standard */
            memset(r4, 0, sizeof r4);
            MT_CALL(MPI_Recv(r4, N, MPI_REAL4, 0, 2, MPI_COMM_WORLD, &st));
            for (int i = 0; i < N; i++)
                if (r4[i] != (float)i * 0.25f - 7)
                    MT_FAIL("F90 real %d received as MPI_REAL4 expected %g got %g", i,
                            (float)i * 0.25f - 7, r4[i]);
            MT_CALL(MPI_Get_count(&st, MPI_REAL4, &cnt));
            MT_EQ("MPI_Get_count (MPI_REAL4) of F90 reals", N, cnt);
        }
        MT_CALL(MPI_Recv(r8, N, fd, 0, 3, MPI_COMM_WORLD, &st));
        MT_CALL(MPI_Recv(c8, N, fc, 0, 4, MPI_COMM_WORLD, &st));
        MT_CALL(MPI_Recv(i4, N, fi, 0, 5, MPI_COMM_WORLD, &st));
        MT_CALL(MPI_Recv(i8, N, fl, 0, 6, MPI_COMM_WORLD, &st));
        for (int i = 0; i < N; i++) {
            MT_TRUE(r8[i] == i * 1e-3 + 1e100, "F90 real(15, 307) %d expected %g got %g", i,
                    i * 1e-3 + 1e100, r8[i]);
            MT_TRUE(c8[i] == (float)i + (float)-i * I, "F90 complex %d expected (%d, %d) got (%g, %g)",
                    i, i, -i, crealf(c8[i]), cimagf(c8[i]));
            MT_EQ("F90 integer(9) received", i * 1000003, i4[i]);
            MT_EQ("F90 integer(18) received", (int64_t)i << 40 | 5, i8[i]);
        }
        MPI_Request rq;
        memset(r4, 0, sizeof r4);
        MT_CALL(MPI_Irecv(r4, NBIG, fr, 0, 7, MPI_COMM_WORLD, &rq));
        MT_CALL(MPI_Wait(&rq, &st));
        for (int i = 0; i < NBIG; i++)
            if (r4[i] != (float)i * 0.25f - 7)
                MT_FAIL("F90 real %d of %d (Irecv) expected %g got %g", i, NBIG,
                        (float)i * 0.25f - 7, r4[i]);
        MT_CALL(MPI_Get_count(&st, fr, &cnt));
        MT_EQ("MPI_Get_count of the large Irecv", NBIG, cnt);
        memset(r4, 0, sizeof r4);
        MT_CALL(MPI_Recv(r4, N, fr, 0, 8, MPI_COMM_WORLD, &st));   /* sent through a dup */
        for (int i = 0; i < N; i++)
            if (r4[i] != (float)i * 0.25f - 7)
                MT_FAIL("F90 real %d sent through a dup expected %g got %g", i,
                        (float)i * 0.25f - 7, r4[i]);
    }

    /* reductions with predefined operations */
    int32_t si[N], ri[N];
    for (int i = 0; i < N; i++)
        si[i] = mt_rank * 1000 + i;
    MT_CALL(MPI_Allreduce(si, ri, N, fi, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < N; i++)
        MT_EQ("Allreduce SUM on F90 integer(9)", i * mt_size + 1000 * mt_size * (mt_size - 1) / 2,
              ri[i]);
    if (mt_weft) {   /* MPICH refuses predefined operations on any derived type */
        MPI_Datatype c4;
        MT_CALL(MPI_Type_contiguous(4, fi, &c4));
        MT_CALL(MPI_Type_commit(&c4));
        memset(ri, 0, sizeof ri);
        MT_CALL(MPI_Allreduce(si, ri, N / 4, c4, MPI_MAX, MPI_COMM_WORLD));
        for (int i = 0; i < N; i++)
            MT_EQ("Allreduce MAX on contiguous(4, F90 integer(9))", (mt_size - 1) * 1000 + i, ri[i]);
        MT_CALL(MPI_Type_free(&c4));
    }
    float sf[N], rf[N];
    for (int i = 0; i < N; i++)
        sf[i] = (float)(mt_rank + 1) * (float)i;
    MT_CALL(MPI_Allreduce(sf, rf, N, fr, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < N; i++)
        MT_TRUE(rf[i] == (float)(mt_size * (mt_size + 1) / 2) * (float)i,
                "Allreduce SUM on F90 real %d expected %g got %g", i,
                (float)(mt_size * (mt_size + 1) / 2) * (float)i, rf[i]);
    float complex sc[N], rc[N];
    for (int i = 0; i < N; i++)
        sc[i] = (float)i + (float)mt_rank * I;
    MT_CALL(MPI_Allreduce(sc, rc, N, fc, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < N; i++)
        MT_TRUE(rc[i] == (float)(i * mt_size) + (float)(mt_size * (mt_size - 1) / 2) * I,
                "Allreduce SUM on F90 complex %d expected (%d, %d) got (%g, %g)", i, i * mt_size,
                mt_size * (mt_size - 1) / 2, crealf(rc[i]), cimagf(rc[i]));
}

int main(int argc, char **argv)
{
    mt_init_args(argc, argv, 0);
    int provided = MPI_THREAD_SINGLE;
    MT_CALL(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    MT_CALL(MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank));
    MT_CALL(MPI_Comm_size(MPI_COMM_WORLD, &mt_size));
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    if (provided == MPI_THREAD_MULTIPLE)
        concurrent();
    else if (mt_rank == 0)
        printf("dtype_f90: thread level %d, concurrent part skipped\n", provided);
    local_checks();
    if (mt_size >= 2)
        p2p_checks();
    return mt_finish("dtype_f90");
}
