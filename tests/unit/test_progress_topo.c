/* The topology tree and climbing:
 *   - this machine's tree: rooted at the process's CPUs, no node with a single child, pre-order
 *     subtrees, every allowed CPU mapped to a leaf (printed);
 *   - bound to one CPU, the tree is a single root standing for every level;
 *   - a synthetic 2-package machine (HWLOC_SYNTHETIC "pack:2 l3:1 core:2 pu:2"): the L3 level is
 *     merged into the packages, 15 queues; idle levels map to the right nodes, "l3" to the
 *     packages it was merged into;
 *   - climbing: from a PU, a poll reaches its core once in 2, its package once in 4, the machine
 *     once in 8 (exact counts of REPEAT tasks placed on each queue of the branch).
 * Skipped (passes) where the library was built without hwloc. */
#include "test_progress.h"
#include "progress/wp_topology.h"

typedef struct {
    wp_ltask_t t;
    atomic_int runs;
} ctask_t;

static wp_task_result_t ctask_fn(void *arg)
{
    atomic_fetch_add(&((ctask_t *)arg)->runs, 1);
    return WP_TASK_AGAIN;
}

static void check_shape(const char *what, const wp_topo_t *t)
{
    for (unsigned i = 0; i < t->nnodes; i++) {
        const wp_topo_node_t *n = &t->nodes[i];
        if (n->nchildren == 1) {
            fprintf(stderr, "%s: node %u: expected 0 or >= 2 children (pruned), got 1\n", what, i);
            failures++;
        }
        unsigned kids = 0;
        for (unsigned k = i + 1; k < n->subtree_end; k++) {
            if (t->nodes[k].parent == (int)i)
                kids++;
            if (t->nodes[k].depth <= n->depth) {
                fprintf(stderr, "%s: node %u in the subtree of %u at depth %u <= %u\n", what, k, i,
                        t->nodes[k].depth, n->depth);
                failures++;
            }
            cpu_set_t both;
            CPU_AND(&both, &t->nodes[k].cpus, &n->cpus);
            if (!CPU_EQUAL(&both, &t->nodes[k].cpus)) {
                fprintf(stderr, "%s: node %u has CPUs its ancestor %u does not\n", what, k, i);
                failures++;
            }
        }
        CHECK_EQ("children found in the subtree", n->nchildren, kids);
        if (i > 0)
            CHECK("parent comes first in pre-order", n->parent >= 0 && (unsigned)n->parent < i);
    }
    for (int c = 0; c < t->ncpus; c++)
        if (CPU_ISSET(c, &t->nodes[0].cpus))
            CHECK_EQ("a CPU maps to a leaf", t->nodes[t->cpu_node[c]].subtree_end,
                     (unsigned)t->cpu_node[c] + 1);
}

static void test_this_machine(void)
{
    wp_topo_t t;
    cpu_set_t allowed;
    char buf[512];
    sched_getaffinity(0, sizeof(allowed), &allowed);
    CHECK_EQ("wp_topo_build", WU_OK, wp_topo_build(&t));
    wp_topo_format(&t, buf, sizeof(buf));
    printf("this machine: %s (%u queues)\n", buf, t.nnodes);
    CHECK("root = the process's CPUs", CPU_EQUAL(&allowed, &t.nodes[0].cpus));
    CHECK("root stands for the machine", t.nodes[0].levels & WP_LEVEL_MACHINE);
    check_shape("this machine", &t);
    wp_topo_free(&t);

    /* bound to one CPU: one node standing for every level */
    cpu_set_t one;
    CPU_ZERO(&one);
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &allowed)) {
            CPU_SET(c, &one);
            break;
        }
    if (sched_setaffinity(0, sizeof(one), &one) == 0) {
        CHECK_EQ("wp_topo_build", WU_OK, wp_topo_build(&t));
        wp_topo_format(&t, buf, sizeof(buf));
        printf("bound to one CPU: %s\n", buf);
        CHECK_EQ("bound to one CPU: nodes", 1, t.nnodes);
        CHECK_EQ("bound to one CPU: levels", WP_LEVEL_MACHINE | WP_LEVEL_PACKAGE | WP_LEVEL_CORE |
                 WP_LEVEL_PU | (t.nodes[0].levels & WP_LEVEL_L3), t.nodes[0].levels);
        unsigned nodes[1], used;
        CHECK_EQ("idle level core when bound: threads", 1,
                 wp_topo_level_nodes(&t, WP_LEVEL_CORE, nodes, &used));
        CHECK_EQ("idle level core when bound: used", WP_LEVEL_CORE, used);
        wp_topo_free(&t);
        sched_setaffinity(0, sizeof(allowed), &allowed);
    }
}

