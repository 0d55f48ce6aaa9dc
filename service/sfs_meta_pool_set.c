/*
 * The storage pools in force on the metadata server (sfs_meta_pool.h):
 * the config's pools with the metadata store's pool records applied, and
 * POOL_SET's changes checked against them and written as records
 * (docs/pools.md, "Changing pools while the service runs").
 *
 * A record is kept in the counters table, keyed "pool:" + the pool's id
 * (big endian), valued version (u32), flags (u32: SFS_POOL_REC_DELETED),
 * name (string), target count (u32) and the target ids (u32 each). A
 * deleted pool keeps a record so that a pool of the config stays deleted
 * and its id is never given to another pool (directories keep ids).
 */
#define SFS_LOG_FAC "meta"
#include "sfs_meta_pool.h"

#include "sfs_meta_store_internal.h"

#include "sfs_buf.h"
#include "sfs_errno.h"
#include "sfs_log.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SFS_POOL_KEY_PREFIX  "pool:"
#define SFS_POOL_KEY_SIZE    (sizeof(SFS_POOL_KEY_PREFIX) - 1 + 4)
#define SFS_POOL_REC_VERSION 1u
#define SFS_POOL_REC_DELETED 1u
#define SFS_POOL_REC_MAX     (16 + SFS_POOL_NAME_MAX + 4 * SFS_CONFIG_MAX_TARGETS)
#define SFS_POOL_FROM_STORE  (-1) /* sfs_config_pool_t.line of a pool the store made */

typedef struct sfs_pool_rec {
    uint32_t id;
    uint32_t flags;
    char     name[SFS_POOL_NAME_MAX];
    uint32_t target_count;
    uint32_t targets[SFS_CONFIG_MAX_TARGETS];
} sfs_pool_rec_t;

static int sfs_pools_check_mirrors(const sfs_meta_pools_t *pools, const uint8_t *split_before,
                                   const char *what);

static void sfs_pool_key(uint32_t id, uint8_t *buf, MDB_val *key)
{
    size_t n = sizeof(SFS_POOL_KEY_PREFIX) - 1;

    memcpy(buf, SFS_POOL_KEY_PREFIX, n);
    buf[n]       = (uint8_t)(id >> 24);
    buf[n + 1]   = (uint8_t)(id >> 16);
    buf[n + 2]   = (uint8_t)(id >> 8);
    buf[n + 3]   = (uint8_t)id;
    key->mv_size = SFS_POOL_KEY_SIZE;
    key->mv_data = buf;
}

/* A record's value into rec; -EBADMSG when it does not read. */
static int sfs_pool_rec_unpack(const MDB_val *key, const MDB_val *val, sfs_pool_rec_t *rec)
{
    const uint8_t *k = key->mv_data;
    size_t         n = sizeof(SFS_POOL_KEY_PREFIX) - 1;
    sfs_rbuf_t     rb;

    rec->id = (uint32_t)k[n] << 24 | (uint32_t)k[n + 1] << 16 | (uint32_t)k[n + 2] << 8 | k[n + 3];
    sfs_rbuf_init(&rb, val->mv_data, val->mv_size);
    if (sfs_rbuf_u32(&rb) != SFS_POOL_REC_VERSION) {
        return -EBADMSG;
    }
    rec->flags = sfs_rbuf_u32(&rb);
    sfs_rbuf_str(&rb, rec->name, sizeof(rec->name));
    rec->target_count = sfs_rbuf_u32(&rb);
    if (rb.error || rec->target_count > SFS_CONFIG_MAX_TARGETS) {
        return -EBADMSG;
    }
    for (uint32_t t = 0; t < rec->target_count; t++) {
        rec->targets[t] = sfs_rbuf_u32(&rb);
    }
    return rb.error ? -EBADMSG : 0;
}

