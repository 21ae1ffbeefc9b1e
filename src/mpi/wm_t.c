/* MPI_T: initialization, control variables (the WEFT_* settings), enumerations, categories, event
 * sources and events. Performance variables: wm_t_pvar.c. Contract: wm_t.h. */
#include "mpi/wm_internal.h"
#include "mpi/wm_t.h"
#include "core/wc_ep.h"
#include "core/wc_wait.h"
#include "util/wu_config.h"
#include "util/wu_counters.h"
#include "util/wu_log.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

pthread_mutex_t wm_t_lock = PTHREAD_MUTEX_INITIALIZER;
int wm_t_refs;

/* ---- tables ---------------------------------------------------------------------------------- */

static const wm_t_category_t wm_t_cats[WM_T_NCAT] = {
    [WM_T_CAT_ROOT] = { "weft", "everything Weft exposes: the categories below" },
    [WM_T_CAT_GENERAL] = { "weft_general", "settings of the core, waiting and start-up" },
    [WM_T_CAT_SHM] = { "weft_shm", "shared-memory transport settings" },
    [WM_T_CAT_OFI] = { "weft_ofi", "libfabric transport settings" },
    [WM_T_CAT_PROGRESS] = { "weft_progress",
                            "progression engine (ltasks, idle and timer threads) and waiting: "
                            "settings and counters" },
    [WM_T_CAT_PT2PT] = { "weft_pt2pt",
                         "messages: counts, bytes, rendezvous protocols, unexpected messages" },
};

static char wm_t_cvar_names[WU_CONFIG_COUNT][64];
static char wm_t_cvar_descs[WU_CONFIG_COUNT][768];
static wm_t_pvar_t wm_t_pvars[WU_COUNT_NUM + 2];
static pthread_once_t wm_t_once = PTHREAD_ONCE_INIT;

static const char *wm_t_scope_word(wu_config_scope_t s)
{
    switch (s) {
    case WU_CONFIG_RUN:    return "this rank; writable at run time";
    case WU_CONFIG_RANK:   return "this rank; read once at start-up";
    case WU_CONFIG_JOB:    return "the same on every rank (checked at start-up); read once";
    case WU_CONFIG_LAUNCH: return "read by mpiexec only";
    }
    return "";
}

static void wm_t_tables_build(void)
{
    for (int i = 0; i < WU_CONFIG_COUNT; i++) {
        const wu_config_desc_t *d = wu_config_desc((wu_config_id_t)i);
        char range[200];
        snprintf(wm_t_cvar_names[i], sizeof(wm_t_cvar_names[i]), "WEFT_%s", d->name);
        snprintf(wm_t_cvar_descs[i], sizeof(wm_t_cvar_descs[i]), "%s (accepted: %s; default %s; %s)",
                 d->desc, wu_config_range_str((wu_config_id_t)i, range, sizeof(range)),
                 *d->def ? d->def : "empty", wm_t_scope_word(d->scope));
    }
    for (int i = 0; i < WU_COUNT_NUM; i++) {
        wm_t_pvar_t *p = &wm_t_pvars[i];
        const char *n = wu_counter_name((wu_counter_t)i);
        size_t k = (size_t)snprintf(p->name, sizeof(p->name), "weft_");
        for (; *n && k + 1 < sizeof(p->name); n++)
            p->name[k++] = (char)(*n >= 'A' && *n <= 'Z' ? *n - 'A' + 'a' : *n);
        p->name[k] = '\0';
        p->desc = wu_counter_desc((wu_counter_t)i);
        p->var_class = MPI_T_PVAR_CLASS_COUNTER;
        p->continuous = false;   /* counts between MPI_T_pvar_start and stop */
        p->readonly = false;     /* reset and write set the handle's own count */
        n = wu_counter_name((wu_counter_t)i);
        p->cat = !strncmp(n, "SEND", 4) || !strncmp(n, "RECV", 4) || !strncmp(n, "RNDV", 4)
                     ? WM_T_CAT_PT2PT : WM_T_CAT_PROGRESS;
        p->counter = i;
    }
    wm_t_pvars[WU_COUNT_NUM] = (wm_t_pvar_t){
        .name = "weft_unexpected_msgs",
        .desc = "unexpected messages stored now (arrived before their receive was posted, not yet "
                "received)",
        .var_class = MPI_T_PVAR_CLASS_LEVEL, .continuous = true, .readonly = true,
        .cat = WM_T_CAT_PT2PT, .counter = -1 };
    wm_t_pvars[WU_COUNT_NUM + 1] = (wm_t_pvar_t){
        .name = "weft_unexpected_msgs_hwm",
        .desc = "the most unexpected messages stored at once since MPI_Init",
        .var_class = MPI_T_PVAR_CLASS_HIGHWATERMARK, .continuous = true, .readonly = true,
        .cat = WM_T_CAT_PT2PT, .counter = -1 };
}

