#include "util/wu_config.h"
#include "util/wu_log.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const wu_config_desc_t wu_config_table[WU_CONFIG_COUNT] = {
#define WU_X(name, type, def, desc) [WU_CONFIG_##name] = { #name, WU_CONFIG_##type, def, desc },
    WU_CONFIG_VARS(WU_X)
#undef WU_X
};

static long wu_config_values[WU_CONFIG_COUNT];
static int wu_config_ready;

static long wu_config_parse(const wu_config_desc_t *d, const char *s)
{
    if (d->type == WU_CONFIG_BOOL) {
        if (!strcasecmp(s, "yes") || !strcasecmp(s, "true") || !strcasecmp(s, "on"))
            return 1;
        if (!strcasecmp(s, "no") || !strcasecmp(s, "false") || !strcasecmp(s, "off"))
            return 0;
    }
    char *end;
    long v = strtol(s, &end, 0);
    if (d->type == WU_CONFIG_SIZE) {
        switch (tolower((unsigned char)*end)) {
        case 'k': v <<= 10; end++; break;
        case 'm': v <<= 20; end++; break;
        case 'g': v <<= 30; end++; break;
        default: break;
        }
    }
    if (*end != '\0' && d->type != WU_CONFIG_STR) {
        wu_log_warn("WEFT_%s=%s is not a number; using the default %s", d->name, s, d->def);
        return strtol(d->def, NULL, 0);
    }
    return v;
}

const char *wu_config_str(wu_config_id_t id)
{
    char name[96];
    snprintf(name, sizeof(name), "WEFT_%s", wu_config_table[id].name);
    const char *s = getenv(name);
    return s ? s : wu_config_table[id].def;
}

void wu_config_init(void)
{
    if (wu_config_ready)
        return;
    for (int i = 0; i < WU_CONFIG_COUNT; i++)
        wu_config_values[i] = wu_config_parse(&wu_config_table[i], wu_config_str((wu_config_id_t)i));
    wu_log_debug_enabled = (int)wu_config_values[WU_CONFIG_DEBUG];
    wu_config_ready = 1;
}

long wu_config_int(wu_config_id_t id)
{
    if (!wu_config_ready)
        wu_config_init();
    return wu_config_values[id];
}

const wu_config_desc_t *wu_config_desc(wu_config_id_t id)
{
    return &wu_config_table[id];
}
