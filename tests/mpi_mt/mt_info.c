/* Info objects, keyvals, attributes, error handlers and added error classes from many threads at
 * once. Each thread works on objects of its own (its info objects, its keyvals, its communicator,
 * its error handlers) and, through keyvals of its own, on attributes of the shared MPI_COMM_WORLD
 * and MPI_INT; every value read back must be the one the thread wrote. Under TSan this is the
 * check that distinct objects share no unsynchronized state.
 * Arguments: n (iterations per thread, default 300), --threads=T. */
#include "mttest.h"

static long n_iter = 300;
static MPI_Comm comms[MTT_MAX_THREADS];   /* one dup of MPI_COMM_WORLD per thread */
static _Atomic int deletes[MTT_MAX_THREADS];

static int delete_cb(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)val;
    atomic_fetch_add(&deletes[(int)(intptr_t)extra], 1);
    return MPI_SUCCESS;
}

static int handled[MTT_MAX_THREADS];
static void handler(MPI_Comm *comm, int *code, ...)
{
    (void)code;
    for (int t = 0; t < mtt_nthreads; t++)
        if (comms[t] == *comm)
            handled[t]++;   /* only thread t raises errors on comms[t] */
}

static void worker(int t, void *arg)
{
    (void)arg;
    char key[64], val[128], got[128];
    for (long i = 0; i < n_iter; i++) {
        mtt_at("info objects, iteration %ld of thread %ld", i, t);
        MPI_Info info, dup;
        MT_CALL(MPI_Info_create(&info));
        for (int k = 0; k < 8; k++) {
            snprintf(key, sizeof key, "k%d", k);
            snprintf(val, sizeof val, "thread %d iteration %ld key %d", t, i, k);
            MT_CALL(MPI_Info_set(info, key, val));
        }
        MT_CALL(MPI_Info_dup(info, &dup));
        MT_CALL(MPI_Info_delete(info, "k3"));
        for (int k = 0; k < 8; k++) {
            int flag = 0, buflen = (int)sizeof got;
            snprintf(key, sizeof key, "k%d", k);
            snprintf(val, sizeof val, "thread %d iteration %ld key %d", t, i, k);
            MT_CALL(MPI_Info_get_string(dup, key, &buflen, got, &flag));
            MT_TRUE(flag && strcmp(got, val) == 0, "thread %d: %s expected \"%s\" got \"%s\"", t, key, val, got);
        }
        MT_CALL(MPI_Info_free(&info));
        MT_CALL(MPI_Info_free(&dup));

        mtt_at("keyvals and attributes, iteration %ld of thread %ld", i, t);
        int kv, tk;
        MT_CALL(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, delete_cb, &kv, (void *)(intptr_t)t));
        MT_CALL(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, &tk, NULL));
        void *v = (void *)(intptr_t)(t * 100000 + i);
        MT_CALL(MPI_Comm_set_attr(comms[t], kv, v));
        MT_CALL(MPI_Comm_set_attr(MPI_COMM_WORLD, kv, v));
        MT_CALL(MPI_Type_set_attr(MPI_INT, tk, v));
        void *g1 = NULL, *g2 = NULL, *g3 = NULL;
        int f1 = 0, f2 = 0, f3 = 0;
        MT_CALL(MPI_Comm_get_attr(comms[t], kv, &g1, &f1));
        MT_CALL(MPI_Comm_get_attr(MPI_COMM_WORLD, kv, &g2, &f2));
        MT_CALL(MPI_Type_get_attr(MPI_INT, tk, &g3, &f3));
        MT_TRUE(f1 && f2 && f3 && g1 == v && g2 == v && g3 == v, "thread %d: attributes expected %p back", t, v);
        int *ub = NULL;
        MT_CALL(MPI_Comm_get_attr(comms[t], MPI_TAG_UB, &ub, &f1));
        MT_TRUE(f1 && *ub >= 32767, "thread %d: MPI_TAG_UB expected", t);
        MT_CALL(MPI_Comm_delete_attr(MPI_COMM_WORLD, kv));
        MT_CALL(MPI_Type_delete_attr(MPI_INT, tk));
        MT_CALL(MPI_Comm_free_keyval(&kv));   /* the attribute on comms[t] keeps it until the free */
        MT_CALL(MPI_Type_free_keyval(&tk));

        mtt_at("error handlers and classes, iteration %ld of thread %ld", i, t);
        MPI_Errhandler eh, got_eh;
        MT_CALL(MPI_Comm_create_errhandler(handler, &eh));
        MT_CALL(MPI_Comm_set_errhandler(comms[t], eh));
        MT_CALL(MPI_Errhandler_free(&eh));
        int before = handled[t];
        int x = 0;
        int rc = MPI_Send(&x, 1, MPI_INT, mt_size, 0, comms[t]);
        MT_CLASS_EQ("Send to a bad rank", MPI_ERR_RANK, rc);
        MT_EQ("handler calls", before + 1, handled[t]);
        MT_CALL(MPI_Comm_get_errhandler(comms[t], &got_eh));
        MT_CALL(MPI_Comm_set_errhandler(comms[t], MPI_ERRORS_RETURN));
        MT_CALL(MPI_Errhandler_free(&got_eh));
        if (i % 16 == 0) {
            int cls, code, c2;
            MT_CALL(MPI_Add_error_class(&cls));
            MT_CALL(MPI_Add_error_code(cls, &code));
            snprintf(val, sizeof val, "thread %d code %ld", t, i);
            MT_CALL(MPI_Add_error_string(code, val));
            MT_CALL(MPI_Error_class(code, &c2));
            MT_EQ("class of an added code", cls, c2);
            int len = 0;
            MT_CALL(MPI_Error_string(code, got, &len));
            MT_TRUE(strcmp(got, val) == 0, "thread %d: error string expected \"%s\" got \"%s\"", t, val, got);
        }
        mtt_count(1);
    }
}

int main(int argc, char **argv)
{
    long nums[1] = {n_iter};
    mtt_args(argc, argv, nums, 1);
    n_iter = nums[0];
    mtt_init(&argc, &argv);
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    for (int t = 0; t < mtt_nthreads; t++) {
        MT_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]));
        MT_CALL(MPI_Comm_set_errhandler(comms[t], MPI_ERRORS_RETURN));
    }
    mtt_run(mtt_nthreads, worker, NULL);
    for (int t = 0; t < mtt_nthreads; t++) {
        /* each iteration's keyval: its attribute on WORLD was deleted, the one on comms[t] (of a
         * freed keyval) goes with the communicator */
        MT_EQ("delete callbacks before the free", n_iter, atomic_load(&deletes[t]));
        MT_CALL(MPI_Comm_free(&comms[t]));
        MT_EQ("delete callbacks after the free", 2 * n_iter, atomic_load(&deletes[t]));
    }
    return mtt_finish("mt_info");
}
