/* Info objects (see wm_info.h). Every MPI_Info_* call may be made at any time, before MPI_Init and
 * after MPI_Finalize too (MPI 4.0 section 11.2.1); errors go to MPI_COMM_SELF's handler. */
#include "mpi/wm_info.h"
#include "mpi/wm_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

/* ---- the pairs ------------------------------------------------------------------------------- */

static void wm_info_clear(wm_info_t *in)
{
    for (int i = 0; i < in->n; i++) {
        free(in->keys[i]);
        free(in->vals[i]);
    }
    free(in->keys);
    free(in->vals);
    in->keys = in->vals = NULL;
    in->n = in->cap = 0;
}

static void wm_info_destroy(wm_obj_t *o)
{
    wm_info_clear((wm_info_t *)o);
}

static int wm_info_find(const wm_info_t *in, const char *key)
{
    for (int i = 0; i < in->n; i++)
        if (strcmp(in->keys[i], key) == 0)
            return i;
    return -1;
}

/* Sets key to value (replacing in place, so nthkey order is that of first insertion).
 * false: out of memory, the object unchanged. */
static bool wm_info_put(wm_info_t *in, const char *key, const char *value)
{
    char *v = strdup(value);
    if (!v)
        return false;
    int i = wm_info_find(in, key);
    if (i >= 0) {
        free(in->vals[i]);
        in->vals[i] = v;
        return true;
    }
    if (in->n == in->cap) {
        int cap = in->cap ? 2 * in->cap : 8;
        char **k = realloc(in->keys, (size_t)cap * sizeof(*k));
        if (k)
            in->keys = k;
        char **vs = k ? realloc(in->vals, (size_t)cap * sizeof(*vs)) : NULL;
        if (vs)
            in->vals = vs;
        if (!k || !vs) {
            free(v);
            return false;
        }
        in->cap = cap;
    }
    char *k = strdup(key);
    if (!k) {
        free(v);
        return false;
    }
    in->keys[in->n] = k;
    in->vals[in->n] = v;
    in->n++;
    return true;
}

static bool wm_info_copy(wm_info_t *dst, const wm_info_t *src)
{
    for (int i = 0; i < src->n; i++)
        if (!wm_info_put(dst, src->keys[i], src->vals[i]))
            return false;
    return true;
}

/* ---- MPI_INFO_ENV ---------------------------------------------------------------------------- */

static wm_info_t wm_info_env;
static pthread_once_t wm_info_env_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t wm_info_env_lock = PTHREAD_MUTEX_INITIALIZER;
/* 0: empty, 1: filled before MPI_Init (refilled once MPI is up), 2: final. */
static _Atomic int wm_info_env_state;

static void wm_info_env_setup(void)
{
    wm_obj_init_predefined(&wm_info_env.obj, WM_OBJ_INFO, (uintptr_t)MPI_INFO_ENV, NULL);
}

/* "command" and "argv" from argc/argv: argv[1..] joined by single spaces. */
static void wm_info_put_command(wm_info_t *in, int argc, char **argv)
{
    if (argc <= 0 || !argv || !argv[0])
        return;
    wm_info_put(in, "command", argv[0]);
    size_t len = 1;
    for (int i = 1; i < argc && argv[i]; i++)
        len += strlen(argv[i]) + 1;
    char *s = malloc(len);
    if (!s)
        return;
    s[0] = '\0';
    size_t at = 0;
    for (int i = 1; i < argc && argv[i]; i++) {
        size_t l = strlen(argv[i]);
        if (i > 1)
            s[at++] = ' ';
        memcpy(s + at, argv[i], l);
        at += l;
        s[at] = '\0';
    }
    if (argc > 1)
        wm_info_put(in, "argv", s);
    free(s);
}

/* The command line as the kernel has it (MPI_Init's argc/argv are not kept). */
static void wm_info_put_cmdline(wm_info_t *in)
{
    FILE *f = fopen("/proc/self/cmdline", "r");
    if (!f)
        return;
    char buf[8192];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *argv[256];
    int argc = 0;
    for (size_t at = 0; at < n && argc < 256; at += strlen(buf + at) + 1)
        argv[argc++] = buf + at;
    wm_info_put_command(in, argc, argv);
}

static const char *wm_thread_level_name(int level)
{
    switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    default: return "MPI_THREAD_MULTIPLE";
    }
}

