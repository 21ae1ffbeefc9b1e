/* Shared-memory transport: the segment (setup and teardown), send and progress over the per-pair
 * rings of wx_shm_ring_inl.h and the per-receiver queues of wx_shm_mpq_inl.h. Layout of the
 * segment and the choice between ring and queue: wx_shm_priv.h. CMA: wx_shm_cma.c. */
#include "transport/shm/wx_shm_priv.h"
#include "transport/shm/wx_shm_stale.h"

#include <linux/futex.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "util/wu_config.h"
#include "util/wu_log.h"

#include <errno.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23        /* Linux 5.14; older kernels answer EINVAL, which we ignore */
#endif

#define WX_SHM_BATCH        16                    /* packets delivered per ring per progress call */
#define WX_SHM_QUEUE_BATCH  64                    /* the same for the shared queue */
#define WX_SHM_RING_DEFAULT ((size_t)512 << 10)   /* per ring, when every pair has one */
#define WX_SHM_INBOX_BUDGET ((size_t)4 << 20)     /* rings per receiver, when every pair has one */
#define WX_SHM_QUEUE_DEFAULT ((size_t)512 << 10)
#define WX_SHM_RING_MAX     ((size_t)1 << 30)     /* offsets are 32-bit */
#define WX_SHM_PAYLOAD_MAX  ((size_t)64 << 20)
#define WX_SHM_KEY          "wx-shm-seg"

wx_shm_state_t wx_shm;

typedef struct {
    int nfast;             /* rings per inbox block */
    size_t ring_size;
    size_t queue_size;     /* 0: no queue */
    size_t hdr_bytes;      /* segment header and rank info, page aligned */
    size_t ctl_bytes;      /* the ring and queue controls of one inbox block, page aligned */
    size_t block_bytes;    /* one inbox block */
    size_t seg_bytes;
} wx_shm_layout_t;

static size_t wx_shm_page(void)
{
    return (size_t)sysconf(_SC_PAGESIZE);
}

static wx_shm_layout_t wx_shm_layout(int n, int nfast, size_t ring_size, size_t queue_size)
{
    size_t page = wx_shm_page();
    wx_shm_layout_t l;
    l.nfast = nfast;
    l.ring_size = ring_size;
    l.queue_size = queue_size;
    l.hdr_bytes = WU_ALIGN_UP(sizeof(wx_shm_seg_hdr_t) + (size_t)n * sizeof(wx_shm_rank_info_t), page);
    l.ctl_bytes = WU_ALIGN_UP((size_t)nfast * sizeof(wx_shm_ring_ctl_t) + sizeof(wx_shm_mpq_ctl_t) +
                              WX_SHM_COOP_SLOTS * sizeof(wx_shm_coop_slot_t), page);
    l.block_bytes = l.ctl_bytes + queue_size + (size_t)nfast * ring_size;
    l.seg_bytes = l.hdr_bytes + (size_t)n * l.block_bytes;
    return l;
}

static char *wx_shm_block(int receiver)
{
    return wx_shm.seg + wx_shm.hdr_bytes + (size_t)receiver * wx_shm.block_bytes;
}

static wx_shm_ring_ctl_t *wx_shm_ring_ctl(int receiver, int slot)
{
    return (wx_shm_ring_ctl_t *)wx_shm_block(receiver) + slot;
}

static char *wx_shm_ring_data(int receiver, int slot)
{
    return wx_shm_block(receiver) + wx_shm.ctl_bytes + wx_shm.queue_size + (size_t)slot * wx_shm.ring_size;
}

static wx_shm_mpq_ctl_t *wx_shm_queue_ctl(int receiver)
{
    return (wx_shm_mpq_ctl_t *)(wx_shm_ring_ctl(receiver, wx_shm.nfast));
}

wx_shm_coop_slot_t *wx_shm_coop_slots(int owner)
{
    return (wx_shm_coop_slot_t *)(wx_shm_queue_ctl(owner) + 1);
}

static char *wx_shm_queue_data(int receiver)
{
    return wx_shm_block(receiver) + wx_shm.ctl_bytes;
}

static size_t wx_shm_payload_limit(void)
{
    long eager = wu_config_int(WU_CONFIG_SHM_EAGER_MAX);
    long frag = wu_config_int(WU_CONFIG_SHM_FRAG_SIZE);
    long m = eager > frag ? eager : frag;
    if (m < 0)
        m = 0;
    if ((size_t)m > WX_SHM_PAYLOAD_MAX) {
        wu_log_warn("WEFT_SHM_EAGER_MAX=%ld / WEFT_SHM_FRAG_SIZE=%ld too large; packets limited to "
                    "%zu bytes", eager, frag, WX_SHM_PAYLOAD_MAX);
        m = (long)WX_SHM_PAYLOAD_MAX;
    }
    return (size_t)m;
}

/* Ring size for a job of n ranks with nfast rings per receiver (decided by rank 0, read from the
 * segment by the others). Never below four of the largest records, so a fragment pipeline always
 * has room. */
