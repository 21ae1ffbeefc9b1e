/* The shm transport's multi-producer queue (wx_shm_mpq_inl.h) on its own: several producers (threads
 * of this process, then forked processes on a shared mapping) push numbered packets of mixed sizes
 * into one small queue that wraps thousands of times and is often full, while one consumer checks
 * that no packet is lost, duplicated or corrupted and that each source's packets arrive in order.
 * After the last packet the queue must be empty (head == tail) and every line's first word zero
 * (the consumer scrubbed what it freed). The thread form is the one ThreadSanitizer checks. */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "transport/shm/wx_shm_mpq_inl.h"

#define MAXP      8
#define MAXLEN    1500            /* payload bytes; records up to 24 lines */

/* Packets per source are divided by SCALE under ThreadSanitizer: its checks of every byte make the
 * test 15-20x slower when the mt tests beside it load the machine (120 s in a run at load 30, 8 s
 * alone), and a quarter of the packets still wraps the queues thousands of times. */
#if defined(__SANITIZE_THREAD__)   /* as util/wu_tsan.h tells a TSan build */
#define SCALE 4
#else
#define SCALE 1
#endif

typedef struct {
    uint32_t seq;
    uint32_t len;
    uint32_t src;
    uint32_t check;               /* seq ^ len ^ src, mixed */
    unsigned char fill[24];
} pkt_hdr_t;
_Static_assert(sizeof(pkt_hdr_t) == WX_HDR_SIZE, "test header");

typedef struct {
    wx_shm_mpq_ctl_t ctl;
    char data[];                  /* size bytes, cache-line aligned (ctl is) */
} queue_t;

static queue_t *q;
static uint32_t qsize;
static uint32_t per_src;

static unsigned char pat(uint32_t seq, size_t j, uint32_t src)
{
    return (unsigned char)(seq * 13 + j * 5 + src * 71 + (j >> 7));
}

static uint32_t len_of(uint32_t seq, uint32_t src)
{
    uint32_t x = (seq + 1) * 2654435761u ^ (src * 40503u);
    switch (x & 3) {
    case 0: return 0;
    case 1: return 8;
    case 2: return (x >> 4) % 200;
    default: return (x >> 4) % (MAXLEN + 1);
    }
}

static void produce(uint32_t src)
{
    wx_shm_tx_t tx = { .data = q->data, .size = qsize, .mpq = &q->ctl, .route = WX_SHM_ROUTE_QUEUE };
    static _Thread_local unsigned char buf[MAXLEN];
    for (uint32_t seq = 0; seq < per_src; seq++) {
        uint32_t len = len_of(seq, src);
        pkt_hdr_t h = { .seq = seq, .len = len, .src = src, .check = (seq * 31u) ^ len ^ (src << 24) };
        memset(h.fill, (int)(seq & 0xff), sizeof(h.fill));
        for (uint32_t j = 0; j < len; j++)
            buf[j] = pat(seq, j, src);
        uint64_t pos;
        wx_shm_rec_t *rec;
        while ((rec = wx_shm_mpq_reserve(&tx, len, &pos)) == NULL)
            sched_yield();
        memcpy(rec->payload, buf, len);
        wx_shm_mpq_commit(rec, pos, &h, len, src);
    }
}

static void *producer_thread(void *arg)
{
    produce((uint32_t)(uintptr_t)arg);
    return NULL;
}

