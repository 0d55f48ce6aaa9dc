/*
 * The target chooser (sfs_meta_chooser.h): smooth weighted round-robin over
 * the usable targets of the cluster map, other nodes first.
 */
#define SFS_LOG_FAC "meta"
#include "sfs_meta_chooser.h"

#include "sfs_alloc.h"
#include "sfs_errno.h"
#include "sfs_layout.h"
#include "sfs_log.h"
#include "sfs_proto.h"
#include "sfs_proto_mirror.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define SFS_MIB (1ull << 20)

uint64_t sfs_meta_chooser_reserve(uint64_t capacity)
{
    return capacity / 100 > SFS_MIB ? capacity / 100 : SFS_MIB;
}

void sfs_meta_chooser_init(sfs_meta_chooser_t *chooser)
{
    memset(chooser, 0, sizeof(*chooser));
    pthread_mutex_init(&chooser->lock, NULL);
}

void sfs_meta_chooser_cleanup(sfs_meta_chooser_t *chooser)
{
    free(chooser->targets);
    free(chooser->drain_ids);
    chooser->targets      = NULL;
    chooser->target_count = 0;
    chooser->drain_ids    = NULL;
    chooser->drain_count  = 0;
    pthread_mutex_destroy(&chooser->lock);
}

/* Ranks on one host share an index: the first node of the map with the
 * host's name. A target whose node is not in the map is a host of its own. */
static uint32_t sfs_meta_host_index(const sfs_map_t *map, uint32_t node_id)
{
    const sfs_map_node_t *node = sfs_map_find_node(map, node_id);

    if (!node) {
        return map->node_count + node_id;
    }
    for (uint32_t i = 0; i < map->node_count; i++) {
        if (strcmp(map->nodes[i].host, node->host) == 0) {
            return i;
        }
    }
    return map->node_count + node_id;
}

/* The default pattern over every target of unequal sizes puts equal bytes
 * on each: the smallest fills first and the rest of the others is lost
 * (docs/capacity.md). Said once per number of targets: the map grows while
 * the storage ranks register, and a warning about the first rank's targets
 * alone would name the wrong count. */
static void sfs_meta_chooser_check_width(sfs_meta_chooser_t *chooser, const sfs_map_t *map)
{
    uint64_t smallest = UINT64_MAX, largest = 0;

    if (chooser->width_warned >= map->target_count || map->target_count < 2 ||
        map->default_stripe_count < map->target_count) {
        return;
    }
    for (uint32_t i = 0; i < map->target_count; i++) {
        uint64_t capacity = map->targets[i].capacity;

        if (capacity == 0) {
            return; /* not reported yet */
        }
        smallest = capacity < smallest ? capacity : smallest;
        largest  = capacity > largest ? capacity : largest;
    }
    if (largest / 10 > largest - smallest) {
        return; /* within 10%: alike */
    }
    chooser->width_warned = map->target_count;
    sfs_warn("the default pattern (stripe_count %u) spans all %u targets, whose capacities "
             "differ (%" PRIu64 " to %" PRIu64 " MiB): each file puts equal bytes on each, the "
             "smallest fill first; set pattern.stripe_count below %u so that files go where the "
             "space is (docs/capacity.md)",
             map->default_stripe_count, map->target_count, smallest >> 20, largest >> 20,
             map->target_count);
}

/* Whether `id` is in the draining list (under the lock). */
static int sfs_meta_chooser_is_draining(const sfs_meta_chooser_t *chooser, uint32_t id)
{
    for (uint32_t i = 0; i < chooser->drain_count; i++) {
        if (chooser->drain_ids[i] == id) {
            return 1;
        }
    }
    return 0;
}

