/* The run-time-selected threading backend (wt_thread_runtime.h): a constructor reads WEFT_THREADS
 * (pthreads, the default, or pth) before main and fills the two tables, wt_hot (the inline callers'
 * hot path) and wt_mgmt (the out-of-line calls below). wt_thread_pthreads.c and wt_thread_pth.c are
 * compiled into the same library with the prefixes wtb_pthreads_ and wtb_pth_
 * (wt_thread_rename.h).
 *
 * Concurrency contract: both tables are written once, by the constructor, before any thread other
 * than the first exists, and only read afterwards. */
#include "thread/wt_thread.h"
#include "util/wu_log.h"

#include <stdlib.h>
#include <string.h>

bool wt_thread_multi;

void wt_thread_set_multi(bool on)
{
    __atomic_store_n(&wt_thread_multi, on, __ATOMIC_RELAXED);
}

/* The backends' out-of-line functions, as renamed by wt_thread_rename.h. */
#define WT_DECLARE_BACKEND(b)                                                                      \
    wu_status_t wtb_##b##_mutex_init(wt_mutex_t *m);                                               \
    void wtb_##b##_mutex_destroy(wt_mutex_t *m);                                                   \
    void wtb_##b##_spin_init(wt_spinlock_t *s);                                                    \
    void wtb_##b##_spin_lock_slow(wt_spinlock_t *s);                                               \
    wu_status_t wtb_##b##_cond_init(wt_cond_t *c);                                                 \
    void wtb_##b##_cond_destroy(wt_cond_t *c);                                                     \
    void wtb_##b##_cond_wait(wt_cond_t *c, wt_mutex_t *m);                                         \
    void wtb_##b##_cond_signal(wt_cond_t *c);                                                      \
    void wtb_##b##_cond_broadcast(wt_cond_t *c);                                                   \
    wu_status_t wtb_##b##_thread_create(wt_thread_t *t, wt_thread_fn_t fn, void *arg);             \
    wu_status_t wtb_##b##_thread_join(wt_thread_t t);                                              \
    wt_thread_t wtb_##b##_thread_self(void);                                                       \
    bool wtb_##b##_thread_equal(wt_thread_t a, wt_thread_t b);                                     \
    void wtb_##b##_thread_yield(void);                                                             \
    wu_status_t wtb_##b##_tls_key_create(wt_tls_key_t *k, void (*destructor)(void *));             \
    void wtb_##b##_tls_key_delete(wt_tls_key_t k);                                                 \
    void wtb_##b##_wait_init(wt_wait_t *w);                                                        \
    void wtb_##b##_wait_destroy(wt_wait_t *w);                                                     \
    wu_status_t wtb_##b##_wait_block(wt_wait_t *w, uint64_t timeout_ns);                           \
    void wtb_##b##_wait_wake_slow(wt_wait_t *w);                                                   \
    void wtb_##b##_word_wait(uint32_t *word, uint32_t val, uint64_t rel_ns);                       \
    void wtb_##b##_word_wait_until(uint32_t *word, uint32_t val, uint64_t abs_ns);                 \
    void wtb_##b##_word_wake_all(uint32_t *word);
WT_DECLARE_BACKEND(pthreads)
WT_DECLARE_BACKEND(pth)
void wt_pth_boot(void);