static void wm_t_tables(void)
{
    pthread_once(&wm_t_once, wm_t_tables_build);
}

int wm_t_pvar_num(void)
{
    return (int)WU_ARRAY_SIZE(wm_t_pvars);
}

const wm_t_pvar_t *wm_t_pvar(int i)
{
    wm_t_tables();
    return &wm_t_pvars[i];
}

uint64_t wm_t_pvar_raw(int i)
{
    const wm_t_pvar_t *p = wm_t_pvar(i);
    if (p->counter >= 0)
        return wu_counter_sum((wu_counter_t)p->counter);
    size_t n, hwm;
    wc_ep_unexp_stats(wc_ep_default(), &n, &hwm);
    return i == WU_COUNT_NUM ? n : hwm;
}

const char *wm_t_cvar_name(int i)
{
    wm_t_tables();
    return wm_t_cvar_names[i];
}

const wm_t_category_t *wm_t_cat(int i)
{
    return &wm_t_cats[i];
}

wm_t_cat_t wm_t_cvar_cat(int i)
{
    const char *n = wu_config_desc((wu_config_id_t)i)->name;
    if (!strncmp(n, "SHM_", 4))
        return WM_T_CAT_SHM;
    if (!strncmp(n, "OFI_", 4))
        return WM_T_CAT_OFI;
    if (!strncmp(n, "PROGRESS_", 9))
        return WM_T_CAT_PROGRESS;
    return WM_T_CAT_GENERAL;
}

void wm_t_str(const char *s, char *name, int *name_len)
{
    if (!name_len)
        return;
    int need = (int)strlen(s) + 1;
    if (!name || *name_len <= 0) {
        *name_len = need;
        return;
    }
    int n = need < *name_len ? need : *name_len;
    memcpy(name, s, (size_t)n - 1);
    name[n - 1] = '\0';
    *name_len = n;
}

int wm_t_check_init(void)
{
    return __atomic_load_n(&wm_t_refs, __ATOMIC_ACQUIRE) > 0 ? MPI_SUCCESS
                                                             : MPI_T_ERR_NOT_INITIALIZED;
}

/* ---- init and finalize ----------------------------------------------------------------------- */

/* Before MPI_Init, after MPI_Finalize, from any thread: the settings come from the environment
 * (read once, as MPI_Init reads them), the counters exist from the first count. */
int wm_impl_MPI_T_init_thread(int required, int *provided)
{
    if (!provided)
        return MPI_T_ERR_INVALID;
    if (required != MPI_THREAD_SINGLE && required != MPI_THREAD_FUNNELED &&
        required != MPI_THREAD_SERIALIZED && required != MPI_THREAD_MULTIPLE)
        return MPI_T_ERR_INVALID;
    wm_t_tables();
    pthread_mutex_lock(&wm_t_lock);
    (void)wu_config_init();   /* a bad value was logged; its variable keeps the default */
    __atomic_store_n(&wm_t_refs, wm_t_refs + 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&wm_t_lock);
    *provided = MPI_THREAD_MULTIPLE;   /* every call is safe from any thread */
    return MPI_SUCCESS;
}

int wm_impl_MPI_T_finalize(void)
{
    pthread_mutex_lock(&wm_t_lock);
    if (wm_t_refs == 0) {
        pthread_mutex_unlock(&wm_t_lock);
        return MPI_T_ERR_NOT_INITIALIZED;
    }
    __atomic_store_n(&wm_t_refs, wm_t_refs - 1, __ATOMIC_RELEASE);
    if (wm_t_refs == 0)
        wm_t_pvar_release_all();
    pthread_mutex_unlock(&wm_t_lock);
    return MPI_SUCCESS;
}