static size_t wx_shm_ring_choose(int n, int nfast, size_t max_payload)
{
    size_t page = wx_shm_page();
    size_t min = WU_ALIGN_UP(4 * WX_SHM_REC_BYTES(max_payload) + WX_SHM_RING_SLACK, page);
    long want = wu_config_int(WU_CONFIG_SHM_RING_SIZE);
    size_t r;

    if (nfast == 0)
        return 0;
    if (want > 0) {
        r = WU_ALIGN_UP((size_t)want, page);
        if (r < min) {
            wu_log_warn("WEFT_SHM_RING_SIZE=%ld is below 4 packets of %zu bytes; using %zu",
                        want, max_payload, min);
            r = min;
        }
    } else {
        /* beside a shared queue (a large job), rings of the minimum size */
        r = nfast == n - 1 ? (WX_SHM_INBOX_BUDGET / (size_t)nfast) & ~(page - 1) : min;
        if (r > WX_SHM_RING_DEFAULT)
            r = WX_SHM_RING_DEFAULT;
        if (r < min)
            r = min;
    }
    return r > WX_SHM_RING_MAX ? WX_SHM_RING_MAX : r;
}

/* Shared-queue size: a power of two of at least four of the largest records; 0 when every pair
 * has a ring. */
static size_t wx_shm_queue_choose(int n, int nfast, size_t max_payload)
{
    if (nfast == n - 1)
        return 0;
    size_t min = 4 * WX_SHM_REC_BYTES(max_payload);
    long want = wu_config_int(WU_CONFIG_SHM_QUEUE_SIZE);
    size_t q = want > 0 ? (size_t)want : WX_SHM_QUEUE_DEFAULT;
    if (q < min) {
        if (want > 0)
            wu_log_warn("WEFT_SHM_QUEUE_SIZE=%ld is below 4 packets of %zu bytes; using more",
                        want, max_payload);
        q = min;
    }
    size_t p = wx_shm_page();
    while (p < q)
        p <<= 1;
    return p;
}

static wx_shm_layout_t wx_shm_layout_choose(int n, size_t max_payload)
{
    long k = wu_config_int(WU_CONFIG_SHM_FAST_PATHS);
    int nfast = k < n - 1 ? (int)k : n - 1;
    return wx_shm_layout(n, nfast, wx_shm_ring_choose(n, nfast, max_payload),
                         wx_shm_queue_choose(n, nfast, max_payload));
}

/* What to do when /dev/shm cannot hold the segment: said once, where it is decided. */
static void wx_shm_advise(const char *what, int n, const wx_shm_layout_t *l, int err)
{
    struct statvfs vfs;
    char avail[64] = "unknown";
    if (statvfs("/dev/shm", &vfs) == 0)
        snprintf(avail, sizeof(avail), "%.1f MiB", (double)vfs.f_bavail * (double)vfs.f_frsize / 1048576.0);
    wu_log_error("%s: %s. The shared-memory segment of this node's %d ranks needs %.1f MiB of /dev/shm "
                 "(%.1f MiB per rank: %d rings of %zu bytes (WEFT_SHM_FAST_PATHS, WEFT_SHM_RING_SIZE) "
                 "and a shared queue of %zu bytes (WEFT_SHM_QUEUE_SIZE)); /dev/shm has %s free. "
                 "Free or enlarge /dev/shm (remove stale files there, or mount -o remount,size=... "
                 "/dev/shm; in a container, --shm-size), run fewer ranks per node, or lower "
                 "WEFT_SHM_FAST_PATHS / WEFT_SHM_RING_SIZE / WEFT_SHM_QUEUE_SIZE",
                 what, strerror(err), n, (double)l->seg_bytes / 1048576.0,
                 (double)l->block_bytes / 1048576.0, l->nfast, l->ring_size, l->queue_size, avail);
}

static void wx_shm_layout_use(const wx_shm_layout_t *l)
{
    wx_shm.nfast = l->nfast;
    wx_shm.ring_size = l->ring_size;
    wx_shm.queue_size = l->queue_size;
    wx_shm.hdr_bytes = l->hdr_bytes;
    wx_shm.ctl_bytes = l->ctl_bytes;
    wx_shm.block_bytes = l->block_bytes;
}

