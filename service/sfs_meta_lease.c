/*
 * The migrate lease table (sfs_meta_lease.h).
 */
#include "sfs_meta_lease.h"

#include "sfs_alloc.h"
#include "sfs_errno.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

/* One lease: a target and its holder. */
typedef struct sfs_meta_lease {
    uint32_t target;
    uint32_t uid;
    uint32_t pid;
    uint64_t token;
    uint64_t until_ms; /* sfs_time_ms() */
    char     host[64];
} sfs_meta_lease_t;

struct sfs_meta_leases {
    pthread_mutex_t   lock;
    sfs_meta_lease_t *leases;
    uint32_t          count;
    uint32_t          capacity;
};

int sfs_meta_leases_create(sfs_meta_leases_t **leases_p)
{
    sfs_meta_leases_t *leases;

    if (!SFS_ALLOC_PTR(leases)) {
        return -ENOMEM;
    }
    pthread_mutex_init(&leases->lock, NULL);
    *leases_p = leases;
    return 0;
}

void sfs_meta_leases_destroy(sfs_meta_leases_t *leases)
{
    if (!leases) {
        return;
    }
    pthread_mutex_destroy(&leases->lock);
    free(leases->leases);
    free(leases);
}

/* Drop leases that ran out, and with `release`, the holder's of `req`'s
 * targets (under the lock). */
static void sfs_meta_leases_prune(sfs_meta_leases_t *leases, const sfs_migrate_lease_req_t *req,
                                  int release, uint64_t now_ms)
{
    uint32_t kept = 0;

    for (uint32_t i = 0; i < leases->count; i++) {
        sfs_meta_lease_t *l    = &leases->leases[i];
        int               drop = l->until_ms <= now_ms;

        for (uint32_t t = 0; release && !drop && t < req->count; t++) {
            drop = l->token == req->token && l->target == req->targets[t];
        }
        if (!drop) {
            leases->leases[kept++] = *l;
        }
    }
    leases->count = kept;
}

static sfs_meta_lease_t *sfs_meta_lease_find(sfs_meta_leases_t *leases, uint32_t target)
{
    for (uint32_t i = 0; i < leases->count; i++) {
        if (leases->leases[i].target == target) {
            return &leases->leases[i];
        }
    }
    return NULL;
}

static int sfs_meta_leases_take(sfs_meta_leases_t *leases, const sfs_migrate_lease_req_t *req,
                                uint32_t uid, const char *host, uint64_t now_ms)
{
    for (uint32_t t = 0; t < req->count; t++) {
        const sfs_meta_lease_t *l = sfs_meta_lease_find(leases, req->targets[t]);

        if (l && l->token != req->token) {
            return sfs_error_set(-EBUSY,
                                 "storage target %u: another migrate runs on it (uid %u, pid %u "
                                 "on %s; its lease runs out in %" PRIu64 " s if it died)",
                                 l->target, l->uid, l->pid, l->host,
                                 (l->until_ms - now_ms + 999) / 1000);
        }
    }
    for (uint32_t t = 0; t < req->count; t++) {
        sfs_meta_lease_t *l = sfs_meta_lease_find(leases, req->targets[t]);

        if (!l) {
            if (leases->count == leases->capacity) {
                uint32_t          capacity = leases->capacity ? 2 * leases->capacity : 16;
                sfs_meta_lease_t *grown    = realloc(leases->leases, capacity * sizeof(*grown));

                if (!grown) {
                    return sfs_error_set(-ENOMEM, "storage target %u: out of memory",
                                         req->targets[t]);
                }
                leases->leases   = grown;
                leases->capacity = capacity;
            }
            l         = &leases->leases[leases->count++];
            l->target = req->targets[t];
            l->token  = req->token;
        }
        l->uid      = uid;
        l->pid      = req->pid;
        l->until_ms = now_ms + (uint64_t)req->lease_s * 1000u;
        snprintf(l->host, sizeof(l->host), "%s", host && host[0] ? host : "?");
    }
    return 0;
}

int sfs_meta_leases_apply(sfs_meta_leases_t *leases, const sfs_migrate_lease_req_t *req,
                          uint32_t uid, const char *host, uint64_t now_ms)
{
    int rc = 0;

    pthread_mutex_lock(&leases->lock);
    sfs_meta_leases_prune(leases, req, req->op == SFS_LEASE_RELEASE, now_ms);
    if (req->op == SFS_LEASE_TAKE) {
        rc = sfs_meta_leases_take(leases, req, uid, host, now_ms);
    }
    pthread_mutex_unlock(&leases->lock);
    return rc;
}
