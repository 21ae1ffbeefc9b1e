/* MPI_Comm_split_type: MPI_COMM_TYPE_SHARED (the ranks of one node: the core's node table,
 * wc_node_of, which also decides who is reached by shared memory), MPI_COMM_TYPE_HW_GUIDED (info
 * "mpi_hw_resource_type": "mpi_shared_memory", the same as SHARED, or an hwloc object
 * type such as "Package", "NUMANode", "L3Cache", "Core"), MPI_COMM_TYPE_HW_UNGUIDED and
 * MPI_COMM_TYPE_RESOURCE_GUIDED ("mpi_pset_name" "mpi://WORLD" or "mpi://SELF", else
 * "mpi_hw_resource_type" as HW_GUIDED). MPI_Get_hw_resource_info lists the hardware types that
 * HW_GUIDED accepts for the calling process.
 *
 * A process belongs to the resource of a type whose CPUs include all the CPUs it may run on (its
 * binding); a process whose binding spans several resources of the type, or a type this machine
 * does not have, gets MPI_COMM_NULL. The hwloc topology is loaded once, on first use. */
#include "mpi/wm_internal.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#ifdef WEFT_HAVE_HWLOC
#define WM_HAVE_HWLOC 1
#include <hwloc.h>
#endif

/* ---- the binding ---- */

static int wm_binding(cpu_set_t *set)
{
    CPU_ZERO(set);
    return sched_getaffinity(0, sizeof(*set), set);
}

#ifdef WM_HAVE_HWLOC
static hwloc_topology_t wm_hw_topo;
static bool wm_hw_ok;
static pthread_once_t wm_hw_once = PTHREAD_ONCE_INIT;

static void wm_hw_load(void)
{
    if (hwloc_topology_init(&wm_hw_topo) < 0)
        return;
    if (hwloc_topology_load(wm_hw_topo) < 0) {
        hwloc_topology_destroy(wm_hw_topo);
        return;
    }
    wm_hw_ok = true;
}

static hwloc_bitmap_t wm_hw_set(const cpu_set_t *set)
{
    hwloc_bitmap_t b = hwloc_bitmap_alloc();
    if (b)
        for (int i = 0; i < CPU_SETSIZE; i++)
            if (CPU_ISSET(i, set))
                hwloc_bitmap_set(b, (unsigned)i);
    return b;
}

/* Color of the resource of hwloc type `name` holding the binding, or MPI_UNDEFINED. */
static int wm_hw_guided_color(const char *name, const cpu_set_t *bind)
{
    pthread_once(&wm_hw_once, wm_hw_load);
    hwloc_obj_type_t type;
    /* hwloc_type_sscanf accepts abbreviations ("no..." reads as NUMANode): only a type's full
     * name is taken */
    if (!wm_hw_ok || hwloc_type_sscanf(name, &type, NULL, 0) < 0 ||
        strcasecmp(hwloc_obj_type_string(type), name) != 0)
        return MPI_UNDEFINED;
    hwloc_bitmap_t b = wm_hw_set(bind);
    if (!b)
        return MPI_UNDEFINED;
    int color = MPI_UNDEFINED;
    for (hwloc_obj_t o = hwloc_get_next_obj_by_type(wm_hw_topo, type, NULL); o;
         o = hwloc_get_next_obj_by_type(wm_hw_topo, type, o)) {
        if (o->cpuset && !hwloc_bitmap_iszero(b) && hwloc_bitmap_isincluded(b, o->cpuset)) {
            color = (int)o->logical_index;
            break;
        }
    }
    hwloc_bitmap_free(b);
    return color;
}

/* Unguided: the largest resource holding this process that holds only some of the n processes
 * (their bindings in binds[]), walking down from the machine. Every process inside that resource
 * makes the same walk above it, so they agree. */
static int wm_hw_unguided_color(const cpu_set_t *binds, int n, int me, const char **type)
{
    pthread_once(&wm_hw_once, wm_hw_load);
    if (!wm_hw_ok)
        return MPI_UNDEFINED;
    hwloc_bitmap_t *bs = calloc((size_t)n, sizeof(*bs));
    if (!bs)
        return MPI_UNDEFINED;
    int color = MPI_UNDEFINED;
    for (int i = 0; i < n; i++)
        if (!(bs[i] = wm_hw_set(&binds[i])))
            goto out;
    hwloc_obj_t o = hwloc_get_root_obj(wm_hw_topo);
    while (o && color == MPI_UNDEFINED) {
        hwloc_obj_t child = NULL;
        for (unsigned k = 0; k < o->arity; k++)
            if (o->children[k]->cpuset && hwloc_bitmap_isincluded(bs[me], o->children[k]->cpuset)) {
                child = o->children[k];
                break;
            }
        o = child;
        if (!o)
            break;
        int inside = 0;
        for (int i = 0; i < n; i++)
            inside += !hwloc_bitmap_iszero(bs[i]) && hwloc_bitmap_isincluded(bs[i], o->cpuset);
        if (inside < n) {
            color = (int)(o->depth * 65536 + o->logical_index);
            *type = hwloc_obj_type_string(o->type);
        }
    }
out:
    for (int i = 0; i < n; i++)
        if (bs[i])
            hwloc_bitmap_free(bs[i]);
    free(bs);
    return color;
}
#else
static int wm_hw_guided_color(const char *name, const cpu_set_t *bind)
{
    (void)bind;
    return strcmp(name, "Machine") == 0 ? 0 : MPI_UNDEFINED;
}
static int wm_hw_unguided_color(const cpu_set_t *binds, int n, int me, const char **type)
{
    return MPI_UNDEFINED;
}
#endif

