/* The adaptive spin's rule (core/wc_wait.h, wc_spin_next): from the base spin a run of short sleeps
 * doubles the spin up to the cap and no further; a long sleep halves it, never below the base; a
 * spinner that lost its core keeps its spin after a short sleep; one that had to yield (more ranks
 * than CPUs, crowded threads) shrinks it; a cap at or below the base, or a base of 0 (WEFT_SPIN_US=0:
 * never spin), turns adaptation off. */
#include "core/wc_wait.h"

#include <stdint.h>

#include "test_check.h"

#define US 1000u

int main(void)
{
    const uint64_t base = 10 * US, max = 200 * US;
    uint64_t s = base;
    uint64_t expect[] = { 20 * US, 40 * US, 80 * US, 160 * US, 200 * US, 200 * US };
    for (unsigned i = 0; i < sizeof(expect) / sizeof(expect[0]); i++) {
        s = wc_spin_next(s, base, max, 30 * US, false, false);
        CHECK(s == expect[i], "short sleep %u: spin %llu, expected %llu", i,
              (unsigned long long)s, (unsigned long long)expect[i]);
    }
    /* the boundary: a sleep of exactly max counts as long */
    s = wc_spin_next(s, base, max, max, false, false);
    CHECK(s == 100 * US, "long sleep halves: %llu", (unsigned long long)s);
    s = wc_spin_next(s, base, max, max - 1, false, false);
    CHECK(s == max, "a sleep just under the cap doubles: %llu", (unsigned long long)s);
    for (int i = 0; i < 10; i++)
        s = wc_spin_next(s, base, max, 5000 * US, false, false);
    CHECK(s == base, "long sleeps bring it back to the base, not below: %llu",
          (unsigned long long)s);
    s = wc_spin_next(80 * US, base, max, 30 * US, true, false);
    CHECK(s == 80 * US, "preempted, short sleep: kept: %llu", (unsigned long long)s);
    s = wc_spin_next(80 * US, base, max, 5000 * US, true, false);
    CHECK(s == 40 * US, "preempted, long sleep: halved: %llu", (unsigned long long)s);
    s = wc_spin_next(80 * US, base, max, 30 * US, false, true);
    CHECK(s == 40 * US, "yielding: halved even after a short sleep: %llu",
          (unsigned long long)s);
    s = wc_spin_next(0, base, max, 30 * US, false, false);
    CHECK(s == 20 * US, "a thread's first spin (0: not yet set) starts at the base: %llu",
          (unsigned long long)s);
    s = wc_spin_next(150 * US, base, 100 * US, 30 * US, false, false);
    CHECK(s == 100 * US, "a cap lowered below the current spin bounds it: %llu",
          (unsigned long long)s);
    CHECK(wc_spin_next(base, base, base, 1 * US, false, false) == base, "cap = base: off");
    CHECK(wc_spin_next(base, base, 5 * US, 1 * US, false, false) == base, "cap < base: off");
    CHECK(wc_spin_next(0, 0, max, 1 * US, false, false) == 0, "base 0 never spins");
    return 0;
}
