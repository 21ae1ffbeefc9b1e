/* Window creation and destruction, and what a window tells about itself: group, name, info,
 * predefined attributes (see wm_win.h, docs/rma.md). */
#include "mpi/wm_win.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/wc_rma_atomic_inl.h"
#include "mpi/wm_attr.h"
#include "mpi/wm_errhandler.h"
#include "mpi/wm_group.h"
#include "mpi/wm_info.h"
#include "mpi/wm_internal.h"
#include "mpi/wm_op.h"
#include "util/wu_config.h"
#include "util/wu_log.h"

#define WM_WIN_ALIGN 16   /* each process's part of an allocated window */
/* MPI_Win_allocate: each process's part starts this far into a page. Copies between a window and
 * a user buffer whose addresses agree in their low 12 bits, or nearly (the target's part
 * page-aligned, a malloc'd buffer 16 bytes into its page), stall on 4K aliasing: the CPU takes
 * the loads of the copy's next bytes for loads of bytes it has just stored (MPI_Get of 64 KiB into
 * such a buffer ran at 36 GB/s against 45 with the parts offset by half a page, same machine).
 * Half a page keeps clear of both common user alignments (page-aligned and malloc's 16 bytes).
 * Allocate_shared keeps its parts contiguous, as the standard asks. */
#define WM_WIN_COLOUR 2048

_Static_assert(sizeof(wm_win_t) <= WM_OBJ_SLOT, "a window must fit in an object slot");

/* What every process tells the others when a window is made. */
typedef struct wm_win_meta {
    int64_t bytes;
    int64_t disp_unit;
    int64_t leader;   /* the window rank of its node's first process: same node, same leader */
} wm_win_meta_t;

static void wm_win_destroy(wm_obj_t *o)
{
    wm_win_t *w = (wm_win_t *)o;
    if (w->cw) {
        wc_rma_win_unregister(w->cw);
        free((void *)w->cw->sent);
        free((void *)w->cw->flushed);
        if (w->cw->reg)
            w->cw->tl->ops->win_dereg(w->cw->tl, w->cw->reg);
        free(w->cw->rkey);
        free(w->cw->wtgt);
        free(w->cw);
    }
    free(w->remote);
    free(w->meta);
    free(w->fast);
    if (w->targets)
        for (int r = 0; r < w->size; r++)
            wc_rma_target_fini(&w->targets[r]);
    wc_rma_seg_detach(&w->seg);
    free(w->targets);
    free(w->world);
    free((void *)w->locks);
    free(w->start_in);
    free(w->start_list);
    free(w->post_seen);
    wm_errh_unref(w->errh);
}

/* Windows across nodes: Put and Get of contiguous target data by the transport's RMA
 * (core/wc_rma_msg.h) when WEFT_RMA_NET is auto, the window is not dynamic (its regions come and
 * go), one transport with remote write reaches every remote target, and every process registered
 * its memory with it. Collective over the window, so every process decides alike (a window takes
 * one path for its Put and Get to other nodes; accumulates always go by messages, so their
 * atomicity rules are unchanged). Returns an MPI error of the collectives only. */