/* Rank 0: create, size and map the segment, write its header. Unlinks what it created on failure. */
static wu_status_t wx_shm_seg_create(const char *name, int n, int *fd_p)
{
    wx_shm_layout_t l = wx_shm_layout_choose(n, wx_shm.max_payload);
    struct statvfs vfs;
    if (statvfs("/dev/shm", &vfs) == 0 && (double)vfs.f_bavail * (double)vfs.f_frsize < (double)l.seg_bytes) {
        wx_shm_advise("cannot create the shared-memory segment", n, &l, ENOSPC);
        return WU_ERR_IO;
    }
    int fd = wx_shm_stale_create(name);   /* locked while the name lives: wx_shm_stale.h */
    if (fd < 0 && errno == EEXIST) {
        /* job ids are unique: a segment of this name is left over from a job that died early */
        wu_log_warn("removing stale shared-memory segment /dev/shm%s", name);
        shm_unlink(name);
        fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    }
    if (fd < 0) {
        wu_log_error("shm_open(%s): %s", name, strerror(errno));
        return WU_ERR_IO;
    }
    if (ftruncate(fd, (off_t)l.seg_bytes) != 0) {
        wx_shm_advise("ftruncate of the shared-memory segment", n, &l, errno);
        goto err_unlink;
    }
    void *seg = mmap(NULL, l.seg_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (seg == MAP_FAILED) {
        wu_log_error("mmap of /dev/shm%s (%zu bytes): %s", name, l.seg_bytes, strerror(errno));
        goto err_unlink;
    }
    wx_shm_seg_hdr_t *h = seg;
    h->seg_bytes = l.seg_bytes;
    h->ring_size = l.ring_size;
    h->queue_size = l.queue_size;
    h->nranks = (uint32_t)n;
    h->nfast = (uint32_t)l.nfast;
    __atomic_store_n(&h->magic, WX_SHM_MAGIC, __ATOMIC_RELEASE);
    wx_shm.seg = seg;
    wx_shm.seg_bytes = l.seg_bytes;
    wx_shm_layout_use(&l);
    *fd_p = fd;
    return WU_OK;

err_unlink:
    shm_unlink(name);
    close(fd);
    return WU_ERR_IO;
}

/* Ranks other than 0, after the first fence: map the segment rank 0 created. */
static wu_status_t wx_shm_attach(const char *name, int n, int *fd_p)
{
    int fd = shm_open(name, O_RDWR, 0);
    if (fd < 0) {
        wu_log_error("shm_open(%s): %s", name, strerror(errno));
        return WU_ERR_IO;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(wx_shm_seg_hdr_t)) {
        wu_log_error("shared-memory segment /dev/shm%s is missing or truncated", name);
        goto err_close;
    }
    void *seg = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (seg == MAP_FAILED) {
        wu_log_error("mmap of /dev/shm%s (%zu bytes): %s", name, (size_t)st.st_size, strerror(errno));
        goto err_close;
    }
    const wx_shm_seg_hdr_t *h = seg;
    size_t rec_max = WX_SHM_REC_BYTES(wx_shm.max_payload);
    bool ok = __atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) == WX_SHM_MAGIC &&
              h->nranks == (uint32_t)n && h->seg_bytes == (size_t)st.st_size && h->nfast < (uint32_t)n;
    wx_shm_layout_t l = { 0 };
    if (ok) {
        l = wx_shm_layout(n, (int)h->nfast, h->ring_size, h->queue_size);
        ok = l.seg_bytes == h->seg_bytes &&
             (l.nfast == 0 || l.ring_size >= 2 * rec_max + WX_SHM_RING_SLACK) &&
             (l.nfast == n - 1 ? l.queue_size == 0 : l.queue_size >= 2 * rec_max &&
              (l.queue_size & (l.queue_size - 1)) == 0);
    }
    if (!ok) {
        wu_log_error("shared-memory segment /dev/shm%s does not match this job (%d ranks, packets of "
                     "%zu bytes): check that every rank has the same WEFT_SHM_* settings",
                     name, n, wx_shm.max_payload);
        munmap(seg, (size_t)st.st_size);
        goto err_close;
    }
    wx_shm.seg = seg;
    wx_shm.seg_bytes = (size_t)st.st_size;
    wx_shm_layout_use(&l);
    *fd_p = fd;
    return WU_OK;

err_close:
    close(fd);
    return WU_ERR_IO;
}

/* Allocate this rank's inbox block now, from this process (first touch: pages land on our NUMA
 * node), so a full /dev/shm is an error here and not a SIGBUS later. */
static bool wx_shm_inbox_allocate(int fd)
{
    off_t off = (off_t)(wx_shm.hdr_bytes + (size_t)wx_shm.rank * wx_shm.block_bytes);
    int err = fallocate(fd, 0, off, (off_t)wx_shm.block_bytes);
    if (err == 0)
        return true;
    if (errno == EOPNOTSUPP) {
        size_t page = wx_shm_page();
        volatile char *p = (volatile char *)wx_shm_block(wx_shm.rank);
        for (size_t i = 0; i < wx_shm.block_bytes; i += page)
            p[i] = 0;
        return true;
    }
    wx_shm_layout_t l = wx_shm_layout(wx_shm.size, wx_shm.nfast, wx_shm.ring_size, wx_shm.queue_size);
    wx_shm_advise("cannot allocate this rank's shared-memory inbox", wx_shm.size, &l, errno);
    return false;
}

/* This rank's view of its own inbox; the routes to the others are chosen on first contact
 * (wx_shm_route). */
static void wx_shm_rings_setup(void)
{
    int me = wx_shm.rank;
    wx_shm.next = wx_shm.nfast ? wx_shm_ring_ctl(me, 0) : NULL;
    wx_shm.nactive = 0;
    wx_shm.poll_more = wx_shm.next || wx_shm.queue_size;
    if (wx_shm.queue_size) {
        wx_shm_rx_t *q = &wx_shm.rxq;
        q->data = wx_shm_queue_data(me);
        q->pub = &wx_shm_queue_ctl(me)->head;
        q->size = (uint32_t)wx_shm.queue_size;
        q->src = -1;
    }
    madvise(wx_shm_block(me), wx_shm.block_bytes, MADV_POPULATE_WRITE);
}

/* Map the pages [p, p + len) now (rounded out to pages) rather than fault them in on the send path. */
static void wx_shm_populate(void *p, size_t len)
{
    size_t page = wx_shm_page();
    uintptr_t a = (uintptr_t)p & ~(page - 1);
    madvise((void *)a, WU_ALIGN_UP((uintptr_t)p + len, page) - a, MADV_POPULATE_WRITE);
}

