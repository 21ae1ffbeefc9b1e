/* shm transport, cooperative rendezvous slots (wx_shm.h, docs/shm.md): the validate test of the
 * shared words, without the core. Two processes, several threads each:
 *   - a message of N chunks: rank 0's threads claim runs of 1..8 chunks and write them into rank
 *     1's buffer (wx_shm_put), rank 1's threads claim runs and read them (wx_shm_get); every chunk
 *     is claimed exactly once, the buffer arrives intact, and exactly one finish call in both
 *     processes reports the end (and no failure);
 *   - the slot reopened: a token of the previous message claims nothing and its consumed adds are
 *     ignored, the new one starts from chunk 0; a failed chunk is reported by the last finish;
 *   - 32 slots, the 33rd open fails, a close gives one back; coop_valid refuses bad tokens.
 * Skipped when process_vm_readv is refused between the processes. */
#include "test_shm_boot.h"
#include "transport/shm/wx_shm_priv.h"

#include <stdatomic.h>

#define CHUNK 4096
#define NCHUNK 1500
#define NTHR 3
#define ROUNDS 20

static void no_cb(int src, const void *hdr, const void *payload, size_t len, void *arg)
{
    (void)src, (void)hdr, (void)payload, (void)len, (void)arg;
}

static unsigned char pat(size_t i, unsigned round)
{
    return (unsigned char)((i * 2654435761u) >> 11 ^ round * 29);
}

/* Shared between the processes (inherited mapping): per-chunk claim counts, finishers. */
typedef struct {
    _Atomic uint32_t claimed[NCHUNK];
    _Atomic int finishers, failed_reports;
    _Atomic int no_cma;
} coop_sh_t;
static coop_sh_t *csh;

typedef struct {
    int me, peer;
    uint64_t tok;
    unsigned char *buf;
    uint64_t remote;
    unsigned round;
    int err;
} thr_arg_t;

static void *copier(void *p)
{
    thr_arg_t *a = p;
    unsigned seed = (unsigned)(a->me * 7 + 1) * 2654435761u ^ (unsigned)(uintptr_t)&seed;
    uint32_t idx, k;
    for (;;) {
        seed = seed * 1103515245u + 12345u;
        uint32_t max = 1 + (seed >> 16) % 8;
        if (!(k = wx_shm_coop_claim(0, a->tok, NCHUNK, max, &idx)))
            break;
        if (idx + k > NCHUNK) {
            fprintf(stderr, "rank %d: claim of %u at %u past the %d chunks\n", a->me, k, idx, NCHUNK);
            a->err = 1;
            return NULL;
        }
        for (uint32_t c = idx; c < idx + k; c++)
            atomic_fetch_add(&csh->claimed[c], 1);
        size_t off = (size_t)idx * CHUNK, len = (size_t)k * CHUNK;
        wu_status_t st = a->me == 0 ? wx_shm_put(1, a->buf + off, a->remote + off, len)
                                    : wx_shm_get(0, a->buf + off, a->remote + off, len);
        if (st != WU_OK) {
            fprintf(stderr, "rank %d: copy of %zu bytes failed: %d\n", a->me, len, (int)st);
            a->err = 1;
        }
        bool failed = true;
        if (wx_shm_coop_finish(0, a->tok, NCHUNK, k, false, &failed)) {
            atomic_fetch_add(&csh->finishers, 1);
            if (failed)
                atomic_fetch_add(&csh->failed_reports, 1);
        }
    }
    return NULL;
}