static int wm_win_fabric(wm_win_t *w, int flavor)
{
    wc_rma_win_t *cw = w->cw;
    wx_tl_t *tl = NULL;
    int ok = flavor != MPI_WIN_FLAVOR_DYNAMIC && wu_config_int(WU_CONFIG_RMA_NET) == 0;
    for (int r = 0; ok && r < w->size; r++) {
        if (!w->remote[r])
            continue;
        wx_tl_t *t = cw->ep->peers[w->world[r]].tl;
        tl = tl ? tl : t;
        ok = t == tl && wx_has_win_ops(t);
    }
    wx_rkey_t mine = { 0, 0 };
    cw->rkey = ok ? malloc(sizeof(*cw->rkey) * (size_t)w->size) : NULL;
    cw->wtgt = ok ? calloc((size_t)w->size, sizeof(*cw->wtgt)) : NULL;
    ok = ok && cw->rkey && cw->wtgt;
    if (ok && w->bytes > 0) {
        ok = tl->ops->win_reg(tl, w->base, (size_t)w->bytes, &mine, &cw->reg) == WU_OK;
        cw->tl = tl;
    }
    int rc = PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, w->comm);
    if (rc == MPI_SUCCESS && ok)
        rc = PMPI_Allgather(&mine, sizeof(mine), MPI_BYTE, cw->rkey, sizeof(mine), MPI_BYTE,
                            w->comm);
    if (rc != MPI_SUCCESS || !ok) {
        if (cw->reg)
            tl->ops->win_dereg(tl, cw->reg);
        cw->reg = NULL;
        free(cw->rkey);
        free(cw->wtgt);
        cw->rkey = NULL;
        cw->wtgt = NULL;
        return rc;
    }
    for (int r = 0; r < w->size; r++)
        cw->wtgt[r].w = cw;
    cw->tl = tl;
    cw->fabric = true;
    wu_debug("RMA: window %u across nodes: Put and Get by the transport's RMA", cw->id);
    return MPI_SUCCESS;
}

/* What destroy cannot do (it may run inside a collection cycle, where no MPI call belongs). */
static void wm_win_release_mpi(wm_win_t *w)
{
    /* before the communicator (whose context id names the window in packets) can be reused */
    if (w->cw)
        wc_rma_win_unregister(w->cw);
    /* and the registration before the memory goes back to the user (Win_create) or is unmapped:
     * every epoch is closed, so no write of another node can still come */
    if (w->cw && w->cw->reg) {
        w->cw->tl->ops->win_dereg(w->cw->tl, w->cw->reg);
        w->cw->reg = NULL;
    }
    if (w->info != MPI_INFO_NULL)
        PMPI_Info_free(&w->info);
    if (w->comm != MPI_COMM_NULL)
        PMPI_Comm_free(&w->comm);
}

/* The hints the window keeps (those of the issue; unknown keys are ignored, as the standard
 * allows), with their defaults, updated from `from`. */
static const struct {
    const char *key, *dflt;
} wm_win_hints[] = {
    {"no_locks", "false"},
    {"accumulate_ordering", "rar,raw,war,waw"},
    {"accumulate_ops", "same_op_no_op"},
    {"same_size", "false"},
    {"same_disp_unit", "false"},
    {"mpi_accumulate_granularity", "0"},
};

static int wm_win_info_apply(wm_win_t *w, MPI_Info from)
{
    int rc;
    if (w->info == MPI_INFO_NULL) {
        if ((rc = PMPI_Info_create(&w->info)) != MPI_SUCCESS)
            return rc;
        for (size_t i = 0; i < sizeof(wm_win_hints) / sizeof(wm_win_hints[0]); i++)
            PMPI_Info_set(w->info, wm_win_hints[i].key, wm_win_hints[i].dflt);
    }
    if (from == MPI_INFO_NULL)
        return MPI_SUCCESS;
    for (size_t i = 0; i < sizeof(wm_win_hints) / sizeof(wm_win_hints[0]); i++) {
        char v[MPI_MAX_INFO_VAL];
        int len = sizeof(v), flag = 0;
        if ((rc = PMPI_Info_get_string(from, wm_win_hints[i].key, &len, v, &flag)) != MPI_SUCCESS)
            return rc;
        if (flag)
            PMPI_Info_set(w->info, wm_win_hints[i].key, v);
    }
    char v[MPI_MAX_INFO_VAL];
    int len = sizeof(v), flag = 0;
    PMPI_Info_get_string(w->info, "no_locks", &len, v, &flag);
    w->no_locks = flag && strcmp(v, "true") == 0;
    return MPI_SUCCESS;
}

/* The collective work of every flavor. user_base: Win_create's memory; else the window memory is
 * allocated in the segment and returned in *base_p. */