/* First packet to dst: take a ring of dst's pool if one is left, else dst's shared queue. Once;
 * the route never changes (wx_shm_priv.h). The madvise calls happen once per destination. */
static WU_NOINLINE void wx_shm_route(int dst)
{
    wx_shm_tx_t *tx = &wx_shm.tx[dst];
    uint32_t slot = atomic_fetch_add_explicit(&wx_shm.info[dst].claimed, 1, memory_order_relaxed);
    if (slot < (uint32_t)wx_shm.nfast) {
        tx->ctl = wx_shm_ring_ctl(dst, (int)slot);
        tx->data = wx_shm_ring_data(dst, (int)slot);
        tx->size = (uint32_t)wx_shm.ring_size;
        tx->tail = tx->head_cache = 0;
        tx->off = 0;
        /* owner first: the receiver activates its rings in claim order, later claims wait for it */
        __atomic_store_n(&tx->ctl->owner, (uint32_t)wx_shm.rank + 1, __ATOMIC_RELEASE);
        wx_shm_populate(tx->ctl, sizeof(*tx->ctl));
        wx_shm_populate(tx->data, wx_shm.ring_size);
        tx->route = WX_SHM_ROUTE_RING;
    } else {
        tx->mpq = wx_shm_queue_ctl(dst);
        tx->data = wx_shm_queue_data(dst);
        tx->size = (uint32_t)wx_shm.queue_size;
        tx->head_cache = 0;
        wx_shm_populate(tx->mpq, sizeof(*tx->mpq));
        wx_shm_populate(tx->data, wx_shm.queue_size);
        tx->route = WX_SHM_ROUTE_QUEUE;
    }
}

/* Receiver: rings of our pool whose owners have appeared become active, in claim order. */
static WU_NOINLINE void wx_shm_activate(void)
{
    int me = wx_shm.rank;
    while (wx_shm.next) {
        uint32_t owner = __atomic_load_n(&wx_shm.next->owner, __ATOMIC_ACQUIRE);
        if (!owner)
            return;
        int slot = wx_shm.nactive;
        if (owner > (uint32_t)wx_shm.size || owner - 1 == (uint32_t)me)
            wx_protocol_error(-1, "ring %d of rank %d's pool names owner %u (rank + 1 of a job of "
                              "%d ranks, not %d itself)", slot, me, owner, wx_shm.size, me);
        wx_shm_rx_t *rx = &wx_shm.rx[slot];
        rx->data = wx_shm_ring_data(me, slot);
        rx->pub = &wx_shm.next->head;
        rx->size = (uint32_t)wx_shm.ring_size;
        rx->src = (int)owner - 1;
        wx_shm.nactive = ++slot;
        wx_shm.next = slot < wx_shm.nfast ? wx_shm_ring_ctl(me, slot) : NULL;
    }
    wx_shm.poll_more = wx_shm.queue_size != 0;
}

typedef enum { WX_SHM_CMA_OFF, WX_SHM_CMA_ON, WX_SHM_CMA_AUTO } wx_shm_cma_mode_t;

static wx_shm_cma_mode_t wx_shm_cma_mode(void)
{
    const char *s = wu_config_str(WU_CONFIG_SHM_CMA);   /* auto, 1 or 0: wu_config_init checked */
    if (!strcmp(s, "1"))
        return WX_SHM_CMA_ON;
    if (!strcmp(s, "0"))
        return WX_SHM_CMA_OFF;
    return WX_SHM_CMA_AUTO;
}

/* After fence 2 (every rank's pid is in the segment, rank 0 has unlinked it). Ends with fence 3,
 * which every rank reaches, joined or not: so all take the same CMA decision and, wherever init
 * returns, successfully or not, the name is gone. */
static wu_status_t wx_shm_cma_decide(const wx_bootstrap_t *bs, wx_shm_cma_mode_t mode, bool joined)
{
    int me = wx_shm.rank, n = wx_shm.size;
    if (joined && mode == WX_SHM_CMA_AUTO) {
        int peer = (me + 1) % n;
        __atomic_store_n(&wx_shm.info[me].cma_ok, wx_shm_cma_probe(&wx_shm.info[peer], peer),
                         __ATOMIC_RELEASE);
    }
    wu_status_t s = bs->fence();
    if (s != WU_OK || !joined)
        return s;
    if (mode != WX_SHM_CMA_AUTO) {
        wx_shm.cma = mode == WX_SHM_CMA_ON;
        return WU_OK;
    }
    bool all = true;
    for (int r = 0; r < n; r++)
        all = all && __atomic_load_n(&wx_shm.info[r].cma_ok, __ATOMIC_ACQUIRE) == 1;
    wx_shm.cma = all;
    if (!all && me == 0)
        wu_debug("shm: process_vm_readv refused between ranks; rendezvous copies through the rings");
    return WU_OK;
}

/* Undo a partial init: unmap, free, forget. The name was unlinked by then (or never existed). */
static void wx_shm_teardown(void)
{
    if (wx_shm.seg)
        munmap(wx_shm.seg, wx_shm.seg_bytes);
    free(wx_shm.tx);
    free(wx_shm.rx);
    memset(&wx_shm, 0, sizeof(wx_shm));
}

