/* The progression engine: where ltasks run. wp_poll is the explicit polling point called by every
 * MPI call that may wait or observe completion. */
#ifndef WP_ENGINE_H
#define WP_ENGINE_H

#include "progress/wp_ltask.h"

typedef struct wp_engine {
    wu_list_t tasks;          /* REPEAT and pending ONCE tasks, in submission order */
    unsigned long polls;      /* statistics */
} wp_engine_t;

extern wp_engine_t wp_engine;

void wp_engine_init(void);
void wp_engine_finalize(void);

#include "progress/wp_engine_inl.h"

#endif