static int wm_win_make(const char *fn, MPI_Comm comm, int flavor, MPI_Aint bytes, int disp_unit,
                       MPI_Info info, void *user_base, void **base_p, MPI_Win *win)
{
    WM_COMM_CHECK(fn, comm, c);
    if (c->inter)
        return wm_error(c, MPI_ERR_COMM, fn, "windows on intercommunicators are not supported");
    if (bytes < 0)
        return wm_error(c, MPI_ERR_SIZE, fn, "size %lld is negative", (long long)bytes);
    if (disp_unit <= 0)
        return wm_error(c, MPI_ERR_DISP, fn, "disp_unit %d is not positive", disp_unit);
    if (!win)
        return wm_error(c, MPI_ERR_ARG, fn, "win is NULL");
    if (info != MPI_INFO_NULL && !wm_info_get(info))
        return wm_error(c, MPI_ERR_INFO, fn, "invalid info %p", (void *)info);
    if (flavor == MPI_WIN_FLAVOR_CREATE && bytes > 0 && !user_base)
        return wm_error(c, MPI_ERR_ARG, fn, "base is NULL with size %lld", (long long)bytes);
    if ((flavor == MPI_WIN_FLAVOR_ALLOCATE || flavor == MPI_WIN_FLAVOR_SHARED) && !base_p)
        return wm_error(c, MPI_ERR_ARG, fn, "baseptr is NULL");

    int n = c->size, me = c->rank, rc, cls = MPI_SUCCESS;
    const char *why = NULL;
    MPI_Comm dup = MPI_COMM_NULL, node = MPI_COMM_NULL;
    wm_win_meta_t *meta = NULL;
    wm_win_t *w = NULL;
    int fd = -1;

    if ((rc = PMPI_Comm_dup(comm, &dup)) != MPI_SUCCESS)
        return rc;
    PMPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    PMPI_Comm_set_name(dup, "window");
    /* The processes of a node share one segment, made by the node's first; the others are
     * reached by messages (core/wc_rma_msg.h). */
    int nn = 0, nr = 0, leader = me;
    if ((rc = PMPI_Comm_split_type(dup, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node)) ||
        (rc = PMPI_Comm_size(node, &nn)) || (rc = PMPI_Comm_rank(node, &nr)) ||
        (rc = PMPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, node)))
        goto out_dup;

    meta = malloc(sizeof(*meta) * (size_t)n);
    w = wm_obj_create(WM_OBJ_WIN, sizeof(*w), wm_win_destroy);
    wm_win_meta_t mine = {bytes, disp_unit, leader};
    if (w) {
        w->comm = MPI_COMM_NULL;
        w->info = MPI_INFO_NULL;
        w->errh = MPI_ERRORS_ARE_FATAL;   /* the standard's default for windows */
    }
    if (!meta || !w) {
        cls = MPI_ERR_NO_MEM;
        why = "no memory for the window";
        /* the others still take part in the collectives below: agree on failure first */
    }
    int bad = cls != MPI_SUCCESS;
    if ((rc = PMPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, dup)) != MPI_SUCCESS)
        goto out_obj;
    if (bad) {
        if (cls == MPI_SUCCESS) {
            cls = MPI_ERR_OTHER;
            why = "another process of the communicator failed to create its part";
        }
        goto out_obj;
    }
    w->comm = dup;
    dup = MPI_COMM_NULL;
    w->rank = me;
    w->size = n;
    w->flavor = flavor;
    w->bytes = bytes;
    w->disp_unit = disp_unit;
    if ((rc = PMPI_Allgather(&mine, sizeof(mine), MPI_BYTE, meta, sizeof(mine), MPI_BYTE,
                             w->comm)) != MPI_SUCCESS)
        goto out_obj;

    size_t data = 0, my_off = 0;
    bool in_seg = flavor == MPI_WIN_FLAVOR_ALLOCATE || flavor == MPI_WIN_FLAVOR_SHARED;
    if (in_seg)
        for (int r = 0; r < n; r++) {
            if (meta[r].leader != leader)
                continue;
            if (flavor == MPI_WIN_FLAVOR_ALLOCATE)
                data = (data + WM_WIN_COLOUR + 4095) / 4096 * 4096 - WM_WIN_COLOUR;
            if (r == me)
                my_off = data;
            data += ((size_t)meta[r].bytes + WM_WIN_ALIGN - 1) / WM_WIN_ALIGN * WM_WIN_ALIGN;
        }
    size_t len = wc_rma_seg_size(n, data, NULL);

    /* The node's first process makes the segment; the others open it through /proc while it
     * holds it. */
    struct {
        int64_t pid, fd, ok;
    } where = {getpid(), -1, 1};
    if (nr == 0) {
        if (wc_rma_seg_create(len, n, &w->seg, &fd) != WU_OK)
            where.ok = 0;
        where.fd = fd;
    }
    if ((rc = PMPI_Bcast(&where, sizeof(where), MPI_BYTE, 0, node)) != MPI_SUCCESS)
        goto out_obj;
    int ok = (int)where.ok;
    if (nr != 0 && ok &&
        wc_rma_seg_attach((pid_t)where.pid, (int)where.fd, len, n, &w->seg) != WU_OK)
        ok = 0;
    rc = PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, w->comm);
    if (fd >= 0)
        close(fd);
    if (rc != MPI_SUCCESS)
        goto out_obj;
    if (!ok) {
        cls = MPI_ERR_NO_MEM;
        why = "the window's shared segment could not be created or mapped (see the log)";
        goto out_obj;
    }

    void *base = in_seg ? w->seg.data + my_off : user_base;
    wc_rma_peer_t *p = &w->seg.peers[me];
    p->pid = (int32_t)getpid();
    p->base = (uint64_t)(uintptr_t)base;
    p->size = (uint64_t)bytes;
    p->disp_unit = disp_unit;
    p->data_off = in_seg ? my_off : WC_RMA_USER_MEM;
    w->base = base;
    /* before any origin can copy to it (the barrier): huge pages from the first fault on */
    if (flavor == MPI_WIN_FLAVOR_CREATE && nn > 1 && bytes > 0 &&
        wu_config_int(WU_CONFIG_RMA_HUGEPAGE))
        wc_rma_user_mem_advise(user_base, (size_t)bytes);
    if ((rc = PMPI_Barrier(w->comm)) != MPI_SUCCESS)
        goto out_obj;

    w->targets = calloc((size_t)n, sizeof(*w->targets));
    w->world = malloc(sizeof(int) * (size_t)n);
    w->locks = calloc((size_t)n, sizeof(*w->locks));
    w->start_in = calloc((size_t)n, 1);
    w->start_list = malloc(sizeof(int) * (size_t)n);
    w->post_seen = calloc((size_t)n, sizeof(uint32_t));
    w->remote = calloc((size_t)n, sizeof(bool));
    w->meta = malloc(sizeof(*w->meta) * (size_t)n);
    ok = w->targets && w->world && w->locks && w->start_in && w->start_list && w->post_seen &&
         w->remote && w->meta;
    bool across = false;
    for (int r = 0; ok && r < n; r++) {
        const wc_rma_peer_t *q = &w->seg.peers[r];
        w->world[r] = wm_comm_world_rank(c, r);
        w->meta[r][0] = meta[r].bytes;
        w->meta[r][1] = meta[r].disp_unit;
        if (meta[r].leader != leader) {
            w->remote[r] = across = true;   /* its block in this node's segment stays unused */
            continue;
        }
        if (q->data_off != WC_RMA_USER_MEM)
            w->targets[r].addr = w->seg.data + q->data_off;
        else if (flavor == MPI_WIN_FLAVOR_DYNAMIC) {
            /* disps are addresses: every target, this one too, by single copy from 0 */
            w->targets[r].pid = q->pid;
            w->targets[r].raddr = 0;
        } else if (r == me)
            w->targets[r].addr = base;
        else {
            w->targets[r].pid = q->pid;
            w->targets[r].raddr = q->base;
            if (q->size > 0 && !wc_rma_cma_ok(q->pid, q->base))
                ok = -1;
        }
    }
    if (ok == 1 && !(w->fast = calloc((size_t)n, sizeof(*w->fast))))
        ok = 0;
    for (int r = 0; ok == 1 && r < n; r++) {
        char *a = w->remote[r] ? NULL : w->targets[r].addr;
        w->fast[r] = (wm_win_fast_t){ .addr = a, .size = w->meta[r][0],
                                      .disp_unit = w->meta[r][1],
                                      .atomic = a && wc_rma_atomic_reach(&w->seg.peers[r],
                                                                         &w->targets[r]) };
    }
    if (ok == 1 && wm_win_info_apply(w, info) != MPI_SUCCESS)
        ok = 0;
    if (ok == 1 && across) {
        /* Accumulates from other nodes are applied under the target's mutex (core/wc_rma_msg.c),
         * so this node's origins must not use CPU atomics on the window: it starts in the mutex
         * mode (each process of the node stores it, before the agreement below, so before any
         * operation; core/wc_rma_atomic_inl.h). */
        atomic_store_explicit(&w->seg.peers[0].amode, WC_RMA_AMODE_MUTEX, memory_order_release);
        /* registered before the agreement below: no packet can come for it before that */
        wc_rma_win_t *cw = calloc(1, sizeof(*cw));
        if (cw) {
            cw->id = wm_comm_get(w->comm)->ctx;
            cw->n = n;
            cw->me = me;
            cw->world = w->world;
            cw->ep = wc_ep_default();
            cw->seg = &w->seg;
            cw->dynamic = flavor == MPI_WIN_FLAVOR_DYNAMIC;
            cw->base = cw->dynamic ? NULL : base;
            cw->size = (uint64_t)bytes;
            cw->reduce = wm_op_reduce_stream;
            cw->sent = calloc((size_t)n, sizeof(*cw->sent));
            cw->flushed = calloc((size_t)n, sizeof(*cw->flushed));
            w->cw = cw;
        }
        if (!cw || !cw->sent || !cw->flushed || wc_rma_win_register(cw) != WU_OK)
            ok = 0;
    }
    int worst = ok == 1 ? 0 : ok == 0 ? 1 : 2;
    if ((rc = PMPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_INT, MPI_MAX, w->comm)) != MPI_SUCCESS)
        goto out_obj;
    if (worst) {
        cls = worst == 2 ? MPI_ERR_UNSUPPORTED_OPERATION : MPI_ERR_NO_MEM;
        why = worst == 2 ? "this node does not allow single copies between processes "
                           "(process_vm_readv; ptrace restrictions?), which MPI_Win_create needs"
                         : "no memory for the window";
        goto out_obj;
    }
    if (w->cw && (rc = wm_win_fabric(w, flavor)) != MPI_SUCCESS)
        goto out_obj;
    free(meta);
    PMPI_Comm_free(&node);
    if (base_p)
        *base_p = base;
    *win = (MPI_Win)w->obj.handle;
    return MPI_SUCCESS;