typedef struct wt_mgmt_ops {
    wu_status_t (*mutex_init)(wt_mutex_t *m);
    void (*mutex_destroy)(wt_mutex_t *m);
    void (*spin_init)(wt_spinlock_t *s);
    wu_status_t (*cond_init)(wt_cond_t *c);
    void (*cond_destroy)(wt_cond_t *c);
    void (*cond_wait)(wt_cond_t *c, wt_mutex_t *m);
    void (*cond_signal)(wt_cond_t *c);
    void (*cond_broadcast)(wt_cond_t *c);
    wu_status_t (*thread_create)(wt_thread_t *t, wt_thread_fn_t fn, void *arg);
    wu_status_t (*thread_join)(wt_thread_t t);
    wt_thread_t (*thread_self)(void);
    bool (*thread_equal)(wt_thread_t a, wt_thread_t b);
    void (*thread_yield)(void);
    wu_status_t (*tls_key_create)(wt_tls_key_t *k, void (*destructor)(void *));
    void (*tls_key_delete)(wt_tls_key_t k);
    void (*wait_init)(wt_wait_t *w);
    void (*wait_destroy)(wt_wait_t *w);
    wu_status_t (*wait_block)(wt_wait_t *w, uint64_t timeout_ns);
    void (*wait_wake_slow)(wt_wait_t *w);
    void (*word_wait)(uint32_t *word, uint32_t val, uint64_t rel_ns);
    void (*word_wait_until)(uint32_t *word, uint32_t val, uint64_t abs_ns);
    void (*word_wake_all)(uint32_t *word);
} wt_mgmt_ops_t;

#define WT_MGMT_OPS(b)                                                                             \
    {                                                                                              \
        wtb_##b##_mutex_init, wtb_##b##_mutex_destroy, wtb_##b##_spin_init,                        \
        wtb_##b##_cond_init, wtb_##b##_cond_destroy, wtb_##b##_cond_wait, wtb_##b##_cond_signal,   \
        wtb_##b##_cond_broadcast, wtb_##b##_thread_create, wtb_##b##_thread_join,                  \
        wtb_##b##_thread_self, wtb_##b##_thread_equal, wtb_##b##_thread_yield,                     \
        wtb_##b##_tls_key_create, wtb_##b##_tls_key_delete, wtb_##b##_wait_init,                   \
        wtb_##b##_wait_destroy, wtb_##b##_wait_block, wtb_##b##_wait_wake_slow,                    \
        wtb_##b##_word_wait, wtb_##b##_word_wait_until, wtb_##b##_word_wake_all                    \
    }

static const wt_mgmt_ops_t wt_mgmt_pth = WT_MGMT_OPS(pth);
static wt_mgmt_ops_t wt_mgmt = WT_MGMT_OPS(pthreads);   /* until the constructor has chosen */

/* ---- the hot paths ---------------------------------------------------------------------------- */

static void wt_rt_pthreads_mutex_lock(wt_mutex_t *m) { pthread_mutex_lock(&m->pm); }
static bool wt_rt_pthreads_mutex_trylock(wt_mutex_t *m) { return pthread_mutex_trylock(&m->pm) == 0; }
static void wt_rt_pthreads_mutex_unlock(wt_mutex_t *m) { pthread_mutex_unlock(&m->pm); }
static void *wt_rt_pthreads_tls_get(wt_tls_key_t k) { return pthread_getspecific(k); }
static bool wt_rt_pthreads_tls_set(wt_tls_key_t k, void *v) { return pthread_setspecific(k, v) == 0; }

/* A statically initialized mutex is pthreads' zeros: Pth's is made on first use. */
static pth_mutex_t *wt_rt_pth_mutex(wt_mutex_t *m)
{
    if (WU_UNLIKELY(!(m->xm.mx_state & PTH_MUTEX_INITIALIZED)))
        pth_mutex_init(&m->xm);
    return &m->xm;
}

static void wt_rt_pth_mutex_lock(wt_mutex_t *m) { pth_mutex_acquire(wt_rt_pth_mutex(m), FALSE, NULL); }
static bool wt_rt_pth_mutex_trylock(wt_mutex_t *m)
{
    pth_mutex_t *x = wt_rt_pth_mutex(m);
    if ((x->mx_state & PTH_MUTEX_LOCKED) && x->mx_owner == pth_self())
        return false;   /* the holder's trylock fails, as with pthreads (wt_thread_pth.h) */
    return pth_mutex_acquire(x, TRUE, NULL) != FALSE;
}
static void wt_rt_pth_mutex_unlock(wt_mutex_t *m) { pth_mutex_release(&m->xm); }
static void *wt_rt_pth_tls_get(wt_tls_key_t k) { return pth_key_getdata((pth_key_t)k); }
static bool wt_rt_pth_tls_set(wt_tls_key_t k, void *v) { return pth_key_setdata((pth_key_t)k, v) != FALSE; }