static void wm_info_env_fill(void)
{
    pthread_once(&wm_info_env_once, wm_info_env_setup);
    if (atomic_load_explicit(&wm_info_env_state, memory_order_acquire) == 2)
        return;
    pthread_mutex_lock(&wm_info_env_lock);
    bool up = atomic_load(&wm_state.up);
    int state = atomic_load_explicit(&wm_info_env_state, memory_order_relaxed);
    if (state == 0 || (state == 1 && up)) {
        wm_info_t *in = &wm_info_env;
        char buf[1024];
        wm_info_clear(in);
        wm_info_put_cmdline(in);
        if (up) {
            snprintf(buf, sizeof(buf), "%d", wc_world.size);
            wm_info_put(in, "maxprocs", buf);
        }
        if (gethostname(buf, sizeof(buf)) == 0) {
            buf[sizeof(buf) - 1] = '\0';
            wm_info_put(in, "host", buf);
        }
        struct utsname u;
        if (uname(&u) == 0)
            wm_info_put(in, "arch", u.machine);
        if (getcwd(buf, sizeof(buf)))
            wm_info_put(in, "wdir", buf);
        if (up)
            wm_info_put(in, "thread_level", wm_thread_level_name(wm_state.thread_level));
        atomic_store_explicit(&wm_info_env_state, up ? 2 : 1, memory_order_release);
    }
    pthread_mutex_unlock(&wm_info_env_lock);
}

/* ---- lookups --------------------------------------------------------------------------------- */

wm_info_t *wm_info_get(MPI_Info h)
{
    if (h == MPI_INFO_ENV) {
        wm_info_env_fill();
        return &wm_info_env;
    }
    return (wm_info_t *)wm_obj_lookup((uintptr_t)h, WM_OBJ_INFO);
}

const char *wm_info_value(MPI_Info h, const char *key)
{
    wm_info_t *in = h == MPI_INFO_NULL || !key ? NULL : wm_info_get(h);
    int i = in ? wm_info_find(in, key) : -1;
    return i >= 0 ? in->vals[i] : NULL;
}

/* The info argument of a call: declares `wm_info_t *in` or returns MPI_ERR_INFO. */
#define WM_INFO_CHECK(fn, info, in)                                                          \
    wm_info_t *in = (info) == MPI_INFO_NULL ? NULL : wm_info_get(info);                      \
    if (WU_UNLIKELY(!in))                                                                    \
        return wm_error(NULL, MPI_ERR_INFO, fn, "invalid info object %p%s", (void *)(info),  \
                        (info) == MPI_INFO_NULL ? " (MPI_INFO_NULL)" : "")

/* A key argument: not NULL, 1..MPI_MAX_INFO_KEY-1 characters. */
static int wm_info_check_key(const char *fn, const char *key)
{
    if (!key)
        return wm_error(NULL, MPI_ERR_INFO_KEY, fn, "key is NULL");
    size_t n = strnlen(key, MPI_MAX_INFO_KEY);
    if (n == 0 || n >= MPI_MAX_INFO_KEY)
        return wm_error(NULL, MPI_ERR_INFO_KEY, fn, "key of %s characters (1 to %d allowed)",
                        n ? "too many" : "0", MPI_MAX_INFO_KEY - 1);
    return MPI_SUCCESS;
}

static int wm_info_check_writable(const char *fn, const wm_info_t *in)
{
    if (in->obj.predefined)
        return wm_error(NULL, MPI_ERR_INFO, fn, "MPI_INFO_ENV cannot be modified or freed");
    return MPI_SUCCESS;
}

/* ---- entry points ---------------------------------------------------------------------------- */

int wm_impl_MPI_Info_create(MPI_Info *info)
{
    static const char fn[] = "MPI_Info_create";
    if (!info)
        return wm_error(NULL, MPI_ERR_ARG, fn, "info is NULL");
    wm_info_t *in = wm_obj_create(WM_OBJ_INFO, sizeof(*in), wm_info_destroy);
    if (!in)
        return wm_error(NULL, MPI_ERR_NO_MEM, fn, "no memory for an info object");
    *info = (MPI_Info)in->obj.handle;
    return MPI_SUCCESS;
}

