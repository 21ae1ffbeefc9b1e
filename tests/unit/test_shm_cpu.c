/* shm transport, where ranks wait (wx_shm_cpu_set / wx_shm_peer_cpu, wx_shm.h): three processes.
 *   - before a rank says its CPU, the others read -1 (unknown), never a CPU;
 *   - each rank says a CPU of its own (7, 8, 9: numbers, not this machine's CPUs) and every rank
 *     reads every other's value after a fence, and its own;
 *   - rank 0 says CPU 0, then the same again: the others read 0, not "unknown" (the word stores
 *     the CPU plus one), and a repeated value changes nothing;
 *   - a rank that moves (rank 2: 9 -> 1) is seen at its new CPU.
 * The core uses it to decide whether a waiter yields at once (wc_wait.c, wc_wait_apart). */
#include "test_shm_boot.h"

static void no_cb(int src, const void *hdr, const void *payload, size_t len, void *arg)
{
    (void)src, (void)hdr, (void)payload, (void)len, (void)arg;
}

#define NPROC 3

static int body(const wx_bootstrap_t *bs, void *arg)
{
    (void)arg;
    TB_CHECK("wx_shm_init", WU_OK, wx_shm_init(bs, no_cb, NULL));
    int me = bs->rank;
    for (int r = 0; r < NPROC; r++)
        TB_CHECK("peer_cpu before anyone said", -1, wx_shm_peer_cpu(r));
    bs->fence();
    wx_shm_cpu_set(7 + me);
    bs->fence();
    for (int r = 0; r < NPROC; r++)
        TB_CHECK("peer_cpu after each said its own", 7 + r, wx_shm_peer_cpu(r));
    bs->fence();
    if (me == 0) {
        wx_shm_cpu_set(0);
        wx_shm_cpu_set(0);
    }
    if (me == 2)
        wx_shm_cpu_set(1);
    bs->fence();
    TB_CHECK("peer_cpu of rank 0 at CPU 0", 0, wx_shm_peer_cpu(0));
    TB_CHECK("peer_cpu of rank 1, unchanged", 8, wx_shm_peer_cpu(1));
    TB_CHECK("peer_cpu of rank 2 after it moved", 1, wx_shm_peer_cpu(2));
    bs->fence();
    wx_shm_finalize();
    return 0;
}

int main(void)
{
    if (access("/dev/shm", W_OK) != 0) {
        printf("SKIP: /dev/shm is not writable here\n");
        return 77;
    }
    return tb_run("cpu: 3 procs say and read where they wait", NPROC, NULL, body, NULL, 60);
}
