/* Building the topology tree (contract in wp_topology.h). Runs once, in wp_engine_init. */
#include "progress/wp_topology.h"
#include "util/wu_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#ifdef WEFT_HAVE_HWLOC
#include <hwloc.h>
#endif

static const struct {
    unsigned level;
    const char *name;
} wp_levels[] = {
    { WP_LEVEL_MACHINE, "machine" },
    { WP_LEVEL_PACKAGE, "package" },
    { WP_LEVEL_L3, "l3" },
    { WP_LEVEL_CORE, "core" },
    { WP_LEVEL_PU, "pu" },
};

unsigned wp_topo_level_parse(const char *name)
{
    if (!name || !*name)
        return WP_LEVEL_PACKAGE;
    for (size_t i = 0; i < sizeof(wp_levels) / sizeof(wp_levels[0]); i++)
        if (!strcasecmp(name, wp_levels[i].name))
            return wp_levels[i].level;
    wu_log_warn("WEFT_PROGRESS_IDLE_LEVEL=%s: unknown level (machine, package, l3, core, pu); "
                "using package", name);
    return WP_LEVEL_PACKAGE;
}

const char *wp_topo_level_name(unsigned level)
{
    for (size_t i = 0; i < sizeof(wp_levels) / sizeof(wp_levels[0]); i++)
        if (level == wp_levels[i].level)
            return wp_levels[i].name;
    return "?";
}

/* ---- the tree while it is built: first-child / next-sibling links ----------------------------- */

typedef struct {
    int parent, first, last, next;   /* -1: none */
    unsigned nchildren;
    unsigned levels;
    bool dead;                       /* merged into its parent */
    cpu_set_t cpus;
} wp_bnode_t;

typedef struct {
    wp_bnode_t *n;
    unsigned count, cap;
} wp_builder_t;

static int wp_build_add(wp_builder_t *b, int parent, unsigned levels, const cpu_set_t *cpus)
{
    if (b->count == b->cap) {
        unsigned cap = b->cap ? 2 * b->cap : 16;
        wp_bnode_t *n = realloc(b->n, cap * sizeof(*n));
        if (!n)
            return -1;
        b->n = n;
        b->cap = cap;
    }
    int i = (int)b->count++;
    wp_bnode_t *x = &b->n[i];
    memset(x, 0, sizeof(*x));
    x->parent = parent;
    x->first = x->last = x->next = -1;
    x->levels = levels;
    x->cpus = *cpus;
    if (parent >= 0) {
        wp_bnode_t *p = &b->n[parent];
        if (p->last >= 0)
            b->n[p->last].next = i;
        else
            p->first = i;
        p->last = i;
        p->nchildren++;
    }
    return i;
}

/* A node with one child standing for the same CPUs absorbs it: the level has no siblings there and
 * a queue of its own would only add a hop. Repeats down the chain, then recurses. */
static void wp_build_prune(wp_builder_t *b, int i)
{
    wp_bnode_t *x = &b->n[i];
    while (x->nchildren == 1 && CPU_EQUAL(&x->cpus, &b->n[x->first].cpus)) {
        wp_bnode_t *c = &b->n[x->first];
        x->levels |= c->levels;
        x->first = c->first;
        x->last = c->last;
        x->nchildren = c->nchildren;
        for (int k = c->first; k >= 0; k = b->n[k].next)
            b->n[k].parent = i;
        c->dead = true;
    }
    for (int k = x->first; k >= 0; k = b->n[k].next)
        wp_build_prune(b, k);
}

static void wp_build_emit(const wp_builder_t *b, int i, int parent, unsigned depth, wp_topo_t *t)
{
    unsigned me = t->nnodes++;
    wp_topo_node_t *o = &t->nodes[me];
    o->parent = parent;
    o->depth = depth;
    o->levels = b->n[i].levels;
    o->nchildren = b->n[i].nchildren;
    o->cpus = b->n[i].cpus;
    for (int k = b->n[i].first; k >= 0; k = b->n[k].next)
        wp_build_emit(b, k, (int)me, depth + 1, t);
    t->nodes[me].subtree_end = t->nnodes;
}