int sfs_meta_chooser_update(sfs_meta_chooser_t *chooser, const sfs_map_t *map)
{
    sfs_meta_target_t *fresh;

    if (!SFS_ALLOC_ARRAY(fresh, map->target_count)) {
        return -ENOMEM;
    }
    pthread_mutex_lock(&chooser->lock);
    for (uint32_t i = 0; i < map->target_count; i++) {
        const sfs_map_target_t *t    = &map->targets[i];
        sfs_meta_target_t      *f    = &fresh[i];
        uint64_t                mib  = t->free / SFS_MIB ? t->free / SFS_MIB : 1;
        int                     room = t->free >= sfs_meta_chooser_reserve(t->capacity);

        f->id      = t->target_id;
        f->node_id = t->node_id;
        f->host    = sfs_meta_host_index(map, t->node_id);
        f->online  = t->state == SFS_STATE_ONLINE;
        f->full    = !room;
        /* which member of its mirror group serves now: new mirrored files */
        f->mirror_primary = t->mirror_primary;
        f->mirror_state   = t->mirror_state;
        f->draining       = sfs_meta_chooser_is_draining(chooser, t->target_id);
        for (uint32_t j = 0; j < chooser->target_count; j++) {
            if (chooser->targets[j].id == t->target_id) {
                f->current       = chooser->targets[j].current;
                f->first_current = chooser->targets[j].first_current;
            }
        }
        /* weight by free space in MiB; a full, draining or offline target
         * gets none */
        f->weight  = f->online && room && !f->draining ? mib : 0;
        f->suspect = t->state == SFS_STATE_PROBABLY_OFFLINE && room && !f->draining ? mib : 0;
    }
    free(chooser->targets);
    chooser->targets      = fresh;
    chooser->target_count = map->target_count;
    sfs_meta_chooser_check_width(chooser, map);
    pthread_mutex_unlock(&chooser->lock);
    return 0;
}

/* Add `id` to the draining list or take it out (under the lock). */
static int sfs_meta_chooser_list_set(sfs_meta_chooser_t *chooser, uint32_t id, int draining)
{
    uint32_t *grown;

    if (!draining) {
        for (uint32_t i = 0; i < chooser->drain_count; i++) {
            if (chooser->drain_ids[i] == id) {
                chooser->drain_ids[i] = chooser->drain_ids[--chooser->drain_count];
                break;
            }
        }
        return 0;
    }
    if (sfs_meta_chooser_is_draining(chooser, id)) {
        return 0;
    }
    if (chooser->drain_count == SFS_DRAIN_LIST_MAX) {
        return sfs_error_set(-EINVAL, "storage target %u: %u targets are draining already", id,
                             chooser->drain_count);
    }
    grown = realloc(chooser->drain_ids, (chooser->drain_count + 1) * sizeof(*grown));
    if (!grown) {
        return sfs_error_set(-ENOMEM, "storage target %u: out of memory", id);
    }
    chooser->drain_ids                         = grown;
    chooser->drain_ids[chooser->drain_count++] = id;
    return 0;
}

int sfs_meta_chooser_set_draining(sfs_meta_chooser_t *chooser, uint32_t target_id, int draining)
{
    int rc;

    if (target_id == 0) {
        return sfs_error_set(-EINVAL, "storage target 0 does not exist");
    }
    pthread_mutex_lock(&chooser->lock);
    rc = sfs_meta_chooser_list_set(chooser, target_id, draining);
    for (uint32_t i = 0; rc == 0 && i < chooser->target_count; i++) {
        sfs_meta_target_t *t = &chooser->targets[i];

        if (t->id == target_id) {
            t->draining = draining != 0;
            if (t->draining) {
                t->weight  = 0;
                t->suspect = 0;
            }
            /* undraining takes effect with the next map (its free space) */
        }
    }
    pthread_mutex_unlock(&chooser->lock);
    return rc;
}

int sfs_meta_chooser_has_target(sfs_meta_chooser_t *chooser, uint32_t target_id)
{
    int found = 0;

    pthread_mutex_lock(&chooser->lock);
    for (uint32_t i = 0; i < chooser->target_count && !found; i++) {
        found = chooser->targets[i].id == target_id;
    }
    pthread_mutex_unlock(&chooser->lock);
    return found;
}

uint32_t sfs_meta_chooser_draining(sfs_meta_chooser_t *chooser, uint32_t *ids, uint32_t max)
{
    uint32_t n = 0;

    pthread_mutex_lock(&chooser->lock);
    for (uint32_t i = 0; i < chooser->drain_count && n < max; i++) {
        ids[n++] = chooser->drain_ids[i];
    }
    pthread_mutex_unlock(&chooser->lock);
    return n;
}

