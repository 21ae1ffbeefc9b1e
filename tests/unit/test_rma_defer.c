/* Deferred single copies to another process's memory (core/wc_rma.h, wc_rma_*_deferred): a
 * forked child holds the "window" (at the same address as the parent's copy of it, which the test
 * never writes, so every byte it checks came through process_vm_readv/writev). Checks: copies of
 * 1 B to 200 KiB land exactly after a drain, more than a batch of them too; copies are held
 * until the batch is full or drained; a read after a write of the same bytes sees the write (a
 * change of direction moves what is held); a strided layout goes after what is held; a mapped
 * target is copied at once; 4 threads deferring to one target at once; a failed batch (the child
 * gone) is reported once, by the drain. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "core/wc_rma.h"
#include "test_check.h"

#define WIN (4u << 20)

static unsigned char *win;     /* the child's window; the parent's copy is never written */
static wc_rma_target_t tgt;
static wc_dtype_t bytes_t = {.size = 1, .extent = 1, .contig = true};

static unsigned char pat(size_t i, int salt)
{
    return (unsigned char)((i * 2654435761u) >> 11 ^ (size_t)salt * 97);
}

/* The child's bytes [off, off + n), by an immediate read. */
static void remote(size_t off, size_t n, unsigned char *out)
{
    CHECK(wc_rma_read(&tgt, off, &bytes_t, n, out) == WU_OK, "immediate read of %zu bytes", n);
}

static void check_remote(size_t off, size_t n, int salt, const char *what)
{
    unsigned char *got = malloc(n);
    CHECK(got, "malloc");
    remote(off, n, got);
    for (size_t i = 0; i < n; i++)
        CHECK(got[i] == pat(off + i, salt), "%s: byte %zu of [%zu, +%zu): expected %u got %u", what,
              off + i, off, n, pat(off + i, salt), got[i]);
    free(got);
}

/* 150 writes of sizes 1 B .. 200 KiB to disjoint places (more than two batches), then reads of
 * the same places in two slices each, drained once. */
static void test_sizes(void)
{
    unsigned char *src = malloc(WIN), *dst = malloc(WIN);
    CHECK(src && dst, "malloc");
    for (size_t i = 0; i < WIN; i++)
        src[i] = pat(i, 1);
    memset(dst, 0xee, WIN);
    size_t off = 0, sizes[150];
    int n = 0;
    for (; n < 150; n++) {
        size_t len = n % 5 == 0 ? 1 : n % 5 == 1 ? 8 : n % 5 == 2 ? 4093 : n % 5 == 3 ? 65536 : 20000;
        if (off + len + 3 > WIN)
            break;
        sizes[n] = len;
        CHECK(wc_rma_write_deferred(&tgt, off, &bytes_t, len, src + off) == WU_OK, "write %d", n);
        off += len + 3;   /* gaps keep the remote blocks apart */
    }
    CHECK(n > 2 * WC_RMA_DEFER_OPS, "only %d writes fit", n);
    CHECK(wc_rma_drain(&tgt) == WU_OK, "drain of writes");
    off = 0;
    for (int k = 0; k < n; k++) {
        check_remote(off, sizes[k], 1, "deferred write");
        off += sizes[k] + 3;
    }
    off = 0;
    for (int k = 0; k < n; k++) {
        size_t h = sizes[k] / 2;
        if (h)
            CHECK(wc_rma_read_deferred(&tgt, off, &bytes_t, h, dst + off) == WU_OK, "read a");
        CHECK(wc_rma_read_deferred(&tgt, off + h, &bytes_t, sizes[k] - h, dst + off + h) == WU_OK,
              "read b");
        off += sizes[k] + 3;
    }
    CHECK(wc_rma_drain(&tgt) == WU_OK, "drain of reads");
    off = 0;
    for (int k = 0; k < n; k++) {
        for (size_t i = 0; i < sizes[k]; i++)
            CHECK(dst[off + i] == pat(off + i, 1), "deferred read: byte %zu", off + i);
        CHECK(dst[off + sizes[k]] == 0xee, "deferred read wrote past its end at %zu",
              off + sizes[k]);
        off += sizes[k] + 3;
    }
    free(src);
    free(dst);
}

/* Held until full or drained; a read after a write of the same bytes sees it; a strided layout
 * goes after what is held. */