out_obj:
    if (w) {
        wm_win_release_mpi(w);
        wm_obj_user_free(&w->obj);   /* destroy frees the rest */
    }
out_dup:
    free(meta);
    if (node != MPI_COMM_NULL)
        PMPI_Comm_free(&node);
    if (dup != MPI_COMM_NULL)
        PMPI_Comm_free(&dup);
    if (cls != MPI_SUCCESS)
        return wm_error(c, cls, fn, "%s", why);
    return wm_error_raise(c, rc);
}

/* Win_create, Win_allocate and Win_allocate_shared, one helper serving the int form and its _c
 * twin (WM_TWINS_MPI_X of src/mpi/gen/wm_entry.h): baseptr is NULL for Win_create, base NULL for
 * the others. A disp_unit beyond int can only come from a _c form. */
static inline int wm_win_new(const char *fn, void *base, MPI_Aint size, MPI_Aint disp_unit,
                             MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win,
                             int flavor)
{
    if (disp_unit > INT32_MAX)
        return wm_error(NULL, MPI_ERR_DISP, fn, "disp_unit %lld is too large",
                        (long long)disp_unit);
    return wm_win_make(fn, comm, flavor, size, (int)disp_unit, info, base, (void **)baseptr, win);
}

static inline int wm_win_create(const char *fn, void *base, MPI_Aint size, MPI_Aint disp_unit,
                                MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    return wm_win_new(fn, base, size, disp_unit, info, comm, NULL, win, MPI_WIN_FLAVOR_CREATE);
}

