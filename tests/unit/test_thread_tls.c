/* Thread-specific data: values are per thread, the destructor runs at the exit of each thread that
 * set a non-NULL value, with that value; WT_LOCAL objects are per thread (zeroed at first use), and
 * so are WT_TLS variables where threads are kernel threads (under a user-level-thread backend,
 * WT_BACKEND_ULT, WT_TLS is per OS thread by contract, shared by the threads it runs). */
#include "thread/wt_thread.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define NTHREADS 6

#include "test_check.h"

static void watchdog(int sig)
{
    static const char msg[] = "test_thread_tls: watchdog fired\n";
    ssize_t w = write(2, msg, sizeof(msg) - 1);
    (void)w;
    _exit(2);
}

static wt_tls_key_t key;
static int slots[NTHREADS];        /* destructor calls per thread; atomics */
static int destructor_calls;
static WT_TLS int tls_var;
WT_LOCAL(static, int, local_var);

static void destructor(void *v)
{
    int *slot = v;
    __atomic_fetch_add(slot, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&destructor_calls, 1, __ATOMIC_RELAXED);
}

static const char *check(long i)
{
    if (wt_tls_get(key) != NULL)
        return "fresh thread: value expected NULL";
    int *lv = WT_LOCAL_PTR(int, local_var);
    if (*lv != 0)
        return "fresh thread: WT_LOCAL object expected 0";
    *lv = (int)i + 200;
    if (!WT_BACKEND_ULT && tls_var != 0)
        return "fresh thread: WT_TLS variable expected 0";
    tls_var = (int)i + 100;
    if (i % 2 == 0) {   /* odd threads leave NULL: no destructor call for them */
        if (wt_tls_set(key, &slots[i]) != WU_OK)
            return "wt_tls_set failed";
        if (wt_tls_get(key) != &slots[i])
            return "value read back differs from value set";
    }
    wt_thread_yield();
    if (!WT_BACKEND_ULT && tls_var != (int)i + 100)
        return "WT_TLS variable changed by another thread";
    if (*WT_LOCAL_PTR(int, local_var) != (int)i + 200 || WT_LOCAL_PTR(int, local_var) != lv)
        return "WT_LOCAL object changed by another thread";
    return NULL;
}

static const char *errors[NTHREADS];   /* written by thread i, read after the join */

static void *body(void *arg)
{
    long i = (long)arg;
    errors[i] = check(i);
    return NULL;
}

int main(void)
{
    signal(SIGALRM, watchdog);
    alarm(20);
    CHECK(wt_tls_key_create(&key, destructor) == WU_OK, "wt_tls_key_create failed");

    int main_slot = 0;
    CHECK(wt_tls_set(key, &main_slot) == WU_OK, "wt_tls_set failed in main");

    wt_thread_t t[NTHREADS];
    for (long i = 0; i < NTHREADS; i++)
        CHECK(wt_thread_create(&t[i], body, (void *)i) == WU_OK, "thread %ld not created", i);
    for (int i = 0; i < NTHREADS; i++) {
        CHECK(wt_thread_join(t[i]) == WU_OK, "thread %d not joined", i);
        CHECK(errors[i] == NULL, "thread %d: %s", i, errors[i]);
    }
    for (int i = 0; i < NTHREADS; i++) {
        int expected = i % 2 == 0;
        CHECK(slots[i] == expected, "thread %d: destructor calls expected %d, got %d", i, expected,
              slots[i]);
    }
    CHECK(destructor_calls == (NTHREADS + 1) / 2, "destructor calls expected %d, got %d",
          (NTHREADS + 1) / 2, destructor_calls);
    CHECK(wt_tls_get(key) == &main_slot, "main: value expected %p, got %p", (void *)&main_slot,
          wt_tls_get(key));
    CHECK(main_slot == 0, "main: destructor expected not called, got %d calls", main_slot);
    if (!WT_BACKEND_ULT)
        CHECK(tls_var == 0, "main: WT_TLS variable expected 0, got %d", tls_var);
    CHECK(*WT_LOCAL_PTR(int, local_var) == 0, "main: WT_LOCAL object expected 0, got %d",
          *WT_LOCAL_PTR(int, local_var));

    wt_tls_set(key, NULL);
    wt_tls_key_delete(key);
    printf("test_thread_tls: ok (%d destructor calls for %d threads)\n", destructor_calls, NTHREADS);
    return 0;
}