/* Between fence 1 and fence 2, on a rank that mapped the segment: descriptors, inbox pages, pid.
 * Success is announced by info[rank].ok, read by every rank after fence 2. */
static void wx_shm_join(int fd)
{
    int n = wx_shm.size, nrx = wx_shm.nfast ? wx_shm.nfast : 1;
    wx_shm.info = (wx_shm_rank_info_t *)(wx_shm.seg + sizeof(wx_shm_seg_hdr_t));
    wx_shm.tx = aligned_alloc(WU_CACHELINE, (size_t)n * sizeof(wx_shm_tx_t));
    wx_shm.rx = aligned_alloc(WU_CACHELINE, (size_t)nrx * sizeof(wx_shm_rx_t));
    if (!wx_shm.tx || !wx_shm.rx) {
        wu_log_error("out of memory for %d shared-memory ring descriptors", n);
        return;
    }
    memset(wx_shm.tx, 0, (size_t)n * sizeof(wx_shm_tx_t));
    memset(wx_shm.rx, 0, (size_t)nrx * sizeof(wx_shm_rx_t));
    if (!wx_shm_inbox_allocate(fd))
        return;
    wx_shm_rank_info_t *mine = &wx_shm.info[wx_shm.rank];
    mine->pid = (int32_t)getpid();
    wx_shm_cma_publish(mine);
    __atomic_store_n(&mine->ok, 1, __ATOMIC_RELEASE);
}

bool wx_shm_prefetchw;

static bool wx_shm_cpu_has_prefetchw(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    return __get_cpuid(0x80000001u, &a, &b, &c, &d) && (c & (1u << 8));
#else
    return false;
#endif
}

wu_status_t wx_shm_init(const wx_bootstrap_t *bs, wx_recv_fn_t cb, void *cb_arg)
{
    wx_shm_prefetchw = wx_shm_cpu_has_prefetchw();
    if (wx_shm.ready) {
        wu_log_error("wx_shm_init called twice");
        return WU_ERR_INVALID;
    }
    memset(&wx_shm, 0, sizeof(wx_shm));
    wx_shm.rank = bs->rank;
    wx_shm.size = bs->size;
    wx_shm.cb = cb;
    wx_shm.cb_arg = cb_arg;
    wx_shm.max_payload = wx_shm_payload_limit();
    if (bs->size == 1) {              /* no peers, no segment */
        wx_shm.ready = true;
        return WU_OK;
    }

    int me = bs->rank, n = bs->size, fd = -1;
    wx_shm_cma_mode_t cma_mode = wx_shm_cma_mode();
    wu_status_t s;
    char name[256];
    if (snprintf(name, sizeof(name), "/%s-shm", bs->job_id) >= (int)sizeof(name)) {
        wu_log_error("job id too long for a shared-memory name: %s", bs->job_id);
        return WU_ERR_INVALID;
    }

    /* 1. Rank 0 creates the segment and says whether it could; after fence 1 the others map it. */
    if (me == 0) {
        wu_status_t created = wx_shm_seg_create(name, n, &fd);
        s = bs->put(WX_SHM_KEY, created == WU_OK ? "1" : "0");
        if (s == WU_OK)
            s = bs->fence();
        if (s == WU_OK)
            s = created;
        if (s != WU_OK)
            goto err_unlink;
    } else {
        char val[8];
        s = bs->fence();
        if (s == WU_OK)
            s = bs->get(0, WX_SHM_KEY, val, sizeof(val));
        if (s != WU_OK)
            goto err_teardown;
        if (strcmp(val, "1") != 0) {
            wu_debug("shm: rank 0 could not create the segment");
            s = WU_ERR_IO;
            goto err_teardown;
        }
        /* on failure, go on to fence 2 with info[me].ok unset: every rank fails together */
        s = wx_shm_attach(name, n, &fd);
    }

    /* 2. Every rank that mapped the segment joins; after fence 2 rank 0 unlinks it. */
    if (wx_shm.seg)
        wx_shm_join(fd);
    wu_status_t fenced = bs->fence();
    if (me == 0)
        shm_unlink(name);
    if (fd >= 0)
        close(fd);
    if (fenced != WU_OK) {
        s = fenced;
        goto err_teardown;
    }
    bool joined = wx_shm.seg != NULL;
    for (int r = 0; joined && r < n; r++) {
        if (__atomic_load_n(&wx_shm.info[r].ok, __ATOMIC_ACQUIRE) != 1) {
            wu_debug("shm: rank %d could not join the segment", r);
            joined = false;
        }
    }

    /* 3. Agree on CMA (fence 3, reached by every rank even when the job could not join). */
    wu_status_t agreed = wx_shm_cma_decide(bs, cma_mode, joined);
    if (s == WU_OK)
        s = agreed != WU_OK ? agreed : joined ? WU_OK : WU_ERR_IO;
    if (s != WU_OK)
        goto err_teardown;

    wx_shm_rings_setup();
    atomic_store_explicit(&wx_shm.coop_free, UINT32_MAX, memory_order_release);
    wx_shm.ready = true;
    wu_debug("shm: %d ranks, %d rings of %zu bytes and a queue of %zu bytes per rank, segment of %zu "
             "bytes, packets up to %zu bytes, CMA %s", n, wx_shm.nfast, wx_shm.ring_size,
             wx_shm.queue_size, wx_shm.seg_bytes, wx_shm.max_payload, wx_shm.cma ? "on" : "off");
    return WU_OK;

err_unlink:
    if (fd >= 0) {
        shm_unlink(name);
        close(fd);
    }
err_teardown:
    wx_shm_teardown();
    return s;
}