static inline int wm_win_allocate(const char *fn, MPI_Aint size, MPI_Aint disp_unit,
                                  MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win,
                                  int flavor)
{
    return wm_win_new(fn, NULL, size, disp_unit, info, comm, baseptr, win, flavor);
}

WM_TWINS_MPI_Win_create(wm_win_create)
WM_TWINS_MPI_Win_allocate(wm_win_allocate, MPI_WIN_FLAVOR_ALLOCATE)
WM_TWINS_MPI_Win_allocate_shared(wm_win_allocate, MPI_WIN_FLAVOR_SHARED)

int wm_impl_MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    return wm_win_make("MPI_Win_create_dynamic", comm, MPI_WIN_FLAVOR_DYNAMIC, 0, 1, info, NULL,
                       NULL, win);
}

/* Whether another process of this node is in the window (it reaches this one's user memory by
 * single copy). */
static bool wm_win_node_peers(const wm_win_t *w)
{
    for (int r = 0; r < w->size; r++)
        if (r != w->rank && !w->remote[r])
            return true;
    return false;
}

int wm_impl_MPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    static const char fn[] = "MPI_Win_attach";
    WM_WIN_ARG(fn, win, w);
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return wm_win_error(w, MPI_ERR_RMA_FLAVOR, fn, "the window was not made by "
                            "MPI_Win_create_dynamic");
    if (size < 0)
        return wm_win_error(w, MPI_ERR_SIZE, fn, "size %lld is negative", (long long)size);
    if (size == 0)
        return MPI_SUCCESS;
    if (!base)
        return wm_win_error(w, MPI_ERR_ARG, fn, "base is NULL");
    uint64_t b = (uint64_t)(uintptr_t)base, e = b + (uint64_t)size;
    wc_rma_region_t *reg = &w->seg.regions[(size_t)w->rank * WC_RMA_REGIONS];
    for (int i = 0; i < WC_RMA_REGIONS; i++) {
        uint64_t rs = atomic_load(&reg[i].size), rb = atomic_load(&reg[i].base);
        if (rs && b < rb + rs && rb < e)
            return wm_win_error(w, MPI_ERR_RMA_ATTACH, fn,
                                "[%p, +%lld) overlaps a region attached already", base,
                                (long long)size);
    }
    for (int i = 0; i < WC_RMA_REGIONS; i++) {
        uint64_t zero = 0;
        if (atomic_compare_exchange_strong(&reg[i].base, &zero, b)) {
            /* before the region is published: the origins of this node single-copy to it */
            if (wm_win_node_peers(w) && wu_config_int(WU_CONFIG_RMA_HUGEPAGE))
                wc_rma_user_mem_advise(base, (size_t)size);
            atomic_store_explicit(&reg[i].size, (uint64_t)size, memory_order_release);
            return MPI_SUCCESS;
        }
    }
    return wm_win_error(w, MPI_ERR_RMA_ATTACH, fn, "%d regions are attached already, the most "
                        "this version allows", WC_RMA_REGIONS);
}

