/* MPI_T, from the standard's chapter on the tool information interface: control variables,
 * performance variables with sessions and handles, categories, enumerations, event sources and
 * events, error codes, and use before MPI_Init, after MPI_Finalize and from several threads.
 *
 *   tool_mpit [--weft] [--rndv=pipeline|get|get_async|coop]
 *                           2 or more ranks; ranks 0 and 1 exchange a known pattern (whose one
 *                           rendezvous message takes the protocol named, if one is)
 *   tool_mpit --queued      also: sends that find the transport full are counted (run it without
 *                           idle and timer threads, so the receiver drains nothing while away)
 *   tool_mpit --list        1 rank, no MPI_Init: print "cvar NAME" and "pvar NAME CLASS" lines
 *                           (compared with weft-info by tools.weft_info_mpit)
 * With --weft the checks that name Weft's variables run too; the test sets WEFT_SPIN_US=37,
 * WEFT_SHM_EAGER_MAX=8k and WEFT_WAIT_YIELD=1 in the environment and the program compares. */
#include "mpitest.h"

#include <pthread.h>

#define T_CALL(call)                                                                               \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != MPI_SUCCESS)                                                                    \
            MT_FAIL("%s returned %d", #call, rc_);                                                 \
    } while (0)
#define T_ERR(what, expected, call) MT_EQ(what, expected, (call))

static int cvar_index(const char *name)
{
    int i = -1;
    T_CALL(MPI_T_cvar_get_index(name, &i));
    return i;
}

static int pvar_index(const char *name, int cls)
{
    int i = -1;
    T_CALL(MPI_T_pvar_get_index(name, cls, &i));
    return i;
}

/* Every control variable: get_info (length query, then the strings), get_index finds it again,
 * its enumeration is consistent, a handle reads it. */