/* Drain nprod * per_src packets; returns the number of errors (printed, the first few). */
static long consume(int nprod)
{
    wx_shm_rx_t rx = { .data = q->data, .pub = &q->ctl.head, .size = qsize, .src = -1 };
    uint32_t next[MAXP] = { 0 };
    long got = 0, want = (long)nprod * per_src, errors = 0;
    while (got < want) {
        int k = 0;
        wx_shm_rec_t *rec;
        while (k < 32 && (rec = wx_shm_mpq_peek(&rx, (uint32_t)nprod, UINT32_MAX)) != NULL) {
            pkt_hdr_t h;
            memcpy(&h, rec->hdr, sizeof(h));
            uint32_t src = rec->spare;
            int bad = src >= (uint32_t)nprod || h.src != src || h.len != rec->len ||
                      h.seq != next[src < MAXP ? src : 0] || h.len != len_of(h.seq, src) ||
                      h.check != ((h.seq * 31u) ^ h.len ^ (src << 24));
            for (size_t j = 0; !bad && j < sizeof(h.fill); j++)
                bad = h.fill[j] != (unsigned char)(h.seq & 0xff);
            for (uint32_t j = 0; !bad && j < rec->len; j++)
                bad = rec->payload[j] != pat(h.seq, j, src);
            if (bad && errors++ < 5)
                fprintf(stderr, "packet %ld: from %u (header says %u), expected seq %u, got %u, len %u "
                        "(header %u)\n", got, src, h.src, src < MAXP ? next[src] : 0, h.seq, rec->len, h.len);
            if (src < MAXP)
                next[src] = h.seq + 1;
            wx_shm_mpq_advance(&rx, rec);
            got++;
            k++;
        }
        wx_shm_rx_publish(&rx, k < 32);
        if (k == 0)
            sched_yield();
    }
    for (int s = 0; s < nprod; s++) {
        if (next[s] != per_src && errors++ < 5)
            fprintf(stderr, "source %d: last sequence %u, expected %u\n", s, next[s], per_src);
    }
    uint64_t tail = __atomic_load_n(&q->ctl.tail, __ATOMIC_RELAXED);
    if (tail != rx.head && errors++ < 5)
        fprintf(stderr, "after the last packet: tail %llu, head %llu\n", (unsigned long long)tail,
                (unsigned long long)rx.head);
    if (tail < 20ull * qsize && errors++ < 5)
        fprintf(stderr, "the queue wrapped only %llu times\n", (unsigned long long)(tail / qsize));
    for (uint32_t o = 0; o < qsize; o += WU_CACHELINE) {
        uint64_t w;
        memcpy(&w, q->data + o, sizeof(w));
        if (w != 0 && errors++ < 5)
            fprintf(stderr, "line at %u not scrubbed: %llx\n", o, (unsigned long long)w);
    }
    return errors;
}

static queue_t *queue_new(uint32_t size, bool shared)
{
    size_t bytes = sizeof(queue_t) + size;
    void *p = shared ? mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0)
                     : aligned_alloc(WU_CACHELINE, WU_ALIGN_UP(bytes, WU_CACHELINE));
    if (p == MAP_FAILED || !p) {
        perror("queue allocation");
        exit(1);
    }
    memset(p, 0, bytes);
    return p;
}

static int run_threads(const char *name, int nprod, uint32_t size, uint32_t count)
{
    q = queue_new(size, false);
    qsize = size;
    per_src = count;
    pthread_t t[MAXP];
    for (int i = 0; i < nprod; i++)
        pthread_create(&t[i], NULL, producer_thread, (void *)(uintptr_t)i);
    long errors = consume(nprod);
    for (int i = 0; i < nprod; i++)
        pthread_join(t[i], NULL);
    free(q);
    printf("%s: %s (%d producers x %u packets, queue of %u bytes)\n", errors ? "FAIL" : "ok", name,
           nprod, count, size);
    return errors != 0;
}

static int run_procs(const char *name, int nprod, uint32_t size, uint32_t count)
{
    q = queue_new(size, true);
    qsize = size;
    per_src = count;
    pid_t pid[MAXP];
    fflush(stdout);                  /* the children must not print our buffer again */
    for (int i = 0; i < nprod; i++) {
        pid[i] = fork();
        if (pid[i] == 0) {
            alarm(60);
            produce((uint32_t)i);
            _exit(0);
        }
    }
    long errors = consume(nprod);
    for (int i = 0; i < nprod; i++) {
        int st;
        waitpid(pid[i], &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "producer %d ended badly (status %d)\n", i, st);
            errors++;
        }
    }
    munmap(q, sizeof(queue_t) + size);
    printf("%s: %s (%d producer processes x %u packets, queue of %u bytes)\n", errors ? "FAIL" : "ok",
           name, nprod, count, size);
    return errors != 0;
}

int main(void)
{
    alarm(100);      /* a lost packet would hang the consumer: fail instead */
    int failed = 0;
    failed |= run_threads("one producer, wraps", 1, 8192, 100000 / SCALE);
    failed |= run_threads("four producers, small queue", 4, 8192, 50000 / SCALE);
    failed |= run_threads("eight producers, smallest queue", 8, 4096, 20000 / SCALE);
    failed |= run_procs("four producer processes", 4, 16384, 50000 / SCALE);
    failed |= run_procs("eight producer processes, small queue", 8, 4096, 20000 / SCALE);
    return failed;
}
