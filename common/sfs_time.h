/* Monotonic time helpers. */
#ifndef SFS_TIME_H
#define SFS_TIME_H

#include <stdint.h>
#include <time.h>

static inline uint64_t sfs_time_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t sfs_time_ms(void)
{
    return sfs_time_ns() / 1000000ull;
}

/* Wall-clock time in ns since the epoch (for file times). */
static inline uint64_t sfs_wall_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