static int sfs_pool_rec_put(sfs_meta_txn_t *txn, const sfs_pool_rec_t *rec)
{
    uint8_t    kbuf[SFS_POOL_KEY_SIZE], vbuf[SFS_POOL_REC_MAX];
    MDB_val    key, val;
    sfs_wbuf_t wb;
    int        rc;

    sfs_wbuf_init(&wb, vbuf, sizeof(vbuf));
    sfs_wbuf_u32(&wb, SFS_POOL_REC_VERSION);
    sfs_wbuf_u32(&wb, rec->flags);
    sfs_wbuf_str(&wb, rec->name);
    sfs_wbuf_u32(&wb, rec->target_count);
    for (uint32_t t = 0; t < rec->target_count; t++) {
        sfs_wbuf_u32(&wb, rec->targets[t]);
    }
    if (wb.error) {
        return sfs_error_set(wb.error, "storage pool '%s': its record does not fit", rec->name);
    }
    sfs_pool_key(rec->id, kbuf, &key);
    val.mv_size = wb.length;
    val.mv_data = vbuf;
    rc          = sfs_meta_txn_put(txn, txn->store->counters, &key, &val);
    return rc ? sfs_meta_mdb_error(rc, "writing a storage pool record") : 0;
}

void sfs_meta_pools_cleanup(sfs_meta_pools_t *pools)
{
    for (uint32_t i = 0; i < pools->count; i++) {
        free(pools->pools[i].targets);
    }
    free(pools->pools);
    memset(pools, 0, sizeof(*pools));
}

static int sfs_pools_has_target(const sfs_config_t *config, uint32_t id)
{
    for (uint32_t i = 0; i < config->target_count; i++) {
        if (config->targets[i].id == id) {
            return 1;
        }
    }
    return 0;
}

/* Pool i's targets become ids[0..n) (a copy). */
static int sfs_pools_set_targets(sfs_meta_pools_t *pools, uint32_t i, const uint32_t *ids,
                                 uint32_t n)
{
    uint32_t *copy = calloc(n ? n : 1, sizeof(*copy));

    if (!copy) {
        return sfs_error_set(-ENOMEM, "out of memory for storage pools");
    }
    memcpy(copy, ids, n * sizeof(*copy));
    free(pools->pools[i].targets);
    pools->pools[i].targets      = copy;
    pools->pools[i].target_count = n;
    pools->pools[i].target_alloc = n;
    return 0;
}

static void sfs_pools_drop(sfs_meta_pools_t *pools, uint32_t i)
{
    free(pools->pools[i].targets);
    memmove(&pools->pools[i], &pools->pools[i + 1],
            (pools->count - i - 1) * sizeof(pools->pools[0]));
    pools->count--;
}

static int64_t sfs_pools_index(const sfs_meta_pools_t *pools, uint32_t id, const char *name)
{
    for (uint32_t i = 0; i < pools->count; i++) {
        if (pools->pools[i].id == id || (name && strcmp(pools->pools[i].name, name) == 0)) {
            return i;
        }
    }
    return -1;
}

/* One stored record applied: it replaces the pool of its id (or, if none,
 * of its name), or is added; a deleted one removes the pool of its id. */
static int sfs_pools_apply(sfs_meta_pools_t *pools, const sfs_pool_rec_t *rec)
{
    int64_t i = sfs_pools_index(pools, rec->id, NULL);

    if (i < 0 && !(rec->flags & SFS_POOL_REC_DELETED)) {
        i = sfs_pools_index(pools, UINT32_MAX, rec->name);
    }
    if (rec->flags & SFS_POOL_REC_DELETED) {
        if (i >= 0) {
            sfs_pools_drop(pools, (uint32_t)i);
        }
        return 0;
    }
    if (i < 0) {
        if (pools->count == SFS_CONFIG_MAX_POOLS + 1) {
            return sfs_error_set(-ENOSPC, "storage pool '%s': more than %d pools", rec->name,
                                 SFS_CONFIG_MAX_POOLS);
        }
        i = pools->count++;
        memset(&pools->pools[i], 0, sizeof(pools->pools[i]));
    }
    pools->pools[i].id   = rec->id;
    pools->pools[i].line = SFS_POOL_FROM_STORE;
    snprintf(pools->pools[i].name, sizeof(pools->pools[i].name), "%s", rec->name);
    return sfs_pools_set_targets(pools, (uint32_t)i, rec->targets, rec->target_count);
}

/* The order in which pools keep their targets: the store's before the
 * config's, each in the table's order. */
static uint32_t sfs_pools_rank(const sfs_meta_pools_t *pools, uint32_t i)
{
    return (pools->pools[i].line == SFS_POOL_FROM_STORE ? 0 : pools->count) + i;
}

/* Each target in one pool, and in the config: a stored pool's claim wins
 * over a config pool's (the config pool loses the target); unknown
 * targets go. Said when `say`. */
