/*
 * Rebuild of a mirror member whose disk was lost (docs/mirroring.md,
 * "Rebuild"). Both sides of it:
 *
 * - the member on a new directory (no chunk files and no <dir>/mirror-member
 *   marker when its process starts) asks its buddy (MIRROR_REBUILD with
 *   SFS_MIRROR_REBUILD_PROBE, giving its own count of chunk files) whether
 *   it lost anything; until the buddy answers it writes no marker;
 * - the buddy that holds more chunk files answers "bad": it writes
 *   <dir>/mirror-rebuild (durable), serves alone with its change log (no
 *   forwards), and reports the member `bad`, so it is neither read from nor
 *   promoted; the administrator's `stripefs-ctl mirror rebuild MEMBER`
 *   (MIRROR_REBUILD without the flag) appends "started" to that file and
 *   the copy begins: every chunk file of this target (each noted "copied
 *   ID" in the file), then the change log's entries (what changed
 *   meanwhile) as a resync; the member is then good. A restart with
 *   "started" in the file resumes the copy by itself, after the last id
 *   noted.
 */
#define SFS_LOG_FAC "storage"
#include "sfs_handlers.h"
#include "sfs_service.h"

#include "sfs_mirror_resync_internal.h"
#include "sfs_storage_internal.h"

#include "sfs_dirsync.h"
#include "sfs_errno.h"
#include "sfs_log.h"
#include "sfs_time.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SFS_MIRROR_REBUILD_FILE "mirror-rebuild"
#define SFS_MIRROR_MEMBER_FILE  "mirror-member"
#define SFS_MIRROR_BUDDY_FILE   "mirror-buddy"
#define SFS_PROBE_RETRY_MS      500
/* The probe waits this long after the map first shows the buddy online: a
 * connection is made blocking, and at a service's start the ranks meet in
 * a collective right after they registered, answering nobody meanwhile. */
#define SFS_PROBE_SETTLE_MS 2000

static void sfs_mirror_rebuild_path(const sfs_mirror_resync_t *r, const char *name, char *buf,
                                    size_t size)
{
    snprintf(buf, size, "%s/%s", sfs_chunk_target_dir(r->target), name);
}

/* Append `text` to <dir>/name (made if missing); with `durable`, synced
 * with its name. */
static int sfs_mirror_rebuild_write(sfs_mirror_resync_t *r, const char *name, const char *text,
                                    int durable)
{
    char   path[PATH_MAX + 32];
    size_t len = strlen(text);
    int    fd, rc = 0;

    sfs_mirror_rebuild_path(r, name, path, sizeof(path));
    fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        return sfs_error_set(-errno, "cannot create %s: %m", path);
    }
    if (write(fd, text, len) != (ssize_t)len || (durable && fsync(fd) != 0)) {
        rc = sfs_error_set(errno ? -errno : -EIO, "cannot write %s: %m", path);
    }
    close(fd);
    if (!durable) {
        return rc;
    }
    if (rc == 0 && (rc = sfs_fsync_dir(sfs_chunk_target_dir(r->target))) != 0) {
        rc =
            sfs_error_set(rc, "cannot sync %s: %s", sfs_chunk_target_dir(r->target), strerror(-rc));
    }
    return rc;
}

static int sfs_mirror_rebuild_append(sfs_mirror_resync_t *r, const char *name, const char *text)
{
    return sfs_mirror_rebuild_write(r, name, text, 1);
}

/* The chunk files of this target: every id (into *ids_p, freed by the
 * caller) or just how many. A full walk of the directory, on the progress
 * thread (as the resync's reads). */
static int sfs_mirror_rebuild_list(sfs_mirror_resync_t *r, uint64_t **ids_p, uint32_t *count_p)
{
    uint32_t max = 4096, count = 0;

    for (;;) {
        uint64_t *ids     = malloc(max * sizeof(*ids));
        uint64_t *lengths = malloc(max * sizeof(*lengths));
        int rc = ids && lengths ? sfs_chunk_list(r->target, 0, max, ids, lengths, &count) : -ENOMEM;

        free(lengths);
        if (rc || count < max) {
            if (rc == 0 && ids_p) {
                *ids_p = ids;
            } else {
                free(ids);
            }
            *count_p = count;
            return rc;
        }
        free(ids); /* full: there may be more */
        max *= 4;
    }
}