int wm_impl_MPI_Win_detach(MPI_Win win, const void *base)
{
    static const char fn[] = "MPI_Win_detach";
    WM_WIN_ARG(fn, win, w);
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return wm_win_error(w, MPI_ERR_RMA_FLAVOR, fn, "the window was not made by "
                            "MPI_Win_create_dynamic");
    wc_rma_region_t *reg = &w->seg.regions[(size_t)w->rank * WC_RMA_REGIONS];
    for (int i = 0; i < WC_RMA_REGIONS; i++)
        if (atomic_load(&reg[i].size) && atomic_load(&reg[i].base) == (uint64_t)(uintptr_t)base) {
            atomic_store_explicit(&reg[i].size, 0, memory_order_release);
            atomic_store_explicit(&reg[i].base, 0, memory_order_release);
            return MPI_SUCCESS;
        }
    return wm_win_error(w, MPI_ERR_ARG, fn, "no region attached at %p", base);
}

static int wm_win_query(const char *fn, MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *du,
                        void *baseptr)
{
    WM_WIN_ARG(fn, win, w);
    if (rank != MPI_PROC_NULL && (rank < 0 || rank >= w->size))
        return wm_win_error(w, MPI_ERR_RANK, fn, "rank %d is not in the window's group of %d",
                            rank, w->size);
    if (!size || !du || !baseptr)
        return wm_win_error(w, MPI_ERR_ARG, fn, "an output argument is NULL");
    int r = rank;
    if (r == MPI_PROC_NULL) {   /* the first process with shared memory */
        r = 0;
        while (r < w->size - 1 && (w->remote[r] || w->seg.peers[r].size == 0 ||
                                   w->seg.peers[r].data_off == WC_RMA_USER_MEM))
            r++;
    }
    /* MPI 4.1: any flavor; memory this process cannot load from (user memory of Win_create,
     * dynamic windows, processes of other nodes) is size 0 and NULL. Win_allocate's is in the
     * node's segment: shared. */
    const wc_rma_peer_t *q = &w->seg.peers[r];
    bool shared = !w->remote[r] && q->data_off != WC_RMA_USER_MEM;
    *size = shared ? (MPI_Aint)q->size : 0;
    *du = (MPI_Aint)w->meta[r][1];
    *(void **)baseptr = shared ? w->seg.data + q->data_off : NULL;
    return MPI_SUCCESS;
}

