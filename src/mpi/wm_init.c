/* MPI_Init and friends: world set-up and teardown, thread level, abort. */
#include "mpi/wm_internal.h"
#include "mpi/wm_coll.h"
#include "mpi/wm_group.h"
#include "thread/wt_thread.h"
#include "util/wu_log.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

wm_state_t wm_state;
static pthread_t wm_main_thread;
static pid_t wm_init_pid;

/* The process leaves with operations that may be pending: the core abandons them (nothing reads
 * or writes their buffers any more; exiting, the engine's threads stop: wc_quiesce), then the user
 * learns which. */
static void wm_leave(const char *when, bool exiting)
{
    wc_quiesce(exiting);
    wm_request_warn_pending(when);
}

/* atexit: the program exits, or returns from main, without MPI_Finalize; the engine's threads
 * must not run on into the program's teardown. Not in a child the program forked (the threads are
 * not there). */
static void wm_exit_hook(void)
{
    if (wm_state.initialized && !wm_state.finalized && getpid() == wm_init_pid)
        wm_leave("exit without MPI_Finalize", true);
}

static int wm_init_common(const char *fn, int required, int *provided)
{
    if (wm_state.initialized)
        return wm_error(NULL, MPI_ERR_OTHER, fn, "MPI is already initialized");
    wm_datatype_init();
    wm_bsend_init();
    wm_request_init();
    wc_fatal_fn = wm_error_fatal_async;
    wu_status_t st = wc_init(required == MPI_THREAD_MULTIPLE);
    if (st != WU_OK) {
        wu_log_error("%s: start-up failed: %s", fn, wu_status_str(st));
        return wm_error(NULL, MPI_ERR_OTHER, fn, "start-up failed: %s", wu_status_str(st));
    }
    wm_state.thread_level = required;
    wm_main_thread = pthread_self();

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
    atexit(wm_exit_hook);   /* once: MPI cannot be initialized again */
    wm_state.initialized = 1;
    if (provided)
        *provided = wm_state.thread_level;
    return wm_dpm_init_parent();
}

WM_API int PMPI_Init(int *argc, char ***argv)
{
    return wm_init_common("MPI_Init", MPI_THREAD_SINGLE, NULL);
}
WM_ALIAS(MPI_Init)

WM_API int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    if (!provided)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Init_thread", "provided is NULL");
    if (required != MPI_THREAD_SINGLE && required != MPI_THREAD_FUNNELED &&
        required != MPI_THREAD_SERIALIZED && required != MPI_THREAD_MULTIPLE)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Init_thread", "invalid thread level %d", required);
    return wm_init_common("MPI_Init_thread", required, provided);
}
WM_ALIAS(MPI_Init_thread)

WM_API int PMPI_Finalize(void)
{
    static const char fn[] = "MPI_Finalize";
    WM_CHECK_INIT(fn);
    /* MPI_COMM_SELF's attributes are deleted first, while everything still works (MPI 4.0 11.2.4) */
    wm_attr_finalize();
    /* An operation still pending now, and not freed, is the program's error (MPI_Finalize requires
     * every operation the process started to be complete): it is abandoned, and named. */
    wm_leave(fn, false);
    /* Every rank reaches here after completing its own communication; the barrier makes sure the
     * last control packets (FIN, ACK) of every pair were consumed before the rings go away. */
    int rc = wm_barrier(&wm_comm_world);
    if (rc != MPI_SUCCESS)
        return wm_error_raise(&wm_comm_world, rc);
    wm_dpm_finalize();
    wm_coll_hier_free(&wm_comm_world);   /* the predefined communicators are never destroyed */
    wm_coll_hier_free(&wm_comm_self);
    wm_obj_finalize();
    wu_status_t st = wc_finalize();
    wm_state.finalized = 1;
    if (st != WU_OK)
        return wm_error(NULL, MPI_ERR_OTHER, fn, "shutdown failed: %s", wu_status_str(st));
    return MPI_SUCCESS;
}
WM_ALIAS(MPI_Finalize)

WM_API int PMPI_Initialized(int *flag)
{
    if (!flag)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Initialized", "flag is NULL");
    *flag = wm_state.initialized;
    return MPI_SUCCESS;
}
WM_ALIAS(MPI_Initialized)

WM_API int PMPI_Finalized(int *flag)
{
    if (!flag)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Finalized", "flag is NULL");
    *flag = wm_state.finalized;
    return MPI_SUCCESS;
}
WM_ALIAS(MPI_Finalized)

WM_API int PMPI_Query_thread(int *provided)
{
    if (!provided)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Query_thread", "provided is NULL");
    *provided = wm_state.thread_level;
    return MPI_SUCCESS;
}
WM_ALIAS(MPI_Query_thread)

WM_API int PMPI_Is_thread_main(int *flag)
{
    static const char fn[] = "MPI_Is_thread_main";
    WM_CHECK_INIT(fn);
    if (!flag)
        return wm_error(NULL, MPI_ERR_ARG, fn, "flag is NULL");
    *flag = pthread_equal(pthread_self(), wm_main_thread) != 0;
    return MPI_SUCCESS;
}
WM_ALIAS(MPI_Is_thread_main)

WM_API int PMPI_Abort(MPI_Comm comm, int errorcode)
{
    char msg[128];
    snprintf(msg, sizeof(msg), "MPI_Abort called with error code %d", errorcode);
    if (!wm_state.initialized || wm_state.finalized) {
        wu_log_error("%s", msg);
        _exit(errorcode ? errorcode : 1);
    }
    wc_abort(errorcode, msg);
}
WM_ALIAS(MPI_Abort)