void wx_shm_finalize(void)
{
    if (wx_shm.ready)
        wx_shm_teardown();
}

size_t wx_shm_seg_bytes(int n)
{
    return n < 2 ? 0 : wx_shm_layout_choose(n, wx_shm_max_payload()).seg_bytes;
}

size_t wx_shm_max_payload(void)
{
    return wx_shm.ready ? wx_shm.max_payload : wx_shm_payload_limit();
}

bool wx_shm_has_cma(void)
{
    return wx_shm.cma;
}

static WU_NOINLINE wu_status_t wx_shm_send_invalid(int dst, size_t len)
{
    wu_log_error("wx_shm_send: bad packet (to rank %d of %d from %d, %zu payload bytes, limit %zu)",
                 dst, wx_shm.size, wx_shm.rank, len, wx_shm.max_payload);
    return WU_ERR_INVALID;
}

/* Send through the shared queue of dst, or choose the route on first contact (then send by it).
 * payload, or fill(arg, ...) when fill is set, provides the len payload bytes. */
static WU_NOINLINE wu_status_t wx_shm_send_slow(int dst, const void *hdr, const void *payload,
                                                size_t len, wx_fill_fn_t fill, void *arg)
{
    wx_shm_tx_t *tx = &wx_shm.tx[dst];
    if (tx->route == WX_SHM_ROUTE_NONE)
        wx_shm_route(dst);
    if (tx->route == WX_SHM_ROUTE_RING) {
        wx_shm_rec_t *rec = wx_shm_tx_reserve(tx, (uint32_t)len);
        if (!rec)
            return WU_ERR_AGAIN;
        if (fill)
            fill(arg, rec->payload, len);
        else if (len)
            memcpy(rec->payload, payload, len);
        wx_shm_tx_commit(tx, rec, hdr, (uint32_t)len);
    } else {
        uint64_t pos;
        wx_shm_rec_t *rec = wx_shm_mpq_reserve(tx, (uint32_t)len, &pos);
        if (!rec)
            return WU_ERR_AGAIN;
        if (fill)
            fill(arg, rec->payload, len);
        else if (len)
            memcpy(rec->payload, payload, len);
        wx_shm_mpq_commit(rec, pos, hdr, (uint32_t)len, (uint32_t)wx_shm.rank);
    }
    if (atomic_load_explicit(&wx_shm.info[dst].db.armed, memory_order_relaxed))
        wx_shm_doorbell_ring(dst);
    return WU_OK;
}

/* The bodies of send, send_fill and progress are inlined into both their plain forms (the shm unit
 * tests) and their operations-table forms (wx_shm_tl_*, wx_shm_priv.h): the core's one indirect
 * call lands in the ring code, with no wrapper in between. */
/* always_inline: the transport's send (wx_shm_tl_send, called through the operations table) is
 * this body, not a call to it. */
static inline __attribute__((always_inline)) wu_status_t
wx_shm_send_inl(int dst, const void *hdr, const void *payload, size_t len)
{
    if (WU_UNLIKELY((unsigned)dst >= (unsigned)wx_shm.size || dst == wx_shm.rank ||
                    len > wx_shm.max_payload))
        return wx_shm_send_invalid(dst, len);
    wx_shm_tx_t *tx = &wx_shm.tx[dst];
    if (WU_UNLIKELY(tx->route != WX_SHM_ROUTE_RING))
        return wx_shm_send_slow(dst, hdr, payload, len, NULL, NULL);
    if (!wx_shm_tx_push(tx, hdr, payload, (uint32_t)len))
        return WU_ERR_AGAIN;
    /* A plain load of a line that stays shared while the receiver is awake: ~free. No fence: a
     * receiver that armed just as we pushed re-polls after a short first sleep (wx_shm_doorbell). */
    if (WU_UNLIKELY(atomic_load_explicit(&wx_shm.info[dst].db.armed, memory_order_relaxed)))
        wx_shm_doorbell_ring(dst);
    return WU_OK;
}

wu_status_t wx_shm_send(int dst, const void *hdr, const void *payload, size_t len)
{
    return wx_shm_send_inl(dst, hdr, payload, len);
}

wu_status_t wx_shm_tl_send(wx_tl_t *tl, int dst, const void *hdr, const void *payload, size_t len)
{
    (void)tl;
    return wx_shm_send_inl(wx_shm_local[dst], hdr, payload, len);
}

static inline wu_status_t wx_shm_send_fill_inl(int dst, const void *hdr, size_t len,
                                               wx_fill_fn_t fill, void *arg)
{
    if (WU_UNLIKELY((unsigned)dst >= (unsigned)wx_shm.size || dst == wx_shm.rank ||
                    len > wx_shm.max_payload))
        return wx_shm_send_invalid(dst, len);
    wx_shm_tx_t *tx = &wx_shm.tx[dst];
    if (WU_UNLIKELY(tx->route != WX_SHM_ROUTE_RING))
        return wx_shm_send_slow(dst, hdr, NULL, len, fill, arg);
    wx_shm_rec_t *rec = wx_shm_tx_reserve(tx, (uint32_t)len);
    if (!rec)
        return WU_ERR_AGAIN;
    if (len)
        fill(arg, rec->payload, len);
    wx_shm_tx_commit(tx, rec, hdr, (uint32_t)len);
    if (WU_UNLIKELY(atomic_load_explicit(&wx_shm.info[dst].db.armed, memory_order_relaxed)))
        wx_shm_doorbell_ring(dst);
    return WU_OK;
}