static void sfs_pools_settle(sfs_meta_pools_t *pools, const sfs_config_t *config, int say)
{
    for (uint32_t i = 0; i < pools->count; i++) {
        sfs_config_pool_t *p = &pools->pools[i];

        for (uint32_t t = 0; t < p->target_count;) {
            uint32_t id      = p->targets[t];
            int      known   = sfs_pools_has_target(config, id);
            int64_t  claimed = -1;

            for (uint32_t o = 0; o < pools->count && known && claimed < 0; o++) {
                if (sfs_pools_rank(pools, o) >= sfs_pools_rank(pools, i)) {
                    continue;
                }
                for (uint32_t k = 0; k < pools->pools[o].target_count; k++) {
                    if (pools->pools[o].targets[k] == id) {
                        claimed = o;
                    }
                }
            }
            if (known && claimed < 0) {
                t++;
                continue;
            }
            if (say && !known) {
                sfs_warn("storage pool '%s': target %" PRIu32 " is not in the config's storage "
                         "(%s): left out of the pool",
                         p->name, id, config->path);
            } else if (say) {
                sfs_warn("storage pool '%s' (%s): target %" PRIu32 " is in pool '%s' (%s) too, "
                         "whose claim wins (a target is in one pool; the store's pools win over "
                         "the config's): left out of '%s'",
                         p->name, p->line == SFS_POOL_FROM_STORE ? "store" : "config", id,
                         pools->pools[claimed].name,
                         pools->pools[claimed].line == SFS_POOL_FROM_STORE ? "store" : "config",
                         p->name);
            }
            memmove(&p->targets[t], &p->targets[t + 1],
                    (p->target_count - t - 1) * sizeof(*p->targets));
            p->target_count--;
        }
    }
}

int sfs_meta_pools_load(sfs_meta_pools_t *pools, const sfs_config_t *config, sfs_meta_txn_t *txn,
                        int say)
{
    sfs_meta_pools_t fresh;
    sfs_pool_rec_t  *rec = calloc(1, sizeof(*rec));
    uint8_t          kbuf[SFS_POOL_KEY_SIZE];
    MDB_cursor      *cursor = NULL;
    MDB_val          key, val;
    int              rc = 0, mrc;

    memset(&fresh, 0, sizeof(fresh));
    fresh.view  = *config;
    fresh.pools = calloc(SFS_CONFIG_MAX_POOLS + 1, sizeof(*fresh.pools));
    if (!rec || !fresh.pools) {
        free(rec);
        free(fresh.pools);
        return sfs_error_set(-ENOMEM, "out of memory for storage pools");
    }
    fresh.max_id = SFS_POOL_DEFAULT;
    for (uint32_t i = 0; i < config->pool_count && rc == 0; i++) {
        fresh.pools[i]         = config->pools[i];
        fresh.pools[i].targets = NULL;
        fresh.count++;
        rc           = sfs_pools_set_targets(&fresh, i, config->pools[i].targets,
                                             config->pools[i].target_count);
        fresh.max_id = config->pools[i].id > fresh.max_id ? config->pools[i].id : fresh.max_id;
    }
    mrc = rc ? 0 : mdb_cursor_open(txn->txn, txn->store->counters, &cursor);
    if (mrc) {
        rc = sfs_meta_mdb_error(mrc, "listing storage pool records");
    }
    sfs_pool_key(0, kbuf, &key);
    for (mrc = rc ? MDB_NOTFOUND : mdb_cursor_get(cursor, &key, &val, MDB_SET_RANGE); mrc == 0;
         mrc = mdb_cursor_get(cursor, &key, &val, MDB_NEXT)) {
        if (key.mv_size != SFS_POOL_KEY_SIZE ||
            memcmp(key.mv_data, SFS_POOL_KEY_PREFIX, sizeof(SFS_POOL_KEY_PREFIX) - 1) != 0) {
            break;
        }
        if (sfs_pool_rec_unpack(&key, &val, rec) != 0) {
            if (say) {
                sfs_warn("a storage pool record (id %" PRIu32 ") does not read: ignored", rec->id);
            }
            continue;
        }
        fresh.max_id = rec->id > fresh.max_id ? rec->id : fresh.max_id;
        rc           = sfs_pools_apply(&fresh, rec);
        if (rc) {
            break;
        }
    }
    if (rc == 0 && mrc != 0 && mrc != MDB_NOTFOUND) {
        rc = sfs_meta_mdb_error(mrc, "listing storage pool records");
    }
    if (cursor) {
        mdb_cursor_close(cursor);
    }
    free(rec);
    if (rc) {
        sfs_meta_pools_cleanup(&fresh);
        return rc;
    }
    sfs_pools_settle(&fresh, config, say);
    fresh.view.pools      = fresh.pools;
    fresh.view.pool_count = fresh.count;
    if (say && sfs_pools_check_mirrors(&fresh, NULL, "the config's and the store's pools") != 0) {
        sfs_warn("%s: fix the pools (stripefs-ctl pool add|remove) or the config",
                 sfs_error_detail());
    }
    sfs_meta_pools_cleanup(pools);
    *pools = fresh;
    return 0;
}