int wm_impl_MPI_Info_create_env(int argc, char *argv[], MPI_Info *info)
{
    static const char fn[] = "MPI_Info_create_env";
    if (!info)
        return wm_error(NULL, MPI_ERR_ARG, fn, "info is NULL");
    if (argc < 0)
        return wm_error(NULL, MPI_ERR_ARG, fn, "argc is %d", argc);
    wm_info_env_fill();
    wm_info_t *in = wm_obj_create(WM_OBJ_INFO, sizeof(*in), wm_info_destroy);
    if (!in)
        return wm_error(NULL, MPI_ERR_NO_MEM, fn, "no memory for an info object");
    pthread_mutex_lock(&wm_info_env_lock);
    bool ok = wm_info_copy(in, &wm_info_env);
    pthread_mutex_unlock(&wm_info_env_lock);
    if (ok && argc > 0 && argv && argv[0]) {
        int i = wm_info_find(in, "argv");
        if (i >= 0) {   /* the caller's argv replaces the kernel's */
            free(in->keys[i]);
            free(in->vals[i]);
            memmove(in->keys + i, in->keys + i + 1, (size_t)(in->n - i - 1) * sizeof(char *));
            memmove(in->vals + i, in->vals + i + 1, (size_t)(in->n - i - 1) * sizeof(char *));
            in->n--;
        }
        wm_info_put_command(in, argc, argv);
    }
    if (!ok) {
        wm_obj_user_free(&in->obj);
        return wm_error(NULL, MPI_ERR_NO_MEM, fn, "no memory for an info object");
    }
    *info = (MPI_Info)in->obj.handle;
    return MPI_SUCCESS;
}

int wm_impl_MPI_Info_set(MPI_Info info, const char *key, const char *value)
{
    static const char fn[] = "MPI_Info_set";
    WM_INFO_CHECK(fn, info, in);
    int rc = wm_info_check_writable(fn, in);
    if (rc == MPI_SUCCESS)
        rc = wm_info_check_key(fn, key);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!value)
        return wm_error(NULL, MPI_ERR_INFO_VALUE, fn, "value is NULL");
    if (strnlen(value, MPI_MAX_INFO_VAL) >= MPI_MAX_INFO_VAL)
        return wm_error(NULL, MPI_ERR_INFO_VALUE, fn, "value of key \"%s\" longer than %d characters",
                        key, MPI_MAX_INFO_VAL - 1);
    if (!wm_info_put(in, key, value))
        return wm_error(NULL, MPI_ERR_NO_MEM, fn, "no memory for key \"%s\"", key);
    return MPI_SUCCESS;
}

int wm_impl_MPI_Info_delete(MPI_Info info, const char *key)
{
    static const char fn[] = "MPI_Info_delete";
    WM_INFO_CHECK(fn, info, in);
    int rc = wm_info_check_writable(fn, in);
    if (rc == MPI_SUCCESS)
        rc = wm_info_check_key(fn, key);
    if (rc != MPI_SUCCESS)
        return rc;
    int i = wm_info_find(in, key);
    if (i < 0)
        return wm_error(NULL, MPI_ERR_INFO_NOKEY, fn, "no key \"%s\"", key);
    free(in->keys[i]);
    free(in->vals[i]);
    memmove(in->keys + i, in->keys + i + 1, (size_t)(in->n - i - 1) * sizeof(char *));
    memmove(in->vals + i, in->vals + i + 1, (size_t)(in->n - i - 1) * sizeof(char *));
    in->n--;
    return MPI_SUCCESS;
}

/* MPI 4.0 semantics: *buflen in is the buffer's size, out the size the value needs (with its
 * terminator); the value is truncated to buflen - 1 characters and always terminated when
 * buflen > 0. A missing key leaves value and buflen alone. */
int wm_impl_MPI_Info_get_string(MPI_Info info, const char *key, int *buflen, char *value, int *flag)
{
    static const char fn[] = "MPI_Info_get_string";
    WM_INFO_CHECK(fn, info, in);
    int rc = wm_info_check_key(fn, key);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!buflen || !flag)
        return wm_error(NULL, MPI_ERR_ARG, fn, "%s is NULL", buflen ? "flag" : "buflen");
    if (*buflen < 0)
        return wm_error(NULL, MPI_ERR_ARG, fn, "buflen is %d", *buflen);
    if (*buflen > 0 && !value)
        return wm_error(NULL, MPI_ERR_ARG, fn, "value is NULL with buflen %d", *buflen);
    int i = wm_info_find(in, key);
    if (i < 0) {
        *flag = 0;
        return MPI_SUCCESS;
    }
    size_t len = strlen(in->vals[i]);
    if (*buflen > 0) {
        size_t n = len < (size_t)*buflen - 1 ? len : (size_t)*buflen - 1;
        memcpy(value, in->vals[i], n);
        value[n] = '\0';
    }
    *buflen = (int)len + 1;
    *flag = 1;
    return MPI_SUCCESS;
}

