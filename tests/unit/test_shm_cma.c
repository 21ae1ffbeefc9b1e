/* shm transport, single-copy reads: WEFT_SHM_CMA=auto|1|0 decide has_cma the same on every rank;
 * wx_shm_get copies 1 MiB and 64 MiB exactly (also split into odd chunks); a job of one rank
 * needs no segment. */
#include "test_shm_boot.h"
#include "transport/shm/wx_shm_priv.h"

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

static void no_cb(int src, const void *hdr, const void *payload, size_t len, void *arg)
{
}

static unsigned char pat(size_t i, int rank)
{
    return (unsigned char)((i * 2654435761u) >> 13 ^ (size_t)rank * 41);
}

static int verify(const unsigned char *got, size_t off, size_t len, int rank, const char *what)
{
    for (size_t i = 0; i < len; i++) {
        if (got[i] != pat(off + i, rank)) {
            fprintf(stderr, "rank %d: %s: byte %zu: expected %u, got %u\n", tb_rank, what, i,
                    pat(off + i, rank), got[i]);
            return 1;
        }
    }
    return 0;
}

/* Every rank exposes a buffer of arg bytes and reads pieces of its right neighbour's. */
static int body_get(const wx_bootstrap_t *bs, void *arg)
{
    const size_t BIG = (size_t)(uintptr_t)arg;
    TB_CHECK("wx_shm_init", WU_OK, wx_shm_init(bs, no_cb, NULL));
    TB_CHECK("segment in /dev/shm after init (1: still there)", 0, tb_segment_exists());
    int me = bs->rank, n = bs->size, peer = (me + 1) % n;
    tb_sh->scratch[me][0] = wx_shm_has_cma();
    bs->fence();
    for (int r = 0; r < n; r++)
        TB_CHECK("has_cma agrees with rank 0", (long)tb_sh->scratch[0][0], (long)tb_sh->scratch[r][0]);
    if (!wx_shm_has_cma()) {
        if (me == 0)
            printf("  (process_vm_readv is refused here: CMA auto-detected off, reads not tested)\n");
        wx_shm_finalize();
        return 0;
    }

    unsigned char *mine = malloc(BIG), *got = malloc(BIG);
    if (!mine || !got)
        return 1;
    for (size_t i = 0; i < BIG; i++)
        mine[i] = pat(i, me);
    tb_sh->scratch[me][1] = (uintptr_t)mine;
    bs->fence();
    uint64_t remote = tb_sh->scratch[peer][1];

    TB_CHECK("get 1 MiB", WU_OK, wx_shm_get(peer, got, remote, (size_t)1 << 20));
    if (verify(got, 0, (size_t)1 << 20, peer, "get 1 MiB"))
        return 1;
    memset(got, 0, BIG);
    TB_CHECK("get of the whole buffer", WU_OK, wx_shm_get(peer, got, remote, BIG));
    if (verify(got, 0, BIG, peer, "get of the whole buffer"))
        return 1;
    TB_CHECK("get 12345 bytes at +7", WU_OK, wx_shm_get(peer, got + 3, remote + 7, 12345));
    if (verify(got + 3, 7, 12345, peer, "get 12345 bytes at +7"))
        return 1;
    TB_CHECK("get 0 bytes", WU_OK, wx_shm_get(peer, got, remote, 0));

    /* the whole buffer again in odd chunks, as a read beyond the kernel's 2 GiB limit is split */
    wx_shm_get_chunk = ((size_t)1 << 20) + 4096 + 8;
    memset(got, 0, BIG);
    TB_CHECK("get in chunks", WU_OK, wx_shm_get(peer, got + 1, remote + 5, BIG - 5));
    if (verify(got + 1, 5, BIG - 5, peer, "get in chunks"))
        return 1;

    bs->fence();              /* nobody frees a buffer a peer may still read */
    free(mine);
    free(got);
    wx_shm_finalize();
    return 0;
}

