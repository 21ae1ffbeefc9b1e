/* WEFT_* configuration variables (the table: wu_config_vars.h). wu_config_init, called by MPI_Init
 * (or MPI_T_init_thread) before any communication, reads every variable of scope RANK, RUN or JOB
 * from the environment, parses it strictly against its range and checks the combinations that
 * cannot work; reads after that are relaxed atomic loads. A variable of scope RUN may be given a
 * new value later (wu_config_set, from MPI_T_cvar_write); the others never change after
 * wu_config_init. Thread-safe after wu_config_init. An empty value means the default. The table
 * is also MPI_T's list of control variables (src/mpi/wm_t.c). */
#ifndef WU_CONFIG_H
#define WU_CONFIG_H

#include <stddef.h>
#include <stdbool.h>
#include "util/wu_config_vars.h"
#include "util/wu_status.h"

typedef enum { WU_CONFIG_INT, WU_CONFIG_SIZE, WU_CONFIG_BOOL, WU_CONFIG_STR } wu_config_type_t;
typedef enum { WU_CONFIG_RANK, WU_CONFIG_RUN, WU_CONFIG_JOB, WU_CONFIG_LAUNCH } wu_config_scope_t;

typedef enum {
#define WU_X(name, type, def, min, max, words, scope, desc) WU_CONFIG_##name,
    WU_CONFIG_VARS(WU_X)
#undef WU_X
    WU_CONFIG_COUNT
} wu_config_id_t;

typedef struct {
    const char       *name;       /* without the WEFT_ prefix */
    wu_config_type_t  type;
    const char       *def;
    long              min, max;   /* INT and SIZE */
    const char       *words;      /* STR: "a|b|c", the accepted values; NULL: any text */
    wu_config_scope_t scope;
    const char       *desc;
} wu_config_desc_t;

/* Read and check every RANK and JOB variable; each bad value is logged (wu_log_error) with the
 * variable, the value and the accepted range. WU_ERR_INVALID if any was bad (the values read are
 * then the defaults for the bad ones). Idempotent: later calls return the first result. */
wu_status_t wu_config_init(void);
long wu_config_int(wu_config_id_t id);        /* INT, SIZE and BOOL; STR with words: its index */
const char *wu_config_str(wu_config_id_t id); /* the raw value, or the default when unset or empty */
bool wu_config_is_set(wu_config_id_t id);     /* set in the environment, and not empty */
const wu_config_desc_t *wu_config_desc(wu_config_id_t id);
/* Word number i of a STR variable with words ("auto" for WAIT_YIELD's 0); false past the last. */
bool wu_config_word_at(wu_config_id_t id, int i, char *buf, size_t len);
/* A new value for a variable of scope RUN (as wu_config_int returns it: the word's index for STR
 * with words), checked against its range: WU_OK; WU_ERR_INVALID (out of range: the reason in
 * why); WU_ERR_UNSUPPORTED (not of scope RUN). Any thread, after wu_config_init; the caller
 * applies the value to the layer that uses it. */
wu_status_t wu_config_set(wu_config_id_t id, long value, char *why, size_t len);

/* Parse s as a value of variable id, without side effects: WU_OK and *value_p (numbers; the index
 * of the word for STR with words; 0 for free text), or WU_ERR_INVALID and a one-line reason in why
 * ("WEFT_X=v: ...; accepted: ...") when it is malformed, overflows or is out of range. An empty s
 * is the default. */
wu_status_t wu_config_parse(wu_config_id_t id, const char *s, long *value_p, char *why, size_t len);
/* Combinations of values (one per variable, from wu_config_parse) that cannot work, such as no
 * packet size at all on a transport: WU_ERR_INVALID and the reason in why. */
wu_status_t wu_config_check_values(const long values[WU_CONFIG_COUNT], char *why, size_t len);
/* "0 to 64m", "auto, 1 or 0", "0 or 1", "any text": the accepted range, for messages and
 * weft-info. */
const char *wu_config_range_str(wu_config_id_t id, char *buf, size_t len);

/* Settings that must agree across ranks (scope JOB): this rank's values as one printable string
 * for the start-up exchange, and the first difference between two such strings: WU_OK with the
 * variable and both values as the user would write them; WU_ERR_NOT_FOUND: none;
 * WU_ERR_INVALID: a string has another number of values (another build of Weft). */
void wu_config_job_encode(char *buf, size_t len);
wu_status_t wu_config_job_diff(const char *mine, const char *theirs, wu_config_id_t *id_p,
                               char *mine_val, char *theirs_val, size_t len);

#endif