/* "101, 201" (or "none") into buf. */
static const char *sfs_pools_ids(const uint32_t *ids, uint32_t n, char *buf, size_t size)
{
    size_t used = 0;

    snprintf(buf, size, "none");
    for (uint32_t i = 0; i < n && used + 16 < size; i++) {
        used += (size_t)snprintf(buf + used, size - used, "%s%" PRIu32, i ? ", " : "", ids[i]);
    }
    return buf;
}

/* A name a pool may have: -EINVAL naming the problem. */
static int sfs_pools_check_name(const char *name)
{
    if (name[0] == '\0') {
        return sfs_error_set(-EINVAL, "a storage pool needs a name");
    }
    if (strlen(name) >= SFS_POOL_NAME_MAX) {
        return sfs_error_set(-EINVAL, "'%.80s' is not a storage pool name: at most %d bytes", name,
                             SFS_POOL_NAME_MAX - 1);
    }
    for (const char *p = name; *p; p++) {
        if (!isalnum((unsigned char)*p) && *p != '-' && *p != '.' && *p != '_') {
            return sfs_error_set(-EINVAL,
                                 "'%s' is not a storage pool name: use letters, digits, '-', '.' "
                                 "and '_' only",
                                 name);
        }
    }
    if (strcmp(name, "default") == 0 || strcmp(name, "none") == 0) {
        return sfs_error_set(-EINVAL,
                             "'%s' is a reserved pool name (`default` is the targets in no "
                             "named pool and cannot be changed; `none` is a directory without "
                             "a pool)",
                             name);
    }
    return 0;
}

/* The request's targets: known to the config, each once. */
static int sfs_pools_check_targets(const sfs_config_t *config, const sfs_pool_set_req_t *req)
{
    for (uint32_t t = 0; t < req->target_count; t++) {
        if (!sfs_pools_has_target(config, req->targets[t])) {
            return sfs_error_set(-EINVAL,
                                 "storage pool '%s': target %" PRIu32 " is not a storage target "
                                 "of the cluster (config %s)",
                                 req->name, req->targets[t], config->path);
        }
        for (uint32_t k = 0; k < t; k++) {
            if (req->targets[k] == req->targets[t]) {
                return sfs_error_set(-EINVAL, "storage pool '%s': target %" PRIu32 " named twice",
                                     req->name, req->targets[t]);
            }
        }
    }
    if (req->target_count == 0 && req->op != SFS_POOL_SET_CREATE &&
        req->op != SFS_POOL_SET_DELETE) {
        return sfs_error_set(-EINVAL, "storage pool '%s': %s which targets? name at least one",
                             req->name, sfs_pool_set_op_name(req->op));
    }
    return 0;
}