/* ---- enumerations: one per setting with a list of words -------------------------------------- */

typedef struct MPI_T_enum_t { int id; } wm_t_enum_t;
static wm_t_enum_t wm_t_enums[WU_CONFIG_COUNT] = {
#define WU_X(name, type, def, min, max, words, scope, desc) [WU_CONFIG_##name] = { WU_CONFIG_##name },
    WU_CONFIG_VARS(WU_X)
#undef WU_X
};

static MPI_T_enum wm_t_enum_of(int id)
{
    return wu_config_desc((wu_config_id_t)id)->words ? &wm_t_enums[id] : MPI_T_ENUM_NULL;
}

static int wm_t_enum_id(MPI_T_enum e)
{
    uintptr_t a = (uintptr_t)e, b = (uintptr_t)wm_t_enums;
    if (a < b || a >= b + sizeof(wm_t_enums) || (a - b) % sizeof(wm_t_enums[0]))
        return -1;
    int id = (int)((a - b) / sizeof(wm_t_enums[0]));
    return wu_config_desc((wu_config_id_t)id)->words ? id : -1;
}

static int wm_t_enum_count(int id)
{
    char w[64];
    int n = 0;
    while (wu_config_word_at((wu_config_id_t)id, n, w, sizeof(w)))
        n++;
    return n;
}

int wm_impl_MPI_T_enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len)
{
    WM_T_CHECK();
    int id = wm_t_enum_id(enumtype);
    if (id < 0)
        return MPI_T_ERR_INVALID_HANDLE;
    if (!num)
        return MPI_T_ERR_INVALID;
    *num = wm_t_enum_count(id);
    wm_t_str(wm_t_cvar_name(id), name, name_len);
    return MPI_SUCCESS;
}

int wm_impl_MPI_T_enum_get_item(MPI_T_enum enumtype, int indx, int *value, char *name,
                                int *name_len)
{
    WM_T_CHECK();
    int id = wm_t_enum_id(enumtype);
    if (id < 0)
        return MPI_T_ERR_INVALID_HANDLE;
    char w[64];
    if (!wu_config_word_at((wu_config_id_t)id, indx, w, sizeof(w)))
        return MPI_T_ERR_INVALID_INDEX;
    if (!value)
        return MPI_T_ERR_INVALID;
    *value = indx;   /* the value a cvar read of this setting gives */
    wm_t_str(w, name, name_len);
    return MPI_SUCCESS;
}

/* ---- control variables ----------------------------------------------------------------------- */

static MPI_Datatype wm_t_cvar_type(int id)
{
    const wu_config_desc_t *d = wu_config_desc((wu_config_id_t)id);
    switch (d->type) {
    case WU_CONFIG_SIZE: return MPI_UNSIGNED_LONG_LONG;
    case WU_CONFIG_STR:  return d->words ? MPI_INT : MPI_CHAR;
    default:             return MPI_INT;   /* INT (every range fits an int) and BOOL */
    }
}

int wm_impl_MPI_T_cvar_get_num(int *num_cvar)
{
    WM_T_CHECK();
    if (!num_cvar)
        return MPI_T_ERR_INVALID;
    *num_cvar = WU_CONFIG_COUNT;
    return MPI_SUCCESS;
}

int wm_impl_MPI_T_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity,
                                MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc,
                                int *desc_len, int *bind, int *scope)
{
    WM_T_CHECK();
    if (cvar_index < 0 || cvar_index >= WU_CONFIG_COUNT)
        return MPI_T_ERR_INVALID_INDEX;
    const wu_config_desc_t *d = wu_config_desc((wu_config_id_t)cvar_index);
    wm_t_str(wm_t_cvar_name(cvar_index), name, name_len);
    wm_t_str(wm_t_cvar_descs[cvar_index], desc, desc_len);
    if (verbosity)
        *verbosity = cvar_index == WU_CONFIG_DEBUG ? MPI_T_VERBOSITY_USER_BASIC
                                                   : MPI_T_VERBOSITY_TUNER_BASIC;
    if (datatype)
        *datatype = wm_t_cvar_type(cvar_index);
    if (enumtype)
        *enumtype = wm_t_enum_of(cvar_index);
    if (bind)
        *bind = MPI_T_BIND_NO_OBJECT;
    if (scope)
        *scope = d->scope == WU_CONFIG_RUN ? MPI_T_SCOPE_LOCAL : MPI_T_SCOPE_READONLY;
    return MPI_SUCCESS;
}

