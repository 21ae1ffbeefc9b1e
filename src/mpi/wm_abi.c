/* The ABI's own functions (MPI_Abi_*), and the few entry points that need no library state:
 * address arithmetic, MPI_Pcontrol, status conversion to and from Fortran.
 *
 * All of these may be called at any time, before MPI_Init and after MPI_Finalize, from any thread.
 * Errors are returned as error classes; they do not go through an error handler yet. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <mpi.h>
#include "mpi/wm_api.h"
#include "mpi/wm_unsupported.h"

/* Until the error code lands a strong wm_unsupported, the stubs use this one. */
__attribute__((weak)) int wm_unsupported(const char *func)
{
    fprintf(stderr, "weft: %s is not implemented (MPI_ERR_UNSUPPORTED_OPERATION)\n", func);
    return MPI_ERR_UNSUPPORTED_OPERATION;
}

int wm_impl_MPI_Abi_get_version(int *abi_major, int *abi_minor)
{
    if (!abi_major || !abi_minor)
        return MPI_ERR_ARG;
    *abi_major = MPI_ABI_VERSION;
    *abi_minor = MPI_ABI_SUBVERSION;
    return MPI_SUCCESS;
}

/* A new info object (the caller frees it) with the sizes in bytes, as decimal strings, of the
 * types the ABI leaves to the platform (MPI 5.0 section 20.3): mpi_aint_size, mpi_count_size,
 * mpi_offset_size. May be called at any time, before MPI_Init and after MPI_Finalize too. */
int wm_impl_MPI_Abi_get_info(MPI_Info *info)
{
    if (!info)
        return MPI_ERR_ARG;
    static const struct {
        const char *key;
        size_t size;
    } sizes[] = {
        { "mpi_aint_size", sizeof(MPI_Aint) },
        { "mpi_count_size", sizeof(MPI_Count) },
        { "mpi_offset_size", sizeof(MPI_Offset) },
    };
    MPI_Info in = MPI_INFO_NULL;
    int rc = PMPI_Info_create(&in);
    for (size_t i = 0; rc == MPI_SUCCESS && i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        char v[8];
        snprintf(v, sizeof(v), "%zu", sizes[i].size);
        rc = PMPI_Info_set(in, sizes[i].key, v);
    }
    if (rc != MPI_SUCCESS) {
        if (in != MPI_INFO_NULL)
            PMPI_Info_free(&in);
        return rc;
    }
    *info = in;
    return MPI_SUCCESS;
}

/* Fortran facts a Fortran binding layer registers once, at startup, for the C library to read.
 * Weft has no Fortran bindings of its own, so it knows nothing until told.
 *
 * Each record is written by the one set call that wins the UNSET -> WRITING transition, and read
 * only after it was published as SET (release/acquire); it never changes afterwards. A get that
 * races with the set sees "not set", which is a true answer at that instant. */
enum { WM_ABI_UNSET, WM_ABI_WRITING, WM_ABI_SET };

#define WM_LOGICAL_MAX 16   /* bytes of the largest Fortran LOGICAL kind (MPI_LOGICAL16) */

static struct {
    atomic_int state;
    int size;
    unsigned char true_bytes[WM_LOGICAL_MAX];
    unsigned char false_bytes[WM_LOGICAL_MAX];
} wm_fortran_booleans;

static struct {
    atomic_int state;
    MPI_Info info;          /* our duplicate of the caller's object */
} wm_fortran_info;

static int wm_claim(atomic_int *state)
{
    int expected = WM_ABI_UNSET;
    return atomic_compare_exchange_strong_explicit(state, &expected, WM_ABI_WRITING,
                                                   memory_order_acquire, memory_order_relaxed);
}

int wm_impl_MPI_Abi_set_fortran_booleans(int logical_size, void *logical_true, void *logical_false)
{
    if (logical_size <= 0 || logical_size > WM_LOGICAL_MAX ||
        (logical_size & (logical_size - 1)) != 0 || !logical_true || !logical_false)
        return MPI_ERR_ARG;
    if (!wm_claim(&wm_fortran_booleans.state))
        return MPI_ERR_ABI;   /* at most once */
    wm_fortran_booleans.size = logical_size;
    memcpy(wm_fortran_booleans.true_bytes, logical_true, (size_t)logical_size);
    memcpy(wm_fortran_booleans.false_bytes, logical_false, (size_t)logical_size);
    atomic_store_explicit(&wm_fortran_booleans.state, WM_ABI_SET, memory_order_release);
    return MPI_SUCCESS;
}

/* Values registered for another size are no answer for this one: is_set is false. */
int wm_impl_MPI_Abi_get_fortran_booleans(int logical_size, void *logical_true, void *logical_false,
                                         int *is_set)
{
    if (logical_size <= 0 || !logical_true || !logical_false || !is_set)
        return MPI_ERR_ARG;
    if (atomic_load_explicit(&wm_fortran_booleans.state, memory_order_acquire) != WM_ABI_SET ||
        wm_fortran_booleans.size != logical_size) {
        *is_set = 0;
        return MPI_SUCCESS;
    }
    memcpy(logical_true, wm_fortran_booleans.true_bytes, (size_t)logical_size);
    memcpy(logical_false, wm_fortran_booleans.false_bytes, (size_t)logical_size);
    *is_set = 1;
    return MPI_SUCCESS;
}

/* Keeps a duplicate of info (the caller keeps and frees its own). */
int wm_impl_MPI_Abi_set_fortran_info(MPI_Info info)
{
    if (info == MPI_INFO_NULL)
        return MPI_ERR_INFO;
    if (!wm_claim(&wm_fortran_info.state))
        return MPI_ERR_ABI;   /* at most once */
    int rc = PMPI_Info_dup(info, &wm_fortran_info.info);
    atomic_store_explicit(&wm_fortran_info.state, rc == MPI_SUCCESS ? WM_ABI_SET : WM_ABI_UNSET,
                          memory_order_release);
    return rc;
}

/* A new object the caller frees, or MPI_INFO_NULL when nobody registered Fortran facts. */
int wm_impl_MPI_Abi_get_fortran_info(MPI_Info *info)
{
    if (!info)
        return MPI_ERR_ARG;
    if (atomic_load_explicit(&wm_fortran_info.state, memory_order_acquire) != WM_ABI_SET) {
        *info = MPI_INFO_NULL;
        return MPI_SUCCESS;
    }
    return PMPI_Info_dup(wm_fortran_info.info, info);
}

/* Addresses are unsigned underneath; unsigned arithmetic wraps where intptr_t would overflow. */
MPI_Aint wm_impl_MPI_Aint_add(MPI_Aint base, MPI_Aint disp)
{
    return (MPI_Aint)((uintptr_t)base + (uintptr_t)disp);
}

MPI_Aint wm_impl_MPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
    return (MPI_Aint)((uintptr_t)addr1 - (uintptr_t)addr2);
}

/* A hook for profiling libraries, which define MPI_Pcontrol; the library itself ignores it. */
int wm_impl_MPI_Pcontrol(const int level)
{
    return MPI_SUCCESS;
}