/* Write <dir>/name as `text` in one step (a temporary file renamed),
 * durably. */
static int sfs_mirror_rebuild_replace(sfs_mirror_resync_t *r, const char *name, const char *text)
{
    char tmp[64], path[PATH_MAX + 32], tpath[PATH_MAX + 32];
    int  rc;

    snprintf(tmp, sizeof(tmp), "%s.tmp", name);
    sfs_mirror_rebuild_path(r, tmp, tpath, sizeof(tpath));
    sfs_mirror_rebuild_path(r, name, path, sizeof(path));
    if (unlink(tpath) != 0 && errno != ENOENT) {
        return sfs_error_set(-errno, "cannot remove %s: %m", tpath);
    }
    rc = sfs_mirror_rebuild_append(r, tmp, text);
    if (rc == 0 && rename(tpath, path) != 0) {
        rc = sfs_error_set(-errno, "cannot rename %s to %s: %m", tpath, path);
    }
    return rc ? rc : sfs_mirror_rebuild_write(r, name, "", 1); /* syncs the directory */
}

/* The disk id in <dir>/name ("... disk HEX"), or 0. */
static uint64_t sfs_mirror_rebuild_read_disk(sfs_mirror_resync_t *r, const char *name)
{
    char               path[PATH_MAX + 32], line[160], *at;
    unsigned long long id = 0;
    FILE              *f;

    sfs_mirror_rebuild_path(r, name, path, sizeof(path));
    f = fopen(path, "r");
    if (!f) {
        return 0;
    }
    if (fgets(line, sizeof(line), f) && (at = strstr(line, " disk ")) != NULL &&
        sscanf(at, " disk %llx", &id) != 1) {
        id = 0;
    }
    fclose(f);
    return id;
}

/* This directory's disk id: made once, when the marker has none. */
static int sfs_mirror_rebuild_disk_id(sfs_mirror_resync_t *r)
{
    char     line[128];
    uint64_t id = sfs_mirror_rebuild_read_disk(r, SFS_MIRROR_MEMBER_FILE);

    if (!id) {
        int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

        if (fd < 0 || read(fd, &id, sizeof(id)) != (ssize_t)sizeof(id)) {
            id = sfs_time_ns() ^ ((uint64_t)getpid() << 32);
        }
        if (fd >= 0) {
            close(fd);
        }
        id |= 1; /* never 0 */
        snprintf(line, sizeof(line),
                 "stripefs mirror member: target %" PRIu32 " disk %016" PRIx64 "\n",
                 sfs_mirror_log_target(r->log), id);
        if (sfs_mirror_rebuild_replace(r, SFS_MIRROR_MEMBER_FILE, line) != 0) {
            return sfs_error_set(-EIO, "target %" PRIu32 ": %s", sfs_mirror_log_target(r->log),
                                 sfs_error_detail());
        }
    }
    r->disk_id = id;
    return 0;
}

