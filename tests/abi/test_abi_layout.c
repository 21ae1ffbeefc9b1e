/* What a program compiled against the generated mpi.h relies on: sizes and layouts, a sample of
 * constant and handle values, and the calls that need no MPI_Init (versions, clock, the Fortran
 * ABI records, status conversion). Compiled as strict ISO C11 with -pedantic -Werror, so a header
 * that is not clean C fails to build. */
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- layout: what the ABI fixes ---- */
_Static_assert(sizeof(MPI_Status) == 32, "MPI_Status is 8 ints");
_Static_assert(offsetof(MPI_Status, MPI_SOURCE) == 0, "MPI_SOURCE first");
_Static_assert(offsetof(MPI_Status, MPI_TAG) == 4, "MPI_TAG second");
_Static_assert(offsetof(MPI_Status, MPI_ERROR) == 8, "MPI_ERROR third");
_Static_assert(sizeof(MPI_Aint) == sizeof(void *), "MPI_Aint is intptr_t");
_Static_assert(sizeof(MPI_Offset) == 8 && sizeof(MPI_Count) == 8, "64-bit offsets and counts");
_Static_assert(sizeof(MPI_Comm) == sizeof(void *) && sizeof(MPI_Datatype) == sizeof(void *),
               "handles are pointers");
_Static_assert(MPI_F_STATUS_SIZE * sizeof(MPI_Fint) == sizeof(MPI_Status),
               "a Fortran status has the C status's size");

/* ---- values: a sample from each group ---- */
_Static_assert(MPI_VERSION == 5 && MPI_SUBVERSION == 0, "MPI 5.0");
_Static_assert(MPI_ABI_VERSION == 1 && MPI_ABI_SUBVERSION == 0, "ABI 1.0");
_Static_assert(MPI_SUCCESS == 0 && MPI_ERR_ARG == 13 && MPI_ERR_UNSUPPORTED_OPERATION == 55 &&
               MPI_ERR_ABI == 62 && MPI_ERR_LASTCODE == 0x3fff, "error classes");
_Static_assert(MPI_ANY_SOURCE == -1 && MPI_ANY_TAG == -2 && MPI_PROC_NULL == -3 &&
               MPI_ROOT == -4 && MPI_UNDEFINED == -32766, "wildcards and sentinels");
_Static_assert(MPI_THREAD_SINGLE < MPI_THREAD_FUNNELED &&
               MPI_THREAD_FUNNELED < MPI_THREAD_SERIALIZED &&
               MPI_THREAD_SERIALIZED < MPI_THREAD_MULTIPLE, "thread levels are ordered");
_Static_assert(MPI_TAG_UB == 501 && MPI_KEYVAL_INVALID == 0, "attribute keys");
_Static_assert(MPI_MAX_ERROR_STRING == 512 && MPI_MAX_PROCESSOR_NAME == 256 &&
               MPI_MAX_LIBRARY_VERSION_STRING == 8192, "string sizes");
_Static_assert((MPI_MODE_NOCHECK & MPI_MODE_NOSTORE) == 0, "modes are distinct bits");
_Static_assert(MPI_T_CB_REQUIRE_THREAD_SAFE == 0x0f && MPI_T_VERBOSITY_USER_BASIC == 0x09,
               "MPI_T constants");

static int failures;

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: FAIL %s: ", __FILE__, __LINE__, #cond);    \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
            failures++;                                                        \
        }                                                                      \
    } while (0)

#define CHECK_HANDLE(h, v) \
    CHECK((uintptr_t)(h) == (v), "%s is %#lx, expected %#lx", #h, (unsigned long)(uintptr_t)(h), \
          (unsigned long)(v))

