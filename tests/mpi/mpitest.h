/* Shared helpers of the MPI test programs (tests/mpi). Header-only: every program is one .c file.
 *
 * A program checks everything itself and exits 0 on success. A failed check prints
 *     rank R: <what> expected X got Y (file:line)
 * on stderr and calls MPI_Abort(MPI_COMM_WORLD, 1), so one bad rank fails the whole job at once.
 *
 * Only standard MPI is used, so each program also runs under another implementation (MPICH) for
 * validation. Checks that hold for Weft but are implementation-defined in the standard run only
 * when the program is given the argument --weft (mt_weft). */
#ifndef WEFT_TESTS_MPITEST_H
#define WEFT_TESTS_MPITEST_H

#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static __attribute__((unused)) int mt_rank = -1;  /* set by mt_init; -1 before MPI_Init */
static __attribute__((unused)) int mt_size = 0;
static __attribute__((unused)) int mt_weft = 0;   /* --weft given: also check Weft's implementation-defined choices */

/* Ends the job: MPI_Abort while MPI is initialized, plain exit before MPI_Init and after MPI_Finalize. */
static inline void mt_abort(void)
{
    int ini = 0, fin = 0;
    MPI_Initialized(&ini);
    MPI_Finalized(&fin);
    if (ini && !fin)
        MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

#define MT_FAIL(...)                                                                               \
    do {                                                                                           \
        fprintf(stderr, "rank %d: ", mt_rank);                                                     \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fprintf(stderr, " (%s:%d)\n", __FILE__, __LINE__);                                         \
        fflush(stderr);                                                                            \
        mt_abort();                                                                                \
    } while (0)

/* Integer equality: "what expected E got G". */
#define MT_EQ(what, expected, got)                                                                 \
    do {                                                                                           \
        long long e_ = (long long)(expected), g_ = (long long)(got);                               \
        if (e_ != g_)                                                                              \
            MT_FAIL("%s expected %lld got %lld", (what), e_, g_);                                  \
    } while (0)

/* A condition with its own description of what was expected. */
#define MT_TRUE(cond, ...)                                                                         \
    do {                                                                                           \
        if (!(cond))                                                                               \
            MT_FAIL(__VA_ARGS__);                                                                  \
    } while (0)

static inline const char *mt_class_name(int cls)
{
    switch (cls) {
#define MT_CLASS(c) case c: return #c;
    MT_CLASS(MPI_SUCCESS) MT_CLASS(MPI_ERR_BUFFER) MT_CLASS(MPI_ERR_COUNT) MT_CLASS(MPI_ERR_TYPE)
    MT_CLASS(MPI_ERR_TAG) MT_CLASS(MPI_ERR_COMM) MT_CLASS(MPI_ERR_RANK) MT_CLASS(MPI_ERR_REQUEST)
    MT_CLASS(MPI_ERR_ROOT) MT_CLASS(MPI_ERR_GROUP) MT_CLASS(MPI_ERR_OP) MT_CLASS(MPI_ERR_TOPOLOGY)
    MT_CLASS(MPI_ERR_DIMS) MT_CLASS(MPI_ERR_ARG) MT_CLASS(MPI_ERR_UNKNOWN)
    MT_CLASS(MPI_ERR_TRUNCATE) MT_CLASS(MPI_ERR_OTHER) MT_CLASS(MPI_ERR_INTERN)
    MT_CLASS(MPI_ERR_PENDING) MT_CLASS(MPI_ERR_IN_STATUS) MT_CLASS(MPI_ERR_WIN)
    MT_CLASS(MPI_ERR_UNSUPPORTED_OPERATION) MT_CLASS(MPI_ERR_NO_MEM)
#undef MT_CLASS
    default: return "(another class)";
    }
}

/* The class of an error code, with a check that MPI_Error_class itself succeeds. */
static inline int mt_class(int code)
{
    int cls = -1;
    int rc = MPI_Error_class(code, &cls);
    if (rc != MPI_SUCCESS)
        MT_FAIL("MPI_Error_class(%d) expected MPI_SUCCESS got %d", code, rc);
    return cls;
}

/* Calls that must succeed. Under MPI_ERRORS_RETURN a failure shows its class and message. */
#define MT_CALL(call)                                                                              \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != MPI_SUCCESS) {                                                                  \
            char msg_[MPI_MAX_ERROR_STRING] = "";                                                  \
            int len_ = 0;                                                                          \
            MPI_Error_string(rc_, msg_, &len_);                                                    \
            MT_FAIL("%s expected MPI_SUCCESS got %s: %s", #call, mt_class_name(mt_class(rc_)),     \
                    msg_);                                                                         \
        }                                                                                          \
    } while (0)

/* An error code whose class must be `cls` (MPI_SUCCESS allowed). */
#define MT_CLASS_EQ(what, cls, code)                                                               \
    do {                                                                                           \
        int c_ = mt_class(code);                                                                   \
        if (c_ != (cls))                                                                           \
            MT_FAIL("%s expected %s got %s (code %d)", (what), mt_class_name(cls),                 \
                    mt_class_name(c_), (int)(code));                                               \
    } while (0)

/* Reads "--weft" anywhere in argv; returns the first other argument as a number, or dflt. */
static inline long mt_init_args(int argc, char **argv, long dflt)
{
    long n = dflt;
    int seen = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--weft") == 0)
            mt_weft = 1;
        else if (!seen) {
            n = strtol(argv[i], NULL, 0);
            seen = 1;
        }
    }
    return n;
}

