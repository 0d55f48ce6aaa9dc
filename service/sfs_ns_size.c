/*
 * The kept size of files (dynamic attributes, docs/metadata.md): writing
 * opens register before their first write or truncate and end at close,
 * and the size is kept once a stat has read it from the targets with no
 * writer registered. A registration counts until its lease runs out, so a
 * writer that crashed stops counting after the life of its write
 * capability: no write is possible after that without a new BEGIN. A
 * writer that was the only one since the size was known closes with the
 * size it knows, which is kept at once.
 */
#define SFS_LOG_FAC "meta"
#include "sfs_meta_store_internal.h"
#include "sfs_meta_quota.h"
#include "sfs_perm.h"

#include "sfs_errno.h"

#include <string.h>

static int sfs_ns_size_writers_live(const sfs_attr_t *attr, uint64_t now_ns)
{
    return attr->writers > 0 && now_ns / 1000000000u < attr->write_until_s;
}

int sfs_ns_size_valid(const sfs_attr_t *attr, uint64_t now_ns)
{
    return attr->type != SFS_TYPE_FILE ||
           ((attr->size_flags & SFS_SIZE_KNOWN) && !sfs_ns_size_writers_live(attr, now_ns));
}

/* A file removed while open for writing: its chunk files stay until its
 * writers' registrations end (sfs_ns_pending_deletes), so the pending
 * deletion's record counts them: an END or a RENEW of a live registration
 * updates it, anything else is ENOENT (a new writer cannot register). */
static int sfs_ns_size_removed(sfs_meta_txn_t *txn, const sfs_size_req_t *req, uint64_t now_ns,
                               uint64_t lease_s, sfs_attr_t *attr, sfs_size_reply_t *reply)
{
    if ((req->op != SFS_SIZE_OP_END && req->op != SFS_SIZE_OP_RENEW) ||
        !sfs_ns_size_writers_live(attr, now_ns)) {
        return sfs_error_set(-ENOENT, "file %016lx was removed", (unsigned long)req->entry_id);
    }
    if (req->op == SFS_SIZE_OP_END) {
        attr->writers--;
    } else if (attr->write_until_s < now_ns / 1000000000u + lease_s) {
        attr->write_until_s = now_ns / 1000000000u + lease_s;
    }
    reply->writers = attr->writers;
    return sfs_meta_queue_delete(txn, attr);
}

int sfs_ns_size(sfs_meta_txn_t *txn, const sfs_cred_t *cred, const sfs_size_req_t *req,
                uint64_t now_ns, uint64_t lease_s, sfs_attr_t *attr, sfs_size_reply_t *reply)
{
    const uint32_t epoch = SFS_SIZE_BASE | SFS_SIZE_SHARED;
    uint64_t       until = now_ns / 1000000000u + lease_s;
    int            rc    = sfs_meta_find_inode(txn, req->entry_id, attr);

    memset(reply, 0, sizeof(*reply));
    if (rc == -ENOENT) {
        rc = sfs_meta_find_unlinked(txn, req->entry_id, attr);
        if (rc == 0) {
            return sfs_ns_size_removed(txn, req, now_ns, lease_s, attr, reply);
        }
        return rc == -ENOENT
                   ? sfs_error_set(-ENOENT, "file %016lx was removed", (unsigned long)req->entry_id)
                   : rc;
    }
    if (rc) {
        return rc;
    }
    if (attr->type != SFS_TYPE_FILE) {
        return sfs_error_set(-EISDIR, "entry %016lx is a directory", (unsigned long)attr->entry_id);
    }
    if (!sfs_ns_size_writers_live(attr, now_ns)) {
        /* what is left crashed: its lease is over, and so is its epoch */
        attr->writers = 0;
        attr->size_flags &= ~epoch;
    }
    switch (req->op) {
    case SFS_SIZE_OP_BEGIN:
    case SFS_SIZE_OP_RENEW:
        if (attr->writers == 0) {
            /* the first writer: it knows the size from here on if we do
             * (a RENEW after its lease ran out does not: stats kept it) */
            attr->size_flags &= ~epoch;
            if (req->op == SFS_SIZE_OP_BEGIN && (attr->size_flags & SFS_SIZE_KNOWN)) {
                attr->size_flags |= SFS_SIZE_BASE;
                reply->base = 1;
                reply->size = attr->size;
            }
        } else if (req->op == SFS_SIZE_OP_BEGIN) {
            attr->size_flags |= SFS_SIZE_SHARED; /* no one writer knows it all */
        }
        if (req->op == SFS_SIZE_OP_BEGIN || attr->writers == 0) {
            attr->writers++;
            attr->write_gen++;
        }
        /* from now on only the targets know the size */
        attr->size_flags &= ~SFS_SIZE_KNOWN;
        if (attr->write_until_s < until) {
            attr->write_until_s = until;
        }
        break;
    case SFS_SIZE_OP_END:
        if (attr->writers == 1 && (req->flags & SFS_SIZE_VIEW) &&
            (attr->size_flags & epoch) == SFS_SIZE_BASE) {
            /* the only writer since the size was known: its view is it */
            attr->size = req->size;
            attr->size_flags |= SFS_SIZE_KNOWN;
            reply->stored = 1;
        }
        if (attr->writers > 0) {
            attr->writers--;
        }
        if (attr->writers == 0) {
            attr->size_flags &= ~epoch;
        }
        attr->write_gen++; /* a stat's reading from before this close is not kept */
        if (req->flags & SFS_SIZE_MODIFIED) {
            attr->mtime_ns = attr->ctime_ns = now_ns;
        }
        break;
    case SFS_SIZE_OP_STORE:
        if (sfs_perm_check(cred, attr, SFS_MAY_WRITE) != 0 || req->write_gen != attr->write_gen ||
            attr->writers > 0) {
            return 0; /* not kept: the next stat asks the targets again */
        }
        attr->size = req->size;
        attr->size_flags |= SFS_SIZE_KNOWN;
        reply->stored = 1;
        break;
    default:
        return sfs_error_set(-EINVAL, "SIZE: operation %u", req->op);
    }
    reply->writers = attr->writers;
    if (req->op == SFS_SIZE_OP_BEGIN || req->op == SFS_SIZE_OP_RENEW) {
        /* a space quota applies: BEGIN grants a first step (in this same
         * commit), writes past it ask QUOTA_GROW (docs/quotas.md) */
        int limited = 0;

        if (req->op == SFS_SIZE_OP_BEGIN) {
            rc = sfs_meta_quota_grant(txn, attr, attr->size, &reply->granted, &limited);
        } else {
            rc = limited = sfs_meta_quota_limited(txn, attr);
        }
        if (rc < 0) {
            return rc;
        }
        reply->base |= limited ? SFS_SIZE_QUOTA : 0;
    }
    return sfs_meta_put_inode(txn, attr);
}