static uint64_t sfs_meta_weight(const sfs_meta_target_t *t, int last_resort)
{
    return last_resort ? t->suspect : t->weight;
}

/* In the filter (a storage pool's target), or any target without one. */
static int sfs_meta_in_filter(const sfs_meta_filter_t *filter, uint32_t id)
{
    for (uint32_t i = 0; filter && i < filter->count; i++) {
        if (filter->ids[i] == id) {
            return 1;
        }
    }
    return !filter;
}

/* Why the start target `t` cannot take the file, as a negative errno with
 * its message; 0 when it can. */
static int sfs_meta_start_refusal(const sfs_meta_target_t *t, int last_resort)
{
    if (sfs_meta_weight(t, last_resort)) {
        return 0;
    }
    if (t->draining) {
        return sfs_error_set(-EBUSY, "start target %u is draining: it takes no new files", t->id);
    }
    if (t->full && (t->online || t->suspect)) {
        return sfs_error_set(-ENOSPC, "start target %u is full", t->id);
    }
    return sfs_error_set(-EHOSTDOWN, "start target %u is %s", t->id,
                         t->online ? "not usable" : "offline (or missed its heartbeat)");
}

/* Checks under the lock: the start target exists and can take the file,
 * something is usable. Returns the number of usable targets or a negative
 * errno; *last_resort_p is set when only probably-offline targets are. */
static int sfs_meta_choose_check(const sfs_meta_chooser_t *chooser, const sfs_meta_filter_t *filter,
                                 uint32_t start_target, int64_t *total_p, int *last_resort_p)
{
    const sfs_meta_target_t *start  = NULL;
    uint32_t                 online = 0, usable = 0, suspects = 0;
    int                      rc;

    *total_p       = 0;
    *last_resort_p = 0;
    for (uint32_t i = 0; i < chooser->target_count; i++) {
        const sfs_meta_target_t *t = &chooser->targets[i];

        if (t->id == start_target) {
            start = t;
        }
        if (!sfs_meta_in_filter(filter, t->id)) {
            continue;
        }
        online += t->online != 0;
        usable += t->weight != 0;
        suspects += t->suspect != 0;
        *total_p += (int64_t)t->weight;
    }
    if (start_target && !start) {
        return sfs_error_set(
            -EINVAL, "storage target %u does not exist (the cluster has %u target%s)", start_target,
            chooser->target_count, chooser->target_count == 1 ? "" : "s");
    }
    if (start && !sfs_meta_in_filter(filter, start_target)) {
        return sfs_error_set(-EINVAL, "start target %u is not in the file's storage pool",
                             start_target);
    }
    if (usable == 0 && suspects != 0) {
        *last_resort_p = 1;
        for (uint32_t i = 0; i < chooser->target_count; i++) {
            if (sfs_meta_in_filter(filter, chooser->targets[i].id)) {
                *total_p += (int64_t)chooser->targets[i].suspect;
            }
        }
        usable = suspects;
    } else if (online == 0) {
        return sfs_error_set(-EHOSTDOWN, "no storage target is online");
    } else if (usable == 0) {
        return sfs_error_set(-ENOSPC, "every online storage target is full or draining");
    }
    if (start && (rc = sfs_meta_start_refusal(start, *last_resort_p)) != 0) {
        return rc;
    }
    return (int)usable;
}

/* How far `t` is from the targets picked so far: 2 on another host, 1 on
 * another rank of a host already used, 0 on a rank already used. */
static int sfs_meta_distance(const sfs_meta_target_t *t, sfs_meta_target_t *const *picked,
                             uint32_t n)
{
    int distance = 2;

    for (uint32_t j = 0; j < n; j++) {
        if (picked[j]->node_id == t->node_id) {
            return 0;
        }
        if (picked[j]->host == t->host) {
            distance = 1;
        }
    }
    return distance;
}

/* Whether `t` may be one of this file's targets: usable, and in the
 * filter (its storage pool) when there is one. */
static int sfs_meta_candidate(const sfs_meta_target_t *t, int last_resort,
                              const sfs_meta_filter_t *filter)
{
    return sfs_meta_weight(t, last_resort) != 0 && sfs_meta_in_filter(filter, t->id);
}