/* The value of key in info, or "" if info is MPI_INFO_NULL, lacks the key or cannot be read. */
static void wm_info_value(MPI_Info info, const char *key, char *val, int len)
{
    val[0] = '\0';
    if (info == MPI_INFO_NULL)
        return;
    int flag = 0, buflen = len;
    if (PMPI_Info_get_string(info, key, &buflen, val, &flag) != MPI_SUCCESS || !flag)
        val[0] = '\0';
}

/* An intercommunicator: each process's color from what it knows alone (its node, its own
 * binding, a pset name), then MPI_Comm_split's intercommunicator form, which pairs equal colors of
 * the two groups. HW_UNGUIDED, which compares the bindings of a whole group, is intracommunicator
 * only. */
static int wm_split_type_inter(wm_comm_t *c, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_split_type";
    int node = wc_node_of(wm_comm_world_rank(c, c->rank));
    int color = MPI_UNDEFINED;
    char val[256];
    cpu_set_t bind;
    switch (split_type) {
    case MPI_UNDEFINED:
        break;
    case MPI_COMM_TYPE_SHARED:
        color = node;
        break;
    case MPI_COMM_TYPE_RESOURCE_GUIDED:
    case MPI_COMM_TYPE_HW_GUIDED:
        wm_info_value(info, "mpi_pset_name", val, sizeof(val));
        if (split_type == MPI_COMM_TYPE_RESOURCE_GUIDED && val[0]) {
            color = strcmp(val, "mpi://WORLD") == 0 ? 0 : MPI_UNDEFINED;
            break;
        }
        wm_info_value(info, "mpi_hw_resource_type", val, sizeof(val));
        if (strcmp(val, "mpi_shared_memory") == 0)
            color = node;
        else if (val[0] && wm_binding(&bind) == 0 &&
                 (color = wm_hw_guided_color(val, &bind)) != MPI_UNDEFINED)
            color = node * 65536 + color;   /* hwloc's indices are per node */
        break;
    default:
        return wm_error(c, MPI_ERR_ARG, fn, "split_type %d is not available on intercommunicator %s",
                        split_type, c->name);
    }
    wm_comm_t *d = NULL;
    int rc = wm_comm_split(c, color, key, &d);
    if (rc != MPI_SUCCESS)
        return rc;
    *newcomm = d ? wm_comm_handle(d) : MPI_COMM_NULL;
    return MPI_SUCCESS;
}

