/* Object lifetime (src/mpi/wm_object.c): handle validation, the collector against requests that
 * name objects, structural references between objects, predefined objects, and the same under
 * threads. Built both ways: the default garbage collector and -DWEFT_OBJ_REFCOUNT=ON. */
#include "mpi/wm_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "test_check.h"

typedef struct test_obj {
    wm_obj_t obj;
    struct test_obj *base;    /* structural reference, or NULL */
    int payload;
} test_obj_t;

static _Atomic long destroyed;

static void test_destroy(wm_obj_t *o)
{
    test_obj_t *t = (test_obj_t *)o;
    if (t->payload != 42)
        abort();              /* destroyed twice, or contents clobbered while alive */
    t->payload = -1;
    if (t->base)
        wm_obj_release(&t->base->obj);
    atomic_fetch_add(&destroyed, 1);
}

static test_obj_t *make(wm_obj_kind_t kind, test_obj_t *base)
{
    test_obj_t *t = wm_obj_create(kind, sizeof(*t), test_destroy);
    CHECK(t, "wm_obj_create failed");
    t->payload = 42;
    if (base) {
        wm_obj_retain(&base->obj);
        t->base = base;
    }
    return t;
}

static void stats(size_t *live, size_t *eligible)
{
    wm_obj_stats(live, eligible);
}

static void test_handles(void)
{
    test_obj_t *a = make(WM_OBJ_COMM, NULL);
    uintptr_t h = a->obj.handle;
    CHECK(wm_obj_lookup(h, WM_OBJ_COMM) == &a->obj, "live handle not found");
    CHECK(!wm_obj_lookup(h, WM_OBJ_TYPE), "a communicator handle passed as a datatype was accepted");
    CHECK(!wm_obj_lookup(0x12345678, WM_OBJ_COMM), "a garbage handle was accepted");
    CHECK(!wm_obj_lookup(wm_obj_arena_base - WM_OBJ_SLOT, WM_OBJ_COMM), "a handle below the arena was accepted");
    CHECK(!wm_obj_lookup(h ^ 1, WM_OBJ_COMM), "a handle with the wrong generation was accepted");
    wm_obj_user_free(&a->obj);
    CHECK(!wm_obj_lookup(h, WM_OBJ_COMM), "a freed handle was accepted");
    wm_gc_collect();
    size_t live, eligible;
    stats(&live, &eligible);
    CHECK(live == 0 && eligible == 0, "after free: live %zu eligible %zu", live, eligible);
    /* the slot is reused by a later object with a new generation: the old handle stays invalid */
    long before = atomic_load(&destroyed);
    for (int i = 0; i < 4; i++) {
        test_obj_t *b = make(WM_OBJ_COMM, NULL);
        CHECK(!wm_obj_lookup(h, WM_OBJ_COMM) || b->obj.handle == h,
              "stale handle resolves to a newer object");
        CHECK(b->obj.handle != h, "slot reused with the same generation");
        wm_obj_user_free(&b->obj);
    }
    wm_gc_collect();
    CHECK(atomic_load(&destroyed) == before + 4, "destroyed %ld, expected %ld",
          atomic_load(&destroyed), before + 4);
}

/* The premature release of the paper: the user frees an object a pending request uses. */
static void test_premature_release(void)
{
    long before = atomic_load(&destroyed);
    test_obj_t *comm = make(WM_OBJ_COMM, NULL);
    test_obj_t *type = make(WM_OBJ_TYPE, NULL);
    wm_request_t *r = wm_request_alloc();
    CHECK(r, "wm_request_alloc failed");
    wm_request_use(r, WM_REQ_OBJ_COMM, &comm->obj);
    wm_request_use(r, WM_REQ_OBJ_TYPE, &type->obj);
    wm_obj_user_free(&comm->obj);
    wm_obj_user_free(&type->obj);
    /* a creation runs a cycle: both are still named by r */
    test_obj_t *other = make(WM_OBJ_GROUP, NULL);
    wm_gc_collect();
    size_t live, eligible;
    stats(&live, &eligible);
    CHECK(atomic_load(&destroyed) == before, "an object named by a pending request was freed");
    CHECK(comm->payload == 42 && type->payload == 42, "contents of a pending request's objects changed");
#ifndef WEFT_OBJ_REFCOUNT
    CHECK(eligible == 2, "eligible %zu, expected 2", eligible);
#endif
    wm_request_release(r);
#ifdef WEFT_OBJ_REFCOUNT
    CHECK(atomic_load(&destroyed) == before + 2, "refcount build: release of the request freed %ld",
          atomic_load(&destroyed) - before);
#else
    CHECK(atomic_load(&destroyed) == before, "freed before a cycle ran");
    wm_obj_user_free(&other->obj);
    other = make(WM_OBJ_GROUP, NULL);      /* the cycle of this creation frees comm, type, other */
    CHECK(atomic_load(&destroyed) == before + 3, "cycle freed %ld, expected 3",
          atomic_load(&destroyed) - before);
#endif
    wm_obj_user_free(&other->obj);
    wm_gc_collect();
    stats(&live, &eligible);
    CHECK(live == 0 && eligible == 0, "at the end: live %zu eligible %zu", live, eligible);
}