static void check_handles(void)
{
    CHECK_HANDLE(MPI_COMM_NULL, 0x100);
    CHECK_HANDLE(MPI_COMM_WORLD, 0x101);
    CHECK_HANDLE(MPI_COMM_SELF, 0x102);
    CHECK_HANDLE(MPI_GROUP_EMPTY, 0x109);
    CHECK_HANDLE(MPI_INFO_NULL, 0x130);
    CHECK_HANDLE(MPI_ERRORS_ARE_FATAL, 0x141);
    CHECK_HANDLE(MPI_ERRORS_ABORT, 0x142);
    CHECK_HANDLE(MPI_ERRORS_RETURN, 0x143);
    CHECK_HANDLE(MPI_REQUEST_NULL, 0x180);
    CHECK_HANDLE(MPI_SUM, 0x21);
    CHECK_HANDLE(MPI_DATATYPE_NULL, 0x200);
    CHECK_HANDLE(MPI_INT, 0x209);
    CHECK_HANDLE(MPI_DOUBLE, 0x214);
    CHECK_HANDLE(MPI_CHAR, 0x243);
    CHECK_HANDLE(MPI_BYTE, 0x247);
    CHECK_HANDLE(MPI_LONG_LONG_INT, 0x20b);
    CHECK_HANDLE(MPI_COMPLEX32, 0x2eb);
    CHECK(MPI_STATUS_IGNORE == NULL && MPI_IN_PLACE == (void *)1, "pointer constants");
}

/* Integer constants whose values the Forum's reference header changed in October 2025; the
 * whole header is compared with another implementation's in the test abi.constants_reference. */
#define CHECK_INT(c, v) CHECK((c) == (v), "%s is %d, expected %d", #c, (int)(c), (int)(v))

static void check_revised_constants(void)
{
    CHECK_INT(MPI_SEEK_CUR, 401);
    CHECK_INT(MPI_SEEK_END, 402);
    CHECK_INT(MPI_SEEK_SET, 403);
    CHECK_INT(MPI_COMBINER_F90_REAL, 113);
    CHECK_INT(MPI_COMBINER_F90_COMPLEX, 114);
    CHECK_INT(MPI_COMBINER_F90_INTEGER, 115);
    CHECK_INT(MPI_APPNUM, 505);
    CHECK_INT(MPI_LASTUSEDCODE, 506);
    CHECK_INT(MPI_UNIVERSE_SIZE, 507);
}

