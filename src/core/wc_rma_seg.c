/* The window's shared segment: an anonymous memfd, reached by the others through /proc (see
 * wc_rma.h). */
#include "core/wc_rma.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "util/wu_log.h"

#define WC_RMA_PAGE 4096u

static size_t wc_rma_round(size_t v, size_t a)
{
    return (v + a - 1) / a * a;
}

size_t wc_rma_seg_size(int n, size_t data, size_t *data_off_p)
{
    size_t off = sizeof(wc_rma_peer_t) * (size_t)n + sizeof(uint32_t) * (size_t)n * (size_t)n;
    off = wc_rma_round(off, sizeof(wc_rma_region_t));
    off += sizeof(wc_rma_region_t) * WC_RMA_REGIONS * (size_t)n;
    off = wc_rma_round(off, WC_RMA_PAGE);
    if (data_off_p)
        *data_off_p = off;
    return wc_rma_round(off + data, WC_RMA_PAGE);
}

static wu_status_t wc_rma_seg_map(int fd, size_t len, int n, wc_rma_seg_t *seg_p)
{
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
        wu_log_error("RMA window: mmap of %zu bytes failed: %s", len, strerror(errno));
        return WU_ERR_NO_MEMORY;
    }
    size_t data_off;
    wc_rma_seg_size(n, 0, &data_off);
    seg_p->map = m;
    seg_p->len = len;
    seg_p->n = n;
    seg_p->peers = m;
    seg_p->post = (_Atomic uint32_t *)((char *)m + sizeof(wc_rma_peer_t) * (size_t)n);
    size_t reg = sizeof(wc_rma_peer_t) * (size_t)n + sizeof(uint32_t) * (size_t)n * (size_t)n;
    seg_p->regions = (wc_rma_region_t *)((char *)m + wc_rma_round(reg, sizeof(wc_rma_region_t)));
    seg_p->data = (char *)m + data_off;
    return WU_OK;
}

wu_status_t wc_rma_seg_create(size_t len, int n, wc_rma_seg_t *seg_p, int *fd_p)
{
    int fd = memfd_create("weft-win", MFD_CLOEXEC);
    if (fd < 0) {
        wu_log_error("RMA window: memfd_create failed: %s", strerror(errno));
        return WU_ERR_IO;
    }
    /* fallocate, not ftruncate: a full tmpfs fails here, not with SIGBUS on first touch */
    int e = posix_fallocate(fd, 0, (off_t)len);
    if (e) {
        wu_log_error("RMA window: no room for a %zu-byte segment: %s", len, strerror(e));
        close(fd);
        return WU_ERR_NO_MEMORY;
    }
    wu_status_t st = wc_rma_seg_map(fd, len, n, seg_p);
    if (st != WU_OK) {
        close(fd);
        return st;
    }
    *fd_p = fd;
    return WU_OK;
}

wu_status_t wc_rma_seg_attach(pid_t pid, int fd, size_t len, int n, wc_rma_seg_t *seg_p)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
    int my = open(path, O_RDWR | O_CLOEXEC);
    if (my < 0) {
        wu_log_error("RMA window: cannot open the segment of process %d (%s): %s", (int)pid, path,
                     strerror(errno));
        return WU_ERR_IO;
    }
    wu_status_t st = wc_rma_seg_map(my, len, n, seg_p);
    close(my);
    return st;
}

void wc_rma_seg_detach(wc_rma_seg_t *seg)
{
    if (seg->map)
        munmap(seg->map, seg->len);
    memset(seg, 0, sizeof(*seg));
}
