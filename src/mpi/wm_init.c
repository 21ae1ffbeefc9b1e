/* MPI_Init and friends: world set-up and teardown, the core's lifetime shared with sessions,
 * thread level, abort. */
#include "mpi/wm_internal.h"
#include "mpi/wm_coll.h"
#include "mpi/wm_group.h"
#include "thread/wt_thread.h"
#include "util/wu_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

wm_state_t wm_state;
/* The thread that initialized MPI, through the threading layer: under a user-level-thread backend
 * every thread has the same pthread_self(). */
static wt_thread_t wm_main_thread;
static pid_t wm_init_pid;

/* The process leaves with operations that may be pending: the core abandons them (nothing reads
 * or writes their buffers any more; exiting, the engine's threads stop: wc_quiesce), then the user
 * learns which. */
static void wm_leave(const char *when, bool exiting)
{
    wc_quiesce(exiting);
    wm_request_warn_pending(when);
}

static void wm_core_exit(void);

/* atexit: the program exits, or returns from main, without MPI_Finalize; the engine's threads
 * must not run on into the program's teardown. Not in a child the program forked (the threads are
 * not there). A core kept past MPI_Finalize for sessions, or started by sessions only, ends here
 * (see wm_life_lock below). */
static void wm_exit_hook(void)
{
    if (getpid() != wm_init_pid)
        return;
    if (wm_state.initialized && !wm_state.finalized) {
        wm_leave("exit without MPI_Finalize", true);
        return;
    }
    wm_core_exit();
}

/* The library's lifetime (docs/sessions.md, "One library, two models"). The core (transports,
 * engine, predefined objects) starts with the first of MPI_Init and MPI_Session_init and is
 * shared by the world model and every session. It ends at MPI_Finalize if no process of the job
 * has a session open or ever had one (a pure world-model job keeps its ending, barrier included);
 * otherwise it stays, so that sessions may still be opened after MPI_Finalize as MPI 4 allows, and
 * ends at process exit (wm_core_exit: a barrier of every process of the job, which all reach
 * since they all exit, then the core's teardown). The choice is agreed at MPI_Finalize (an
 * allreduce), and a job that never calls MPI_Init ends at exit, so every process takes the same
 * path and the barriers match. A process whose core ended at MPI_Finalize cannot open a session
 * afterwards (the launcher's PMI and the transports cannot be set up twice): MPI_ERR_OTHER.
 *
 * Concurrency contract: wm_life_lock guards starting and ending the core and the fields below;
 * taken by MPI_Init*, MPI_Finalize, MPI_Session_init/finalize (any thread) and the exit hook. */
/* A threading-layer mutex (not glibc's): starting and ending the core wait for other ranks, and
 * under a user-level-thread backend a thread that waits lets others run, one of which may come here;
 * a glibc mutex would then block the OS thread that runs the holder. */
static wt_mutex_t wm_life_lock = WT_MUTEX_INITIALIZER;
static int wm_life_sessions;      /* sessions open now */
static bool wm_life_used;         /* a session was ever opened by this process */
static bool wm_life_ended;        /* the core ended: it cannot start again in this process */