/* Fixed-size types: bits 3-5 of the handle are log2 of the size in bytes. */
static void check_size_encoding(void)
{
    static const struct { MPI_Datatype type; const char *name; size_t size; } fixed[] = {
        {MPI_INT8_T, "MPI_INT8_T", 1},       {MPI_UINT8_T, "MPI_UINT8_T", 1},
        {MPI_CHAR, "MPI_CHAR", sizeof(char)}, {MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", 1},
        {MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", 1}, {MPI_BYTE, "MPI_BYTE", 1},
        {MPI_INT16_T, "MPI_INT16_T", 2},     {MPI_UINT16_T, "MPI_UINT16_T", 2},
        {MPI_INT32_T, "MPI_INT32_T", 4},     {MPI_UINT32_T, "MPI_UINT32_T", 4},
        {MPI_INT64_T, "MPI_INT64_T", 8},     {MPI_UINT64_T, "MPI_UINT64_T", 8},
        {MPI_LOGICAL1, "MPI_LOGICAL1", 1},   {MPI_INTEGER2, "MPI_INTEGER2", 2},
        {MPI_REAL4, "MPI_REAL4", 4},         {MPI_COMPLEX8, "MPI_COMPLEX8", 8},
        {MPI_COMPLEX16, "MPI_COMPLEX16", 16}, {MPI_COMPLEX32, "MPI_COMPLEX32", 32},
    };
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
        size_t encoded = (size_t)1 << (((uintptr_t)fixed[i].type >> 3) & 7);
        CHECK(encoded == fixed[i].size, "%s encodes %zu bytes, is %zu", fixed[i].name, encoded,
              fixed[i].size);
    }
}

static void check_versions(void)
{
    int major = -1, minor = -1;
    CHECK(MPI_Get_version(&major, &minor) == MPI_SUCCESS, "MPI_Get_version failed");
    CHECK(major == 5 && minor == 0, "MPI_Get_version gave %d.%d, expected 5.0", major, minor);
    major = minor = -1;
    CHECK(MPI_Abi_get_version(&major, &minor) == MPI_SUCCESS, "MPI_Abi_get_version failed");
    CHECK(major == 1 && minor == 0, "MPI_Abi_get_version gave %d.%d, expected 1.0", major, minor);
    CHECK(MPI_Get_version(NULL, &minor) == MPI_ERR_ARG, "NULL version accepted");

    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = -1;
    CHECK(MPI_Get_library_version(lib, &len) == MPI_SUCCESS, "MPI_Get_library_version failed");
    CHECK(strncmp(lib, "Weft ", 5) == 0, "library version '%s' does not name Weft", lib);
    CHECK(len == (int)strlen(lib), "resultlen %d, strlen %zu", len, strlen(lib));

    char host[MPI_MAX_PROCESSOR_NAME];
    CHECK(MPI_Get_processor_name(host, &len) == MPI_SUCCESS, "MPI_Get_processor_name failed");
    CHECK(len > 0 && len == (int)strlen(host), "processor name '%s', resultlen %d", host, len);

    MPI_Info info = MPI_INFO_ENV;
    CHECK(MPI_Abi_get_info(&info) == MPI_SUCCESS && info != MPI_INFO_NULL, "MPI_Abi_get_info failed");
    char val[16];
    int vlen = (int)sizeof val, flag = 0;
    CHECK(MPI_Info_get_string(info, "mpi_aint_size", &vlen, val, &flag) == MPI_SUCCESS && flag &&
          atoi(val) == (int)sizeof(MPI_Aint), "MPI_Abi_get_info: mpi_aint_size");
    CHECK(MPI_Info_free(&info) == MPI_SUCCESS, "MPI_Info_free of the MPI_Abi_get_info object");
    CHECK(MPI_Abi_get_fortran_info(&info) == MPI_SUCCESS && info == MPI_INFO_NULL,
          "no Fortran info was registered, yet MPI_Abi_get_fortran_info gave one");
}

static void check_clock(void)
{
    double tick = MPI_Wtick(), t0 = MPI_Wtime(), t1 = MPI_Wtime();
    CHECK(tick > 0.0 && tick < 1e-3, "MPI_Wtick %g, expected (0, 1ms)", tick);
    CHECK(t1 >= t0, "MPI_Wtime went back: %.9f then %.9f", t0, t1);
    CHECK(MPI_Aint_add(1000, -8) == 992 && MPI_Aint_diff(1000, 8) == 992, "address arithmetic");
}

static void check_fortran_abi(void)
{
    int t = 0, f = 0, is_set = -1;
    CHECK(MPI_Abi_get_fortran_booleans(4, &t, &f, &is_set) == MPI_SUCCESS && is_set == 0,
          "booleans set before anyone set them (is_set %d)", is_set);
    int yes = 1, no = 0;
    CHECK(MPI_Abi_set_fortran_booleans(3, &yes, &no) == MPI_ERR_ARG, "size 3 accepted");
    CHECK(MPI_Abi_set_fortran_booleans(4, &yes, &no) == MPI_SUCCESS, "first set refused");
    CHECK(MPI_Abi_set_fortran_booleans(4, &yes, &no) == MPI_ERR_ABI, "second set accepted");
    CHECK(MPI_Abi_get_fortran_booleans(4, &t, &f, &is_set) == MPI_SUCCESS && is_set == 1 &&
          t == 1 && f == 0, "got is_set %d true %d false %d, expected 1 1 0", is_set, t, f);
    CHECK(MPI_Abi_get_fortran_booleans(8, &t, &f, &is_set) == MPI_SUCCESS && is_set == 0,
          "size 8 answered from size 4 values");

    MPI_Status c = {.MPI_SOURCE = 3, .MPI_TAG = 7, .MPI_ERROR = MPI_ERR_TRUNCATE,
                    .MPI_internal = {10, 11, 12, 13, 14}};
    MPI_Fint fs[MPI_F_STATUS_SIZE];
    MPI_Status back;
    CHECK(MPI_Status_c2f(&c, fs) == MPI_SUCCESS && fs[MPI_F_SOURCE] == 3 && fs[MPI_F_TAG] == 7 &&
          fs[MPI_F_ERROR] == MPI_ERR_TRUNCATE, "MPI_Status_c2f");
    CHECK(MPI_Status_f2c(fs, &back) == MPI_SUCCESS && memcmp(&c, &back, sizeof(c)) == 0,
          "status does not survive C -> Fortran -> C");
}

int main(void)
{
    check_handles();
    check_revised_constants();
    check_size_encoding();
    check_versions();
    check_clock();
    check_fortran_abi();
    if (failures) {
        fprintf(stderr, "test_abi_layout: %d checks failed\n", failures);
        return 1;
    }
    printf("test_abi_layout: all checks passed\n");
    return 0;
}
