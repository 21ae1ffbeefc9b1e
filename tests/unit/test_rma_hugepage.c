/* The huge-page hint on Win_create memory (core/wc_rma.h, wc_rma_user_mem_advise): on a window
 * that holds two 2 MiB-aligned extents and spills past them on both sides, exactly those
 * extents carry the hint afterwards (the kernel's "hg" flag of their mapping in
 * /proc/self/smaps), the pages around them do not, and every byte keeps its value; a window under
 * 2 MiB, and one of 2 MiB that holds no aligned extent, are left alone. Skipped (77) where the
 * kernel has no transparent huge pages. */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "core/wc_rma.h"
#include "test_check.h"

#define HUGE ((uintptr_t)2 << 20)

/* Whether the mapping that holds address a has the MADV_HUGEPAGE flag ("hg" in VmFlags). */
static bool hinted(uintptr_t a)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    CHECK(f, "open /proc/self/smaps");
    char line[512];
    bool in = false, found = false, hg = false;
    while (fgets(line, sizeof(line), f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            in = a >= lo && a < hi;
            continue;
        }
        if (in && strncmp(line, "VmFlags:", 8) == 0) {
            found = true;
            hg = strstr(line, " hg") != NULL;
            break;
        }
    }
    fclose(f);
    CHECK(found, "no mapping holds %#lx", (unsigned long)a);
    return hg;
}

static unsigned char pat(size_t i)
{
    return (unsigned char)((i * 2654435761u) >> 13);
}

int main(void)
{
    if (access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) != 0) {
        printf("SKIP: no transparent huge pages in this kernel\n");
        return 77;
    }
    size_t len = 10u << 20;
    unsigned char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(m != MAP_FAILED, "mmap of %zu bytes", len);
    for (size_t i = 0; i < len; i++)
        m[i] = pat(i);
    uintptr_t a = ((uintptr_t)m + 2 * HUGE - 1) & ~(HUGE - 1);   /* room below it: >= 1 page */
    CHECK(a - (uintptr_t)m >= 4096 && a + 3 * HUGE <= (uintptr_t)m + len, "layout");

    /* under 2 MiB, and 2 MiB straddling a boundary: nothing */
    wc_rma_user_mem_advise((void *)(a - 4096), HUGE - 1);
    wc_rma_user_mem_advise((void *)(a + 4096), HUGE);
    CHECK(!hinted(a) && !hinted(a + HUGE), "a window with no whole aligned extent was hinted");

    /* [a - 4 KiB + 16, a + 4 MiB + 100): the extents [a, a + 4 MiB) only */
    wc_rma_user_mem_advise((void *)(a - 4096 + 16), 2 * HUGE + 4096 - 16 + 100);
    CHECK(hinted(a) && hinted(a + HUGE - 1) && hinted(a + HUGE) && hinted(a + 2 * HUGE - 1),
          "the aligned extents inside the window were not hinted");
    CHECK(!hinted(a - 1) && !hinted(a + 2 * HUGE), "memory outside the extents was hinted");

    for (size_t i = 0; i < len; i++)
        CHECK(m[i] == pat(i), "byte %zu changed", i);
    munmap(m, len);
    printf("ok\n");
    return 0;
}