#ifdef WEFT_HAVE_HWLOC
static unsigned wp_hwloc_level(hwloc_obj_type_t type)
{
    switch (type) {
    case HWLOC_OBJ_MACHINE: return WP_LEVEL_MACHINE;
    case HWLOC_OBJ_PACKAGE: return WP_LEVEL_PACKAGE;
    case HWLOC_OBJ_L3CACHE: return WP_LEVEL_L3;
    case HWLOC_OBJ_CORE:    return WP_LEVEL_CORE;
    case HWLOC_OBJ_PU:      return WP_LEVEL_PU;
    default:                return 0;
    }
}

/* Objects of other types (groups, dies, L2, L1) are walked through: their children hang on the
 * nearest kept ancestor. Objects with none of the allowed CPUs are left out. */
static int wp_hwloc_walk(wp_builder_t *b, hwloc_obj_t obj, int parent, const cpu_set_t *allowed)
{
    unsigned level = wp_hwloc_level(obj->type);
    if (level) {
        cpu_set_t cpus;
        CPU_ZERO(&cpus);
        int i;
        hwloc_bitmap_foreach_begin(i, obj->cpuset) {
            if (i < CPU_SETSIZE && (!allowed || CPU_ISSET(i, allowed)))
                CPU_SET(i, &cpus);
        }
        hwloc_bitmap_foreach_end();
        if (CPU_COUNT(&cpus) == 0 && parent >= 0)
            return 0;
        parent = wp_build_add(b, parent, level, &cpus);
        if (parent < 0)
            return -1;
    }
    for (unsigned k = 0; k < obj->arity; k++)
        if (wp_hwloc_walk(b, obj->children[k], parent, allowed) < 0)
            return -1;
    return 0;
}

static int wp_hwloc_build(wp_builder_t *b, const cpu_set_t *allowed, bool *synthetic_p)
{
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) < 0)
        return -1;
    /* only what the tree uses: less to discover, a faster MPI_Init */
    hwloc_topology_set_all_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_type_filter(topo, HWLOC_OBJ_PACKAGE, HWLOC_TYPE_FILTER_KEEP_ALL);
    hwloc_topology_set_type_filter(topo, HWLOC_OBJ_L3CACHE, HWLOC_TYPE_FILTER_KEEP_ALL);
    hwloc_topology_set_type_filter(topo, HWLOC_OBJ_CORE, HWLOC_TYPE_FILTER_KEEP_ALL);
    int rc = -1;
    if (hwloc_topology_load(topo) < 0)
        goto out;
    /* A synthetic or XML topology describes another machine: the process's CPU set does not
     * apply, and nothing will be bound to its CPUs. */
    bool synthetic = !hwloc_topology_is_thissystem(topo);
    rc = wp_hwloc_walk(b, hwloc_get_root_obj(topo), -1, synthetic ? NULL : allowed);
    *synthetic_p = synthetic;
out:
    hwloc_topology_destroy(topo);
    return rc;
}
#endif

wu_status_t wp_topo_build(wp_topo_t *t)
{
    wp_builder_t b = { 0 };
    cpu_set_t allowed;
    bool synthetic = false, hw = false;

    memset(t, 0, sizeof(*t));
    if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) {
        CPU_ZERO(&allowed);
        CPU_SET(0, &allowed);
    }
#ifdef WEFT_HAVE_HWLOC
    if (wp_hwloc_build(&b, &allowed, &synthetic) == 0 && b.count > 0) {
        hw = true;
    } else {
        wu_debug("progress: hwloc topology unavailable; one queue");
        b.count = 0;
        synthetic = false;
    }
#endif
    if (!hw && wp_build_add(&b, -1, WP_LEVEL_MACHINE, &allowed) < 0)
        goto err_nomem;

    wp_build_prune(&b, 0);
    unsigned live = 0;
    for (unsigned i = 0; i < b.count; i++)
        live += !b.n[i].dead;
    t->nodes = calloc(live, sizeof(*t->nodes));
    if (!t->nodes)
        goto err_nomem;
    wp_build_emit(&b, 0, -1, 0, t);
    t->hwloc = hw;
    t->synthetic = synthetic;

    int maxcpu = -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &t->nodes[0].cpus))
            maxcpu = c;
    t->ncpus = maxcpu + 1;
    t->cpu_node = calloc((size_t)(t->ncpus > 0 ? t->ncpus : 1), sizeof(int));
    if (!t->cpu_node)
        goto err_nomem;
    /* pre-order: a deeper node comes after its ancestors and overwrites them */
    for (unsigned i = 0; i < t->nnodes; i++)
        for (int c = 0; c < t->ncpus; c++)
            if (CPU_ISSET(c, &t->nodes[i].cpus))
                t->cpu_node[c] = (int)i;
    free(b.n);
    return WU_OK;

