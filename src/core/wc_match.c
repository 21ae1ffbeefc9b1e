#include "core/wc_match.h"