/* Win_shared_query and its _c twin (WM_TWINS_MPI_X of src/mpi/gen/wm_entry.h): disp_unit is an
 * int or an MPI_Aint. */
static inline int wm_win_shared_query(const char *fn, MPI_Win win, int rank, MPI_Aint *size,
                                      wm_ints_out_t disp_unit, void *baseptr)
{
    MPI_Aint du = 0;
    int rc = wm_win_query(fn, win, rank, size, disp_unit.p ? &du : NULL, baseptr);
    if (rc == MPI_SUCCESS)
        wm_ints_set(disp_unit, 0, du);   /* an int: the window was made with one */
    return rc;
}

WM_TWINS_MPI_Win_shared_query(wm_win_shared_query)

int wm_impl_MPI_Win_free(MPI_Win *win)
{
    static const char fn[] = "MPI_Win_free";
    WM_CHECK_INIT(fn);
    if (!win)
        return wm_error(NULL, MPI_ERR_ARG, fn, "win is NULL");
    wm_win_t *w = wm_win_get(*win);
    if (!w)
        return wm_win_error(NULL, MPI_ERR_WIN, fn, "invalid window %p", (void *)*win);
    if (atomic_load(&w->nlocks) || atomic_load(&w->lock_all) || atomic_load(&w->started) ||
        atomic_load(&w->posted))
        return wm_win_error(w, MPI_ERR_RMA_SYNC, fn,
                            "an epoch is still open (lock, lock_all, start or post)");
    /* Nobody may still be reaching into this process's memory once it is released. */
    int rc = PMPI_Barrier(w->comm);
    if (rc != MPI_SUCCESS)
        return wm_win_error(w, MPI_ERR_OTHER, fn, "the closing barrier failed");
    if ((rc = wm_attr_delete_all(&w->obj)) != MPI_SUCCESS)
        return wm_win_error(w, rc, fn, "an attribute's delete callback failed");
    wm_win_release_mpi(w);
    wm_obj_user_free(&w->obj);
    *win = MPI_WIN_NULL;
    return MPI_SUCCESS;
}

int wm_impl_MPI_Win_get_group(MPI_Win win, MPI_Group *group)
{
    static const char fn[] = "MPI_Win_get_group";
    WM_WIN_ARG(fn, win, w);
    if (!group)
        return wm_win_error(w, MPI_ERR_ARG, fn, "group is NULL");
    wm_group_t *g = wm_group_new(w->world, w->size);
    if (!g)
        return wm_win_error(w, MPI_ERR_NO_MEM, fn, "no memory for the group");
    *group = (MPI_Group)g->obj.handle;
    return MPI_SUCCESS;
}

