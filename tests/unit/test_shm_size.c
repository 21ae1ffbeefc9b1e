/* The shm segment grows linearly with the ranks: with the default settings, its size for n ranks
 * (wx_shm_seg_bytes, what rank 0 creates) is printed for 2 to 1000 ranks and must stay within the
 * goals (1 GiB at 256 ranks, 2 GiB at 1000), and beyond the pool size the bytes per rank must be
 * constant (linear, not quadratic). A 2-rank job keeps its two 512 KiB rings. Also: a smaller
 * WEFT_SHM_FAST_PATHS shrinks it. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "transport/shm/wx_shm.h"
#include "util/wu_config.h"

static int fails;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, " (%s:%d)\n", __FILE__, __LINE__);                                     \
            fails++;                                                                               \
        }                                                                                          \
    } while (0)

static double mib(size_t b)
{
    return (double)b / 1048576.0;
}

int main(void)
{
    /* the settings are read once per process: the smaller pool is computed in a child */
    int fd[2];
    if (pipe(fd) != 0)
        return 1;
    pid_t pid = fork();
    if (pid == 0) {
        setenv("WEFT_SHM_FAST_PATHS", "2", 1);
        size_t b = wu_config_init() == WU_OK ? wx_shm_seg_bytes(1000) : 0;
        _exit(write(fd[1], &b, sizeof(b)) == sizeof(b) ? 0 : 1);
    }
    size_t small = 0;
    if (pid < 0 || read(fd[0], &small, sizeof(small)) != sizeof(small) || waitpid(pid, NULL, 0) != pid)
        return 1;
    if (wu_config_init() != WU_OK)
        return 1;
    static const int ns[] = { 2, 4, 8, 9, 10, 16, 64, 128, 256, 512, 1000, 2000 };
    for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
        size_t b = wx_shm_seg_bytes(ns[i]);
        printf("%5d ranks: segment %9.1f MiB, %6.2f MiB per rank\n", ns[i], mib(b), mib(b) / ns[i]);
    }
    size_t b2 = wx_shm_seg_bytes(2), b256 = wx_shm_seg_bytes(256), b1000 = wx_shm_seg_bytes(1000);
    CHECK(b2 >= 2 * (512u << 10) && b2 <= 2 * (512u << 10) + (64u << 10),
          "2 ranks: %zu bytes, expected two 512 KiB rings and their controls", b2);
    CHECK(b256 <= (1ull << 30), "256 ranks: %zu bytes, above 1 GiB", b256);
    CHECK(b1000 <= (2ull << 30), "1000 ranks: %zu bytes, above 2 GiB", b1000);
    /* linear: the bytes per rank at 2000 ranks exceed those at 64 only by the header share */
    double per64 = (double)wx_shm_seg_bytes(64) / 64, per2000 = (double)wx_shm_seg_bytes(2000) / 2000;
    CHECK(per2000 <= per64 * 1.05, "per rank: %.0f bytes at 64 ranks, %.0f at 2000: not linear", per64,
          per2000);

    printf("1000 ranks, WEFT_SHM_FAST_PATHS=2: segment %.1f MiB\n", mib(small));
    CHECK(small < b1000, "WEFT_SHM_FAST_PATHS=2 gives %zu bytes, default %zu", small, b1000);
    if (!fails)
        printf("ok\n");
    return fails != 0;
}
