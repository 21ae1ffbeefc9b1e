/* Intrusive circular doubly-linked list. Not synchronized: the owner of the list serializes access. */
#ifndef WU_LIST_H
#define WU_LIST_H

#include <stdbool.h>
#include "util/wu_compiler.h"

typedef struct wu_list {
    struct wu_list *next, *prev;
} wu_list_t;

#define WU_LIST_INIT(name) { &(name), &(name) }

static inline void wu_list_init(wu_list_t *l) { l->next = l->prev = l; }
static inline bool wu_list_empty(const wu_list_t *l) { return l->next == l; }

static inline void wu_list_insert_after(wu_list_t *pos, wu_list_t *e)
{
    e->prev = pos;
    e->next = pos->next;
    pos->next->prev = e;
    pos->next = e;
}

static inline void wu_list_push_back(wu_list_t *l, wu_list_t *e) { wu_list_insert_after(l->prev, e); }
static inline void wu_list_push_front(wu_list_t *l, wu_list_t *e) { wu_list_insert_after(l, e); }

static inline void wu_list_del(wu_list_t *e)
{
    e->prev->next = e->next;
    e->next->prev = e->prev;
    e->next = e->prev = e;
}

static inline wu_list_t *wu_list_front(const wu_list_t *l) { return wu_list_empty(l) ? NULL : l->next; }

#define wu_list_for_each_safe(pos, tmp, head) \
    for ((pos) = (head)->next, (tmp) = (pos)->next; (pos) != (head); (pos) = (tmp), (tmp) = (pos)->next)

#endif