static inline void mt_init(int *argc, char ***argv)
{
    MT_CALL(MPI_Init(argc, argv));
    MT_CALL(MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank));
    MT_CALL(MPI_Comm_size(MPI_COMM_WORLD, &mt_size));
}

/* Finalizes and prints one line from rank 0, so a passing log shows what ran. */
static inline int mt_finish(const char *name)
{
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (mt_rank == 0)
        printf("%s: %d ranks ok\n", name, mt_size);
    MT_CALL(MPI_Finalize());
    return 0;
}

/* Byte j of a message identified by `seed`: depends on both, so a shifted or swapped payload fails. */
static inline uint8_t mt_byte(uint64_t seed, size_t j)
{
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + (uint64_t)j * 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    return (uint8_t)(x ^ (x >> 11) ^ (j >> 8));
}

static inline void mt_fill(void *buf, size_t n, uint64_t seed)
{
    uint8_t *p = buf;
    for (size_t j = 0; j < n; j++)
        p[j] = mt_byte(seed, j);
}

/* Checks n bytes against the pattern of `seed`; names the first mismatch. */
static inline void mt_verify_at(const void *buf, size_t n, uint64_t seed, const char *what, const char *file,
                         int line)
{
    const uint8_t *p = buf;
    for (size_t j = 0; j < n; j++) {
        if (p[j] != mt_byte(seed, j)) {
            fprintf(stderr, "rank %d: %s byte %zu of %zu expected %u got %u (%s:%d)\n", mt_rank, what, j,
                    n, mt_byte(seed, j), p[j], file, line);
            fflush(stderr);
            mt_abort();
        }
    }
}
#define mt_verify(buf, n, seed, what) mt_verify_at((buf), (n), (seed), (what), __FILE__, __LINE__)

/* Checks that n bytes all equal v (guard zones, untouched buffers). */
static inline void mt_verify_const_at(const void *buf, size_t n, uint8_t v, const char *what, const char *file,
                               int line)
{
    const uint8_t *p = buf;
    for (size_t j = 0; j < n; j++) {
        if (p[j] != v) {
            fprintf(stderr, "rank %d: %s byte %zu of %zu expected %u got %u (%s:%d)\n", mt_rank, what, j,
                    n, v, p[j], file, line);
            fflush(stderr);
            mt_abort();
        }
    }
}
#define mt_verify_const(buf, n, v, what) mt_verify_const_at((buf), (n), (v), (what), __FILE__, __LINE__)

static inline void *mt_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        MT_FAIL("malloc(%zu) expected memory got NULL", n);
    return p;
}

/* Nodes as the tests see them, from outside the library: two world ranks share a node when their
 * MPI_Get_processor_name agree (each fake host of tests/net has its own host name; one machine is
 * one node). mt_nodes_init is collective over MPI_COMM_WORLD: call it once on every rank, after
 * MPI_Init and before any thread uses mt_same_node; afterwards the table is read-only. */
static __attribute__((unused)) int *mt_node;   /* mt_node[r]: the lowest world rank on r's node */

static inline void mt_nodes_init(void)
{
    char me[MPI_MAX_PROCESSOR_NAME];
    int len = 0;
    memset(me, 0, sizeof(me));
    MT_CALL(MPI_Get_processor_name(me, &len));
    char *all = mt_malloc((size_t)mt_size * MPI_MAX_PROCESSOR_NAME);
    MT_CALL(MPI_Allgather(me, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                          MPI_COMM_WORLD));
    mt_node = mt_malloc(sizeof(int) * (size_t)mt_size);
    for (int r = 0; r < mt_size; r++) {
        mt_node[r] = r;
        for (int q = 0; q < r; q++)
            if (!strncmp(all + (size_t)q * MPI_MAX_PROCESSOR_NAME, all + (size_t)r * MPI_MAX_PROCESSOR_NAME,
                         MPI_MAX_PROCESSOR_NAME)) {
                mt_node[r] = mt_node[q];
                break;
            }
    }
    free(all);
}

/* World ranks a and b run on one node (mt_nodes_init first). */
static inline int mt_same_node(int a, int b)
{
    return mt_node[a] == mt_node[b];
}

/* Every rank of MPI_COMM_WORLD runs on one node (mt_nodes_init first). */
static inline int mt_one_node(void)
{
    for (int r = 0; r < mt_size; r++)
        if (mt_node[r] != 0)
            return 0;
    return 1;
}

static inline void mt_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Checks the fields of a received status. count is in bytes (MPI_BYTE). */
#define MT_STATUS(what, st, src, tag, nbytes)                                                      \
    do {                                                                                           \
        int cnt_ = -1;                                                                             \
        MT_CALL(MPI_Get_count(&(st), MPI_BYTE, &cnt_));                                            \
        if ((st).MPI_SOURCE != (src) || (st).MPI_TAG != (tag) || cnt_ != (int)(nbytes))            \
            MT_FAIL("%s status expected (source %d, tag %d, count %d) got (%d, %d, %d)", (what),  \
                    (int)(src), (int)(tag), (int)(nbytes), (st).MPI_SOURCE, (st).MPI_TAG, cnt_);  \
    } while (0)

/* The status of MPI_PROC_NULL communication, and of waiting on an inactive/null request. */
#define MT_STATUS_PROC_NULL(what, st) MT_STATUS(what, st, MPI_PROC_NULL, MPI_ANY_TAG, 0)
#define MT_STATUS_EMPTY(what, st) MT_STATUS(what, st, MPI_ANY_SOURCE, MPI_ANY_TAG, 0)

#endif
