/* The tool information interface (MPI_T): control variables are the WEFT_* settings
 * (util/wu_config_vars.h, one entry per variable, in its order), performance variables are the
 * per-thread counters (util/wu_counters.h, in their order) followed by the endpoint's unexpected
 * queue statistics. weft-info prints these same tables. docs/mpit.md lists them.
 *
 * Concurrency contract: the tables are built once (pthread_once) and read-only afterwards; every
 * MPI_T call that changes state (init/finalize, handles, sessions, cvar writes) holds wm_t_lock.
 * Values are read without it (counters: wu_counter_sum; settings: wu_config_int). */
#ifndef WM_T_H
#define WM_T_H

#include <mpi.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

typedef enum {
    WM_T_CAT_ROOT, WM_T_CAT_GENERAL, WM_T_CAT_SHM, WM_T_CAT_OFI, WM_T_CAT_PROGRESS, WM_T_CAT_PT2PT,
    WM_T_NCAT
} wm_t_cat_t;

typedef struct wm_t_pvar {
    char name[48];
    const char *desc;
    int var_class;          /* MPI_T_PVAR_CLASS_* */
    bool continuous, readonly;
    wm_t_cat_t cat;
    int counter;            /* wu_counter_t, or -1: read by wm_t_pvar_raw from the endpoint */
} wm_t_pvar_t;

typedef struct wm_t_category {
    const char *name, *desc;
} wm_t_category_t;

extern pthread_mutex_t wm_t_lock;
extern int wm_t_refs;          /* wm_t_lock: MPI_T_init_thread calls not yet finalized */

/* The tables (built on first call, any thread). */
int wm_t_pvar_num(void);
const wm_t_pvar_t *wm_t_pvar(int i);
const char *wm_t_cvar_name(int i);            /* "WEFT_DEBUG" */
const wm_t_category_t *wm_t_cat(int i);
wm_t_cat_t wm_t_cvar_cat(int i);
/* The current value of pvar i as the process counts it (not relative to a session). */
uint64_t wm_t_pvar_raw(int i);
/* MPI_T_finalize of the last reference: free every session and handle (wm_t_lock held). */
void wm_t_pvar_release_all(void);
/* Copy s into name/name_len as MPI_T's string outputs do. */
void wm_t_str(const char *s, char *name, int *name_len);
/* MPI_T_ERR_NOT_INITIALIZED unless MPI_T is initialized. */
int wm_t_check_init(void);
/* In an MPI_T entry point: return MPI_T_ERR_NOT_INITIALIZED unless MPI_T is initialized. */
#define WM_T_CHECK()                                                                               \
    do {                                                                                           \
        int rc_ = wm_t_check_init();                                                               \
        if (rc_ != MPI_SUCCESS)                                                                    \
            return rc_;                                                                            \
    } while (0)

#endif