int sfs_mirror_rebuild_open(sfs_mirror_resync_t *r)
{
    char  path[PATH_MAX + 32], line[128];
    FILE *f;
    int   rc;

    rc = sfs_mirror_rebuild_disk_id(r);
    if (rc) {
        return rc;
    }
    r->probe = 1; /* every start: the buddy learns which disk this is */
    sfs_mirror_rebuild_path(r, SFS_MIRROR_REBUILD_FILE, path, sizeof(path));
    f = fopen(path, "r");
    if (!f) {
        return errno == ENOENT ? 0 : sfs_error_set(-errno, "cannot read %s: %m", path);
    }
    {
        unsigned target = 0, buddy = 0;

        r->rebuild = SFS_MIRROR_REBUILD_WAITING;
        if (!fgets(line, sizeof(line), f) ||
            sscanf(line, "stripefs mirror rebuild: target %u buddy %u", &target, &buddy) != 2 ||
            target != sfs_mirror_log_target(r->log) || buddy != sfs_mirror_log_buddy(r->log)) {
            fclose(f);
            return sfs_error_set(-EBADMSG, "%s: not the rebuild flag of target %" PRIu32 " (%.60s)",
                                 path, sfs_mirror_log_target(r->log), line);
        }
        while (fgets(line, sizeof(line), f)) {
            unsigned long long id;

            if (strcmp(line, "started\n") == 0) {
                r->rebuild = SFS_MIRROR_REBUILD_STARTED;
            } else if (sscanf(line, "copied %llu", &id) == 1 && id > r->resume_after) {
                /* a torn line is a prefix of the id, a smaller one: safe */
                r->resume_after = id;
            }
        }
        fclose(f);
    }
    /* the log's changes are copied after the full pass (its begin is
     * durable before the flag is written; a crash between leaves it) */
    rc = sfs_mirror_log_begin(r->log);
    if (rc) {
        return rc;
    }
    sfs_warn("target %" PRIu32 ": its buddy %" PRIu32 " lost its disk and is bad (%s)%s",
             sfs_mirror_log_target(r->log), sfs_mirror_log_buddy(r->log), path,
             r->rebuild == SFS_MIRROR_REBUILD_STARTED ? ": its rebuild starts again"
                                                      : ": stripefs-ctl mirror rebuild");
    return 0;
}

int sfs_mirror_resync_rebuild_state(const sfs_mirror_resync_t *r)
{
    return r->rebuild;
}

void sfs_mirror_rebuild_probe_tick(sfs_mirror_resync_t *r, const sfs_map_t *map, uint64_t now)
{
    uint32_t            self = sfs_mirror_log_target(r->log), buddy = sfs_mirror_log_buddy(r->log);
    sfs_chunk_req_t     chunk;
    sfs_length_reply_t  reply = {0};
    sfs_tp_rpc_params_t params;
    sfs_tp_conn_t      *conn;
    sfs_wbuf_t          wb;
    int                 rc;

    if (r->probe_rpc) {
        const void *args;
        size_t      length;

        if (!sfs_tp_rpc_is_done(r->probe_rpc)) {
            return;
        }
        rc = sfs_tp_rpc_status(r->probe_rpc);
        if (rc == 0) {
            args = sfs_tp_rpc_reply_args(r->probe_rpc, &length);
            rc   = sfs_proto_decode(SFS_OP_MIRROR_REBUILD, 1, args, length, &reply, sizeof(reply));
        }
        if (rc) {
            sfs_debug("target %" PRIu32 ": its buddy %" PRIu32 " not asked yet: %s", self, buddy,
                      sfs_tp_rpc_error_detail(r->probe_rpc));
        }
        sfs_tp_rpc_release(r->probe_rpc);
        r->probe_rpc = NULL;
        if (rc) {
            r->probe_next_ms = now + SFS_PROBE_RETRY_MS;
            return;
        }
        r->probe = 0;
        if (reply.length) {
            sfs_warn("target %" PRIu32 ": its buddy %" PRIu32 " knew another disk here and "
                     "holds data: %" PRIu32 " is bad (never read from nor promoted) until "
                     "`stripefs-ctl mirror rebuild %" PRIu32 "` copies it",
                     self, buddy, self, self);
        }
        return; /* the buddy keeps the state */
    }
    if (!r->cluster || !map || !sfs_map_find_target(map, buddy) ||
        sfs_map_find_target(map, buddy)->state != SFS_STATE_ONLINE) {
        return; /* asked only when it is there: the connection would block */
    }
    if (!r->probe_next_ms) {
        r->probe_next_ms = now + SFS_PROBE_SETTLE_MS;
    }
    if (now < r->probe_next_ms) {
        return;
    }
    r->probe_next_ms = now + SFS_PROBE_RETRY_MS;
    memset(&chunk, 0, offsetof(sfs_chunk_req_t, extents));
    memset(&chunk.cap, 0, sizeof(chunk.cap));
    chunk.target_id = buddy;
    chunk.entry_id  = self;
    chunk.flags     = SFS_MIRROR_REBUILD_PROBE;
    chunk.length    = r->disk_id;
    sfs_wbuf_init(&wb, r->probe_args, sizeof(r->probe_args));
    sfs_proto_chunk_req_pack(&wb, SFS_OP_MIRROR_REBUILD, &chunk);
    if (wb.error || sfs_cluster_target_conn(r->cluster, buddy, &conn) != 0) {
        return;
    }
    memset(&params, 0, sizeof(params));
    params.opcode      = SFS_OP_MIRROR_REBUILD;
    params.args        = r->probe_args;
    params.args_length = wb.length;
    if (sfs_tp_rpc_start(conn, &params, &r->probe_rpc) != 0) {
        r->probe_rpc = NULL;
    }
}

