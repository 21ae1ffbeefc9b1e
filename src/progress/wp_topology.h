/* The topology tree the engine's queues hang on (pioman section IV-A): hwloc's machine, package,
 * L3, core and PU objects, restricted to the CPUs the process may run on, with every node that is
 * its parent's only child merged into the parent (the levels "without siblings"). Without hwloc, or
 * if hwloc fails, the tree is a single root.
 *
 * Nodes are numbered in pre-order, so a node's subtree is the range [i, subtree_end) and the root
 * is 0. Built once by wp_engine_init; read-only afterwards.
 */
#ifndef WP_TOPOLOGY_H
#define WP_TOPOLOGY_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include "util/wu_status.h"

/* The hwloc levels a node stands for (a bit set: a merged node stands for several). */
enum {
    WP_LEVEL_MACHINE = 1u << 0,
    WP_LEVEL_PACKAGE = 1u << 1,
    WP_LEVEL_L3      = 1u << 2,
    WP_LEVEL_CORE    = 1u << 3,
    WP_LEVEL_PU      = 1u << 4,
};

typedef struct wp_topo_node {
    int parent;            /* -1 for the root */
    unsigned nchildren;
    unsigned depth;
    unsigned subtree_end;
    unsigned levels;       /* WP_LEVEL_* bits */
    cpu_set_t cpus;        /* restricted to the process's CPUs (all of them for a synthetic one) */
} wp_topo_node_t;

typedef struct wp_topo {
    wp_topo_node_t *nodes;
    unsigned nnodes;
    int *cpu_node;         /* CPU number -> deepest node holding it (0 if none) */
    int ncpus;
    bool hwloc;            /* built from hwloc (false: the single-root fallback) */
    bool synthetic;        /* hwloc describes another machine (HWLOC_SYNTHETIC, XML): no binding */
} wp_topo_t;

wu_status_t wp_topo_build(wp_topo_t *topo);
void wp_topo_free(wp_topo_t *topo);

/* The level named `name` ("machine", "package", "l3", "core", "pu"; NULL or unknown: package, with
 * a warning for unknown). Returns its WP_LEVEL_* bit. */
unsigned wp_topo_level_parse(const char *name);
const char *wp_topo_level_name(unsigned level);

/* The nodes standing for `level`, or for the nearest level above it present in the tree (a level
 * hwloc does not report; a pruned level is merged into a node that stands for it). Writes up to
 * topo->nnodes indices to nodes_p and the level actually used to used_p; returns the count (>= 1:
 * the machine is always there). */
unsigned wp_topo_level_nodes(const wp_topo_t *topo, unsigned level, unsigned *nodes_p,
                             unsigned *used_p);

/* "machine{0-1} > core{0} core{1}": the tree, one depth after the other. */
void wp_topo_format(const wp_topo_t *topo, char *buf, size_t len);
/* "0-3,8" */
void wp_topo_format_cpus(const cpu_set_t *set, char *buf, size_t len);

#endif