/* Start the core; wm_life_lock held. Errors go to eh. */
static int wm_core_start(const char *fn, int required, MPI_Errhandler eh)
{
    wm_datatype_init();
    wm_bsend_init();
    wm_request_init();
    wc_fatal_fn = wm_error_fatal_async;
    wu_status_t st = wc_init(required == MPI_THREAD_MULTIPLE);
    if (st != WU_OK) {
        wu_log_error("%s: start-up failed: %s", fn, wu_status_str(st));
        return wm_error_eh(eh, MPI_SESSION_NULL,
                           wm_error_code(MPI_ERR_OTHER, fn, "start-up failed: %s", wu_status_str(st)));
    }
    wm_state.thread_level = required;
    wm_main_thread = wt_thread_self();

    wm_comm_world = (wm_comm_t){ .ctx = WM_CTX_WORLD, .rank = wc_world.rank,
                                 .size = wc_world.size, .remote_size = wc_world.size, .errh = MPI_ERRORS_ARE_FATAL,
                                 .info = MPI_INFO_NULL, .name = "MPI_COMM_WORLD" };
    wm_obj_init_predefined(&wm_comm_world.obj, WM_OBJ_COMM, (uintptr_t)MPI_COMM_WORLD, NULL);
    wm_comm_self = (wm_comm_t){ .ctx = WM_CTX_SELF, .rank = 0, .size = 1, .remote_size = 1,
                                .world_ranks = &wc_world.rank,
                                .remote_world_ranks = &wc_world.rank, .errh = MPI_ERRORS_ARE_FATAL,
                                .info = MPI_INFO_NULL, .name = "MPI_COMM_SELF" };
    wm_obj_init_predefined(&wm_comm_self.obj, WM_OBJ_COMM, (uintptr_t)MPI_COMM_SELF, NULL);
    wm_group_init();
    wm_init_pid = getpid();
    atexit(wm_exit_hook);   /* once: the core cannot start again */
    atomic_store(&wm_state.up, 1);
    return MPI_SUCCESS;
}

/* End the core after the synchronizing collective; wm_life_lock held. */
static wu_status_t wm_core_end(void)
{
    wm_coll_hier_free(&wm_comm_world);   /* the predefined communicators are never destroyed */
    wm_coll_hier_free(&wm_comm_self);
    wm_obj_finalize();
    wu_status_t st = wc_finalize();
    atomic_store(&wm_state.up, 0);
    wm_life_ended = true;
    return st;
}

int wm_life_session_open(const char *fn, MPI_Errhandler eh, int *thread_level_p)
{
    wt_mutex_lock_always(&wm_life_lock);
    int rc = MPI_SUCCESS;
    if (wm_life_ended)
        rc = wm_error_eh(eh, MPI_SESSION_NULL,
                         wm_error_code(MPI_ERR_OTHER, fn, "MPI ended in this process at MPI_Finalize "
                                       "(no process of the job had opened a session by then) and "
                                       "cannot start again"));
    else if (!atomic_load(&wm_state.up))
        rc = wm_core_start(fn, MPI_THREAD_MULTIPLE, eh);   /* sessions may be used by any thread */
    if (rc == MPI_SUCCESS) {
        wm_life_sessions++;
        wm_life_used = true;
        *thread_level_p = wm_state.thread_level;
    }
    wt_mutex_unlock_always(&wm_life_lock);
    return rc;
}

void wm_life_session_close(void)
{
    wt_mutex_lock_always(&wm_life_lock);
    wm_life_sessions--;
    wt_mutex_unlock_always(&wm_life_lock);
}

static int wm_init_common(const char *fn, int required, int *provided)
{
    wt_mutex_lock_always(&wm_life_lock);
    int rc = MPI_SUCCESS;
    if (wm_state.initialized)
        rc = wm_error(NULL, MPI_ERR_OTHER, fn, "MPI is already initialized");
    else if (!atomic_load(&wm_state.up))
        rc = wm_core_start(fn, required, MPI_ERRORS_ARE_FATAL);
    /* else a session started the core, at MPI_THREAD_MULTIPLE: that is what is provided */
    if (rc == MPI_SUCCESS) {
        wm_main_thread = wt_thread_self();
        wm_state.initialized = 1;
        if (provided)
            *provided = wm_state.thread_level;
    }
    wt_mutex_unlock_always(&wm_life_lock);
    /* a spawned process connects back to its parents (docs/dynamic.md) */
    return rc == MPI_SUCCESS ? wm_dpm_init_parent() : rc;
}

int wm_impl_MPI_Init(int *argc, char ***argv)
{
    return wm_init_common("MPI_Init", MPI_THREAD_SINGLE, NULL);
}