err_nomem:
    free(b.n);
    wp_topo_free(t);
    wu_log_error("progress: no memory for the topology tree");
    return WU_ERR_NO_MEMORY;
}

void wp_topo_free(wp_topo_t *t)
{
    free(t->nodes);
    free(t->cpu_node);
    memset(t, 0, sizeof(*t));
}

unsigned wp_topo_level_nodes(const wp_topo_t *t, unsigned level, unsigned *nodes_p,
                             unsigned *used_p)
{
    /* from the requested level up to the machine */
    int start = 0;
    for (int k = 0; k < (int)(sizeof(wp_levels) / sizeof(wp_levels[0])); k++)
        if (wp_levels[k].level == level)
            start = k;
    for (int k = start; k >= 0; k--) {
        unsigned n = 0;
        for (unsigned i = 0; i < t->nnodes; i++)
            if (t->nodes[i].levels & wp_levels[k].level)
                nodes_p[n++] = i;
        if (n) {
            *used_p = wp_levels[k].level;
            return n;
        }
    }
    nodes_p[0] = 0;
    *used_p = WP_LEVEL_MACHINE;
    return 1;
}

void wp_topo_format_cpus(const cpu_set_t *set, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int c = 0; c < CPU_SETSIZE && o < len; c++) {
        if (!CPU_ISSET(c, set))
            continue;
        int e = c;
        while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, set))
            e++;
        int w = e > c ? snprintf(buf + o, len - o, "%s%d-%d", o ? "," : "", c, e)
                      : snprintf(buf + o, len - o, "%s%d", o ? "," : "", c);
        if (w < 0)
            break;
        o += (size_t)w;
        c = e;
    }
}

static size_t wp_topo_format_node(const wp_topo_node_t *n, char *buf, size_t len)
{
    size_t o = 0;
    for (size_t k = 0; k < sizeof(wp_levels) / sizeof(wp_levels[0]) && o < len; k++)
        if (n->levels & wp_levels[k].level) {
            int w = snprintf(buf + o, len - o, "%s%s", o ? "+" : "", wp_levels[k].name);
            o += w > 0 ? (size_t)w : 0;
        }
    char cpus[64];
    wp_topo_format_cpus(&n->cpus, cpus, sizeof(cpus));
    if (o < len) {
        int w = snprintf(buf + o, len - o, "{%s}", cpus);
        o += w > 0 ? (size_t)w : 0;
    }
    return o < len ? o : len;
}

void wp_topo_format(const wp_topo_t *t, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    for (unsigned d = 0; o + 1 < len; d++) {
        unsigned count = 0, first = 0;
        for (unsigned i = 0; i < t->nnodes; i++)
            if (t->nodes[i].depth == d && count++ == 0)
                first = i;
        if (!count)
            break;
        if (d && o + 3 < len) {
            memcpy(buf + o, " > ", 4);
            o += 3;
        }
        if (count > 4) {   /* a wide level: one example and the count */
            o += wp_topo_format_node(&t->nodes[first], buf + o, len - o);
            int w = snprintf(buf + o, len - o, " x%u", count);
            o += w > 0 ? (size_t)w : 0;
            continue;
        }
        unsigned k = 0;
        for (unsigned i = 0; i < t->nnodes && o + 1 < len; i++) {
            if (t->nodes[i].depth != d)
                continue;
            if (k++ && o + 2 < len) {
                memcpy(buf + o, " ", 2);
                o += 1;
            }
            o += wp_topo_format_node(&t->nodes[i], buf + o, len - o);
        }
    }
    if (o >= len)
        buf[len - 1] = '\0';
}
