#include "pmi/wi_pmi.h"