int wm_impl_MPI_T_cvar_get_index(const char *name, int *cvar_index)
{
    WM_T_CHECK();
    if (!name || !cvar_index)
        return MPI_T_ERR_INVALID;
    for (int i = 0; i < WU_CONFIG_COUNT; i++) {
        if (!strcmp(name, wm_t_cvar_name(i))) {
            *cvar_index = i;
            return MPI_SUCCESS;
        }
    }
    return MPI_T_ERR_INVALID_NAME;
}

/* Every variable is bound to no object, so a handle needs no state: it is its index, offset so
 * that MPI_T_CVAR_HANDLE_NULL and small integers are never valid. */
#define WM_T_CVAR_HANDLE_BASE 0x57ef0000u

static int wm_t_cvar_of(MPI_T_cvar_handle h)
{
    uintptr_t v = (uintptr_t)h - WM_T_CVAR_HANDLE_BASE;
    return (uintptr_t)h >= WM_T_CVAR_HANDLE_BASE && v < WU_CONFIG_COUNT ? (int)v : -1;
}

int wm_impl_MPI_T_cvar_handle_alloc(int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle,
                                    int *count)
{
    (void)obj_handle;   /* MPI_T_BIND_NO_OBJECT: ignored, as the standard says */
    WM_T_CHECK();
    if (cvar_index < 0 || cvar_index >= WU_CONFIG_COUNT)
        return MPI_T_ERR_INVALID_INDEX;
    if (!handle || !count)
        return MPI_T_ERR_INVALID;
    if (wm_t_cvar_type(cvar_index) == MPI_CHAR)
        *count = (int)strlen(wu_config_str((wu_config_id_t)cvar_index)) + 1;
    else
        *count = 1;
    *handle = (MPI_T_cvar_handle)(WM_T_CVAR_HANDLE_BASE + (uintptr_t)cvar_index);
    return MPI_SUCCESS;
}

int wm_impl_MPI_T_cvar_handle_free(MPI_T_cvar_handle *handle)
{
    WM_T_CHECK();
    if (!handle)
        return MPI_T_ERR_INVALID;
    if (wm_t_cvar_of(*handle) < 0)
        return MPI_T_ERR_INVALID_HANDLE;
    *handle = MPI_T_CVAR_HANDLE_NULL;
    return MPI_SUCCESS;
}

int wm_impl_MPI_T_cvar_read(MPI_T_cvar_handle handle, void *buf)
{
    WM_T_CHECK();
    int id = wm_t_cvar_of(handle);
    if (id < 0)
        return MPI_T_ERR_INVALID_HANDLE;
    if (!buf)
        return MPI_T_ERR_INVALID;
    MPI_Datatype t = wm_t_cvar_type(id);
    if (t == MPI_CHAR) {
        const char *s = wu_config_str((wu_config_id_t)id);
        memcpy(buf, s, strlen(s) + 1);
    } else if (t == MPI_UNSIGNED_LONG_LONG) {
        unsigned long long v = (unsigned long long)wu_config_int((wu_config_id_t)id);
        memcpy(buf, &v, sizeof(v));
    } else {
        int v = (int)wu_config_int((wu_config_id_t)id);
        memcpy(buf, &v, sizeof(v));
    }
    return MPI_SUCCESS;
}

/* A new value reaches the layer that uses it; the others read the setting again each time. Before
 * MPI_Init the setting alone changes, and MPI_Init starts with it. */
static void wm_t_cvar_apply(int id, long v)
{
    switch (id) {
    case WU_CONFIG_DEBUG:
        wu_log_debug_set((int)v);
        break;
    case WU_CONFIG_SPIN_US:
        wc_wait_spin_set((uint64_t)v);
        break;
    case WU_CONFIG_SPIN_MAX_US:
        wc_wait_spin_max_set((uint64_t)v);
        break;
    case WU_CONFIG_UNEXPECTED_MAX:
        wc_ep_unexp_max_set(wc_ep_default(), (size_t)v);
        break;
    case WU_CONFIG_WAIT_YIELD:
        wc_wait_yield_set(wc_wait_yield_mode(), wc_machine_ranks());
        break;
    default:
        break;
    }
}