/* The change applied to pool i of `pools` (the caller's copy). */
static int sfs_pools_edit(sfs_meta_pools_t *pools, uint32_t i, const sfs_pool_set_req_t *req)
{
    sfs_config_pool_t *p = &pools->pools[i];
    uint32_t           ids[SFS_CONFIG_MAX_TARGETS + SFS_POOL_SET_TARGETS_MAX];
    uint32_t           n = 0;
    char               list[256];

    for (uint32_t t = 0; t < req->target_count; t++) {
        uint32_t owner = sfs_config_pool_of(&pools->view, req->targets[t]);

        if (req->op == SFS_POOL_SET_REMOVE && owner != p->id) {
            return sfs_error_set(-EINVAL,
                                 "target %" PRIu32 " is not in storage pool '%s' (its targets: "
                                 "%s)",
                                 req->targets[t], p->name,
                                 sfs_pools_ids(p->targets, p->target_count, list, sizeof(list)));
        }
        if (req->op != SFS_POOL_SET_REMOVE && owner != SFS_POOL_DEFAULT) {
            return sfs_error_set(owner == p->id ? -EEXIST : -EBUSY,
                                 "target %" PRIu32 " is in storage pool '%s' already%s",
                                 req->targets[t], sfs_config_pool_name(&pools->view, owner),
                                 owner == p->id ? ""
                                                : ": a target is in one pool at a time (remove it "
                                                  "from that pool first)");
        }
    }
    for (uint32_t t = 0; t < p->target_count; t++) {
        int gone = 0;

        for (uint32_t k = 0; k < req->target_count && req->op == SFS_POOL_SET_REMOVE; k++) {
            gone |= req->targets[k] == p->targets[t];
        }
        if (!gone) {
            ids[n++] = p->targets[t];
        }
    }
    for (uint32_t k = 0; k < req->target_count && req->op != SFS_POOL_SET_REMOVE; k++) {
        ids[n++] = req->targets[k];
    }
    return sfs_pools_set_targets(pools, i, ids, n);
}

/* Whether mirror group g's members are in two pools. */
static int sfs_pools_split(const sfs_meta_pools_t *pools, uint32_t g)
{
    const sfs_config_mirror_group_t *group = &pools->view.mirror_groups[g];

    return sfs_config_pool_of(&pools->view, group->primary) !=
           sfs_config_pool_of(&pools->view, group->secondary);
}

/* Both members of every mirror group in one pool, as the config's rule;
 * a group split before the change (split_before[g], when not NULL; a
 * config and store that disagree) does not stop a change that leaves it.
 * `what` starts the message ("... put mirror group 1's targets ..."). */
static int sfs_pools_check_mirrors(const sfs_meta_pools_t *pools, const uint8_t *split_before,
                                   const char *what)
{
    const sfs_config_t *view = &pools->view;

    for (uint32_t g = 0; g < view->mirror_group_count; g++) {
        const sfs_config_mirror_group_t *group = &view->mirror_groups[g];
        uint32_t                         a     = sfs_config_pool_of(view, group->primary);
        uint32_t                         b     = sfs_config_pool_of(view, group->secondary);

        if (a != b && !(split_before && split_before[g])) {
            return sfs_error_set(-EINVAL,
                                 "%s put mirror group %" PRIu32 "'s targets %" PRIu32
                                 " (pool %s) and %" PRIu32
                                 " (pool %s) in different pools: both members of a mirror group "
                                 "must be in one pool (change both at once)",
                                 what, group->id, group->primary, sfs_config_pool_name(view, a),
                                 group->secondary, sfs_config_pool_name(view, b));
        }
    }
    return 0;
}