int sfs_mirror_resync_probe_answer(sfs_mirror_resync_t *r, uint64_t buddy_disk, int *bad_p)
{
    uint32_t self = sfs_mirror_log_target(r->log), buddy = sfs_mirror_log_buddy(r->log);
    uint64_t known = sfs_mirror_rebuild_read_disk(r, SFS_MIRROR_BUDDY_FILE);
    uint32_t count;
    char     line[128];
    int      rc;

    *bad_p = 0;
    if (known != buddy_disk) {
        /* first contact (a new group, or a version without ids): noted;
         * another disk than before: it lost what it had, if there was any */
        snprintf(line, sizeof(line),
                 "stripefs mirror buddy: target %" PRIu32 " disk %016" PRIx64 "\n", buddy,
                 buddy_disk);
        rc = sfs_mirror_rebuild_replace(r, SFS_MIRROR_BUDDY_FILE, line);
        if (rc) {
            return rc;
        }
    }
    if (r->rebuild) {
        *bad_p = 1; /* still bad, whichever disk it is now */
        return 0;
    }
    if (!known || known == buddy_disk) {
        return 0;
    }
    rc = sfs_mirror_rebuild_list(r, NULL, &count);
    if (rc || count == 0) {
        return rc; /* nothing here to lose */
    }
    /* from now on: served alone, logged, and the member is bad */
    rc = sfs_mirror_log_begin(r->log);
    snprintf(line, sizeof(line), "stripefs mirror rebuild: target %" PRIu32 " buddy %" PRIu32 "\n",
             self, buddy);
    if (rc == 0) {
        rc = sfs_mirror_rebuild_append(r, SFS_MIRROR_REBUILD_FILE, line);
    }
    if (rc) {
        return rc;
    }
    r->rebuild = SFS_MIRROR_REBUILD_WAITING;
    *bad_p     = 1;
    sfs_warn("target %" PRIu32 ": its buddy %" PRIu32 " came back on another disk (%016" PRIx64
             ", was %016" PRIx64 "; %" PRIu32 " chunk files here): %" PRIu32
             " is bad; `stripefs-ctl mirror rebuild %" PRIu32 "` copies everything to it",
             self, buddy, buddy_disk, known, count, buddy, buddy);
    return 0;
}

int sfs_mirror_resync_rebuild_start(sfs_mirror_resync_t *r, const sfs_map_t *map, uint64_t *total_p)
{
    uint32_t self = sfs_mirror_log_target(r->log), buddy = sfs_mirror_log_buddy(r->log);
    const sfs_map_target_t *me = map ? sfs_map_find_target(map, self) : NULL;
    uint64_t               *ids;
    uint32_t                count;
    int                     rc;

    if (r->rebuild == SFS_MIRROR_REBUILD_NONE) {
        return sfs_mirror_log_degraded(r->log)
                   ? sfs_error_set(-EINVAL,
                                   "target %" PRIu32 " needs a resync, not a rebuild (its disk is "
                                   "not new): it runs by itself when %" PRIu32 " is online",
                                   buddy, buddy)
                   : sfs_error_set(-EALREADY, "target %" PRIu32 " is good: nothing to rebuild",
                                   buddy);
    }
    if (r->rebuild == SFS_MIRROR_REBUILD_STARTED) {
        *total_p = r->all_count;
        return 0; /* under way (or to be resumed) */
    }
    if (!me || me->mirror_primary != self || me->mirror_state != SFS_MIRROR_STATE_GOOD ||
        me->state != SFS_STATE_ONLINE) {
        return sfs_error_set(-EINVAL,
                             "target %" PRIu32 " cannot be rebuilt from its buddy %" PRIu32
                             ", which is not a good primary now (%s, %s)",
                             buddy, self, me ? sfs_mirror_state_name(me->mirror_state) : "?",
                             me && me->mirror_primary == self ? "primary" : "not primary");
    }
    rc = sfs_mirror_rebuild_list(r, &ids, &count);
    if (rc) {
        return rc;
    }
    rc = sfs_mirror_rebuild_append(r, SFS_MIRROR_REBUILD_FILE, "started\n");
    if (rc) {
        free(ids);
        return rc;
    }
    free(r->all);
    r->all          = ids;
    r->all_count    = count;
    r->idx          = 0;
    r->resume_after = 0;
    r->rebuild      = SFS_MIRROR_REBUILD_STARTED;
    *total_p        = count;
    return 0;
}

