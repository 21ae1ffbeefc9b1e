/* libfabric loaded on demand: wx_ofi_fabric.h says why. The function pointers are written once,
 * under pthread_once, before any wrapper runs; afterwards they are read-only. */
#include "transport/ofi/wx_ofi_fabric.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include "util/wu_log.h"

#define WX_OFI_LIBFABRIC "libfabric.so.1"

static struct {
    int (*getinfo)(uint32_t, const char *, const char *, uint64_t, const struct fi_info *,
                   struct fi_info **);
    void (*freeinfo)(struct fi_info *);
    struct fi_info *(*dupinfo)(const struct fi_info *);
    int (*fabric)(struct fi_fabric_attr *, struct fid_fabric **, void *);
    const char *(*strerror)(int);
} wx_fi_lib;

static pthread_once_t wx_fi_once = PTHREAD_ONCE_INIT;
static wu_status_t wx_fi_status = WU_ERR_NOT_FOUND;

/* The versions are those of the symbols the headers of libfabric 1.x declare (objdump -T). */
static void *wx_fi_sym(void *h, const char *name, const char *version)
{
    void *p = dlvsym(h, name, version);
    if (!p)
        wu_log_error("%s has no %s@%s: %s", WX_OFI_LIBFABRIC, name, version, dlerror());
    return p;
}

static void wx_fi_load_once(void)
{
    void *h = dlopen(WX_OFI_LIBFABRIC, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        wu_log_error("the ofi transport needs libfabric: %s", dlerror());
        return;
    }
    *(void **)&wx_fi_lib.getinfo = wx_fi_sym(h, "fi_getinfo", "FABRIC_1.3");
    *(void **)&wx_fi_lib.freeinfo = wx_fi_sym(h, "fi_freeinfo", "FABRIC_1.3");
    *(void **)&wx_fi_lib.dupinfo = wx_fi_sym(h, "fi_dupinfo", "FABRIC_1.3");
    *(void **)&wx_fi_lib.fabric = wx_fi_sym(h, "fi_fabric", "FABRIC_1.1");
    *(void **)&wx_fi_lib.strerror = wx_fi_sym(h, "fi_strerror", "FABRIC_1.0");
    if (wx_fi_lib.getinfo && wx_fi_lib.freeinfo && wx_fi_lib.dupinfo && wx_fi_lib.fabric &&
        wx_fi_lib.strerror)
        wx_fi_status = WU_OK;
    /* never dlclose: providers keep threads and handlers for the life of the process */
}

wu_status_t wx_ofi_fabric_load(void)
{
    pthread_once(&wx_fi_once, wx_fi_load_once);
    return wx_fi_status;
}

int wx_fi_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags,
                  const struct fi_info *hints, struct fi_info **info)
{
    return wx_fi_lib.getinfo(version, node, service, flags, hints, info);
}

void wx_fi_freeinfo(struct fi_info *info)
{
    wx_fi_lib.freeinfo(info);
}

struct fi_info *wx_fi_dupinfo(const struct fi_info *info)
{
    return wx_fi_lib.dupinfo(info);
}

int wx_fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context)
{
    return wx_fi_lib.fabric(attr, fabric, context);
}

const char *wx_fi_strerror(int errnum)
{
    return wx_fi_lib.strerror ? wx_fi_lib.strerror(errnum) : "libfabric not loaded";
}
