/*
 * The target chooser (sfs_meta_chooser.h): smooth weighted round-robin over
 * the usable targets of the cluster map.
 */
#include "sfs_meta_chooser.h"

#include "sfs_alloc.h"
#include "sfs_errno.h"
#include "sfs_layout.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void sfs_meta_chooser_init(sfs_meta_chooser_t *chooser)
{
    memset(chooser, 0, sizeof(*chooser));
    pthread_mutex_init(&chooser->lock, NULL);
}

void sfs_meta_chooser_cleanup(sfs_meta_chooser_t *chooser)
{
    free(chooser->targets);
    chooser->targets      = NULL;
    chooser->target_count = 0;
    pthread_mutex_destroy(&chooser->lock);
}

int sfs_meta_chooser_update(sfs_meta_chooser_t *chooser, const sfs_map_t *map)
{
    sfs_meta_target_t *fresh;

    if (!SFS_ALLOC_ARRAY(fresh, map->target_count)) {
        return -ENOMEM;
    }
    pthread_mutex_lock(&chooser->lock);
    for (uint32_t i = 0; i < map->target_count; i++) {
        const sfs_map_target_t *t = &map->targets[i];

        fresh[i].id     = t->target_id;
        fresh[i].online = t->state == SFS_STATE_ONLINE;
        /* weight by free space in MiB; a full or offline target gets none */
        fresh[i].weight  = fresh[i].online ? t->free >> 20 : 0;
        fresh[i].suspect = t->state == SFS_STATE_PROBABLY_OFFLINE ? t->free >> 20 : 0;
        for (uint32_t j = 0; j < chooser->target_count; j++) {
            if (chooser->targets[j].id == t->target_id) {
                fresh[i].current = chooser->targets[j].current;
            }
        }
    }
    free(chooser->targets);
    chooser->targets      = fresh;
    chooser->target_count = map->target_count;
    pthread_mutex_unlock(&chooser->lock);
    return 0;
}

static uint64_t sfs_meta_weight(const sfs_meta_target_t *t, int last_resort)
{
    return last_resort ? t->suspect : t->weight;
}

/* Checks under the lock: the start target exists, something is usable.
 * Returns the number of usable targets or a negative errno; *last_resort_p
 * is set when only probably-offline targets are. */
static int sfs_meta_choose_check(const sfs_meta_chooser_t *chooser, uint32_t start_target,
                                 int64_t *total_p, int *last_resort_p)
{
    uint32_t online = 0, usable = 0, suspects = 0;
    int      start_known = start_target == 0;

    *total_p       = 0;
    *last_resort_p = 0;
    for (uint32_t i = 0; i < chooser->target_count; i++) {
        const sfs_meta_target_t *t = &chooser->targets[i];

        online += t->online != 0;
        usable += t->weight != 0;
        suspects += t->suspect != 0;
        *total_p += (int64_t)t->weight;
        start_known |= t->id == start_target;
    }
    if (start_known && usable == 0 && suspects != 0) {
        *last_resort_p = 1;
        for (uint32_t i = 0; i < chooser->target_count; i++) {
            *total_p += (int64_t)chooser->targets[i].suspect;
        }
        return (int)suspects;
    }
    if (!start_known) {
        return sfs_error_set(
            -EINVAL, "storage target %u does not exist (the cluster has %u target%s)", start_target,
            chooser->target_count, chooser->target_count == 1 ? "" : "s");
    }
    if (online == 0) {
        return sfs_error_set(-EHOSTDOWN, "no storage target is online");
    }
    if (usable == 0) {
        return sfs_error_set(-ENOSPC, "every storage target is full");
    }
    return (int)usable;
}

int sfs_meta_choose(void *arg, uint32_t count, uint32_t start_target, uint32_t *targets)
{
    sfs_meta_chooser_t *chooser = arg;
    uint32_t            picked  = 0;
    int64_t             total;
    int                 usable, last_resort;

    pthread_mutex_lock(&chooser->lock);
    usable = sfs_meta_choose_check(chooser, start_target, &total, &last_resort);
    if (usable < 0) {
        pthread_mutex_unlock(&chooser->lock);
        return usable;
    }
    if (count > (uint32_t)usable) {
        count = (uint32_t)usable; /* as many as there are, like BeeGFS */
    }
    if (count > SFS_STRIPE_COUNT_MAX) {
        count = SFS_STRIPE_COUNT_MAX;
    }
    if (start_target) {
        for (uint32_t i = 0; i < chooser->target_count && picked == 0; i++) {
            if (chooser->targets[i].id == start_target &&
                sfs_meta_weight(&chooser->targets[i], last_resort)) {
                targets[picked++] = start_target;
            }
        }
    }
    while (picked < count) {
        sfs_meta_target_t *best = NULL;

        for (uint32_t i = 0; i < chooser->target_count; i++) {
            sfs_meta_target_t *t     = &chooser->targets[i];
            int                taken = 0;

            if (!sfs_meta_weight(t, last_resort)) {
                continue;
            }
            t->current += (int64_t)sfs_meta_weight(t, last_resort);
            for (uint32_t j = 0; j < picked; j++) {
                taken |= targets[j] == t->id;
            }
            if (!taken && (!best || t->current > best->current)) {
                best = t;
            }
        }
        if (!best) {
            break;
        }
        best->current -= total;
        targets[picked++] = best->id;
    }
    /* when a file takes every target the weights pick the same order each
     * time: rotate it, so that small files (one chunk) spread over all
     * targets instead of all landing on the first one */
    if (!start_target && picked > 1) {
        uint32_t shift = (uint32_t)(chooser->files_chosen++ % picked);
        uint32_t rotated[SFS_STRIPE_COUNT_MAX];

        for (uint32_t i = 0; i < picked; i++) {
            rotated[i] = targets[(i + shift) % picked];
        }
        memcpy(targets, rotated, picked * sizeof(*targets));
    }
    pthread_mutex_unlock(&chooser->lock);
    return (int)picked;
}

void sfs_meta_chooser_counts(sfs_meta_chooser_t *chooser, uint32_t *total, uint32_t *usable)
{
    pthread_mutex_lock(&chooser->lock);
    *total  = chooser->target_count;
    *usable = 0;
    for (uint32_t i = 0; i < chooser->target_count; i++) {
        *usable += chooser->targets[i].weight != 0;
    }
    pthread_mutex_unlock(&chooser->lock);
}