int sfs_mirror_rebuild_tick(sfs_mirror_resync_t *r, const sfs_map_t *map, uint64_t now,
                            int *changed_p)
{
    uint32_t                buddy = sfs_mirror_log_buddy(r->log);
    const sfs_map_target_t *t     = map ? sfs_map_find_target(map, buddy) : NULL;

    if (r->active && !r->full) {
        /* a resync was under way when the buddy turned out to be new */
        if (r->rpc && !sfs_tp_rpc_is_done(r->rpc)) {
            return 0;
        }
        sfs_tp_rpc_release(r->rpc);
        r->rpc = NULL;
        sfs_mirror_log_pass_abandon(r->log);
        r->active  = 0;
        *changed_p = 1;
    }
    if (r->rebuild != SFS_MIRROR_REBUILD_STARTED) {
        return 0;
    }
    if (r->active) {
        return 1;
    }
    if (!t || t->state != SFS_STATE_ONLINE || now < r->next_try_ms) {
        return 0;
    }
    if (!r->all) {
        /* resumed after a restart: after the last chunk file noted as
         * copied (ids are listed in order; one changed since is logged) */
        if (sfs_mirror_rebuild_list(r, &r->all, &r->all_count) != 0) {
            sfs_warn("rebuild of target %" PRIu32 ": %s", buddy, sfs_error_detail());
            r->next_try_ms = now + SFS_RESYNC_BACKOFF;
            return 0;
        }
        r->idx = 0;
        while (r->resume_after && r->idx < r->all_count && r->all[r->idx] <= r->resume_after) {
            r->idx++;
        }
    }
    r->active   = 1;
    r->full     = 1;
    r->end      = r->all_count;
    r->phase    = SFS_RESYNC_START;
    r->files    = r->idx;
    r->bytes    = 0;
    r->start_ms = now;
    sfs_warn("rebuild of target %" PRIu32 " from %" PRIu32 ": %" PRIu32 " of %" PRIu32
             " chunk files to copy",
             buddy, sfs_mirror_log_target(r->log), r->all_count - r->idx, r->all_count);
    *changed_p = 1;
    return 1;
}

void sfs_mirror_rebuild_copied(sfs_mirror_resync_t *r)
{
    char line[48];

    /* not synced: after a crash the rebuild resumes from an earlier line
     * (the copies before it are synced on the buddy, and a chunk file
     * changed since is in the change log, which is) */
    snprintf(line, sizeof(line), "copied %" PRIu64 "\n", r->entry_id);
    if (sfs_mirror_rebuild_write(r, SFS_MIRROR_REBUILD_FILE, line, 0) != 0) {
        sfs_debug("rebuild of target %" PRIu32 ": %s", sfs_mirror_log_buddy(r->log),
                  sfs_error_detail());
    }
}