wt_hot_ops_t wt_hot = {
    wt_rt_pthreads_mutex_lock, wt_rt_pthreads_mutex_trylock, wt_rt_pthreads_mutex_unlock,
    wtb_pthreads_spin_lock_slow, wt_rt_pthreads_tls_get, wt_rt_pthreads_tls_set,
    false, "pthreads (run-time selected)", "futex",
};

__attribute__((constructor)) static void wt_runtime_select(void)
{
    const char *e = getenv("WEFT_THREADS");
    if (!e || !*e || strcmp(e, "pthreads") == 0)
        return;   /* the tables' initial values */
    if (strcmp(e, "pth") != 0)
        wu_log_fatal("WEFT_THREADS=%s: unknown threading backend (this build offers pthreads and pth)", e);
    wt_pth_boot();
    wt_mgmt = wt_mgmt_pth;
    wt_hot = (wt_hot_ops_t){
        wt_rt_pth_mutex_lock, wt_rt_pth_mutex_trylock, wt_rt_pth_mutex_unlock,
        wtb_pth_spin_lock_slow, wt_rt_pth_tls_get, wt_rt_pth_tls_set,
        true, "pth (run-time selected)", "Pth condition variable (M:1 user-level threads)",
    };
}

/* ---- the out-of-line API ---------------------------------------------------------------------- */

wu_status_t wt_mutex_init(wt_mutex_t *m) { return wt_mgmt.mutex_init(m); }
void wt_mutex_destroy(wt_mutex_t *m) { wt_mgmt.mutex_destroy(m); }
void wt_spin_init(wt_spinlock_t *s) { wt_mgmt.spin_init(s); }
wu_status_t wt_cond_init(wt_cond_t *c) { return wt_mgmt.cond_init(c); }
void wt_cond_destroy(wt_cond_t *c) { wt_mgmt.cond_destroy(c); }
void wt_cond_wait(wt_cond_t *c, wt_mutex_t *m) { wt_mgmt.cond_wait(c, m); }
void wt_cond_signal(wt_cond_t *c) { wt_mgmt.cond_signal(c); }
void wt_cond_broadcast(wt_cond_t *c) { wt_mgmt.cond_broadcast(c); }
wu_status_t wt_thread_create(wt_thread_t *t, wt_thread_fn_t fn, void *arg) { return wt_mgmt.thread_create(t, fn, arg); }
wu_status_t wt_thread_join(wt_thread_t t) { return wt_mgmt.thread_join(t); }
wt_thread_t wt_thread_self(void) { return wt_mgmt.thread_self(); }
bool wt_thread_equal(wt_thread_t a, wt_thread_t b) { return wt_mgmt.thread_equal(a, b); }
void wt_thread_yield(void) { wt_mgmt.thread_yield(); }
wu_status_t wt_tls_key_create(wt_tls_key_t *k, void (*d)(void *)) { return wt_mgmt.tls_key_create(k, d); }
void wt_tls_key_delete(wt_tls_key_t k) { wt_mgmt.tls_key_delete(k); }
void wt_wait_init(wt_wait_t *w) { wt_mgmt.wait_init(w); }
void wt_wait_destroy(wt_wait_t *w) { wt_mgmt.wait_destroy(w); }
wu_status_t wt_wait_block(wt_wait_t *w, uint64_t timeout_ns) { return wt_mgmt.wait_block(w, timeout_ns); }
void wt_wait_wake_slow(wt_wait_t *w) { wt_mgmt.wait_wake_slow(w); }
void wt_word_wait(uint32_t *word, uint32_t val, uint64_t rel_ns) { wt_mgmt.word_wait(word, val, rel_ns); }
void wt_word_wait_until(uint32_t *word, uint32_t val, uint64_t abs_ns) { wt_mgmt.word_wait_until(word, val, abs_ns); }
void wt_word_wake_all(uint32_t *word) { wt_mgmt.word_wake_all(word); }