int sfs_meta_pools_change(sfs_meta_txn_t *txn, const sfs_config_t *config,
                          const sfs_pool_set_req_t *req, uint32_t *id_p)
{
    sfs_meta_pools_t pools;
    sfs_pool_rec_t  *rec   = NULL;
    uint8_t         *split = NULL;
    int64_t          i;
    int              rc;

    memset(&pools, 0, sizeof(pools));
    if (strcmp(req->name, "default") == 0 && req->op != SFS_POOL_SET_CREATE) {
        return sfs_error_set(-EINVAL, "storage pool 'default' cannot be changed: it is the targets "
                                      "in no named pool (add them to a named pool, or remove "
                                      "them from one)");
    }
    rc = sfs_pools_check_name(req->name);
    if (rc == 0) {
        rc = sfs_pools_check_targets(config, req);
    }
    if (rc == 0) {
        rc = sfs_meta_pools_load(&pools, config, txn, 0);
    }
    if (rc) {
        return rc;
    }
    i = sfs_pools_index(&pools, UINT32_MAX, req->name);
    if (req->op == SFS_POOL_SET_CREATE && i >= 0) {
        rc = sfs_error_set(-EEXIST, "storage pool '%s' exists already (id %" PRIu32 ")", req->name,
                           pools.pools[i].id);
    } else if (req->op == SFS_POOL_SET_CREATE &&
               (pools.count >= SFS_CONFIG_MAX_POOLS || pools.max_id >= SFS_CONFIG_MAX_POOL_ID)) {
        rc = sfs_error_set(-ENOSPC, "storage pool '%s': no room for another pool (at most %d)",
                           req->name, SFS_CONFIG_MAX_POOLS);
    } else if (req->op != SFS_POOL_SET_CREATE && i < 0) {
        rc = sfs_error_set(-ENOENT, "no storage pool '%s' (stripefs-ctl pool list)", req->name);
    } else if (req->op == SFS_POOL_SET_DELETE && pools.pools[i].target_count) {
        char list[256];

        rc = sfs_error_set(
            -ENOTEMPTY,
            "storage pool '%s' still has targets (%s): remove them first "
            "(stripefs-ctl pool remove)",
            req->name,
            sfs_pools_ids(pools.pools[i].targets, pools.pools[i].target_count, list, sizeof(list)));
    }
    if (rc == 0 && req->op == SFS_POOL_SET_CREATE) {
        i = pools.count++;
        memset(&pools.pools[i], 0, sizeof(pools.pools[i]));
        pools.pools[i].id   = pools.max_id + 1;
        pools.pools[i].line = SFS_POOL_FROM_STORE;
        snprintf(pools.pools[i].name, sizeof(pools.pools[i].name), "%s", req->name);
        pools.view.pool_count = pools.count;
    }
    if (rc == 0 && !(split = calloc(config->mirror_group_count + 1, 1))) {
        rc = sfs_error_set(-ENOMEM, "out of memory for storage pools");
    }
    for (uint32_t g = 0; rc == 0 && g < config->mirror_group_count; g++) {
        split[g] = (uint8_t)sfs_pools_split(&pools, g);
    }
    if (rc == 0 && req->op != SFS_POOL_SET_DELETE) {
        rc = sfs_pools_edit(&pools, (uint32_t)i, req);
    }
    if (rc == 0) {
        char what[SFS_POOL_NAME_MAX + 48];

        snprintf(what, sizeof(what), "storage pool '%s': the change would", req->name);
        rc = sfs_pools_check_mirrors(&pools, split, what);
    }
    if (rc == 0 && !(rec = calloc(1, sizeof(*rec)))) {
        rc = sfs_error_set(-ENOMEM, "out of memory for storage pools");
    }
    if (rc == 0) {
        const sfs_config_pool_t *p = &pools.pools[i];

        rec->id           = p->id;
        rec->flags        = req->op == SFS_POOL_SET_DELETE ? SFS_POOL_REC_DELETED : 0;
        rec->target_count = req->op == SFS_POOL_SET_DELETE ? 0 : p->target_count;
        snprintf(rec->name, sizeof(rec->name), "%s", p->name);
        memcpy(rec->targets, p->targets, rec->target_count * sizeof(*rec->targets));
        rc = sfs_pool_rec_put(txn, rec);
        if (rc == 0 && id_p) {
            *id_p = p->id;
        }
    }
    free(split);
    free(rec);
    sfs_meta_pools_cleanup(&pools);
    return rc;
}

/* Pool `id`'s targets (the config's targets in it) appended to the list. */
static void sfs_pools_list_add(const sfs_config_t *view, uint32_t id, sfs_pool_list_reply_t *reply)
{
    sfs_pool_info_t *pool = &reply->pools[reply->count++];
    const char      *name = sfs_config_pool_name(view, id);

    pool->id           = id;
    pool->first        = reply->target_total;
    pool->target_count = 0;
    snprintf(pool->name, sizeof(pool->name), "%s", name ? name : "?");
    for (uint32_t i = 0; i < view->target_count && reply->target_total < SFS_POOL_LIST_TARGETS;
         i++) {
        if (sfs_config_pool_of(view, view->targets[i].id) == id) {
            reply->targets[reply->target_total++] = view->targets[i].id;
            pool->target_count++;
        }
    }
}

void sfs_meta_pools_list(const sfs_config_t *view, sfs_pool_list_reply_t *reply)
{
    reply->count        = 0;
    reply->target_total = 0;
    sfs_pools_list_add(view, SFS_POOL_DEFAULT, reply);
    for (uint32_t i = 0; i < view->pool_count && reply->count < SFS_POOL_LIST_MAX; i++) {
        sfs_pools_list_add(view, view->pools[i].id, reply);
    }
}