wu_status_t wx_shm_send_fill(int dst, const void *hdr, size_t len, wx_fill_fn_t fill, void *arg)
{
    return wx_shm_send_fill_inl(dst, hdr, len, fill, arg);
}

wu_status_t wx_shm_tl_send_fill(wx_tl_t *tl, int dst, const void *hdr, size_t len,
                                wx_fill_fn_t fill, void *arg)
{
    (void)tl;
    return wx_shm_send_fill_inl(wx_shm_local[dst], hdr, len, fill, arg);
}

/* ---- doorbell ---- */

static long wx_futex(_Atomic uint32_t *addr, int op, uint32_t val, const struct timespec *ts)
{
    return syscall(SYS_futex, (uint32_t *)addr, op, val, ts, NULL, 0);
}

void wx_shm_doorbell_ring(int rank)
{
    wx_shm_doorbell_t *db = &wx_shm.info[rank].db;
    atomic_fetch_add_explicit(&db->seq, 1, memory_order_release);
    wx_futex(&db->seq, FUTEX_WAKE, 1, NULL);
}

uint32_t wx_shm_doorbell_arm(void)
{
    wx_shm_doorbell_t *db = &wx_shm.info[wx_shm.rank].db;
    atomic_store_explicit(&db->armed, 1, memory_order_seq_cst);
    return atomic_load_explicit(&db->seq, memory_order_seq_cst);
}

void wx_shm_doorbell_disarm(void)
{
    atomic_store_explicit(&wx_shm.info[wx_shm.rank].db.armed, 0, memory_order_relaxed);
}

void wx_shm_doorbell_sleep(uint32_t seq, uint64_t timeout_ns)
{
    wx_shm_doorbell_t *db = &wx_shm.info[wx_shm.rank].db;
    struct timespec ts = { .tv_sec = (time_t)(timeout_ns / 1000000000u),
                           .tv_nsec = (long)(timeout_ns % 1000000000u) };
    wx_futex(&db->seq, FUTEX_WAIT, seq, &ts);
}

void wx_shm_offer_watch(bool on)
{
    /* seq_cst: before the caller's look at the rings (wx_shm.h) */
    atomic_store_explicit(&wx_shm.info[wx_shm.rank].db.offer_watch, on, memory_order_seq_cst);
}

void wx_shm_offer_busy(uint64_t now_ns)
{
    atomic_store_explicit(&wx_shm.info[wx_shm.rank].db.offer_busy_ns, now_ns,
                          memory_order_relaxed);
}

uint32_t wx_shm_offer_seq(void)
{
    return atomic_load_explicit(&wx_shm.info[wx_shm.rank].db.offer_seq, memory_order_seq_cst);
}

void wx_shm_offer_sleep(uint32_t seq, uint64_t deadline_ns)
{
    wx_shm_doorbell_t *db = &wx_shm.info[wx_shm.rank].db;
    struct timespec ts = { .tv_sec = (time_t)(deadline_ns / 1000000000u),
                           .tv_nsec = (long)(deadline_ns % 1000000000u) };
    /* FUTEX_WAIT_BITSET: an absolute CLOCK_MONOTONIC time-out, like the timer's own sleeps */
    syscall(SYS_futex, (uint32_t *)&db->offer_seq, FUTEX_WAIT_BITSET, seq, &ts, NULL,
            FUTEX_BITSET_MATCH_ANY);
}

void wx_shm_offer_wake(int dst)
{
    wx_shm_doorbell_t *db = &wx_shm.info[dst].db;
    if (dst != wx_shm.rank) {
        atomic_thread_fence(memory_order_seq_cst);   /* the offer's push, then the look */
        if (!atomic_load_explicit(&db->offer_watch, memory_order_relaxed))
            return;
        uint64_t busy = atomic_load_explicit(&db->offer_busy_ns, memory_order_relaxed);
        if (busy) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            uint64_t now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
            if (now < busy + WX_SHM_OFFER_BUSY_NS)
                return;   /* it polls: it will see the offer */
        }
    }
    atomic_fetch_add_explicit(&db->offer_seq, 1, memory_order_release);
    wx_futex(&db->offer_seq, FUTEX_WAKE, 1, NULL);
}

void wx_shm_cpu_set(int cpu)
{
    _Atomic uint32_t *w = &wx_shm.info[wx_shm.rank].db.cpu;
    uint32_t v = (uint32_t)cpu + 1u;
    if (atomic_load_explicit(w, memory_order_relaxed) != v)
        atomic_store_explicit(w, v, memory_order_relaxed);
}

int wx_shm_peer_cpu(int peer)
{
    return (int)atomic_load_explicit(&wx_shm.info[peer].db.cpu, memory_order_relaxed) - 1;
}