static void check_cvars(int list)
{
    int n = -1;
    T_CALL(MPI_T_cvar_get_num(&n));
    MT_TRUE(n > 0, "cvar_get_num > 0, got %d", n);
    for (int i = 0; i < n; i++) {
        int name_len = 0, desc_len = 0, verb, bind, scope;
        MPI_Datatype dt;
        MPI_T_enum en;
        T_CALL(MPI_T_cvar_get_info(i, NULL, &name_len, &verb, &dt, &en, NULL, &desc_len, &bind,
                                   &scope));
        MT_TRUE(name_len > 1 && desc_len > 1, "cvar %d: name and description lengths", i);
        char *name = mt_malloc((size_t)name_len), *desc = mt_malloc((size_t)desc_len);
        int nl = name_len, dl = desc_len;
        T_CALL(MPI_T_cvar_get_info(i, name, &nl, &verb, &dt, &en, desc, &dl, &bind, &scope));
        MT_EQ("name length (including the terminator)", name_len, nl);
        MT_EQ("name length", name_len - 1, strlen(name));
        MT_EQ("cvar_get_index(name)", i, cvar_index(name));
        MT_TRUE(bind >= MPI_T_BIND_NO_OBJECT && bind <= MPI_T_BIND_MPI_SESSION, "cvar %s: bind %d",
                name, bind);
        MT_TRUE(scope >= MPI_T_SCOPE_CONSTANT && scope <= MPI_T_SCOPE_ALL_EQ, "cvar %s: scope %d",
                name, scope);
        MT_TRUE(dt == MPI_INT || dt == MPI_UNSIGNED || dt == MPI_UNSIGNED_LONG ||
                dt == MPI_UNSIGNED_LONG_LONG || dt == MPI_COUNT || dt == MPI_CHAR ||
                dt == MPI_DOUBLE, "cvar %s: a datatype the standard allows", name);
        if (list)
            printf("cvar %s\n", name);
        if (en != MPI_T_ENUM_NULL) {
            MT_TRUE(dt == MPI_INT, "cvar %s: an enumeration's values are MPI_INT", name);
            int items = -1, elen = 0;
            T_CALL(MPI_T_enum_get_info(en, &items, NULL, &elen));
            MT_TRUE(items > 0 && elen > 1, "cvar %s: enumeration has items and a name", name);
            for (int k = 0; k < items; k++) {
                int value, len = 64;
                char item[64];
                T_CALL(MPI_T_enum_get_item(en, k, &value, item, &len));
                MT_EQ("item name length", len - 1, strlen(item));
            }
            int value, len = 64;
            char item[64];
            T_ERR("enum_get_item past the last", MPI_T_ERR_INVALID_INDEX,
                  MPI_T_enum_get_item(en, items, &value, item, &len));
        }
        MPI_T_cvar_handle h;
        int count = -1;
        T_CALL(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
        MT_TRUE(count >= 1, "cvar %s: count %d", name, count);
        char *buf = mt_malloc((size_t)count * 8 + 8);
        T_CALL(MPI_T_cvar_read(h, buf));
        if (dt == MPI_CHAR)
            MT_EQ("string cvar: count is its length + 1", count - 1, strlen(buf));
        T_CALL(MPI_T_cvar_handle_free(&h));
        MT_TRUE(h == MPI_T_CVAR_HANDLE_NULL, "cvar_handle_free sets the handle to NULL");
        free(buf);
        free(name);
        free(desc);
    }
}

static void check_pvars(int list)
{
    int n = -1;
    T_CALL(MPI_T_pvar_get_num(&n));
    MT_TRUE(n > 0, "pvar_get_num > 0, got %d", n);
    for (int i = 0; i < n; i++) {
        char name[128], desc[1024];
        int nl = sizeof(name), dl = sizeof(desc), verb, cls, bind, ro, cont, atomic;
        MPI_Datatype dt;
        MPI_T_enum en;
        T_CALL(MPI_T_pvar_get_info(i, name, &nl, &verb, &cls, &dt, &en, desc, &dl, &bind, &ro,
                                   &cont, &atomic));
        MT_EQ("pvar name length", nl - 1, strlen(name));
        MT_TRUE(cls >= MPI_T_PVAR_CLASS_STATE && cls <= MPI_T_PVAR_CLASS_GENERIC,
                "pvar %s: class %d", name, cls);
        MT_EQ("pvar_get_index(name, class)", i, pvar_index(name, cls));
        int other = cls == MPI_T_PVAR_CLASS_COUNTER ? MPI_T_PVAR_CLASS_TIMER
                                                    : MPI_T_PVAR_CLASS_COUNTER;
        int j;
        T_ERR("pvar_get_index with another class", MPI_T_ERR_INVALID_NAME,
              MPI_T_pvar_get_index(name, other, &j));
        if (list)
            printf("pvar %s %d\n", name, cls);
    }
}

/* Every variable is in a category, the root lists the others, names find their index. */
static void check_categories(void)
{
    int ncat = -1, ncvar, npvar;
    T_CALL(MPI_T_category_get_num(&ncat));
    T_CALL(MPI_T_cvar_get_num(&ncvar));
    T_CALL(MPI_T_pvar_get_num(&npvar));
    MT_TRUE(ncat > 0, "category_get_num > 0");
    int *cv_seen = calloc((size_t)ncvar, sizeof(int)), *pv_seen = calloc((size_t)npvar, sizeof(int));
    for (int c = 0; c < ncat; c++) {
        char name[128], desc[512];
        int nl = sizeof(name), dl = sizeof(desc), nc, np, nsub, nev;
        T_CALL(MPI_T_category_get_info(c, name, &nl, desc, &dl, &nc, &np, &nsub));
        int back = -1;
        T_CALL(MPI_T_category_get_index(name, &back));
        MT_EQ("category_get_index(name)", c, back);
        T_CALL(MPI_T_category_get_num_events(c, &nev));
        int *idx = malloc(sizeof(int) * (size_t)(nc + np + nsub + 1));
        T_CALL(MPI_T_category_get_cvars(c, nc, idx));
        for (int k = 0; k < nc; k++) {
            MT_TRUE(idx[k] >= 0 && idx[k] < ncvar, "category %s: cvar index %d", name, idx[k]);
            cv_seen[idx[k]]++;
        }
        T_CALL(MPI_T_category_get_pvars(c, np, idx));
        for (int k = 0; k < np; k++) {
            MT_TRUE(idx[k] >= 0 && idx[k] < npvar, "category %s: pvar index %d", name, idx[k]);
            pv_seen[idx[k]]++;
        }
        T_CALL(MPI_T_category_get_categories(c, nsub, idx));
        for (int k = 0; k < nsub; k++)
            MT_TRUE(idx[k] >= 0 && idx[k] < ncat && idx[k] != c, "category %s: sub-category %d",
                    name, idx[k]);
        free(idx);
    }
    if (mt_weft) {
        for (int i = 0; i < ncvar; i++)
            MT_EQ("categories holding a cvar", 1, cv_seen[i]);
        for (int i = 0; i < npvar; i++)
            MT_EQ("categories holding a pvar", 1, pv_seen[i]);
    }
    int upd = -1;
    T_CALL(MPI_T_category_changed(&upd));
    MT_TRUE(upd >= 0, "category_changed");
    free(cv_seen);
    free(pv_seen);
}

static void check_errors(void)
{
    int ncvar, npvar, ncat, x;
    char s[64];
    int len = sizeof(s);
    T_CALL(MPI_T_cvar_get_num(&ncvar));
    T_CALL(MPI_T_pvar_get_num(&npvar));
    T_CALL(MPI_T_category_get_num(&ncat));
    T_ERR("cvar_get_info(-1)", MPI_T_ERR_INVALID_INDEX,
          MPI_T_cvar_get_info(-1, s, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    T_ERR("cvar_get_info(num)", MPI_T_ERR_INVALID_INDEX,
          MPI_T_cvar_get_info(ncvar, s, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    T_ERR("pvar_get_info(num)", MPI_T_ERR_INVALID_INDEX,
          MPI_T_pvar_get_info(npvar, s, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                              NULL, NULL));
    T_ERR("category_get_info(num)", MPI_T_ERR_INVALID_INDEX,
          MPI_T_category_get_info(ncat, s, &len, NULL, NULL, NULL, NULL, NULL));
    T_ERR("category_get_cvars(-1)", MPI_T_ERR_INVALID_INDEX, MPI_T_category_get_cvars(-1, 0, NULL));
    MPI_T_cvar_handle ch;
    T_ERR("cvar_handle_alloc(num)", MPI_T_ERR_INVALID_INDEX,
          MPI_T_cvar_handle_alloc(ncvar, NULL, &ch, &x));
    T_ERR("cvar_get_index(unknown)", MPI_T_ERR_INVALID_NAME,
          MPI_T_cvar_get_index("no_such_variable", &x));
    T_ERR("pvar_get_index(unknown)", MPI_T_ERR_INVALID_NAME,
          MPI_T_pvar_get_index("no_such_variable", MPI_T_PVAR_CLASS_COUNTER, &x));
    T_ERR("category_get_index(unknown)", MPI_T_ERR_INVALID_NAME,
          MPI_T_category_get_index("no_such_category", &x));
    T_ERR("event_get_index(unknown)", MPI_T_ERR_INVALID_NAME,
          MPI_T_event_get_index("no_such_event", &x));
    T_ERR("cvar_read(NULL handle)", MPI_T_ERR_INVALID_HANDLE,
          MPI_T_cvar_read(MPI_T_CVAR_HANDLE_NULL, &x));
    T_ERR("enum_get_info(NULL enum)", MPI_T_ERR_INVALID_HANDLE,
          MPI_T_enum_get_info(MPI_T_ENUM_NULL, &x, s, &len));

    /* events: the number, and an index past it */
    int nev = -1;
    T_CALL(MPI_T_event_get_num(&nev));
    MT_TRUE(nev >= 0, "event_get_num");
    MPI_T_event_registration reg;
    T_ERR("event_handle_alloc(num)", MPI_T_ERR_INVALID_INDEX,
          MPI_T_event_handle_alloc(nev, NULL, MPI_INFO_NULL, &reg));
    T_ERR("event_get_info(num)", MPI_T_ERR_INVALID_INDEX,
          MPI_T_event_get_info(nev, s, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));

    /* sources: the clock ticks forward */
    int nsrc = -1;
    T_CALL(MPI_T_source_get_num(&nsrc));
    if (nsrc > 0) {
        MPI_T_source_order ord;
        MPI_Count tps, maxt, t0, t1;
        MPI_Info info = MPI_INFO_NULL;
        len = sizeof(s);
        T_CALL(MPI_T_source_get_info(0, s, &len, NULL, NULL, &ord, &tps, &maxt, &info));
        MT_TRUE(tps > 0, "source ticks per second");
        if (info != MPI_INFO_NULL)
            T_CALL(MPI_Info_free(&info));
        T_CALL(MPI_T_source_get_timestamp(0, &t0));
        T_CALL(MPI_T_source_get_timestamp(0, &t1));
        MT_TRUE(t1 >= t0, "source timestamps go forward");
    }
    T_ERR("source_get_timestamp(num)", MPI_T_ERR_INVALID_INDEX,
          MPI_T_source_get_timestamp(nsrc, &(MPI_Count){ 0 }));

    /* pvar sessions and handles */
    MPI_T_pvar_session a, b;
    MPI_T_pvar_handle h;
    unsigned long long v;
    T_CALL(MPI_T_pvar_session_create(&a));
    T_CALL(MPI_T_pvar_session_create(&b));
    T_CALL(MPI_T_pvar_handle_alloc(a, 0, NULL, &h, &x));
    T_ERR("pvar_handle_alloc(num)", MPI_T_ERR_INVALID_INDEX,
          MPI_T_pvar_handle_alloc(a, npvar, NULL, &h, &x));
    T_ERR("pvar_read of another session's handle", MPI_T_ERR_INVALID_HANDLE,
          MPI_T_pvar_read(b, h, &v));
    T_ERR("pvar_read(NULL handle)", MPI_T_ERR_INVALID_HANDLE,
          MPI_T_pvar_read(a, MPI_T_PVAR_HANDLE_NULL, &v));
    T_ERR("pvar_read(MPI_T_PVAR_ALL_HANDLES)", MPI_T_ERR_INVALID_HANDLE,
          MPI_T_pvar_read(a, MPI_T_PVAR_ALL_HANDLES, &v));
    T_ERR("pvar_read(NULL session)", MPI_T_ERR_INVALID_SESSION,
          MPI_T_pvar_read(MPI_T_PVAR_SESSION_NULL, h, &v));
    T_CALL(MPI_T_pvar_handle_free(a, &h));
    MT_TRUE(h == MPI_T_PVAR_HANDLE_NULL, "pvar_handle_free sets the handle to NULL");
    T_CALL(MPI_T_pvar_session_free(&b));
    MT_TRUE(b == MPI_T_PVAR_SESSION_NULL, "pvar_session_free sets the session to NULL");
    T_CALL(MPI_T_pvar_session_free(&a));
}

/* The settings the test put in the environment, read back; a read-only one refuses writes. */
static void check_cvar_env(void)
{
    MPI_T_cvar_handle h;
    int count, v;
    unsigned long long u;
    T_CALL(MPI_T_cvar_handle_alloc(cvar_index("WEFT_SPIN_US"), NULL, &h, &count));
    T_CALL(MPI_T_cvar_read(h, &v));
    MT_EQ("WEFT_SPIN_US read through MPI_T", atoi(getenv("WEFT_SPIN_US")), v);
    T_CALL(MPI_T_cvar_handle_free(&h));

    T_CALL(MPI_T_cvar_handle_alloc(cvar_index("WEFT_SHM_EAGER_MAX"), NULL, &h, &count));
    T_CALL(MPI_T_cvar_read(h, &u));
    MT_EQ("WEFT_SHM_EAGER_MAX=8k read through MPI_T", 8192, u);
    int scope;
    T_CALL(MPI_T_cvar_get_info(cvar_index("WEFT_SHM_EAGER_MAX"), NULL, NULL, NULL, NULL, NULL,
                               NULL, NULL, NULL, &scope));
    MT_EQ("WEFT_SHM_EAGER_MAX's scope", MPI_T_SCOPE_READONLY, scope);
    T_ERR("cvar_write of a read-only variable", MPI_T_ERR_CVAR_SET_NEVER, MPI_T_cvar_write(h, &u));
    T_CALL(MPI_T_cvar_handle_free(&h));

    int i = cvar_index("WEFT_WAIT_YIELD");
    MPI_T_enum en;
    T_CALL(MPI_T_cvar_get_info(i, NULL, NULL, NULL, NULL, &en, NULL, NULL, NULL, NULL));
    T_CALL(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
    T_CALL(MPI_T_cvar_read(h, &v));
    char item[16];
    int len = sizeof(item), value;
    T_CALL(MPI_T_enum_get_item(en, v, &value, item, &len));
    MT_EQ("WEFT_WAIT_YIELD's value is an item of its enumeration", v, value);
    MT_TRUE(!strcmp(item, getenv("WEFT_WAIT_YIELD")), "WEFT_WAIT_YIELD: expected item %s got %s",
            getenv("WEFT_WAIT_YIELD"), item);
    T_CALL(MPI_T_cvar_handle_free(&h));
}

static const char *const counter_names[] = { "weft_send_msgs", "weft_send_bytes",
                                             "weft_recv_msgs", "weft_recv_bytes",
                                             "weft_rndv_pipeline", "weft_rndv_get",
                                             "weft_rndv_get_async", "weft_wait_sleeps",
                                             "weft_rndv_coop" };
enum { SEND_MSGS, SEND_BYTES, RECV_MSGS, RECV_BYTES, RNDV_PIPE, RNDV_GET, RNDV_ASYNC, SLEEPS,
       RNDV_COOP, NC };

typedef struct {
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h[NC];
} counters_t;

static void counters_open(counters_t *c)
{
    int count;
    T_CALL(MPI_T_pvar_session_create(&c->s));
    for (int k = 0; k < NC; k++) {
        T_CALL(MPI_T_pvar_handle_alloc(c->s, pvar_index(counter_names[k], MPI_T_PVAR_CLASS_COUNTER),
                                       NULL, &c->h[k], &count));
        MT_EQ("pvar count", 1, count);
    }
}

static unsigned long long rd(counters_t *c, int k)
{
    unsigned long long v;
    T_CALL(MPI_T_pvar_read(c->s, c->h[k], &v));
    return v;
}

/* --rndv=pipeline|get|get_async|coop: the protocol the test's settings make the rendezvous take */
static int rndv_expect = -1;

#define NMSG 10
#define BIG (1 << 20)

/* Rank 0 sends NMSG messages of 100, 200, ... bytes and one of BIG bytes (a rendezvous) to rank
 * 1. Returns the bytes. */
static unsigned long long pattern(char *buf)
{
    unsigned long long bytes = 0;
    for (int i = 0; i < NMSG; i++) {
        int n = 100 * (i + 1);
        if (mt_rank == 0)
            MT_CALL(MPI_Send(buf, n, MPI_CHAR, 1, 5, MPI_COMM_WORLD));
        else if (mt_rank == 1)
            MT_CALL(MPI_Recv(buf, n, MPI_CHAR, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        bytes += (unsigned long long)n;
    }
    if (mt_rank == 0)
        MT_CALL(MPI_Send(buf, BIG, MPI_CHAR, 1, 6, MPI_COMM_WORLD));
    else if (mt_rank == 1)
        MT_CALL(MPI_Recv(buf, BIG, MPI_CHAR, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    return bytes + BIG;
}

static void check_sessions(void)
{
    char *buf = mt_malloc(BIG);
    memset(buf, 1, BIG);
    counters_t c;
    counters_open(&c);
    /* not started: a non-continuous variable counts nothing */
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    unsigned long long bytes = pattern(buf);
    MT_EQ("weft_send_msgs before start", 0, rd(&c, SEND_MSGS));
    MT_EQ("weft_recv_msgs before start", 0, rd(&c, RECV_MSGS));

    T_CALL(MPI_T_pvar_start(c.s, MPI_T_PVAR_ALL_HANDLES));
    bytes = pattern(buf);
    unsigned long long sm = rd(&c, SEND_MSGS), sb = rd(&c, SEND_BYTES), rm = rd(&c, RECV_MSGS),
                       rb = rd(&c, RECV_BYTES);
    unsigned long long rndv = rd(&c, RNDV_PIPE) + rd(&c, RNDV_GET) + rd(&c, RNDV_ASYNC) +
                              rd(&c, RNDV_COOP);
    if (mt_rank == 0) {
        MT_EQ("rank 0 weft_send_msgs", NMSG + 1, sm);
        MT_EQ("rank 0 weft_send_bytes", bytes, sb);
        MT_EQ("rank 0 weft_recv_msgs", 0, rm);
        MT_EQ("rank 0 weft_recv_bytes", 0, rb);
    } else if (mt_rank == 1) {
        MT_EQ("rank 1 weft_recv_msgs", NMSG + 1, rm);
        MT_EQ("rank 1 weft_recv_bytes", bytes, rb);
        MT_EQ("rank 1 weft_send_msgs", 0, sm);
        MT_EQ("rank 1 rendezvous receives (pipeline + get + async get + coop)", 1, rndv);
        if (rndv_expect >= 0)
            MT_EQ(counter_names[rndv_expect], 1, rd(&c, rndv_expect));
    } else {
        MT_EQ("idle rank weft_send_msgs", 0, sm);
    }

    /* stopped: traffic leaves the value alone */
    T_CALL(MPI_T_pvar_stop(c.s, MPI_T_PVAR_ALL_HANDLES));
    (void)pattern(buf);
    MT_EQ("weft_send_msgs after stop", sm, rd(&c, SEND_MSGS));
    MT_EQ("weft_recv_bytes after stop", rb, rd(&c, RECV_BYTES));

    /* readreset gives the value and starts again from 0; write sets it */
    unsigned long long v;
    T_CALL(MPI_T_pvar_readreset(c.s, c.h[SEND_BYTES], &v));
    MT_EQ("readreset value", sb, v);
    MT_EQ("after readreset", 0, rd(&c, SEND_BYTES));
    T_CALL(MPI_T_pvar_reset(c.s, MPI_T_PVAR_ALL_HANDLES));
    MT_EQ("after reset", 0, rd(&c, RECV_MSGS));
    v = 1000;
    T_CALL(MPI_T_pvar_write(c.s, c.h[SEND_MSGS], &v));
    T_CALL(MPI_T_pvar_write(c.s, c.h[RECV_MSGS], &v));
    T_CALL(MPI_T_pvar_start(c.s, c.h[SEND_MSGS]));
    T_CALL(MPI_T_pvar_start(c.s, c.h[RECV_MSGS]));
    (void)pattern(buf);
    T_CALL(MPI_T_pvar_stop(c.s, c.h[SEND_MSGS]));
    T_CALL(MPI_T_pvar_stop(c.s, c.h[RECV_MSGS]));
    MT_EQ("written value plus the messages sent", 1000 + (mt_rank == 0 ? NMSG + 1 : 0),
          rd(&c, SEND_MSGS));
    MT_EQ("written value plus the messages received", 1000 + (mt_rank == 1 ? NMSG + 1 : 0),
          rd(&c, RECV_MSGS));
    T_CALL(MPI_T_pvar_session_free(&c.s));
    free(buf);
}

/* Unexpected messages: five arrive before their receives. */
static void check_unexpected(void)
{
    MPI_T_pvar_session s;
    MPI_T_pvar_handle lvl, hwm;
    int count;
    unsigned long long v, h0;
    T_CALL(MPI_T_pvar_session_create(&s));
    T_CALL(MPI_T_pvar_handle_alloc(s, pvar_index("weft_unexpected_msgs", MPI_T_PVAR_CLASS_LEVEL),
                                   NULL, &lvl, &count));
    T_CALL(MPI_T_pvar_handle_alloc(s, pvar_index("weft_unexpected_msgs_hwm",
                                                 MPI_T_PVAR_CLASS_HIGHWATERMARK),
                                   NULL, &hwm, &count));
    T_ERR("pvar_start of a continuous variable", MPI_T_ERR_PVAR_NO_STARTSTOP,
          MPI_T_pvar_start(s, lvl));
    T_ERR("pvar_reset of a read-only variable", MPI_T_ERR_PVAR_NO_WRITE, MPI_T_pvar_reset(s, lvl));
    v = 3;
    T_ERR("pvar_write of a read-only variable", MPI_T_ERR_PVAR_NO_WRITE, MPI_T_pvar_write(s, hwm, &v));
    T_ERR("pvar_readreset of a read-only variable", MPI_T_ERR_PVAR_NO_WRITE,
          MPI_T_pvar_readreset(s, hwm, &v));
    /* after this barrier only rank 0 sends to rank 1, until rank 1 says it is done */
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    int x = 0;
    if (mt_rank == 0) {
        for (int i = 0; i < 5; i++)
            MT_CALL(MPI_Send(&x, 1, MPI_INT, 1, 7, MPI_COMM_WORLD));
        MT_CALL(MPI_Send(&x, 1, MPI_INT, 1, 8, MPI_COMM_WORLD));
    } else if (mt_rank == 1) {
        T_CALL(MPI_T_pvar_read(s, hwm, &h0));
        MT_CALL(MPI_Recv(&x, 1, MPI_INT, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        /* the five came first (one sender, in order) and wait unmatched */
        T_CALL(MPI_T_pvar_read(s, lvl, &v));
        MT_EQ("weft_unexpected_msgs with five waiting", 5, v);
        T_CALL(MPI_T_pvar_read(s, hwm, &v));
        MT_TRUE(v >= 5 && v >= h0, "weft_unexpected_msgs_hwm >= 5, got %llu", v);
        for (int i = 0; i < 5; i++)
            MT_CALL(MPI_Recv(&x, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        T_CALL(MPI_T_pvar_read(s, lvl, &v));
        MT_EQ("weft_unexpected_msgs once received", 0, v);
        T_CALL(MPI_T_pvar_read(s, hwm, &v));
        MT_TRUE(v >= 5, "weft_unexpected_msgs_hwm stays >= 5, got %llu", v);
        for (int r = 0; r < mt_size; r++)
            if (r != 1)
                MT_CALL(MPI_Send(&x, 1, MPI_INT, r, 11, MPI_COMM_WORLD));
    }
    /* nobody sends rank 1 anything (the next barrier's messages) until it has counted */
    if (mt_rank != 1)
        MT_CALL(MPI_Recv(&x, 1, MPI_INT, 1, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    T_CALL(MPI_T_pvar_session_free(&s));
}

/* WEFT_SPIN_US is writable: with a long spin a waiting receive never sleeps, with 0 it does. */
static void check_cvar_write(void)
{
    int i = cvar_index("WEFT_SPIN_US"), count, v, scope;
    T_CALL(MPI_T_cvar_get_info(i, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &scope));
    MT_EQ("WEFT_SPIN_US's scope", MPI_T_SCOPE_LOCAL, scope);
    MPI_T_cvar_handle h;
    T_CALL(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
    v = -1;
    T_ERR("cvar_write out of range", MPI_T_ERR_INVALID, MPI_T_cvar_write(h, &v));
    /* waiters poll without yielding (WEFT_WAIT_YIELD=0, an enumeration's item): on a loaded
     * machine yields make the polls before the first sleep take longer than the wait */
    int iy = cvar_index("WEFT_WAIT_YIELD"), yield_env, item = -1, len;
    MPI_T_enum en;
    MPI_T_cvar_handle hy;
    T_CALL(MPI_T_cvar_get_info(iy, NULL, NULL, NULL, NULL, &en, NULL, NULL, NULL, NULL));
    T_CALL(MPI_T_cvar_handle_alloc(iy, NULL, &hy, &count));
    T_CALL(MPI_T_cvar_read(hy, &yield_env));
    int nitems;
    T_CALL(MPI_T_enum_get_info(en, &nitems, NULL, NULL));
    for (int k = 0; k < nitems; k++) {
        char w[16];
        int value;
        len = sizeof(w);
        T_CALL(MPI_T_enum_get_item(en, k, &value, w, &len));
        if (!strcmp(w, "0"))
            item = value;
    }
    MT_TRUE(item >= 0, "WEFT_WAIT_YIELD's enumeration has the item \"0\"");
    T_CALL(MPI_T_cvar_write(hy, &item));
    counters_t c;
    counters_open(&c);
    T_CALL(MPI_T_pvar_start(c.s, c.h[SLEEPS]));
    int x = 0;
    for (int round = 0; round < 2; round++) {
        v = round == 0 ? 5000000 : 0;   /* 5 s, then none */
        T_CALL(MPI_T_cvar_write(h, &v));
        int back;
        T_CALL(MPI_T_cvar_read(h, &back));
        MT_EQ("WEFT_SPIN_US read after write", v, back);
        MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
        unsigned long long before = rd(&c, SLEEPS);
        if (mt_rank == 0) {
            mt_sleep_ms(300);
            MT_CALL(MPI_Send(&x, 1, MPI_INT, 1, 9, MPI_COMM_WORLD));
        } else if (mt_rank == 1) {
            MT_CALL(MPI_Recv(&x, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            unsigned long long d = rd(&c, SLEEPS) - before;
            if (round == 0)
                MT_EQ("sleeps while waiting 300 ms with WEFT_SPIN_US=5000000", 0, d);
            else
                MT_TRUE(d >= 1, "sleeps while waiting 300 ms with WEFT_SPIN_US=0: expected >= 1 "
                        "got %llu", d);
        }
    }
    v = atoi(getenv("WEFT_SPIN_US"));
    T_CALL(MPI_T_cvar_write(h, &v));
    T_CALL(MPI_T_cvar_handle_free(&h));
    T_CALL(MPI_T_cvar_write(hy, &yield_env));
    T_CALL(MPI_T_cvar_read(hy, &v));
    MT_EQ("WEFT_WAIT_YIELD restored", yield_env, v);
    T_CALL(MPI_T_cvar_handle_free(&hy));
    T_CALL(MPI_T_pvar_session_free(&c.s));
}

/* --queued (run without idle and timer threads): rank 1 stays out of MPI while rank 0 sends it 8
 * MiB in eager messages, which cannot all fit in the transport, so some wait in the send queue. */
#define QN 2048
#define QLEN 4096
static void check_queued(void)
{
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h;
    int count;
    unsigned long long v = 0;
    T_CALL(MPI_T_pvar_session_create(&s));
    T_CALL(MPI_T_pvar_handle_alloc(s, pvar_index("weft_send_queued", MPI_T_PVAR_CLASS_COUNTER),
                                   NULL, &h, &count));
    char *buf = mt_malloc((size_t)QN * QLEN);
    MPI_Request *rq = mt_malloc(sizeof(MPI_Request) * QN);
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    T_CALL(MPI_T_pvar_start(s, h));
    if (mt_rank == 0) {
        for (int i = 0; i < QN; i++)
            MT_CALL(MPI_Isend(buf + (size_t)i * QLEN, QLEN, MPI_CHAR, 1, 12, MPI_COMM_WORLD, &rq[i]));
        T_CALL(MPI_T_pvar_read(s, h, &v));
        MT_TRUE(v > 0, "weft_send_queued after %d MiB sent to a rank outside MPI: expected > 0 "
                "got %llu", QN * QLEN >> 20, v);
        MT_CALL(MPI_Waitall(QN, rq, MPI_STATUSES_IGNORE));
    } else if (mt_rank == 1) {
        mt_sleep_ms(500);
        for (int i = 0; i < QN; i++)
            MT_CALL(MPI_Recv(buf + (size_t)i * QLEN, QLEN, MPI_CHAR, 0, 12, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE));
        T_CALL(MPI_T_pvar_read(s, h, &v));
        MT_EQ("weft_send_queued on the receiver (it sent nothing)", 0, v);
    }
    T_CALL(MPI_T_pvar_session_free(&s));
    free(rq);
    free(buf);
}

/* Threads reading the same counter while the main thread sends: every read is between the
 * previous one and the final count. */
#define READERS 4
static volatile int sending_done;
static void *reader(void *arg)
{
    (void)arg;
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h;
    int count;
    T_CALL(MPI_T_pvar_session_create(&s));
    T_CALL(MPI_T_pvar_handle_alloc(s, pvar_index("weft_send_msgs", MPI_T_PVAR_CLASS_COUNTER),
                                   NULL, &h, &count));
    T_CALL(MPI_T_pvar_start(s, h));
    unsigned long long last = 0, v;
    while (!__atomic_load_n(&sending_done, __ATOMIC_ACQUIRE)) {
        T_CALL(MPI_T_pvar_read(s, h, &v));
        MT_TRUE(v >= last, "concurrent reads go forward: %llu then %llu", last, v);
        last = v;
    }
    T_CALL(MPI_T_pvar_stop(s, h));
    T_CALL(MPI_T_pvar_handle_free(s, &h));
    T_CALL(MPI_T_pvar_session_free(&s));
    return NULL;
}

static void check_threads(void)
{
    pthread_t t[READERS];
    int x = 0;
    sending_done = 0;
    for (int i = 0; i < READERS; i++)
        pthread_create(&t[i], NULL, reader, NULL);
    for (int i = 0; i < 200; i++) {
        if (mt_rank == 0)
            MT_CALL(MPI_Send(&x, 1, MPI_INT, 1, 10, MPI_COMM_WORLD));
        else if (mt_rank == 1)
            MT_CALL(MPI_Recv(&x, 1, MPI_INT, 0, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    __atomic_store_n(&sending_done, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < READERS; i++)
        pthread_join(t[i], NULL);
}

int main(int argc, char **argv)
{
    int list = argc > 1 && !strcmp(argv[1], "--list");
    int queued = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--rndv=pipeline"))
            rndv_expect = RNDV_PIPE;
        else if (!strcmp(argv[i], "--rndv=get"))
            rndv_expect = RNDV_GET;
        else if (!strcmp(argv[i], "--rndv=get_async"))
            rndv_expect = RNDV_ASYNC;
        else if (!strcmp(argv[i], "--rndv=coop"))
            rndv_expect = RNDV_COOP;
        else if (!strcmp(argv[i], "--queued"))
            queued = 1;
    }
    mt_init_args(argc, argv, 0);
    int provided, x;
    /* before MPI_T_init_thread: nothing but init works */
    T_ERR("cvar_get_num before MPI_T_init_thread", MPI_T_ERR_NOT_INITIALIZED, MPI_T_cvar_get_num(&x));
    T_ERR("MPI_T_finalize before MPI_T_init_thread", MPI_T_ERR_NOT_INITIALIZED, MPI_T_finalize());
    /* before MPI_Init */
    T_CALL(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided));
    MT_TRUE(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_MULTIPLE, "provided %d",
            provided);
    check_cvars(list);
    check_pvars(list);
    if (list) {
        T_CALL(MPI_T_finalize());
        return 0;
    }
    check_categories();
    check_errors();
    if (mt_weft)
        check_cvar_env();

    mt_init(&argc, &argv);
    mt_nodes_init();
    if ((rndv_expect == RNDV_GET || rndv_expect == RNDV_ASYNC || rndv_expect == RNDV_COOP) &&
        mt_size >= 2 && !mt_same_node(0, 1)) {
        /* the forced mode is a single copy between processes of one node */
        if (mt_rank == 0)
            printf("SKIP: %s is a same-node single-copy mode; ranks 0 and 1 run on different nodes\n",
                   counter_names[rndv_expect]);
        T_CALL(MPI_T_finalize());
        MT_CALL(MPI_Finalize());
        return 77;   /* ctest: skipped */
    }
    T_CALL(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));   /* nested: a second reference */
    MT_TRUE(mt_size >= 2, "tool_mpit needs 2 ranks or more, got %d", mt_size);
    check_sessions();
    check_unexpected();
    if (mt_weft)
        check_cvar_write();
    check_threads();
    if (queued)
        check_queued();
    T_CALL(MPI_T_finalize());
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (mt_rank == 0)
        printf("tool_mpit: %d ranks ok\n", mt_size);
    MT_CALL(MPI_Finalize());

    /* after MPI_Finalize: still usable */
    check_cvars(0);
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h;
    unsigned long long v;
    T_CALL(MPI_T_pvar_session_create(&s));
    T_CALL(MPI_T_pvar_handle_alloc(s, pvar_index("weft_send_msgs", MPI_T_PVAR_CLASS_COUNTER), NULL,
                                   &h, &x));
    T_CALL(MPI_T_pvar_start(s, h));
    T_CALL(MPI_T_pvar_read(s, h, &v));
    MT_EQ("weft_send_msgs after MPI_Finalize, nothing sent", 0, v);
    T_CALL(MPI_T_pvar_session_free(&s));
    T_CALL(MPI_T_finalize());
    T_ERR("a third MPI_T_finalize", MPI_T_ERR_NOT_INITIALIZED, MPI_T_finalize());
    return 0;
}