/* WEFT_SHM_CMA forced: every rank reports arg (1 or 0). */
static int body_forced(const wx_bootstrap_t *bs, void *arg)
{
    TB_CHECK("wx_shm_init", WU_OK, wx_shm_init(bs, no_cb, NULL));
    TB_CHECK("segment in /dev/shm after init (1: still there)", 0, tb_segment_exists());
    TB_CHECK("wx_shm_has_cma", (long)(uintptr_t)arg, wx_shm_has_cma());
    bs->fence();
    wx_shm_finalize();
    return 0;
}

/* Rank 1 may not call process_vm_readv (a seccomp filter answers EPERM, as a container's might):
 * auto mode must turn CMA off on every rank, including rank 0 whose own probe succeeds. */
static int body_refused(const wx_bootstrap_t *bs, void *arg)
{
    if (bs->rank == 1) {
        struct sock_filter f[] = {
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 0, 1),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog prog = { WU_ARRAY_SIZE(f), f };
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
            prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
            perror("seccomp");
            return 1;
        }
    }
    return body_forced(bs, (void *)0);
}

/* One rank cannot join (its packets would not fit the ring rank 0 chose): every rank must return
 * an error from init, none may hang, and the name must be gone. */
static int body_join_fails(const wx_bootstrap_t *bs, void *arg)
{
    wu_status_t s = wx_shm_init(bs, no_cb, NULL);
    if (s == WU_OK) {
        tb_fail("wx_shm_init with one rank unable to join: status (0 = ok)", WU_ERR_IO, s);
        return 1;
    }
    TB_CHECK("segment in /dev/shm after a failed init (1: still there)", 0, tb_segment_exists());
    TB_CHECK("wx_shm_init after a failed one, ranks in step", WU_ERR_IO, s);
    return 0;
}

static int body_single(const wx_bootstrap_t *bs, void *arg)
{
    TB_CHECK("wx_shm_init, 1 rank", WU_OK, wx_shm_init(bs, no_cb, NULL));
    TB_CHECK("segment created for 1 rank", 0, tb_segment_exists());
    TB_CHECK("wx_shm_progress, 1 rank", 0, wx_shm_progress());
    if (wx_shm_max_payload() < 32768) {
        tb_fail("wx_shm_max_payload >= default fragment size", 32768, (long)wx_shm_max_payload());
        return 1;
    }
    wx_shm_finalize();
    TB_CHECK("wx_shm_init after finalize, 1 rank", WU_OK, wx_shm_init(bs, no_cb, NULL));
    wx_shm_finalize();
    return 0;
}

int main(void)
{
    int failed = 0;
    failed |= tb_run("cma: auto, get 1 MiB and 64 MiB, 2 procs", 2, NULL, body_get,
                     (void *)((uintptr_t)64 << 20), 60);
    failed |= tb_run("cma: auto, get 1 MiB and 4 MiB, 4 procs", 4, NULL, body_get,
                     (void *)((uintptr_t)4 << 20), 30);
    failed |= tb_run("cma: auto, refused by one rank: off", 2, NULL, body_refused, NULL, 10);
    static const char *const off[] = { "WEFT_SHM_CMA=0", NULL };
    failed |= tb_run("cma: WEFT_SHM_CMA=0 reports off", 2, off, body_forced, (void *)0, 10);
    static const char *const on[] = { "WEFT_SHM_CMA=1", NULL };
    failed |= tb_run("cma: WEFT_SHM_CMA=1 reports on", 2, on, body_forced, (void *)1, 10);
    failed |= tb_run("cma: one rank, no segment", 1, NULL, body_single, NULL, 10);
    printf("  (the next run logs one error on purpose)\n");
    static const char *const mismatch[] = { "2:WEFT_SHM_EAGER_MAX=8m", NULL };
    failed |= tb_run("init: a rank cannot join, all fail", 3, mismatch, body_join_fails, NULL, 10);
    return failed;
}