int wm_impl_MPI_T_cvar_write(MPI_T_cvar_handle handle, const void *buf)
{
    WM_T_CHECK();
    int id = wm_t_cvar_of(handle);
    if (id < 0)
        return MPI_T_ERR_INVALID_HANDLE;
    if (!buf)
        return MPI_T_ERR_INVALID;
    if (wu_config_desc((wu_config_id_t)id)->scope != WU_CONFIG_RUN)
        return MPI_T_ERR_CVAR_SET_NEVER;
    long v;
    if (wm_t_cvar_type(id) == MPI_UNSIGNED_LONG_LONG) {
        unsigned long long u;
        memcpy(&u, buf, sizeof(u));
        v = u > (unsigned long long)WU_CONFIG_TIB * 1024 ? -1 : (long)u;
    } else {
        int i;
        memcpy(&i, buf, sizeof(i));
        v = i;
    }
    char why[256];
    pthread_mutex_lock(&wm_t_lock);   /* the setting and its effect change together */
    wu_status_t st = wu_config_set((wu_config_id_t)id, v, why, sizeof(why));
    if (st == WU_OK)
        wm_t_cvar_apply(id, v);
    pthread_mutex_unlock(&wm_t_lock);
    if (st != WU_OK) {
        wu_debug("MPI_T_cvar_write: %s", why);
        return MPI_T_ERR_INVALID;
    }
    return MPI_SUCCESS;
}

/* ---- categories ------------------------------------------------------------------------------ */

/* The members of category c of one kind (0 cvars, 1 pvars, 2 categories) into idx (up to len; all
 * when idx is NULL); returns how many there are. */
static int wm_t_cat_members(int c, int kind, int len, int idx[])
{
    int n = 0;
    if (kind == 0) {
        for (int i = 0; i < WU_CONFIG_COUNT; i++)
            if ((int)wm_t_cvar_cat(i) == c) {
                if (idx && n < len)
                    idx[n] = i;
                n++;
            }
    } else if (kind == 1) {
        for (int i = 0; i < wm_t_pvar_num(); i++)
            if ((int)wm_t_pvar(i)->cat == c) {
                if (idx && n < len)
                    idx[n] = i;
                n++;
            }
    } else if (c == WM_T_CAT_ROOT) {
        for (int i = 1; i < WM_T_NCAT; i++) {
            if (idx && n < len)
                idx[n] = i;
            n++;
        }
    }
    return n;
}

int wm_impl_MPI_T_category_get_num(int *num_cat)
{
    WM_T_CHECK();
    if (!num_cat)
        return MPI_T_ERR_INVALID;
    *num_cat = WM_T_NCAT;
    return MPI_SUCCESS;
}

int wm_impl_MPI_T_category_get_info(int cat_index, char *name, int *name_len, char *desc,
                                    int *desc_len, int *num_cvars, int *num_pvars,
                                    int *num_categories)
{
    WM_T_CHECK();
    if (cat_index < 0 || cat_index >= WM_T_NCAT)
        return MPI_T_ERR_INVALID_INDEX;
    wm_t_str(wm_t_cats[cat_index].name, name, name_len);
    wm_t_str(wm_t_cats[cat_index].desc, desc, desc_len);
    if (num_cvars)
        *num_cvars = wm_t_cat_members(cat_index, 0, 0, NULL);
    if (num_pvars)
        *num_pvars = wm_t_cat_members(cat_index, 1, 0, NULL);
    if (num_categories)
        *num_categories = wm_t_cat_members(cat_index, 2, 0, NULL);
    return MPI_SUCCESS;
}

int wm_impl_MPI_T_category_get_num_events(int cat_index, int *num_events)
{
    WM_T_CHECK();
    if (cat_index < 0 || cat_index >= WM_T_NCAT)
        return MPI_T_ERR_INVALID_INDEX;
    if (!num_events)
        return MPI_T_ERR_INVALID;
    *num_events = 0;
    return MPI_SUCCESS;
}