int sfs_mirror_rebuild_done(sfs_mirror_resync_t *r, uint64_t now)
{
    char     path[PATH_MAX + 32];
    uint32_t buddy = sfs_mirror_log_buddy(r->log);
    int      rc;

    sfs_mirror_rebuild_path(r, SFS_MIRROR_REBUILD_FILE, path, sizeof(path));
    if (unlink(path) != 0 && errno != ENOENT) {
        rc = sfs_error_set(-errno, "cannot remove %s: %m", path);

        return sfs_mirror_resync_abandon(r, rc, sfs_error_detail(), now);
    }
    rc = sfs_fsync_dir(sfs_chunk_target_dir(r->target));
    if (rc) {
        sfs_warn("cannot sync %s: %s", sfs_chunk_target_dir(r->target), strerror(-rc));
    }
    sfs_warn("rebuild of target %" PRIu32 " from %" PRIu32 " done: %" PRIu64
             " chunk files, %" PRIu64
             " bytes in %.2f s (%.0f MB/s); what changed meanwhile follows as a resync",
             buddy, sfs_mirror_log_target(r->log), r->files, r->bytes,
             (double)(now - r->start_ms) / 1000.0,
             now > r->start_ms ? (double)r->bytes / 1e3 / (double)(now - r->start_ms) : 0.0);
    free(r->all);
    r->all          = NULL;
    r->all_count    = 0;
    r->resume_after = 0;
    r->idx = r->end = 0;
    r->rebuild      = SFS_MIRROR_REBUILD_NONE;
    r->full         = 0;
    r->active       = 0;
    r->seen_away    = 1; /* the change log's resync starts at the next tick */
    r->next_try_ms  = 0;
    return 1;
}

void sfs_handle_mirror_rebuild(sfs_service_t *service, sfs_tp_request_t *req)
{
    sfs_tp_session_t    *session = sfs_tp_request_session(req);
    const sfs_cred_t    *cred    = sfs_tp_session_cred(session);
    sfs_chunk_req_t     *chunk   = malloc(sizeof(*chunk));
    sfs_length_reply_t   reply   = {0};
    sfs_mirror_resync_t *r;
    uint8_t              args[32];
    sfs_wbuf_t           wb;
    int                  bad, rc;

    if (!chunk) {
        sfs_tp_request_reply_error(req, -ENOMEM, "out of memory");
        return;
    }
    if (sfs_handler_decode(req, chunk, sizeof(*chunk), 0) != 0) {
        free(chunk);
        return;
    }
    if (!(cred->flags & SFS_CRED_SERVER) &&
        ((chunk->flags & SFS_MIRROR_REBUILD_PROBE) || !sfs_cred_admin(cred))) {
        sfs_warn("refused mirror rebuild of target %" PRIu64 " from uid %u (%s): not an "
                 "administrator",
                 chunk->entry_id, cred->uid, sfs_tp_session_peer_host(session));
        sfs_tp_request_reply_error(req, -EPERM,
                                   "mirror rebuild of target %" PRIu64
                                   ": only an administrator (root on a trusted host) may "
                                   "rebuild a mirror member",
                                   chunk->entry_id);
        free(chunk);
        return;
    }
    r = sfs_storage_mirror_resync_of(service->storage, chunk->target_id);
    if (!r || sfs_mirror_log_buddy(r->log) != chunk->entry_id) {
        sfs_tp_request_reply_error(req, -EINVAL,
                                   "mirror rebuild: target %" PRIu32
                                   " is not served here as the buddy of target %" PRIu64,
                                   chunk->target_id, chunk->entry_id);
        free(chunk);
        return;
    }
    sfs_error_clear();
    if (chunk->flags & SFS_MIRROR_REBUILD_PROBE) {
        rc           = sfs_mirror_resync_probe_answer(r, chunk->length, &bad);
        reply.length = (uint64_t)bad;
    } else {
        rc = sfs_mirror_resync_rebuild_start(r, sfs_cluster_map(service->cluster), &reply.length);
        if (rc == 0) {
            sfs_warn("mirror rebuild of target %" PRIu64 " from %" PRIu32
                     " asked by uid %u: %" PRIu64 " chunk files",
                     chunk->entry_id, chunk->target_id, cred->uid, reply.length);
        }
    }
    free(chunk);
    if (rc) {
        sfs_tp_request_reply_error(req, rc, "%s",
                                   sfs_error_detail()[0] ? sfs_error_detail() : sfs_strerror(rc));
        return;
    }
    sfs_storage_mirror_changed(service->storage); /* management hears the state */
    sfs_wbuf_init(&wb, args, sizeof(args));
    sfs_proto_length_reply_pack(&wb, &reply);
    sfs_tp_request_reply(req, 0, args, wb.length, NULL, 0, NULL, NULL);
}