static int body(const wx_bootstrap_t *bs, void *arg)
{
    (void)arg;
    TB_CHECK("wx_shm_init", WU_OK, wx_shm_init(bs, no_cb, NULL));
    int me = bs->rank, peer = 1 - me;
    if (!wx_shm_has_cma()) {
        atomic_store(&csh->no_cma, 1);
        wx_shm_finalize();
        return 0;
    }
    size_t bytes = (size_t)NCHUNK * CHUNK;
    unsigned char *buf = malloc(bytes);
    if (!buf)
        return 1;
    tb_sh->scratch[me][1] = (uintptr_t)buf;
    bs->fence();
    uint64_t remote = tb_sh->scratch[peer][1];
    uint64_t prev = 0;
    for (unsigned round = 0; round < ROUNDS; round++) {
        if (me == 0) {
            for (size_t i = 0; i < bytes; i++)
                buf[i] = pat(i, round);
            for (int c = 0; c < NCHUNK; c++)
                atomic_store(&csh->claimed[c], 0);
            atomic_store(&csh->finishers, 0);
            atomic_store(&csh->failed_reports, 0);
            if (round)
                wx_shm_coop_close(prev);
            uint64_t tok;
            TB_CHECK("wx_shm_coop_open", WU_OK, wx_shm_coop_open(&tok));
            if (round && (tok & 0xffffffffu) == (prev & 0xffffffffu))
                TB_CHECK("a reopened slot has a new generation (1: same)", 0, tok == prev);
            tb_sh->scratch[0][2] = tok;
            prev = tok;
        } else {
            memset(buf, 0, bytes);
        }
        bs->fence();
        uint64_t tok = tb_sh->scratch[0][2];
        if (me == 1)
            TB_CHECK("coop_valid of the sender's token", 1, wx_shm_coop_valid(0, tok));
        if (round && me == 1) {
            /* the previous message's token claims nothing now, its consumed adds are ignored */
            uint64_t old = tb_sh->scratch[0][3];
            uint32_t idx;
            if ((old & 0xffffffffu) == (tok & 0xffffffffu)) {
                TB_CHECK("claim with the previous generation", 0,
                         wx_shm_coop_claim(0, old, NCHUNK, 8, &idx));
                TB_CHECK("consumed add with the previous generation", 0,
                         wx_shm_coop_count(0, old, WX_SHM_COOP_CONSUMED, 1));
                TB_CHECK("consumed of the new message", 0,
                         wx_shm_coop_count(0, tok, WX_SHM_COOP_CONSUMED, 0));
            }
        }
        bs->fence();
        pthread_t t[NTHR];
        thr_arg_t a[NTHR];
        for (int i = 0; i < NTHR; i++) {
            a[i] = (thr_arg_t){ .me = me, .peer = peer, .tok = tok, .buf = buf, .remote = remote,
                                .round = round };
            pthread_create(&t[i], NULL, copier, &a[i]);
        }
        int err = 0;
        for (int i = 0; i < NTHR; i++) {
            pthread_join(t[i], NULL);
            err |= a[i].err;
        }
        TB_CHECK("copier errors", 0, err);
        bs->fence();
        if (me == 1) {
            for (size_t i = 0; i < bytes; i++)
                if (buf[i] != pat(i, round)) {
                    fprintf(stderr, "round %u: byte %zu: expected %u got %u\n", round, i,
                            pat(i, round), buf[i]);
                    return 1;
                }
            for (int c = 0; c < NCHUNK; c++)
                TB_CHECK("claims of one chunk", 1, (long)atomic_load(&csh->claimed[c]));
            TB_CHECK("finish calls that reported the end", 1, atomic_load(&csh->finishers));
            TB_CHECK("ends reporting a failure", 0, atomic_load(&csh->failed_reports));
        }
        if (me == 0)
            tb_sh->scratch[0][3] = tok;
        bs->fence();
    }
    if (me == 0) {
        /* a failed chunk: the last finish reports it */
        wx_shm_coop_close(prev);
        uint64_t tok, toks[WX_SHM_COOP_SLOTS];
        TB_CHECK("open", WU_OK, wx_shm_coop_open(&tok));
        uint32_t idx;
        bool failed = false;
        TB_CHECK("claim 2 of 2", 2, wx_shm_coop_claim(0, tok, 2, 8, &idx));
        TB_CHECK("finish a failed chunk: not the end", 0, wx_shm_coop_finish(0, tok, 2, 1, true, &failed));
        TB_CHECK("finish the other: the end", 1, wx_shm_coop_finish(0, tok, 2, 1, false, &failed));
        TB_CHECK("the end reports the failure", 1, failed);
        wx_shm_coop_close(tok);
        /* every slot open, one more fails; a close gives one back */
        for (int i = 0; i < WX_SHM_COOP_SLOTS; i++)
            TB_CHECK("open of every slot", WU_OK, wx_shm_coop_open(&toks[i]));
        TB_CHECK("open with all slots in use", WU_ERR_AGAIN, wx_shm_coop_open(&tok));
        wx_shm_coop_close(toks[5]);
        TB_CHECK("open after a close", WU_OK, wx_shm_coop_open(&tok));
        TB_CHECK("it is the closed slot", (long)(toks[5] & 0xffffffffu), (long)(tok & 0xffffffffu));
    } else {
        TB_CHECK("coop_valid: index past the slots", 0,
                 wx_shm_coop_valid(0, (uint64_t)1 << 32 | WX_SHM_COOP_SLOTS));
        TB_CHECK("coop_valid: generation 0", 0, wx_shm_coop_valid(0, 3));
        TB_CHECK("coop_valid: own slot", 0, wx_shm_coop_valid(1, (uint64_t)1 << 32));
        TB_CHECK("coop_valid: no such rank", 0, wx_shm_coop_valid(2, (uint64_t)1 << 32));
    }
    bs->fence();
    free(buf);
    wx_shm_finalize();
    return 0;
}

int main(void)
{
    csh = mmap(NULL, sizeof(*csh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (csh == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    if (access("/dev/shm", W_OK) != 0) {
        printf("SKIP: /dev/shm is not writable here\n");
        return 77;
    }
    int failed = tb_run("coop: 2 procs x 3 threads claim and copy, 20 messages", 2, NULL, body,
                        NULL, 120);
    if (!failed && atomic_load(&csh->no_cma)) {
        printf("SKIP: process_vm_readv is refused between the processes (CMA off)\n");
        return 77;
    }
    return failed;
}
