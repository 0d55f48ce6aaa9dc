/* stripefs-ctl stats meta: where the metadata server's time goes, per
 * opcode and phase (docs/metadata.md, "Where a create's time goes"). */
#include "stripefs_ctl.h"

#include "sfs_admin_stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const ctl_stats_phase_names[SFS_META_PHASES] = {
    "queue", "ahead", "handler", "commit_wait", "commit", "reply", "total",
};

static double ctl_us(uint64_t ns)
{
    return (double)ns / 1000.0;
}

static int ctl_stats_meta(ctl_t *ctl, int reset)
{
    sfs_admin_meta_stats_t *stats = calloc(1, sizeof(*stats));
    int                     rc;

    if (!stats) {
        return ctl_fail("stats meta", -ENOMEM);
    }
    rc = sfs_admin_meta_stats(ctl->client, reset, stats);
    if (rc) {
        free(stats);
        return ctl_fail("stats meta", rc);
    }
    printf("metadata timing %s, counted for %.3f s%s (microseconds; p50/p99 within about "
           "12%%)\n",
           stats->enabled ? "on" : "off (STRIPEFS_META_TIMING=0)", (double)stats->since_ns / 1e9,
           reset ? ", now reset" : "");
    printf("%-12s %-11s %10s %10s %10s %10s %10s\n", "OP", "PHASE", "COUNT", "MEAN", "P50", "P99",
           "MAX");
    for (uint32_t i = 0; i < stats->count; i++) {
        const sfs_meta_stats_entry_t *e    = &stats->entries[i];
        const char                   *name = sfs_op_name(e->opcode);

        for (int p = 0; p < SFS_META_PHASES; p++) {
            const sfs_meta_stats_phase_t *ph = &e->phase[p];

            printf("%-12s %-11s %10llu %10.1f %10.1f %10.1f %10.1f\n", name ? name : "?",
                   ctl_stats_phase_names[p], (unsigned long long)e->count,
                   e->count ? ctl_us(ph->sum_ns) / (double)e->count : 0.0, ctl_us(ph->p50_ns),
                   ctl_us(ph->p99_ns), ctl_us(ph->max_ns));
        }
    }
    free(stats);
    return 0;
}

int ctl_stats(ctl_t *ctl, int argc, char **argv)
{
    int reset = 0;

    if (argc == 3 && strcmp(argv[2], "--reset") == 0) {
        reset = 1;
    } else if (argc != 2) {
        goto usage;
    }
    if (strcmp(argv[1], "meta") == 0) {
        return ctl_connect(ctl) ? 1 : ctl_stats_meta(ctl, reset);
    }
usage:
    fprintf(stderr, "usage: stripefs-ctl stats meta [--reset]\n");
    return EXIT_USAGE;
}