int wm_impl_MPI_Win_set_name(MPI_Win win, const char *win_name)
{
    static const char fn[] = "MPI_Win_set_name";
    WM_WIN_ARG(fn, win, w);
    if (!win_name)
        return wm_win_error(w, MPI_ERR_ARG, fn, "win_name is NULL");
    size_t n = strnlen(win_name, MPI_MAX_OBJECT_NAME - 1);
    memcpy(w->name, win_name, n);
    w->name[n] = '\0';
    return MPI_SUCCESS;
}

int wm_impl_MPI_Win_get_name(MPI_Win win, char *win_name, int *resultlen)
{
    static const char fn[] = "MPI_Win_get_name";
    if (win == MPI_WIN_NULL) {   /* MPI 4.1: a valid argument, named "MPI_WIN_NULL" */
        WM_CHECK_INIT(fn);
        if (!win_name || !resultlen)
            return wm_error(NULL, MPI_ERR_ARG, fn, "win_name or resultlen is NULL");
        strcpy(win_name, "MPI_WIN_NULL");
        *resultlen = (int)strlen(win_name);
        return MPI_SUCCESS;
    }
    WM_WIN_ARG(fn, win, w);
    if (!win_name || !resultlen)
        return wm_win_error(w, MPI_ERR_ARG, fn, "win_name or resultlen is NULL");
    size_t n = strlen(w->name);
    memcpy(win_name, w->name, n + 1);
    *resultlen = (int)n;
    return MPI_SUCCESS;
}

int wm_impl_MPI_Win_set_info(MPI_Win win, MPI_Info info)
{
    static const char fn[] = "MPI_Win_set_info";
    WM_WIN_ARG(fn, win, w);
    if (info != MPI_INFO_NULL && !wm_info_get(info))
        return wm_win_error(w, MPI_ERR_INFO, fn, "invalid info %p", (void *)info);
    int rc = wm_win_info_apply(w, info);
    if (rc != MPI_SUCCESS)
        return wm_win_error(w, MPI_ERR_NO_MEM, fn, "could not record the hints");
    return MPI_SUCCESS;
}

int wm_impl_MPI_Win_get_info(MPI_Win win, MPI_Info *info_used)
{
    static const char fn[] = "MPI_Win_get_info";
    WM_WIN_ARG(fn, win, w);
    if (!info_used)
        return wm_win_error(w, MPI_ERR_ARG, fn, "info_used is NULL");
    if (PMPI_Info_dup(w->info, info_used) != MPI_SUCCESS)
        return wm_win_error(w, MPI_ERR_NO_MEM, fn, "no memory for the info object");
    return MPI_SUCCESS;
}

int wm_win_attr_predefined(wm_obj_t *o, int key, void *attribute_val, int *flag)
{
    wm_win_t *w = (wm_win_t *)o;
    /* The values live in the window, so the pointers stay valid while it does. The standard
     * types them: base a pointer, size and disp_unit MPI_Aint * and int *, flavor and model int *.
     */
    static const int model = MPI_WIN_UNIFIED;
    static const int flavors[] = {MPI_WIN_FLAVOR_CREATE, MPI_WIN_FLAVOR_ALLOCATE,
                                  MPI_WIN_FLAVOR_DYNAMIC, MPI_WIN_FLAVOR_SHARED};
    void *v;
    switch (key) {
    case MPI_WIN_BASE: v = w->base; break;
    case MPI_WIN_SIZE: v = &w->bytes; break;
    case MPI_WIN_DISP_UNIT: v = &w->disp_unit; break;
    case MPI_WIN_CREATE_FLAVOR: v = (void *)&flavors[w->flavor - MPI_WIN_FLAVOR_CREATE]; break;
    case MPI_WIN_MODEL: v = (void *)&model; break;
    default: return MPI_ERR_KEYVAL;
    }
    *(void **)attribute_val = v;
    *flag = 1;
    return MPI_SUCCESS;
}
