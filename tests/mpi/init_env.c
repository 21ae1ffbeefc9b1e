/* Initialization and environment: Initialized/Finalized before, during and after; Init_thread returns
 * a level no higher than requested that Query_thread repeats (or MPI_Init with argument --init);
 * Is_thread_main; Get_version equals the header's MPI_VERSION.MPI_SUBVERSION (5.0 with --weft);
 * Get_library_version and Get_processor_name non-empty and terminated; Wtime monotonic and advancing,
 * Wtick positive; Comm_dup of MPI_COMM_WORLD isolates traffic (same source and tag on WORLD and the
 * dup never mix, wildcards included); Comm_free of the dup. Runs with any number of ranks. */
#include "mpitest.h"

static void before_init(void)
{
    int flag = -1, v = -1, sv = -1, len = -1;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    MT_CALL(MPI_Initialized(&flag));
    MT_EQ("MPI_Initialized before MPI_Init", 0, flag);
    flag = -1;
    MT_CALL(MPI_Finalized(&flag));
    MT_EQ("MPI_Finalized before MPI_Init", 0, flag);
    MT_CALL(MPI_Get_version(&v, &sv));
    MT_EQ("MPI_Get_version before MPI_Init: version", MPI_VERSION, v);
    MT_EQ("MPI_Get_version before MPI_Init: subversion", MPI_SUBVERSION, sv);
    MT_CALL(MPI_Get_library_version(lib, &len));
    MT_TRUE(len > 0 && len < MPI_MAX_LIBRARY_VERSION_STRING && (int)strlen(lib) == len,
            "MPI_Get_library_version before MPI_Init expected a terminated non-empty string, length %d", len);
}

static void versions(void)
{
    int v = -1, sv = -1, len = -1;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING + 1];
    MT_CALL(MPI_Get_version(&v, &sv));
    MT_EQ("MPI_Get_version: version", MPI_VERSION, v);
    MT_EQ("MPI_Get_version: subversion", MPI_SUBVERSION, sv);
    if (mt_weft) {
        MT_EQ("MPI_Get_version of Weft: version", 5, v);
        MT_EQ("MPI_Get_version of Weft: subversion", 0, sv);
    }
    memset(lib, 'X', sizeof lib);
    MT_CALL(MPI_Get_library_version(lib, &len));
    MT_TRUE(len > 0 && len < MPI_MAX_LIBRARY_VERSION_STRING && lib[len] == '\0' && (int)strlen(lib) == len,
            "MPI_Get_library_version expected a terminated non-empty string, length %d", len);
    if (mt_weft)
        MT_TRUE(strcasestr(lib, "weft") != NULL, "MPI_Get_library_version of Weft expected to name Weft got \"%s\"",
                lib);

    char name[MPI_MAX_PROCESSOR_NAME + 1];
    memset(name, 'X', sizeof name);
    len = -1;
    MT_CALL(MPI_Get_processor_name(name, &len));
    MT_TRUE(len > 0 && len < MPI_MAX_PROCESSOR_NAME && name[len] == '\0' && (int)strlen(name) == len,
            "MPI_Get_processor_name expected a terminated non-empty name, length %d", len);
}

static void threads(int requested, int provided)
{
    int q = -1, main_flag = -1;
    MT_TRUE(MPI_THREAD_SINGLE < MPI_THREAD_FUNNELED && MPI_THREAD_FUNNELED < MPI_THREAD_SERIALIZED &&
                MPI_THREAD_SERIALIZED < MPI_THREAD_MULTIPLE,
            "thread levels expected ordered SINGLE < FUNNELED < SERIALIZED < MULTIPLE");
    MT_TRUE(provided >= MPI_THREAD_SINGLE && provided <= requested,
            "Init_thread provided expected a level between MPI_THREAD_SINGLE and the requested %d got %d",
            requested, provided);
    MT_CALL(MPI_Query_thread(&q));
    MT_EQ("MPI_Query_thread", provided, q);
    MT_CALL(MPI_Is_thread_main(&main_flag));
    MT_EQ("MPI_Is_thread_main in the thread that called Init", 1, main_flag);
}

static void clocks(void)
{
    double tick = MPI_Wtick();
    MT_TRUE(tick > 0 && tick < 1, "MPI_Wtick expected in (0, 1) got %g", tick);
    double prev = MPI_Wtime(), start = prev;
    for (int i = 0; i < 100000; i++) {
        double t = MPI_Wtime();
        MT_TRUE(t >= prev, "MPI_Wtime went back from %.9f to %.9f", prev, t);
        prev = t;
    }
    mt_sleep_ms(30);
    double end = MPI_Wtime();
    MT_TRUE(end - start >= 0.025 && end - start < 30,
            "MPI_Wtime across a 30 ms sleep expected to advance 0.025..30 s got %.6f", end - start);
}

/* Rank 0 sends, on the dup first and then on WORLD, with the same tag; each rank > 0 receives on WORLD
 * first (must get the WORLD message, not the older dup one), then with wildcards on the dup. */