/* A chain of derived objects: freeing the user handles in any order frees everything exactly once,
 * and never an object another one is built from while that one lives. */
static void test_structural(void)
{
    long before = atomic_load(&destroyed);
    test_obj_t *base = make(WM_OBJ_TYPE, NULL);
    test_obj_t *mid = make(WM_OBJ_TYPE, base);
    test_obj_t *top = make(WM_OBJ_TYPE, mid);
    wm_obj_user_free(&base->obj);
    wm_obj_user_free(&mid->obj);
    wm_gc_collect();
    CHECK(atomic_load(&destroyed) == before, "an object still used by a live one was freed");
    CHECK(base->payload == 42 && mid->payload == 42, "base objects clobbered");
    wm_request_t *r = wm_request_alloc();
    wm_request_use(r, WM_REQ_OBJ_TYPE, &top->obj);
    wm_obj_user_free(&top->obj);
    wm_gc_collect();
    CHECK(atomic_load(&destroyed) == before, "the chain went while a request names its top");
    wm_request_release(r);
    wm_gc_collect();
    CHECK(atomic_load(&destroyed) == before + 3, "chain: freed %ld of 3",
          atomic_load(&destroyed) - before);
}

static void test_predefined(void)
{
    static test_obj_t pre;
    wm_obj_init_predefined(&pre.obj, WM_OBJ_OP, 0x20, test_destroy);
    pre.payload = 42;
    wm_obj_retain(&pre.obj);
    wm_obj_release(&pre.obj);
    wm_obj_release(&pre.obj);
    wm_obj_user_free(&pre.obj);
    CHECK(atomic_load(&pre.obj.refs) == 1, "a predefined object's count changed to %d",
          atomic_load(&pre.obj.refs));
    wm_request_t *r = wm_request_alloc();
    wm_request_use(r, WM_REQ_OBJ_OP, &pre.obj);
    CHECK(atomic_load(&r->objs[WM_REQ_OBJ_OP]) == NULL, "a request named a predefined object");
    wm_request_release(r);
    wm_gc_collect();
    CHECK(pre.payload == 42, "a predefined object was destroyed");
}

/* Threads create objects, start requests on them, free the handles while the requests are pending,
 * and release the requests later; creations run cycles concurrently. Nothing named by a pending
 * request may be destroyed, and in the end everything is destroyed exactly once. */
#define NTHREADS 8
#define ROUNDS   3000
#define INFLIGHT 6

static void *worker(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    wm_request_t *reqs[INFLIGHT] = { 0 };
    test_obj_t *objs[INFLIGHT] = { 0 };
    for (int i = 0; i < ROUNDS; i++) {
        int k = (int)(rand_r(&seed) % INFLIGHT);
        if (reqs[k]) {
            CHECK(objs[k]->payload == 42, "an object named by a pending request was destroyed");
            wm_request_release(reqs[k]);
            reqs[k] = NULL;
        }
        test_obj_t *base = make(WM_OBJ_TYPE, NULL);
        objs[k] = make(WM_OBJ_TYPE, base);
        wm_obj_user_free(&base->obj);
        reqs[k] = wm_request_alloc();
        CHECK(reqs[k], "wm_request_alloc failed");
        wm_request_use(reqs[k], WM_REQ_OBJ_TYPE, &objs[k]->obj);
        wm_obj_user_free(&objs[k]->obj);
    }
    for (int k = 0; k < INFLIGHT; k++)
        if (reqs[k]) {
            CHECK(objs[k]->payload == 42, "an object named by a pending request was destroyed");
            wm_request_release(reqs[k]);
        }
    return NULL;
}

static void test_threads(void)
{
    long before = atomic_load(&destroyed);
    pthread_t t[NTHREADS];
    for (int i = 0; i < NTHREADS; i++)
        CHECK(pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1)) == 0, "pthread_create");
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(t[i], NULL);
    wm_gc_collect();
    size_t live, eligible;
    stats(&live, &eligible);
    CHECK(live == 0 && eligible == 0, "threads: live %zu eligible %zu", live, eligible);
    long expect = (long)NTHREADS * ROUNDS * 2;
    CHECK(atomic_load(&destroyed) - before == expect, "threads: destroyed %ld, expected %ld",
          atomic_load(&destroyed) - before, expect);
}

int main(void)
{
    /* the threads' requests and the collector meet only through locks and atomics: turn the lock
     * gate on as MPI_THREAD_MULTIPLE does */
    wt_thread_set_multi(true);
    test_handles();
    test_premature_release();
    test_structural();
    test_predefined();
    test_threads();
    printf("test_obj_gc: ok (%s)\n",
#ifdef WEFT_OBJ_REFCOUNT
           "atomic reference counts"
#else
           "garbage collection"
#endif
    );
    return 0;
}