int wm_impl_MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    if (!provided)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Init_thread", "provided is NULL");
    if (required != MPI_THREAD_SINGLE && required != MPI_THREAD_FUNNELED &&
        required != MPI_THREAD_SERIALIZED && required != MPI_THREAD_MULTIPLE)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Init_thread", "invalid thread level %d", required);
    return wm_init_common("MPI_Init_thread", required, provided);
}

int wm_impl_MPI_Finalize(void)
{
    static const char fn[] = "MPI_Finalize";
    WM_CHECK_INIT(fn);
    /* MPI_COMM_SELF's attributes are deleted first, while everything still works (MPI 4.0 11.2.4) */
    wm_attr_finalize();
    /* An operation still pending now, and not freed, is the program's error (MPI_Finalize requires
     * every operation the process started to be complete): it is abandoned, and named. */
    wm_leave(fn, false);
    /* Every rank reaches here after completing its own communication; the allreduce (a barrier
     * that also agrees whether any process of the job uses sessions) makes sure the last control
     * packets (FIN, ACK) of every pair were consumed before the rings go away. */
    wt_mutex_lock_always(&wm_life_lock);
    int keep = wm_life_used || wm_life_sessions > 0, any = 0;
    wt_mutex_unlock_always(&wm_life_lock);
    int rc = PMPI_Allreduce(&keep, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS)
        return wm_error_raise(&wm_comm_world, rc);
    wm_dpm_finalize();
    wt_mutex_lock_always(&wm_life_lock);
    wu_status_t st = WU_OK;
    if (!any)
        st = wm_core_end();
    else
        wm_life_used = true;   /* the core ends at exit, with every process's */
    wm_state.finalized = 1;
    wt_mutex_unlock_always(&wm_life_lock);
    if (st != WU_OK)
        return wm_error(NULL, MPI_ERR_OTHER, fn, "shutdown failed: %s", wu_status_str(st));
    return MPI_SUCCESS;
}

int wm_impl_MPI_Initialized(int *flag)
{
    if (!flag)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Initialized", "flag is NULL");
    *flag = wm_state.initialized;
    return MPI_SUCCESS;
}

int wm_impl_MPI_Finalized(int *flag)
{
    if (!flag)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Finalized", "flag is NULL");
    *flag = wm_state.finalized;
    return MPI_SUCCESS;
}

int wm_impl_MPI_Query_thread(int *provided)
{
    if (!provided)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Query_thread", "provided is NULL");
    *provided = wm_state.thread_level;
    return MPI_SUCCESS;
}

int wm_impl_MPI_Is_thread_main(int *flag)
{
    static const char fn[] = "MPI_Is_thread_main";
    WM_CHECK_INIT(fn);
    if (!flag)
        return wm_error(NULL, MPI_ERR_ARG, fn, "flag is NULL");
    *flag = wt_thread_equal(wt_thread_self(), wm_main_thread);
    return MPI_SUCCESS;
}

int wm_impl_MPI_Abort(MPI_Comm comm, int errorcode)
{
    char msg[128];
    snprintf(msg, sizeof(msg), "MPI_Abort called with error code %d", errorcode);
    if (!wm_state.initialized || wm_state.finalized) {
        wu_log_error("%s", msg);
        _exit(errorcode ? errorcode : 1);
    }
    wc_abort(errorcode, msg);
}

/* At exit, a core still up after the world model ended or without it: every process of the job
 * comes here (see wm_life_lock), so the barrier matches; sessions still open are the program's
 * error and are abandoned. */
static void wm_core_exit(void)
{
    wt_mutex_lock_always(&wm_life_lock);
    if (atomic_load(&wm_state.up) && !wm_life_ended) {
        if (wm_life_sessions > 0)
            wu_log_error("exit with %d MPI session(s) not finalized", wm_life_sessions);
        wm_leave("exit", false);
        wm_barrier(&wm_comm_world);
        wu_status_t st = wm_core_end();
        if (st != WU_OK)
            wu_log_error("shutdown at exit failed: %s", wu_status_str(st));
    }
    wt_mutex_unlock_always(&wm_life_lock);
}