void wx_shm_set_prefetch(wx_prefetch_fn_t fn)
{
    wx_shm.prefetch = fn;
}

/* When several records wait in a ring, let the receiver prefetch what each will touch, in stages
 * over the whole batch, so the cache misses of a batch overlap instead of following each other.
 * A lone record (the latency case) skips this. */
static void wx_shm_prefetch_batch(const wx_shm_rx_t *rx)
{
    const wx_shm_rec_t *recs[WX_SHM_BATCH];
    uint64_t head = rx->head;
    uint32_t off = rx->off;
    int n = 0;
    const wx_shm_rec_t *rec;
    uint32_t nranks = (uint32_t)wx_shm.size;
    while (n < WX_SHM_BATCH && (rec = wx_shm_rx_peek_at(rx, &head, &off, nranks)) != NULL) {
        recs[n++] = rec;
        wx_shm_rx_cursor_next(rx, rec, &head, &off);
    }
    if (n < 2)
        return;
    for (int stage = 0; stage < WX_PREFETCH_STAGES; stage++)
        for (int j = 0; j < n; j++)
            if (!wx_shm.prefetch(wx_shm.cb_arg, rx->src >= 0 ? rx->src : (int)recs[j]->spare,
                                 recs[j]->hdr, stage))
                return;
}

/* A record that breaks the format (wx_shm_rx_peek, wx_shm_mpq_peek): name the sender and the
 * field, end the job. Nothing of the record beyond its first line has been read. */
void wx_shm_rx_corrupt(const wx_shm_rx_t *rx, const wx_shm_rec_t *rec)
{
    uint32_t len = rec->len, spare = rec->spare;
    const char *where = rx->src >= 0 ? "per-pair ring" : "shared queue";
    bool spare_ok = spare < (uint32_t)wx_shm.size && spare != (uint32_t)wx_shm.rank;
    int src = rx->src >= 0 ? rx->src : spare_ok ? (int)spare : -1;
    if (wx_shm_world && src >= 0)
        src = wx_shm_world[src];
    if (!wx_shm_rec_fits(rx, rx->off, len))
        wx_protocol_error(src, "%s record at offset %u claims a payload of %u bytes, %llu bytes "
                          "with its header, but only %u bytes of the %u-byte data area are left",
                          where, rx->off, len, (unsigned long long)WX_SHM_REC_BYTES(len),
                          rx->size - rx->off, rx->size);
    wx_protocol_error(-1, "%s record at offset %u names sender rank %u (field spare; the job "
                      "has %d ranks, this one is %d)", where, rx->off, spare, wx_shm.size,
                      wx_shm.rank);
}

/* What progress looks at besides the active rings: rings of our pool newly claimed (a claim's
 * owner store is the only write to that line), then a batch from our shared queue. */
static WU_NOINLINE int wx_shm_progress_more(void)
{
    if (wx_shm.next && __atomic_load_n(&wx_shm.next->owner, __ATOMIC_RELAXED) != 0)
        wx_shm_activate();
    wx_shm_rx_t *rx = &wx_shm.rxq;
    if (!rx->data)
        return 0;
    int k;
    if (wx_shm.prefetch && rx->backlog)
        wx_shm_prefetch_batch(rx);
    for (k = 0; k < WX_SHM_QUEUE_BATCH; k++) {
        wx_shm_rec_t *rec = wx_shm_mpq_peek(rx, (uint32_t)wx_shm.size, (uint32_t)wx_shm.rank);
        if (!rec)
            break;
        wx_shm.cb((int)rec->spare, rec->hdr, rec->payload, rec->len, wx_shm.cb_arg);
        wx_shm_mpq_advance(rx, rec);
    }
    wx_shm_rx_publish(rx, k < WX_SHM_QUEUE_BATCH);
    rx->backlog = k > 1;
    return k;
}

static inline int wx_shm_progress_inl(void)
{
    if (WU_UNLIKELY(wx_shm.in_progress))
        return 0;
    wx_shm.in_progress = true;
    int delivered = WU_UNLIKELY(wx_shm.poll_more) ? wx_shm_progress_more() : 0;
    int nrings = wx_shm.nactive;
    for (int i = 0; i < nrings; i++) {
        wx_shm_rx_t *rx = &wx_shm.rx[i];
        int k;
        /* Look ahead only behind a backlog: reading the next record's stamp when the ring holds one
         * packet would pull a line the sender is writing, a coherence miss on the latency path. */
        if (wx_shm.prefetch && rx->backlog)
            wx_shm_prefetch_batch(rx);
        for (k = 0; k < WX_SHM_BATCH; k++) {
            wx_shm_rec_t *rec = wx_shm_rx_peek(rx);
            if (!rec)
                break;
            wx_shm.cb(rx->src, rec->hdr, rec->payload, rec->len, wx_shm.cb_arg);
            wx_shm_rx_advance(rx, rec);
        }
        wx_shm_rx_publish(rx, k < WX_SHM_BATCH);
        rx->backlog = k > 1;
        delivered += k;
    }
    wx_shm.in_progress = false;
    return delivered;
}

int wx_shm_progress(void)
{
    return wx_shm_progress_inl();
}

int wx_shm_tl_progress(wx_tl_t *tl)
{
    (void)tl;
    return wx_shm_progress_inl();
}
