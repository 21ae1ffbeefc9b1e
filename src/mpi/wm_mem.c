/* MPI_Alloc_mem and MPI_Free_mem: memory for message buffers (and, later, RMA windows).
 *
 * Weft needs no special memory for communication (shared memory copies or reads with
 * process_vm_readv; libfabric registers what it sends through its cache), so this is aligned
 * heap memory. The info key "mpi_minimum_memory_alignment" (MPI 4.1) asks for an alignment: a
 * power of two, honoured up to 1 GiB; anything else in the info is ignored, as the standard allows.
 * Any thread may call these at any time; no library state is touched. */
#include "mpi/wm_internal.h"
#include "mpi/wm_info.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Default alignment: a cache line, so two buffers never share one. */
#define WM_MEM_ALIGN_MIN ((size_t)WU_CACHELINE)
#define WM_MEM_ALIGN_MAX ((size_t)1 << 30)

/* The alignment info asks for, or 0 if the value is not a power of two in range. */
static size_t wm_mem_alignment(MPI_Info info)
{
    if (info == MPI_INFO_NULL)
        return WM_MEM_ALIGN_MIN;
    char val[64];
    int flag = 0, len = (int)sizeof(val);
    if (PMPI_Info_get_string(info, "mpi_minimum_memory_alignment", &len, val, &flag) != MPI_SUCCESS ||
        !flag)
        return WM_MEM_ALIGN_MIN;
    char *end;
    errno = 0;
    unsigned long long a = strtoull(val, &end, 10);
    if (errno || end == val || *end || a == 0 || (a & (a - 1)) || a > WM_MEM_ALIGN_MAX)
        return 0;
    return a < WM_MEM_ALIGN_MIN ? WM_MEM_ALIGN_MIN : (size_t)a;
}

int wm_impl_MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    static const char fn[] = "MPI_Alloc_mem";
    if (!baseptr)
        return wm_error(NULL, MPI_ERR_ARG, fn, "baseptr is NULL");
    if (size < 0)
        return wm_error(NULL, MPI_ERR_ARG, fn, "size %lld is negative", (long long)size);
    if (info != MPI_INFO_NULL && !wm_info_get(info))
        return wm_error(NULL, MPI_ERR_INFO, fn, "invalid info object %p", (void *)info);
    size_t align = wm_mem_alignment(info);
    if (!align)
        return wm_error(NULL, MPI_ERR_INFO_VALUE, fn,
                        "mpi_minimum_memory_alignment is not a power of two up to %zu",
                        WM_MEM_ALIGN_MAX);
    /* size 0 still yields a distinct pointer that MPI_Free_mem accepts */
    void *p = NULL;
    size_t bytes = size ? (size_t)size : 1;
    if (posix_memalign(&p, align, bytes) != 0)
        return wm_error(NULL, MPI_ERR_NO_MEM, fn, "no memory for %lld bytes", (long long)size);
    memcpy(baseptr, &p, sizeof(p));
    return MPI_SUCCESS;
}

int wm_impl_MPI_Free_mem(void *base)
{
    free(base);
    return MPI_SUCCESS;
}
