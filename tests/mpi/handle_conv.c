/* Handles as integers: MPI_<X>_toint/_fromint and MPI_<X>_c2f/_f2c for the eleven handle kinds,
 * and the status conversions (C, Fortran MPI_Fint[8], mpi_f08 MPI_F08_status).
 *
 * Every kind: predefined handles (null included) and, where the kind has user objects, user
 * handles round-trip through both conversions; a user handle's integer stays the same while other
 * handles are created and freed and, for a persistent request, across its starts; integers never
 * given out, or given out for another kind, convert to the null handle. Statuses: every field,
 * each direction, and a received message's count and cancelled flag after a round trip.
 * With --weft, Weft's (and the ABI's) choices too: c2f gives the same integer as toint, a
 * predefined handle's integer is its ABI value (also before MPI_Init), a freed handle's integer
 * converts to the null handle, and passing MPI_STATUS_IGNORE is an MPI_ERR_ARG error (raised on
 * MPI_COMM_SELF, as errors tied to no object are). */
#include "mpitest.h"

#define NMANY 64

/* h round-trips through toint/fromint and c2f/f2c; returns its integer. */
#define ROUND_TRIP(Kind, h, what)                                                                  \
    ({                                                                                             \
        int i_ = MPI_##Kind##_toint(h);                                                            \
        MPI_Fint f_ = MPI_##Kind##_c2f(h);                                                         \
        MT_TRUE(MPI_##Kind##_fromint(i_) == (h), "%s: MPI_" #Kind "_fromint(%d) is not the "       \
                "handle MPI_" #Kind "_toint gave it for", (what), i_);                             \
        MT_TRUE(MPI_##Kind##_f2c(f_) == (h), "%s: MPI_" #Kind "_f2c(%d) is not the handle "        \
                "MPI_" #Kind "_c2f gave it for", (what), (int)f_);                                 \
        if (mt_weft)                                                                               \
            MT_EQ((what), i_, f_);                                                                 \
        i_;                                                                                        \
    })

/* A predefined handle: round trip, and (--weft) its integer is its ABI value. */
#define PREDEF(Kind, h)                                                                            \
    do {                                                                                           \
        int i_ = ROUND_TRIP(Kind, h, #h);                                                          \
        if (mt_weft)                                                                               \
            MT_EQ("MPI_" #Kind "_toint(" #h ") (the ABI value)", (int)(intptr_t)(h), i_);         \
    } while (0)

/* Integers that are no handle of this kind give its null handle. */
#define BAD_INTS(Kind, null)                                                                       \
    do {                                                                                           \
        const int bad_[] = { -1, -0x4000, 0x3ff, 0x401, 12345, 0x3fffffff, 0x7fffffff };           \
        for (size_t k_ = 0; k_ < sizeof(bad_) / sizeof(bad_[0]); k_++) {                           \
            MT_TRUE(MPI_##Kind##_fromint(bad_[k_]) == (null), "MPI_" #Kind "_fromint(%d) "         \
                    "expected the null handle", bad_[k_]);                                         \
            MT_TRUE(MPI_##Kind##_f2c(bad_[k_]) == (null), "MPI_" #Kind "_f2c(%d) expected the "    \
                    "null handle", bad_[k_]);                                                      \
        }                                                                                          \
    } while (0)

static void predefined(void)
{
    PREDEF(Comm, MPI_COMM_NULL);
    PREDEF(Comm, MPI_COMM_WORLD);
    PREDEF(Comm, MPI_COMM_SELF);
    PREDEF(Group, MPI_GROUP_NULL);
    PREDEF(Group, MPI_GROUP_EMPTY);
    PREDEF(Win, MPI_WIN_NULL);
    PREDEF(File, MPI_FILE_NULL);
    PREDEF(Session, MPI_SESSION_NULL);
    PREDEF(Message, MPI_MESSAGE_NULL);
    PREDEF(Message, MPI_MESSAGE_NO_PROC);
    PREDEF(Info, MPI_INFO_NULL);
    PREDEF(Info, MPI_INFO_ENV);
    PREDEF(Errhandler, MPI_ERRHANDLER_NULL);
    PREDEF(Errhandler, MPI_ERRORS_ARE_FATAL);
    PREDEF(Errhandler, MPI_ERRORS_RETURN);
    PREDEF(Errhandler, MPI_ERRORS_ABORT);
    PREDEF(Request, MPI_REQUEST_NULL);
    const MPI_Op ops[] = { MPI_OP_NULL, MPI_SUM, MPI_MIN, MPI_MAX, MPI_PROD, MPI_BAND, MPI_BOR,
                           MPI_BXOR, MPI_LAND, MPI_LOR, MPI_LXOR, MPI_MINLOC, MPI_MAXLOC,
                           MPI_REPLACE, MPI_NO_OP };
    for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
        PREDEF(Op, ops[k]);
    const MPI_Datatype types[] = {
        MPI_DATATYPE_NULL, MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_BYTE, MPI_SHORT,
        MPI_INT, MPI_LONG, MPI_LONG_LONG, MPI_UNSIGNED, MPI_UNSIGNED_LONG_LONG, MPI_FLOAT,
        MPI_DOUBLE, MPI_LONG_DOUBLE, MPI_C_BOOL, MPI_WCHAR, MPI_INT8_T, MPI_UINT16_T,
        MPI_INT32_T, MPI_UINT64_T, MPI_AINT, MPI_COUNT, MPI_OFFSET, MPI_PACKED, MPI_FLOAT_INT,
        MPI_DOUBLE_INT, MPI_LONG_INT, MPI_2INT, MPI_SHORT_INT, MPI_LONG_DOUBLE_INT,
        MPI_C_DOUBLE_COMPLEX, MPI_INTEGER, MPI_REAL, MPI_DOUBLE_PRECISION, MPI_LOGICAL,
        MPI_CHARACTER, MPI_2INTEGER };
    for (size_t k = 0; k < sizeof(types) / sizeof(types[0]); k++)
        PREDEF(Type, types[k]);
}

static void bad_integers(void)
{
    BAD_INTS(Comm, MPI_COMM_NULL);
    BAD_INTS(Type, MPI_DATATYPE_NULL);
    BAD_INTS(Group, MPI_GROUP_NULL);
    BAD_INTS(Request, MPI_REQUEST_NULL);
    BAD_INTS(Op, MPI_OP_NULL);
    BAD_INTS(Info, MPI_INFO_NULL);
    BAD_INTS(Errhandler, MPI_ERRHANDLER_NULL);
    BAD_INTS(Win, MPI_WIN_NULL);
    BAD_INTS(File, MPI_FILE_NULL);
    BAD_INTS(Message, MPI_MESSAGE_NULL);
    BAD_INTS(Session, MPI_SESSION_NULL);
    /* a predefined value of another kind */
    MT_TRUE(MPI_Comm_fromint(MPI_Type_toint(MPI_INT)) == MPI_COMM_NULL,
            "MPI_Comm_fromint(the integer of MPI_INT) expected MPI_COMM_NULL");
    MT_TRUE(MPI_Type_fromint(MPI_Comm_toint(MPI_COMM_WORLD)) == MPI_DATATYPE_NULL,
            "MPI_Type_fromint(the integer of MPI_COMM_WORLD) expected MPI_DATATYPE_NULL");
}

static void errh_fn(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    (void)code;
}

static void op_fn(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)in;
    (void)inout;
    (void)len;
    (void)type;
}

/* Communicators: many user handles, their integers distinct and stable while others come and go;
 * a freed one's integer gives MPI_COMM_NULL (--weft); another kind's fromint refuses them. */
static void comms(void)
{
    MPI_Comm c[NMANY];
    int ci[NMANY];
    for (int k = 0; k < NMANY; k++) {
        MT_CALL(MPI_Comm_dup(k % 2 ? MPI_COMM_WORLD : MPI_COMM_SELF, &c[k]));
        ci[k] = ROUND_TRIP(Comm, c[k], "a duplicated communicator");
        for (int j = 0; j < k; j++)
            MT_TRUE(ci[j] != ci[k], "communicators %d and %d have the same integer %d", j, k, ci[k]);
        MT_TRUE(MPI_Type_fromint(ci[k]) == MPI_DATATYPE_NULL && MPI_Group_fromint(ci[k]) == MPI_GROUP_NULL,
                "a communicator's integer %d converted to a datatype or a group", ci[k]);
    }
    int fi = ci[0];
    for (int k = 0; k < NMANY; k += 2)
        MT_CALL(MPI_Comm_free(&c[k]));
    if (mt_weft)
        MT_TRUE(MPI_Comm_fromint(fi) == MPI_COMM_NULL,
                "the integer %d of a freed communicator expected MPI_COMM_NULL", fi);
    MPI_Comm more[NMANY / 2];
    for (int k = 0; k < NMANY / 2; k++)
        MT_CALL(MPI_Comm_split(MPI_COMM_WORLD, 0, k, &more[k]));
    for (int k = 1; k < NMANY; k += 2) {
        MT_EQ("a communicator's integer after others were freed and created", ci[k], MPI_Comm_toint(c[k]));
        MT_TRUE(MPI_Comm_fromint(ci[k]) == c[k], "communicator %d not found by its integer", k);
        int size = -1;
        MT_CALL(MPI_Comm_size(MPI_Comm_fromint(ci[k]), &size));
        MT_EQ("size of the communicator its integer converts back to", mt_size, size);
    }
    for (int k = 0; k < NMANY / 2; k++) {
        ROUND_TRIP(Comm, more[k], "a split communicator");
        MT_CALL(MPI_Comm_free(&more[k]));
    }
    for (int k = 1; k < NMANY; k += 2)
        MT_CALL(MPI_Comm_free(&c[k]));
}

static void types_groups_ops_infos_errhs(void)
{
    MPI_Datatype t, f90;
    MT_CALL(MPI_Type_contiguous(3, MPI_INT, &t));
    int ti = ROUND_TRIP(Type, t, "an uncommitted derived datatype");
    MT_CALL(MPI_Type_commit(&t));
    MT_EQ("a datatype's integer across MPI_Type_commit", ti, MPI_Type_toint(t));
    int size = 0;
    MT_CALL(MPI_Type_size(MPI_Type_fromint(ti), &size));
    MT_EQ("size of the datatype its integer converts back to", 3 * (int)sizeof(int), size);
    MT_CALL(MPI_Type_create_f90_integer(9, &f90));
    ROUND_TRIP(Type, f90, "an MPI_Type_create_f90_integer type");
    MT_TRUE(MPI_Comm_fromint(ti) == MPI_COMM_NULL, "a datatype's integer converted to a communicator");

    MPI_Group g, gw;
    MT_CALL(MPI_Comm_group(MPI_COMM_WORLD, &gw));
    MT_CALL(MPI_Group_incl(gw, 1, (int[]){ 0 }, &g));
    int gi = ROUND_TRIP(Group, g, "a group");
    ROUND_TRIP(Group, gw, "MPI_COMM_WORLD's group");

    MPI_Op op;
    MT_CALL(MPI_Op_create(op_fn, 1, &op));
    int oi = ROUND_TRIP(Op, op, "a user op");
    int commute = 0;
    MT_CALL(MPI_Op_commutative(MPI_Op_fromint(oi), &commute));
    MT_EQ("MPI_Op_commutative of the op its integer converts back to", 1, commute);

    MPI_Info info;
    MT_CALL(MPI_Info_create(&info));
    MT_CALL(MPI_Info_set(info, "weft_key", "value"));
    int ii = ROUND_TRIP(Info, info, "an info object");
    int nkeys = 0;
    MT_CALL(MPI_Info_get_nkeys(MPI_Info_fromint(ii), &nkeys));
    MT_EQ("keys of the info its integer converts back to", 1, nkeys);

    MPI_Errhandler eh;
    MT_CALL(MPI_Comm_create_errhandler(errh_fn, &eh));
    int ei = ROUND_TRIP(Errhandler, eh, "a user error handler");

    /* every integer survives the creation and freeing of other objects of every kind */
    for (int round = 0; round < 8; round++) {
        MPI_Datatype t2;
        MPI_Info i2;
        MPI_Op o2;
        MT_CALL(MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &t2));
        MT_CALL(MPI_Info_dup(info, &i2));
        MT_CALL(MPI_Op_create(op_fn, 0, &o2));
        ROUND_TRIP(Type, t2, "a vector datatype");
        ROUND_TRIP(Info, i2, "a duplicated info");
        ROUND_TRIP(Op, o2, "a second user op");
        MT_CALL(MPI_Type_free(&t2));
        MT_CALL(MPI_Info_free(&i2));
        MT_CALL(MPI_Op_free(&o2));
    }
    MT_EQ("the datatype's integer after others came and went", ti, MPI_Type_toint(t));
    MT_EQ("the group's integer after others came and went", gi, MPI_Group_toint(g));
    MT_EQ("the op's integer after others came and went", oi, MPI_Op_toint(op));
    MT_EQ("the info's integer after others came and went", ii, MPI_Info_toint(info));
    MT_EQ("the error handler's integer after others came and went", ei, MPI_Errhandler_toint(eh));

    MT_CALL(MPI_Type_free(&t));
    MT_CALL(MPI_Group_free(&g));
    MT_CALL(MPI_Group_free(&gw));
    MT_CALL(MPI_Op_free(&op));
    MT_CALL(MPI_Info_free(&info));
    MT_CALL(MPI_Errhandler_free(&eh));
    if (mt_weft) {
        MT_TRUE(MPI_Type_fromint(ti) == MPI_DATATYPE_NULL, "a freed datatype's integer converted");
        MT_TRUE(MPI_Group_fromint(gi) == MPI_GROUP_NULL, "a freed group's integer converted");
        MT_TRUE(MPI_Op_fromint(oi) == MPI_OP_NULL, "a freed op's integer converted");
        MT_TRUE(MPI_Info_fromint(ii) == MPI_INFO_NULL, "a freed info's integer converted");
        MT_TRUE(MPI_Errhandler_fromint(ei) == MPI_ERRHANDLER_NULL,
                "a freed error handler's integer converted");
    }
}

/* Requests (nonblocking and persistent) and messages, on MPI_COMM_SELF. */
static void requests_messages(void)
{
    int out[4] = { 1, 2, 3, 4 }, in[4];
    MPI_Request s, r;
    MT_CALL(MPI_Irecv(in, 4, MPI_INT, 0, 7, MPI_COMM_SELF, &r));
    int ri = ROUND_TRIP(Request, r, "a receive request");
    MT_CALL(MPI_Isend(out, 4, MPI_INT, 0, 7, MPI_COMM_SELF, &s));
    int si = ROUND_TRIP(Request, s, "a send request");
    MT_TRUE(ri != si, "two live requests have the same integer %d", ri);
    MPI_Request back = MPI_Request_fromint(ri);
    MT_CALL(MPI_Wait(&back, MPI_STATUS_IGNORE));
    MT_CALL(MPI_Wait(&s, MPI_STATUS_IGNORE));
    MT_EQ("the message received through the converted request", 4, in[3]);

    MPI_Request p;
    MT_CALL(MPI_Send_init(out, 4, MPI_INT, 0, 8, MPI_COMM_SELF, &p));
    int pi = ROUND_TRIP(Request, p, "a persistent request");
    for (int k = 0; k < 3; k++) {
        MT_CALL(MPI_Start(&p));
        MT_EQ("a persistent request's integer once started", pi, MPI_Request_toint(p));
        MT_CALL(MPI_Recv(in, 4, MPI_INT, 0, 8, MPI_COMM_SELF, MPI_STATUS_IGNORE));
        MT_CALL(MPI_Wait(&p, MPI_STATUS_IGNORE));
        MT_EQ("a persistent request's integer once completed", pi, MPI_Request_toint(p));
    }
    MT_CALL(MPI_Request_free(&p));
    if (mt_weft)
        MT_TRUE(MPI_Request_fromint(pi) == MPI_REQUEST_NULL, "a freed request's integer converted");

    MPI_Message m, m2;
    MPI_Status st;
    MT_CALL(MPI_Send(out, 2, MPI_INT, 0, 9, MPI_COMM_SELF));
    MT_CALL(MPI_Send(out, 3, MPI_INT, 0, 10, MPI_COMM_SELF));
    MT_CALL(MPI_Mprobe(0, 9, MPI_COMM_SELF, &m, &st));
    MT_CALL(MPI_Mprobe(0, 10, MPI_COMM_SELF, &m2, &st));
    int mi = ROUND_TRIP(Message, m, "a message");
    int mi2 = ROUND_TRIP(Message, m2, "a second message");
    MT_TRUE(mi != mi2, "two messages have the same integer %d", mi);
    MT_EQ("a message's integer, converted again", mi, MPI_Message_toint(m));
    MPI_Message mb = MPI_Message_fromint(mi2);
    MT_CALL(MPI_Mrecv(in, 4, MPI_INT, &mb, &st));
    int count = -1;
    MT_CALL(MPI_Get_count(&st, MPI_INT, &count));
    MT_EQ("count received through the converted message (tag 10)", 3, count);
    MT_EQ("the first message's integer after the second was received", mi, MPI_Message_toint(m));
    if (mt_weft)
        MT_TRUE(MPI_Message_fromint(mi2) == MPI_MESSAGE_NULL, "a received message's integer converted");
    MT_CALL(MPI_Mrecv(in, 4, MPI_INT, &m, &st));
    MT_CALL(MPI_Get_count(&st, MPI_INT, &count));
    MT_EQ("count received through the first message (tag 9)", 2, count);
}

static void statuses(void)
{
    MPI_Status c, c2;
    MPI_Fint f[MPI_F_STATUS_SIZE], f2[MPI_F_STATUS_SIZE];
    MPI_F08_status f08, f08b;
    c.MPI_SOURCE = 11;
    c.MPI_TAG = 22;
    c.MPI_ERROR = 33;
    for (int k = 0; k < 5; k++)
        c.MPI_internal[k] = 100 + k;
    MT_CALL(MPI_Status_c2f(&c, f));
    MT_EQ("MPI_Status_c2f: f[MPI_F_SOURCE]", 11, f[MPI_F_SOURCE]);
    MT_EQ("MPI_Status_c2f: f[MPI_F_TAG]", 22, f[MPI_F_TAG]);
    MT_EQ("MPI_Status_c2f: f[MPI_F_ERROR]", 33, f[MPI_F_ERROR]);
    for (int k = 0; k < 5; k++)
        MT_EQ("MPI_Status_c2f: an internal word", 100 + k, f[3 + k]);
    memset(&c2, 0, sizeof(c2));
    MT_CALL(MPI_Status_f2c(f, &c2));
    MT_TRUE(!memcmp(&c, &c2, sizeof(c)), "MPI_Status_f2c(MPI_Status_c2f(s)) differs from s");

    MT_CALL(MPI_Status_c2f08(&c, &f08));
    MT_EQ("MPI_Status_c2f08: MPI_SOURCE", 11, f08.MPI_SOURCE);
    MT_EQ("MPI_Status_c2f08: MPI_TAG", 22, f08.MPI_TAG);
    MT_EQ("MPI_Status_c2f08: MPI_ERROR", 33, f08.MPI_ERROR);
    for (int k = 0; k < 5; k++)
        MT_EQ("MPI_Status_c2f08: an internal word", 100 + k, f08.MPI_internal[k]);
    memset(f2, 0, sizeof(f2));
    MT_CALL(MPI_Status_f082f(&f08, f2));
    MT_TRUE(!memcmp(f, f2, sizeof(f)), "MPI_Status_f082f differs from MPI_Status_c2f");
    memset(&f08b, 0, sizeof(f08b));
    MT_CALL(MPI_Status_f2f08(f2, &f08b));
    MT_TRUE(!memcmp(&f08, &f08b, sizeof(f08)), "MPI_Status_f2f08(MPI_Status_f082f(s)) differs from s");
    memset(&c2, 0, sizeof(c2));
    MT_CALL(MPI_Status_f082c(&f08b, &c2));
    MT_TRUE(!memcmp(&c, &c2, sizeof(c)), "MPI_Status_f082c(MPI_Status_c2f08(s)) differs from s");

    /* a real status: what the library keeps in it survives every conversion */
    int out[5] = { 0 }, in[5];
    MT_CALL(MPI_Sendrecv(out, 5, MPI_INT, 0, 3, in, 5, MPI_INT, 0, 3, MPI_COMM_SELF, &c));
    MT_CALL(MPI_Status_c2f(&c, f));
    MT_CALL(MPI_Status_f2f08(f, &f08));
    MT_CALL(MPI_Status_f082c(&f08, &c2));
    int count = -1, cancelled = -1;
    MT_CALL(MPI_Get_count(&c2, MPI_INT, &count));
    MT_CALL(MPI_Test_cancelled(&c2, &cancelled));
    MT_EQ("MPI_Get_count after c2f, f2f08, f082c", 5, count);
    MT_EQ("MPI_Test_cancelled after c2f, f2f08, f082c", 0, cancelled);
    MT_EQ("MPI_SOURCE after c2f, f2f08, f082c", 0, c2.MPI_SOURCE);
    MT_EQ("MPI_TAG after c2f, f2f08, f082c", 3, c2.MPI_TAG);

    if (mt_weft) {
        MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));   /* errors tied to no object */
        MT_CLASS_EQ("MPI_Status_c2f(MPI_STATUS_IGNORE, f)", MPI_ERR_ARG, MPI_Status_c2f(MPI_STATUS_IGNORE, f));
        MT_CLASS_EQ("MPI_Status_f2c(f, NULL)", MPI_ERR_ARG, MPI_Status_f2c(f, NULL));
        MT_CLASS_EQ("MPI_Status_c2f08(MPI_STATUS_IGNORE, f08)", MPI_ERR_ARG,
                    MPI_Status_c2f08(MPI_STATUS_IGNORE, &f08));
        MT_CLASS_EQ("MPI_Status_f082f(NULL, f)", MPI_ERR_ARG, MPI_Status_f082f(NULL, f));
        MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
    }
}

int main(int argc, char **argv)
{
    mt_init_args(argc, argv, 0);
    if (mt_weft)   /* predefined handles convert before MPI_Init */
        predefined();
    mt_init(&argc, &argv);
    predefined();
    bad_integers();
    comms();
    types_groups_ops_infos_errhs();
    requests_messages();
    statuses();
    /* a second pass: integers of freed handles may be reused, conversions still round-trip */
    comms();
    types_groups_ops_infos_errhs();
    requests_messages();
    return mt_finish("handle_conv");
}