int wm_impl_MPI_T_category_get_index(const char *name, int *cat_index)
{
    WM_T_CHECK();
    if (!name || !cat_index)
        return MPI_T_ERR_INVALID;
    for (int i = 0; i < WM_T_NCAT; i++) {
        if (!strcmp(name, wm_t_cats[i].name)) {
            *cat_index = i;
            return MPI_SUCCESS;
        }
    }
    return MPI_T_ERR_INVALID_NAME;
}

static int wm_t_cat_list(int cat_index, int kind, int len, int indices[])
{
    WM_T_CHECK();
    if (cat_index < 0 || cat_index >= WM_T_NCAT)
        return MPI_T_ERR_INVALID_INDEX;
    if (len < 0 || (len > 0 && !indices))
        return MPI_T_ERR_INVALID;
    (void)wm_t_cat_members(cat_index, kind, len, indices);
    return MPI_SUCCESS;
}

int wm_impl_MPI_T_category_get_cvars(int cat_index, int len, int indices[])
{
    return wm_t_cat_list(cat_index, 0, len, indices);
}

int wm_impl_MPI_T_category_get_pvars(int cat_index, int len, int indices[])
{
    return wm_t_cat_list(cat_index, 1, len, indices);
}

int wm_impl_MPI_T_category_get_categories(int cat_index, int len, int indices[])
{
    return wm_t_cat_list(cat_index, 2, len, indices);
}

int wm_impl_MPI_T_category_get_events(int cat_index, int len, int indices[])
{
    WM_T_CHECK();
    if (cat_index < 0 || cat_index >= WM_T_NCAT)
        return MPI_T_ERR_INVALID_INDEX;
    (void)len;
    (void)indices;   /* no events */
    return MPI_SUCCESS;
}

int wm_impl_MPI_T_category_changed(int *update_number)
{
    WM_T_CHECK();
    if (!update_number)
        return MPI_T_ERR_INVALID;
    *update_number = 0;   /* the variables and categories are fixed when the library is built */
    return MPI_SUCCESS;
}

/* ---- event sources: one, the monotonic clock in nanoseconds ---------------------------------- */

int wm_impl_MPI_T_source_get_num(int *num_sources)
{
    WM_T_CHECK();
    if (!num_sources)
        return MPI_T_ERR_INVALID;
    *num_sources = 1;
    return MPI_SUCCESS;
}

int wm_impl_MPI_T_source_get_info(int source_index, char *name, int *name_len, char *desc,
                                  int *desc_len, MPI_T_source_order *ordering,
                                  MPI_Count *ticks_per_second, MPI_Count *max_ticks,
                                  MPI_Info *info)
{
    WM_T_CHECK();
    if (source_index != 0)
        return MPI_T_ERR_INVALID_INDEX;
    wm_t_str("weft_clock", name, name_len);
    wm_t_str("CLOCK_MONOTONIC of the process, in nanoseconds", desc, desc_len);
    if (ordering)
        *ordering = MPI_T_SOURCE_ORDERED;
    if (ticks_per_second)
        *ticks_per_second = 1000000000;
    if (max_ticks)
        *max_ticks = INT64_MAX;
    if (info && PMPI_Info_create(info) != MPI_SUCCESS)
        return MPI_T_ERR_MEMORY;
    return MPI_SUCCESS;
}

int wm_impl_MPI_T_source_get_timestamp(int source_index, MPI_Count *timestamp)
{
    WM_T_CHECK();
    if (source_index != 0)
        return MPI_T_ERR_INVALID_INDEX;
    if (!timestamp)
        return MPI_T_ERR_INVALID;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    *timestamp = (MPI_Count)ts.tv_sec * 1000000000 + ts.tv_nsec;
    return MPI_SUCCESS;
}

/* ---- events: Weft defines none -----------------------------------------------------------------
 * With no event type there is no registration (MPI_T_event_handle_alloc has no valid index) and
 * no instance (they exist only inside callbacks), so every call on one is given an invalid handle.
 */

int wm_impl_MPI_T_event_get_num(int *num_events)
{
    WM_T_CHECK();
    if (!num_events)
        return MPI_T_ERR_INVALID;
    *num_events = 0;
    return MPI_SUCCESS;
}

