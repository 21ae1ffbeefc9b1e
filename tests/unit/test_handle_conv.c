/* The message handles' integer table (wm_handle_conv.c), under threads: NTHREADS threads each
 * convert their own handles (fake, never dereferenced), check the round trip and that converting
 * again gives the same integer, then free them, while reader threads convert integers back with no
 * lock. Afterwards every integer handed out was unique among live handles, and freed integers are
 * reused. Also: the arithmetic kinds need no table (a predefined handle is its ABI value). */
#include "mpi/wm_handle_conv.h"

#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define NTHREADS 4
#define NHANDLES 4000
#define ROUNDS   3

#include "test_check.h"

static int ints[NTHREADS][NHANDLES];
static atomic_int writers_done;

static MPI_Message fake(int t, int k)
{
    return (MPI_Message)(uintptr_t)(0x100000 + ((uintptr_t)t * NHANDLES + (uintptr_t)k) * 16);
}

static void *writer(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int round = 0; round < ROUNDS; round++) {
        for (int k = 0; k < NHANDLES; k++) {
            MPI_Message m = fake(t, k);
            int i = MPI_Message_toint(m);
            CHECK(i >= 0x4000, "thread %d: integer %d of a user message is below 0x4000", t, i);
            CHECK(MPI_Message_fromint(i) == m, "thread %d: fromint(%d) is not the message", t, i);
            CHECK(MPI_Message_c2f(m) == i, "thread %d: c2f differs from toint", t);
            ints[t][k] = i;
        }
        for (int k = 0; k < NHANDLES; k++)
            CHECK(MPI_Message_toint(fake(t, k)) == ints[t][k], "thread %d: integer changed", t);
        if (round + 1 < ROUNDS) {
            for (int k = 0; k < NHANDLES; k++) {
                wm_handle_conv_forget_message(fake(t, k));
                CHECK(MPI_Message_fromint(ints[t][k]) != fake(t, k),
                      "thread %d: a forgotten message still converts", t);
            }
        }
    }
    atomic_fetch_add(&writers_done, 1);
    return NULL;
}

/* Converts integers back while writers work: each answer is the null handle or one of the fake
 * handles (never garbage). */
static void *reader(void *arg)
{
    (void)arg;
    unsigned x = 12345;
    while (atomic_load(&writers_done) < NTHREADS) {
        x = x * 1103515245u + 12345u;
        int i = 0x4000 + (int)(x % (NTHREADS * NHANDLES + 64));
        uintptr_t h = (uintptr_t)MPI_Message_fromint(i);
        CHECK(h == (uintptr_t)MPI_MESSAGE_NULL ||
              (h >= 0x100000 && h < 0x100000 + (uintptr_t)NTHREADS * NHANDLES * 16 && h % 16 == 0),
              "fromint(%d) gave %#lx, neither null nor a handle given", i, (unsigned long)h);
    }
    return NULL;
}

static int cmp_int(const void *a, const void *b)
{
    return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

int main(void)
{
    CHECK(MPI_Comm_toint(MPI_COMM_WORLD) == 0x101, "MPI_COMM_WORLD's integer");
    CHECK(MPI_Type_fromint(MPI_Type_toint(MPI_INT)) == MPI_INT, "MPI_INT's round trip");
    CHECK(MPI_Message_toint(MPI_MESSAGE_NO_PROC) == (int)(intptr_t)MPI_MESSAGE_NO_PROC,
          "MPI_MESSAGE_NO_PROC's integer");

    pthread_t w[NTHREADS], r[2];
    for (int t = 0; t < 2; t++)
        CHECK(pthread_create(&r[t], NULL, reader, NULL) == 0, "pthread_create");
    for (int t = 0; t < NTHREADS; t++)
        CHECK(pthread_create(&w[t], NULL, writer, (void *)(intptr_t)t) == 0, "pthread_create");
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(w[t], NULL);
    for (int t = 0; t < 2; t++)
        pthread_join(r[t], NULL);

    static int all[NTHREADS * NHANDLES];
    for (int t = 0; t < NTHREADS; t++)
        for (int k = 0; k < NHANDLES; k++)
            all[t * NHANDLES + k] = ints[t][k];
    qsort(all, NTHREADS * NHANDLES, sizeof(int), cmp_int);
    for (int k = 1; k < NTHREADS * NHANDLES; k++)
        CHECK(all[k] != all[k - 1], "integer %d given to two live messages", all[k]);
    /* freed integers were reused: the live ones fit in the first slots plus what a round's
     * interleaving left free */
    CHECK(all[NTHREADS * NHANDLES - 1] < 0x4000 + 2 * NTHREADS * NHANDLES,
          "integers up to %d for %d live messages: freed ones are not reused",
          all[NTHREADS * NHANDLES - 1], NTHREADS * NHANDLES);
    for (int t = 0; t < NTHREADS; t++)
        for (int k = 0; k < NHANDLES; k++)
            wm_handle_conv_forget_message(fake(t, k));
    CHECK(MPI_Message_fromint(all[0]) == MPI_MESSAGE_NULL, "a forgotten integer still converts");
    printf("handle_conv: ok\n");
    return 0;
}
