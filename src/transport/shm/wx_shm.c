#include "transport/shm/wx_shm.h"