int wm_impl_MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_split_type";
    WM_COMM_CHECK(fn, comm, c);
    if (!newcomm)
        return wm_error(c, MPI_ERR_ARG, fn, "newcomm is NULL");
    if (c->inter)
        return wm_split_type_inter(c, split_type, key, info, newcomm);
    if (split_type != MPI_UNDEFINED && split_type != MPI_COMM_TYPE_SHARED &&
        split_type != MPI_COMM_TYPE_HW_GUIDED && split_type != MPI_COMM_TYPE_HW_UNGUIDED &&
        split_type != MPI_COMM_TYPE_RESOURCE_GUIDED)
        return wm_error(c, MPI_ERR_ARG, fn, "split_type %d is not a known MPI_COMM_TYPE_*", split_type);
    /* Everybody's (split type, binding), gathered at rank 0 and broadcast, whatever this process's
     * split type: one passing MPI_UNDEFINED must still take part in the exchange that HW_UNGUIDED
     * needs on the others. */
    struct wm_split_ent { int32_t type; cpu_set_t bind; };
    int *ranks = wm_comm_local_ranks(c);
    struct wm_split_ent *ents = calloc((size_t)c->size, sizeof(*ents));
    cpu_set_t *binds = calloc((size_t)c->size, sizeof(cpu_set_t));
    if (!ranks || !ents || !binds) {
        free(ranks);
        free(ents);
        free(binds);
        return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory");
    }
    ents[c->rank].type = split_type;
    wm_binding(&ents[c->rank].bind);
    uint32_t coll = c->ctx | WM_CTX_COLL;
    wu_status_t st = wm_cx_gather(ents, sizeof(*ents), ranks, c->size, c->rank, 0, WM_TAG_HW_GATHER, coll);
    if (st == WU_OK)
        st = wm_cx_bcast(ents, sizeof(*ents) * (size_t)c->size, ranks, c->size, c->rank, 0, WM_TAG_HW_BCAST, coll);
    for (int i = 0; i < c->size; i++)
        binds[i] = ents[i].bind;
    free(ranks);
    free(ents);
    if (st != WU_OK) {
        free(binds);
        return wm_error(c, wm_status_to_class(st), fn, "%s", wu_status_str(st));
    }

    /* Resources below the node are numbered within each node (hwloc's logical indices): when c
     * spans several nodes, such a color splits c's node first. */
    int node = wc_node_of(wm_comm_world_rank(c, c->rank));
    bool multi = false;
    for (int i = 0; i < c->size && !multi; i++)
        multi = wc_node_of(wm_comm_world_rank(c, i)) != node;
    bool per_node = false;
    int color = MPI_UNDEFINED;
    const char *unguided_type = NULL;
    char val[256];
    switch (split_type) {
    case MPI_COMM_TYPE_SHARED:
        color = node;
        break;
    case MPI_COMM_TYPE_RESOURCE_GUIDED:
        /* MPI 4.1: guided by a process set name, or else by a hardware type as HW_GUIDED */
        wm_info_value(info, "mpi_pset_name", val, sizeof(val));
        if (val[0]) {
            if (strcmp(val, "mpi://WORLD") == 0)
                color = 0;
            else if (strcmp(val, "mpi://SELF") == 0)
                color = c->rank;
            break;
        }
        /* fall through */
    case MPI_COMM_TYPE_HW_GUIDED:
        wm_info_value(info, "mpi_hw_resource_type", val, sizeof(val));
        if (strcmp(val, "mpi_shared_memory") == 0) {
            color = node;
        } else if (val[0]) {
            color = wm_hw_guided_color(val, &binds[c->rank]);
            per_node = multi;
        }
        break;
    case MPI_COMM_TYPE_HW_UNGUIDED:
        /* the largest resource holding only some of c's processes: their node, when they are on
         * several */
        if (multi) {
            color = node;
            unguided_type = "mpi_shared_memory";
        } else {
            color = wm_hw_unguided_color(binds, c->size, c->rank, &unguided_type);
        }
        break;
    default:   /* MPI_UNDEFINED */
        break;
    }
    free(binds);
    wm_comm_t *d = NULL, *t = c;
    int rc = MPI_SUCCESS;
    if (per_node && (rc = wm_comm_split(c, node, key, &t)) != MPI_SUCCESS)
        return rc;
    rc = wm_comm_split(t, color, key, &d);
    if (t != c)
        wm_obj_user_free(&t->obj);
    if (rc != MPI_SUCCESS)
        return rc;
    /* MPI 4.0 (HW_UNGUIDED): the info argument, if any, learns the resource the split followed */
    if (d && unguided_type && info != MPI_INFO_NULL)
        PMPI_Info_set(info, "mpi_hw_resource_type", unguided_type);
    *newcomm = d ? wm_comm_handle(d) : MPI_COMM_NULL;
    return MPI_SUCCESS;
}

/* MPI 4.1: an info object describing the hardware the calling process runs on at the moment of the
 * call. Key "mpi_hw_resource_type": the values MPI_COMM_TYPE_HW_GUIDED (and RESOURCE_GUIDED) accept
 * for this process now, comma-separated from the largest resource to the smallest: always
 * "mpi_shared_memory", then each hwloc type one of whose objects holds every CPU this process may
 * run on. Callable from any thread. */
int wm_impl_MPI_Get_hw_resource_info(MPI_Info *hw_info)
{
    static const char fn[] = "MPI_Get_hw_resource_info";
    WM_CHECK_INIT(fn);
    if (!hw_info)
        return wm_error(NULL, MPI_ERR_ARG, fn, "hw_info is NULL");
    char types[512] = "mpi_shared_memory";
    cpu_set_t bind;
    if (wm_binding(&bind) == 0) {
        static const char *const names[] = {"Machine", "Package", "Die",     "NUMANode", "L3Cache",
                                            "L2Cache", "L1Cache", "Core",    "PU"};
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
            if (wm_hw_guided_color(names[i], &bind) == MPI_UNDEFINED)
                continue;
            size_t used = strlen(types);
            snprintf(types + used, sizeof(types) - used, ",%s", names[i]);
        }
    }
    MPI_Info in;
    int rc = PMPI_Info_create(&in);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = PMPI_Info_set(in, "mpi_hw_resource_type", types);
    if (rc != MPI_SUCCESS) {
        PMPI_Info_free(&in);
        return rc;
    }
    *hw_info = in;
    return MPI_SUCCESS;
}