static void dup_isolation(void)
{
    MPI_Comm dup = MPI_COMM_NULL;
    int r = -1, s = -1;
    MT_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MT_TRUE(dup != MPI_COMM_NULL && dup != MPI_COMM_WORLD, "Comm_dup expected a new communicator");
    MT_CALL(MPI_Comm_rank(dup, &r));
    MT_CALL(MPI_Comm_size(dup, &s));
    MT_EQ("rank in the dup", mt_rank, r);
    MT_EQ("size of the dup", mt_size, s);

    if (mt_rank == 0) {
        MPI_Request *reqs = mt_malloc(sizeof(MPI_Request) * 2 * mt_size);
        static int vd = 111, vw = 222;
        int k = 0;
        for (int dst = 1; dst < mt_size; dst++) {
            MT_CALL(MPI_Isend(&vd, 1, MPI_INT, dst, 5, dup, &reqs[k++]));
            MT_CALL(MPI_Isend(&vw, 1, MPI_INT, dst, 5, MPI_COMM_WORLD, &reqs[k++]));
        }
        MT_CALL(MPI_Waitall(k, reqs, MPI_STATUSES_IGNORE));
        free(reqs);
    } else {
        int v = -1, flag = 1;
        MPI_Status st;
        MT_CALL(MPI_Probe(0, 5, dup, &st)); /* the dup message has arrived */
        MT_CALL(MPI_Recv(&v, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, &st));
        MT_EQ("message received on WORLD", 222, v);
        MT_CALL(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
        MT_EQ("WORLD wildcard Iprobe with only a dup message pending", 0, flag);
        MT_CALL(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &st));
        MT_EQ("message received on the dup", 111, v);
        MT_STATUS("message received on the dup", st, 0, 5, sizeof(int));
    }
    MT_CALL(MPI_Barrier(dup));
    MT_CALL(MPI_Comm_free(&dup));
    MT_TRUE(dup == MPI_COMM_NULL, "Comm_free expected to set MPI_COMM_NULL");

    /* a second dup after the first was freed */
    MT_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size, v = -1;
    MT_CALL(MPI_Sendrecv(&mt_rank, 1, MPI_INT, right, 0, &v, 1, MPI_INT, left, 0, dup, MPI_STATUS_IGNORE));
    MT_EQ("ring value on a second dup", left, v);
    MT_CALL(MPI_Comm_free(&dup));
}

int main(int argc, char **argv)
{
    int use_init = 0;
    for (int i = 1; i < argc; i++) {
        use_init |= strcmp(argv[i], "--init") == 0;
        mt_weft |= strcmp(argv[i], "--weft") == 0;
    }
    before_init();

    int provided = -1, requested = use_init ? MPI_THREAD_SINGLE : MPI_THREAD_MULTIPLE, flag = -1;
    if (use_init) {
        MT_CALL(MPI_Init(&argc, &argv));
        MT_CALL(MPI_Query_thread(&provided));
        MT_TRUE(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_MULTIPLE,
                "Query_thread after MPI_Init expected a thread level got %d", provided);
        requested = provided;
    } else {
        MT_CALL(MPI_Init_thread(&argc, &argv, requested, &provided));
    }
    MT_CALL(MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank));
    MT_CALL(MPI_Comm_size(MPI_COMM_WORLD, &mt_size));
    MT_CALL(MPI_Initialized(&flag));
    MT_EQ("MPI_Initialized after MPI_Init", 1, flag);
    MT_CALL(MPI_Finalized(&flag));
    MT_EQ("MPI_Finalized after MPI_Init", 0, flag);

    threads(requested, provided);
    versions();
    clocks();
    dup_isolation();
    for (int i = 0; i < 100; i++)
        MT_CALL(MPI_Barrier(MPI_COMM_WORLD));

    /* every rank sends its rank to 0: sizes and ranks agree */
    if (mt_rank == 0) {
        int *seen = calloc(mt_size, sizeof(int));
        for (int i = 1; i < mt_size; i++) {
            int v = -1;
            MPI_Status st;
            MT_CALL(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &st));
            MT_EQ("rank reported by its source", st.MPI_SOURCE, v);
            MT_EQ("times a rank reported", 0, seen[v]);
            seen[v] = 1;
        }
        free(seen);
    } else {
        MT_CALL(MPI_Send(&mt_rank, 1, MPI_INT, 0, 9, MPI_COMM_WORLD));
    }

    if (mt_rank == 0)
        printf("init_env: %d ranks ok, thread level %d\n", mt_size, provided);
    MT_CALL(MPI_Finalize());
    MT_CALL(MPI_Finalized(&flag));
    MT_EQ("MPI_Finalized after MPI_Finalize", 1, flag);
    MT_CALL(MPI_Initialized(&flag));
    MT_EQ("MPI_Initialized after MPI_Finalize", 1, flag);
    return 0;
}