/* The file's first target among those picked, by smooth weighted
 * round-robin of its own: one-chunk files then land on each target in
 * proportion to its weight even when every file takes every target. The
 * list is rotated so that it starts there (its order, which spreads nodes,
 * is kept). */
static void sfs_meta_rotate(sfs_meta_target_t **picked, uint32_t n, int last_resort,
                            uint32_t *targets)
{
    int64_t  sum   = 0;
    uint32_t first = 0;

    for (uint32_t i = 0; i < n; i++) {
        picked[i]->first_current += (int64_t)sfs_meta_weight(picked[i], last_resort);
        sum += (int64_t)sfs_meta_weight(picked[i], last_resort);
        if (picked[i]->first_current > picked[first]->first_current) {
            first = i;
        }
    }
    picked[first]->first_current -= sum;
    for (uint32_t i = 0; i < n; i++) {
        targets[i] = picked[(i + first) % n]->id;
    }
}

int sfs_meta_choose(void *arg, uint32_t count, uint32_t start_target, uint32_t *targets)
{
    return sfs_meta_choose_in(arg, NULL, count, start_target, targets);
}

int sfs_meta_choose_in(void *arg, const sfs_meta_filter_t *filter, uint32_t count,
                       uint32_t start_target, uint32_t *targets)
{
    sfs_meta_chooser_t *chooser = arg;
    sfs_meta_target_t  *picked[SFS_STRIPE_COUNT_MAX];
    uint32_t            n = 0;
    int64_t             total;
    int                 usable, last_resort;

    pthread_mutex_lock(&chooser->lock);
    usable = sfs_meta_choose_check(chooser, filter, start_target, &total, &last_resort);
    if (usable < 0) {
        pthread_mutex_unlock(&chooser->lock);
        return usable;
    }
    if (count > (uint32_t)usable) {
        count = (uint32_t)usable; /* as many as there are; the caller says so */
    }
    if (count > SFS_STRIPE_COUNT_MAX) {
        count = SFS_STRIPE_COUNT_MAX;
    }
    for (uint32_t i = 0; i < chooser->target_count && start_target && n == 0; i++) {
        if (chooser->targets[i].id == start_target) {
            picked[n++] = &chooser->targets[i]; /* usable: checked above */
        }
    }
    while (n < count) {
        sfs_meta_target_t *best          = NULL;
        int                best_distance = -1;

        for (uint32_t i = 0; i < chooser->target_count; i++) {
            sfs_meta_target_t *t = &chooser->targets[i];
            int                distance, taken = 0;

            if (!sfs_meta_candidate(t, last_resort, filter)) {
                continue;
            }
            t->current += (int64_t)sfs_meta_weight(t, last_resort);
            for (uint32_t j = 0; j < n; j++) {
                taken |= picked[j] == t;
            }
            if (taken) {
                continue;
            }
            /* other nodes first, then the weights */
            distance = sfs_meta_distance(t, picked, n);
            if (!best || distance > best_distance ||
                (distance == best_distance && t->current > best->current)) {
                best          = t;
                best_distance = distance;
            }
        }
        if (!best) {
            break;
        }
        best->current -= total;
        picked[n++] = best;
    }
    if (!start_target && n > 1) {
        sfs_meta_rotate(picked, n, last_resort, targets);
    } else {
        for (uint32_t i = 0; i < n; i++) {
            targets[i] = picked[i]->id;
        }
    }
    pthread_mutex_unlock(&chooser->lock);
    return (int)n;
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

uint32_t sfs_meta_chooser_mirror_primary(sfs_meta_chooser_t *chooser, uint32_t primary)
{
    uint32_t serving = primary;

    pthread_mutex_lock(&chooser->lock);
    for (uint32_t i = 0; i < chooser->target_count; i++) {
        if (chooser->targets[i].id == primary && chooser->targets[i].mirror_primary) {
            serving = chooser->targets[i].mirror_primary;
        }
    }
    for (uint32_t i = 0; i < chooser->target_count; i++) {
        if (chooser->targets[i].id == serving &&
            chooser->targets[i].mirror_state != SFS_MIRROR_STATE_GOOD) {
            serving = 0; /* its copy is not known good: no new file there */
        }
    }
    pthread_mutex_unlock(&chooser->lock);
    return serving;
}
