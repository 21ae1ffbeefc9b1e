/* WEFT_* configuration variables. Values are read from the environment once, at first use, and
 * cached; reads after that are plain loads. Thread-safe after wu_config_init (called by MPI_Init). */
#ifndef WU_CONFIG_H
#define WU_CONFIG_H

#include <stddef.h>
#include <stdbool.h>
#include "util/wu_config_vars.h"

typedef enum { WU_CONFIG_INT, WU_CONFIG_SIZE, WU_CONFIG_BOOL, WU_CONFIG_STR } wu_config_type_t;

typedef enum {
#define WU_X(name, type, def, desc) WU_CONFIG_##name,
    WU_CONFIG_VARS(WU_X)
#undef WU_X
    WU_CONFIG_COUNT
} wu_config_id_t;

typedef struct {
    const char      *name;        /* without the WEFT_ prefix */
    wu_config_type_t type;
    const char      *def;
    const char      *desc;
} wu_config_desc_t;

void wu_config_init(void);
long wu_config_int(wu_config_id_t id);        /* INT, SIZE and BOOL */
const char *wu_config_str(wu_config_id_t id); /* the raw value or the default */
const wu_config_desc_t *wu_config_desc(wu_config_id_t id);

#endif