/* Deprecated (MPI 4.0): value receives at most valuelen characters and a terminator. */
int wm_impl_MPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag)
{
    static const char fn[] = "MPI_Info_get";
    WM_INFO_CHECK(fn, info, in);
    int rc = wm_info_check_key(fn, key);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!flag)
        return wm_error(NULL, MPI_ERR_ARG, fn, "flag is NULL");
    if (valuelen < 0)
        return wm_error(NULL, MPI_ERR_ARG, fn, "valuelen is %d", valuelen);
    if (!value)
        return wm_error(NULL, MPI_ERR_ARG, fn, "value is NULL");
    int i = wm_info_find(in, key);
    if (i < 0) {
        *flag = 0;
        return MPI_SUCCESS;
    }
    size_t len = strlen(in->vals[i]);
    size_t n = len < (size_t)valuelen ? len : (size_t)valuelen;
    memcpy(value, in->vals[i], n);
    value[n] = '\0';
    *flag = 1;
    return MPI_SUCCESS;
}

int wm_impl_MPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag)
{
    static const char fn[] = "MPI_Info_get_valuelen";
    WM_INFO_CHECK(fn, info, in);
    int rc = wm_info_check_key(fn, key);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!valuelen || !flag)
        return wm_error(NULL, MPI_ERR_ARG, fn, "%s is NULL", valuelen ? "flag" : "valuelen");
    int i = wm_info_find(in, key);
    *flag = i >= 0;
    if (i >= 0)
        *valuelen = (int)strlen(in->vals[i]);
    return MPI_SUCCESS;
}

int wm_impl_MPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
    static const char fn[] = "MPI_Info_get_nkeys";
    WM_INFO_CHECK(fn, info, in);
    if (!nkeys)
        return wm_error(NULL, MPI_ERR_ARG, fn, "nkeys is NULL");
    *nkeys = in->n;
    return MPI_SUCCESS;
}

int wm_impl_MPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
    static const char fn[] = "MPI_Info_get_nthkey";
    WM_INFO_CHECK(fn, info, in);
    if (!key)
        return wm_error(NULL, MPI_ERR_ARG, fn, "key is NULL");
    if (n < 0 || n >= in->n)
        return wm_error(NULL, MPI_ERR_ARG, fn, "n is %d, the object has %d keys", n, in->n);
    strcpy(key, in->keys[n]);   /* shorter than MPI_MAX_INFO_KEY, checked by MPI_Info_set */
    return MPI_SUCCESS;
}

int wm_impl_MPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
    static const char fn[] = "MPI_Info_dup";
    WM_INFO_CHECK(fn, info, in);
    if (!newinfo)
        return wm_error(NULL, MPI_ERR_ARG, fn, "newinfo is NULL");
    wm_info_t *d = wm_obj_create(WM_OBJ_INFO, sizeof(*d), wm_info_destroy);
    if (!d)
        return wm_error(NULL, MPI_ERR_NO_MEM, fn, "no memory for an info object");
    bool env = in->obj.predefined;
    if (env)
        pthread_mutex_lock(&wm_info_env_lock);
    bool ok = wm_info_copy(d, in);
    if (env)
        pthread_mutex_unlock(&wm_info_env_lock);
    if (!ok) {
        wm_obj_user_free(&d->obj);
        return wm_error(NULL, MPI_ERR_NO_MEM, fn, "no memory for an info object");
    }
    *newinfo = (MPI_Info)d->obj.handle;
    return MPI_SUCCESS;
}

int wm_impl_MPI_Info_free(MPI_Info *info)
{
    static const char fn[] = "MPI_Info_free";
    if (!info)
        return wm_error(NULL, MPI_ERR_ARG, fn, "info is NULL");
    WM_INFO_CHECK(fn, *info, in);
    int rc = wm_info_check_writable(fn, in);
    if (rc != MPI_SUCCESS)
        return rc;
    wm_obj_user_free(&in->obj);
    *info = MPI_INFO_NULL;
    /* While the core is down no object creation or MPI_Finalize may come to collect it
     * (and no request can name it): collect now. */
    if (!atomic_load(&wm_state.up))
        wm_gc_collect();
    return MPI_SUCCESS;
}
