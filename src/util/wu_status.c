#include "util/wu_status.h"

static const char *const wu_status_strings[] = {
#define WU_X(code, str) [code] = str,
    WU_STATUS_LIST(WU_X)
#undef WU_X
};

const char *wu_status_str(wu_status_t status)
{
    if ((unsigned)status >= WU_STATUS_LAST)
        return "unknown status";
    return wu_status_strings[status];
}
