/*
 * What the test clients that a shell test steps through share: a monotonic
 * clock in milliseconds, and the wait for a go-file the test touches
 * (tests/progs/sfs_meta_fence_client.c, sfs_meta_read_client.c).
 */
#ifndef SFS_GO_FILE_H
#define SFS_GO_FILE_H

#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static inline uint64_t sfs_go_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* 0 once `go` exists; 1 (said on stderr) if it does not within 300 s. */
static inline int sfs_go_wait(const char *go)
{
    struct stat st;

    for (int i = 0; i < 6000; i++) {
        if (stat(go, &st) == 0) {
            return 0;
        }
        usleep(50000);
    }
    fprintf(stderr, "%s did not appear in 300 s\n", go);
    return 1;
}

#endif
