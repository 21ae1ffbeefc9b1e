/* How long a cache line takes to go from one CPU to another and back: two threads pinned to CPUs a
 * and b hand one line back and forth (each waits for the other's value, then writes its own). Not
 * an MPI program: a probe of the platform. On the 2-vCPU VM the figure has two values that change
 * every few seconds to minutes: ~100-130 ns when the host runs the vCPUs near each other ("near"),
 * ~400-500 ns when it runs them far apart ("far"). Every figure that moves data between two ranks
 * follows (8-byte message rate 2x, latency 3x), so comparisons of two builds are made within one
 * phase: bench/run_phase_ab.sh calls this before and after each run and keeps the runs that two
 * probes place in the same phase.
 *
 * Output: one line
 *   clrtt cpus=0,1 rounds=200000 rtt_ns=..
 * Options: -a CPU (0)  -b CPU (1)  -n round trips (200000). Exit status 2 on a bad option or when a
 * thread cannot be pinned. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static _Atomic long clrtt_line __attribute__((aligned(64)));
static long clrtt_rounds = 200000;
static int clrtt_cpu_a = 0, clrtt_cpu_b = 1;

static int pin(int cpu)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    return pthread_setaffinity_np(pthread_self(), sizeof(s), &s);
}

/* The answering side: waits for each odd value, writes the next even one. */
static void *answer(void *arg)
{
    (void)arg;
    if (pin(clrtt_cpu_b) != 0) {
        fprintf(stderr, "clrtt: cannot pin a thread to CPU %d\n", clrtt_cpu_b);
        exit(2);
    }
    for (long i = 1; i <= clrtt_rounds; i++) {
        while (atomic_load_explicit(&clrtt_line, memory_order_acquire) != 2 * i - 1)
            ;
        atomic_store_explicit(&clrtt_line, 2 * i, memory_order_release);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int o;
    while ((o = getopt(argc, argv, "a:b:n:")) != -1) {
        switch (o) {
        case 'a': clrtt_cpu_a = atoi(optarg); break;
        case 'b': clrtt_cpu_b = atoi(optarg); break;
        case 'n': clrtt_rounds = atol(optarg); break;
        default:
            fprintf(stderr, "usage: clrtt [-a cpu] [-b cpu] [-n round_trips]\n");
            return 2;
        }
    }
    if (clrtt_rounds < 1 || pin(clrtt_cpu_a) != 0) {
        fprintf(stderr, "clrtt: bad round count or cannot pin to CPU %d\n", clrtt_cpu_a);
        return 2;
    }
    pthread_t t;
    if (pthread_create(&t, NULL, answer, NULL) != 0) {
        fprintf(stderr, "clrtt: cannot create a thread\n");
        return 2;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 1; i <= clrtt_rounds; i++) {
        atomic_store_explicit(&clrtt_line, 2 * i - 1, memory_order_release);
        while (atomic_load_explicit(&clrtt_line, memory_order_acquire) != 2 * i)
            ;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    pthread_join(t, NULL);
    double ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
    printf("clrtt cpus=%d,%d rounds=%ld rtt_ns=%.0f\n", clrtt_cpu_a, clrtt_cpu_b, clrtt_rounds,
           ns / (double)clrtt_rounds);
    return 0;
}