static void test_synthetic(void)
{
    wp_topo_t t;
    char buf[512];
    setenv("HWLOC_SYNTHETIC", "pack:2 l3:1 core:2 pu:2", 1);
    CHECK_EQ("wp_topo_build", WU_OK, wp_topo_build(&t));
    wp_topo_format(&t, buf, sizeof(buf));
    printf("synthetic: %s (%u queues)\n", buf, t.nnodes);
    CHECK("synthetic recognized", t.synthetic);
    CHECK_EQ("synthetic: queues", 15, t.nnodes);
    CHECK_EQ("synthetic: root children", 2, t.nodes[0].nchildren);
    check_shape("synthetic", &t);
    const char *expect = "machine{0-7} > package+l3{0-3} package+l3{4-7} > core{0-1} core{2-3} "
                         "core{4-5} core{6-7} > pu{0} x8";
    if (strcmp(buf, expect)) {
        fprintf(stderr, "synthetic tree: expected \"%s\", got \"%s\"\n", expect, buf);
        failures++;
    }

    unsigned nodes[16], used;
    static const struct {
        unsigned level, count, used;
    } lv[] = {
        { WP_LEVEL_MACHINE, 1, WP_LEVEL_MACHINE }, { WP_LEVEL_PACKAGE, 2, WP_LEVEL_PACKAGE },
        { WP_LEVEL_L3, 2, WP_LEVEL_L3 },           { WP_LEVEL_CORE, 4, WP_LEVEL_CORE },
        { WP_LEVEL_PU, 8, WP_LEVEL_PU },
    };
    for (size_t i = 0; i < sizeof(lv) / sizeof(lv[0]); i++) {
        unsigned n = wp_topo_level_nodes(&t, lv[i].level, nodes, &used);
        CHECK_EQ(wp_topo_level_name(lv[i].level), lv[i].count, n);
        CHECK_EQ("level used", lv[i].used, used);
    }
    wp_topo_level_nodes(&t, WP_LEVEL_L3, nodes, &used);
    CHECK_EQ("l3 merged into package 0", 1, nodes[0]);
    CHECK_EQ("l3 merged into package 1", 8, nodes[1]);
    wp_topo_free(&t);

    /* no L3 at all: the level above (package) */
    setenv("HWLOC_SYNTHETIC", "pack:2 core:2 pu:1", 1);
    CHECK_EQ("wp_topo_build", WU_OK, wp_topo_build(&t));
    unsigned n = wp_topo_level_nodes(&t, WP_LEVEL_L3, nodes, &used);
    CHECK_EQ("missing l3: nodes", 2, n);
    CHECK_EQ("missing l3: level used", WP_LEVEL_PACKAGE, used);
    wp_topo_free(&t);
}

/* The engine on the synthetic machine, one thread bound to CPU 0 (synthetic PU 0). */
static void test_climb(void)
{
    setenv("HWLOC_SYNTHETIC", "pack:2 l3:1 core:2 pu:2", 1);
    cpu_set_t allowed, zero;
    sched_getaffinity(0, sizeof(allowed), &allowed);
    CPU_ZERO(&zero);
    CPU_SET(0, &zero);
    bool pinned = sched_setaffinity(0, sizeof(zero), &zero) == 0;
    tp_init(tp_config(true, false, false));
    printf("%s\n", wp_engine_describe());
    CHECK_EQ("engine queues", 15, wp_engine_queue_count());

    /* the branch of PU 0 in pre-order: machine 0, package 1, core 2, pu 3 */
    ctask_t c[4];
    for (int i = 0; i < 4; i++) {
        memset(&c[i], 0, sizeof(c[i]));
        wp_ltask_init(&c[i].t, ctask_fn, &c[i], WP_TASK_REPEAT, "climb");
        wp_ltask_submit_at(&c[i].t, i);
    }
    const int polls = 800;
    for (int i = 0; i < polls; i++)
        wp_poll();
    CHECK_EQ("machine queue: runs (1 poll in 8)", polls / 8, atomic_load(&c[0].runs));
    CHECK_EQ("package queue: runs (1 poll in 4)", polls / 4, atomic_load(&c[1].runs));
    CHECK_EQ("core queue: runs (1 poll in 2)", polls / 2, atomic_load(&c[2].runs));
    if (pinned)
        CHECK_EQ("PU queue: runs (every poll)", polls, atomic_load(&c[3].runs));
    for (int i = 0; i < 4; i++)
        wp_ltask_remove(&c[i].t);

    /* local submission lands on the leaf of the CPU */
    if (pinned) {
        ctask_t l;
        memset(&l, 0, sizeof(l));
        wp_ltask_init(&l.t, ctask_fn, &l, WP_TASK_REPEAT, "local");
        wp_ltask_submit_local(&l.t);
        wp_queue_t *q = __atomic_load_n(&l.t.queue, __ATOMIC_RELAXED);
        CHECK_EQ("local queue of CPU 0", 3, q ? (long long)q->index : -1);
        wp_ltask_remove(&l.t);
    }
    wp_engine_finalize();
    sched_setaffinity(0, sizeof(allowed), &allowed);
    unsetenv("HWLOC_SYNTHETIC");
}

int main(void)
{
    alarm(30);
    tp_init(tp_config(true, false, false));
    bool hwloc = !strstr(wp_engine_describe(), "no hwloc");
    wp_engine_finalize();
    if (!hwloc) {
        printf("test_progress_topo: built without hwloc, skipped\n");
        return 0;
    }
    test_this_machine();
    test_synthetic();
    test_climb();
    if (failures) {
        fprintf(stderr, "test_progress_topo: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_progress_topo: ok\n");
    return 0;
}