int wm_impl_MPI_T_event_get_info(int event_index, char *name, int *name_len, int *verbosity,
                                 MPI_Datatype array_of_datatypes[],
                                 MPI_Aint array_of_displacements[], int *num_elements,
                                 MPI_T_enum *enumtype, MPI_Info *info, char *desc, int *desc_len,
                                 int *bind)
{
    (void)event_index, (void)name, (void)name_len, (void)verbosity, (void)array_of_datatypes;
    (void)array_of_displacements, (void)num_elements, (void)enumtype, (void)info, (void)desc;
    (void)desc_len, (void)bind;
    WM_T_CHECK();
    return MPI_T_ERR_INVALID_INDEX;
}

int wm_impl_MPI_T_event_get_index(const char *name, int *event_index)
{
    WM_T_CHECK();
    if (!name || !event_index)
        return MPI_T_ERR_INVALID;
    return MPI_T_ERR_INVALID_NAME;
}

int wm_impl_MPI_T_event_handle_alloc(int event_index, void *obj_handle, MPI_Info info,
                                     MPI_T_event_registration *event_registration)
{
    (void)event_index, (void)obj_handle, (void)info, (void)event_registration;
    WM_T_CHECK();
    return MPI_T_ERR_INVALID_INDEX;
}

#define WM_T_NO_REGISTRATION()                                                                     \
    do {                                                                                           \
        WM_T_CHECK();                                                                              \
        return MPI_T_ERR_INVALID_HANDLE;                                                           \
    } while (0)

int wm_impl_MPI_T_event_handle_set_info(MPI_T_event_registration event_registration, MPI_Info info)
{
    (void)event_registration, (void)info;
    WM_T_NO_REGISTRATION();
}

int wm_impl_MPI_T_event_handle_get_info(MPI_T_event_registration event_registration,
                                        MPI_Info *info_used)
{
    (void)event_registration, (void)info_used;
    WM_T_NO_REGISTRATION();
}

int wm_impl_MPI_T_event_register_callback(MPI_T_event_registration event_registration,
                                          MPI_T_cb_safety cb_safety, MPI_Info info,
                                          void *user_data, MPI_T_event_cb_function event_cb_function)
{
    (void)event_registration, (void)cb_safety, (void)info, (void)user_data, (void)event_cb_function;
    WM_T_NO_REGISTRATION();
}

int wm_impl_MPI_T_event_callback_set_info(MPI_T_event_registration event_registration,
                                          MPI_T_cb_safety cb_safety, MPI_Info info)
{
    (void)event_registration, (void)cb_safety, (void)info;
    WM_T_NO_REGISTRATION();
}

int wm_impl_MPI_T_event_callback_get_info(MPI_T_event_registration event_registration,
                                          MPI_T_cb_safety cb_safety, MPI_Info *info_used)
{
    (void)event_registration, (void)cb_safety, (void)info_used;
    WM_T_NO_REGISTRATION();
}

int wm_impl_MPI_T_event_handle_free(MPI_T_event_registration event_registration, void *user_data,
                                    MPI_T_event_free_cb_function free_cb_function)
{
    (void)event_registration, (void)user_data, (void)free_cb_function;
    WM_T_NO_REGISTRATION();
}

int wm_impl_MPI_T_event_set_dropped_handler(MPI_T_event_registration event_registration,
                                            MPI_T_event_dropped_cb_function dropped_cb_function)
{
    (void)event_registration, (void)dropped_cb_function;
    WM_T_NO_REGISTRATION();
}

int wm_impl_MPI_T_event_read(MPI_T_event_instance event_instance, int element_index, void *buffer)
{
    (void)event_instance, (void)element_index, (void)buffer;
    WM_T_NO_REGISTRATION();
}

int wm_impl_MPI_T_event_copy(MPI_T_event_instance event_instance, void *buffer)
{
    (void)event_instance, (void)buffer;
    WM_T_NO_REGISTRATION();
}

int wm_impl_MPI_T_event_get_timestamp(MPI_T_event_instance event_instance,
                                      MPI_Count *event_timestamp)
{
    (void)event_instance, (void)event_timestamp;
    WM_T_NO_REGISTRATION();
}

int wm_impl_MPI_T_event_get_source(MPI_T_event_instance event_instance, int *source_index)
{
    (void)event_instance, (void)source_index;
    WM_T_NO_REGISTRATION();
}