static void test_order(void)
{
    unsigned char a[4096], got[4096], before[4096], now[4096];
    for (size_t i = 0; i < sizeof(a); i++)
        a[i] = pat(i, 2);
    remote(0, sizeof(before), before);
    CHECK(wc_rma_write_deferred(&tgt, 0, &bytes_t, sizeof(a), a) == WU_OK, "write");
    remote(0, sizeof(now), now);   /* immediate: not ordered with held copies */
    CHECK(!memcmp(now, before, sizeof(now)), "a deferred write was not held");
    memset(got, 0, sizeof(got));
    CHECK(wc_rma_read_deferred(&tgt, 0, &bytes_t, sizeof(got), got) == WU_OK, "read");
    CHECK(wc_rma_drain(&tgt) == WU_OK, "drain");
    CHECK(!memcmp(got, a, sizeof(a)), "a read after a write of the same bytes missed the write");

    /* blocks of 8 bytes every 16, 4 per element of extent 64 */
    wc_dtype_seg_t seg = {.disp = 0, .count = 4, .blocklen = 8, .stride = 16, .unit = 1, .swap = 1};
    wc_dtype_t strided = {.size = 32, .extent = 64, .contig = false, .nsegs = 1, .segs = &seg};
    unsigned char b[64 * 32];
    for (size_t i = 0; i < sizeof(b); i++)
        b[i] = (unsigned char)~pat(i, 3);
    for (size_t i = 0; i < sizeof(a); i++)
        a[i] = pat(i, 3);
    CHECK(wc_rma_write_deferred(&tgt, 8192, &bytes_t, sizeof(a), a) == WU_OK, "write");
    CHECK(wc_rma_write_deferred(&tgt, 8192, &strided, 64, b) == WU_OK, "strided write");
    CHECK(wc_rma_drain(&tgt) == WU_OK, "drain");
    remote(8192, sizeof(got), got);
    for (size_t i = 0; i < sizeof(got); i++) {
        size_t e = i / 64, in = i % 64;
        unsigned char want = in % 16 < 8 ? b[e * 32 + in / 16 * 8 + in % 8] : a[i];
        CHECK(got[i] == want, "strided after contiguous: byte %zu expected %u got %u", i, want,
              got[i]);
    }

    /* a full batch moves by itself */
    unsigned char one[WC_RMA_DEFER_OPS], last = 0xaa, g;
    for (int k = 0; k < WC_RMA_DEFER_OPS; k++) {
        one[k] = (unsigned char)(k + 1);
        CHECK(wc_rma_write_deferred(&tgt, 20000 + 2 * (size_t)k, &bytes_t, 1, &one[k]) == WU_OK,
              "write");
    }
    CHECK(wc_rma_write_deferred(&tgt, 30000, &bytes_t, 1, &last) == WU_OK, "write");
    for (int k = 0; k < WC_RMA_DEFER_OPS; k++) {
        remote(20000 + 2 * (size_t)k, 1, &g);
        CHECK(g == one[k], "a full batch did not move: byte %d", k);
    }
    CHECK(wc_rma_drain(&tgt) == WU_OK, "drain");
    remote(30000, 1, &g);
    CHECK(g == 0xaa, "the last write");
}

/* A target mapped here is copied at once. */
static void test_mapped(void)
{
    unsigned char mem[256] = {0}, src[256];
    for (int i = 0; i < 256; i++)
        src[i] = (unsigned char)i;
    wc_rma_target_t m = {.addr = (char *)mem};
    CHECK(wc_rma_write_deferred(&m, 0, &bytes_t, 256, src) == WU_OK, "mapped write");
    CHECK(!memcmp(mem, src, 256), "a mapped target was not written at once");
    CHECK(wc_rma_drain(&m) == WU_OK, "drain of a mapped target");
    wc_rma_target_fini(&m);
}

#define THREADS 4
#define PER 300
#define CHUNK 1000
static void *writer(void *arg)
{
    int t = (int)(intptr_t)arg;
    unsigned char *src = malloc((size_t)PER * CHUNK);
    CHECK(src, "malloc");
    size_t base = (size_t)t * PER * CHUNK;
    for (size_t i = 0; i < (size_t)PER * CHUNK; i++)
        src[i] = pat(base + i, 4);
    for (int k = 0; k < PER; k++)
        CHECK(wc_rma_write_deferred(&tgt, base + (size_t)k * CHUNK, &bytes_t, CHUNK,
                                    src + (size_t)k * CHUNK) == WU_OK, "thread %d write %d", t, k);
    CHECK(wc_rma_drain(&tgt) == WU_OK, "thread %d drain", t);   /* src is freed after it */
    free(src);
    return NULL;
}

static void test_threads(void)
{
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++)
        CHECK(!pthread_create(&th[t], NULL, writer, (void *)(intptr_t)t), "pthread_create");
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    check_remote(0, (size_t)THREADS * PER * CHUNK, 4, "threads");
}

int main(void)
{
    win = calloc(1, WIN);
    CHECK(win, "calloc");
    int go[2];
    CHECK(!pipe(go), "pipe");
    pid_t child = fork();
    CHECK(child >= 0, "fork");
    if (child == 0) {
        char c;
        close(go[1]);
        (void)!read(go[0], &c, 1);   /* until the parent closes it */
        _exit(0);
    }
    close(go[0]);
    tgt = (wc_rma_target_t){.pid = child, .raddr = (uint64_t)(uintptr_t)win};
    if (!wc_rma_cma_ok(child, tgt.raddr)) {
        printf("SKIP: process_vm_readv is refused between the processes (CMA off)\n");
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
        return 77;
    }
    test_sizes();
    test_order();
    test_mapped();
    test_threads();
    for (size_t i = 0; i < WIN; i++)
        CHECK(win[i] == 0, "the parent's copy was written at %zu", i);

    /* the child gone: the held copy fails at the drain, reported once */
    unsigned char x = 1;
    CHECK(wc_rma_write_deferred(&tgt, 0, &bytes_t, 1, &x) == WU_OK, "write");
    close(go[1]);
    waitpid(child, NULL, 0);
    CHECK(wc_rma_drain(&tgt) == WU_ERR_IO, "a failed batch was not reported");
    CHECK(wc_rma_drain(&tgt) == WU_OK, "a failure was reported twice");
    wc_rma_target_fini(&tgt);
    free(win);
    printf("rma defer: ok\n");
    return 0;
}
