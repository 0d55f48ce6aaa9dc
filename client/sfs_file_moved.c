/*
 * A file whose chunk moved to another target (stripefs-ctl migrate,
 * docs/migration.md): its old target answers -ESTALE, and the open fetches
 * the file's pattern again (sfs_client_internal.h).
 */
#define SFS_LOG_FAC "client"
#include "sfs_client_internal.h"

#include "sfs_alloc.h"
#include "sfs_errno.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int sfs_pattern_same(const sfs_pattern_t *a, const sfs_pattern_t *b)
{
    return a->type == b->type && a->stripe_count == b->stripe_count &&
           a->chunk_size == b->chunk_size && a->stripe_count <= SFS_STRIPE_COUNT_MAX &&
           memcmp(a->targets, b->targets, a->stripe_count * sizeof(a->targets[0])) == 0;
}

int sfs_file_adopt_pattern(sfs_file_t *file, const sfs_attr_t *attr)
{
    if (attr->entry_id != file->attr.entry_id ||
        sfs_pattern_same(&attr->pattern, &file->attr.pattern)) {
        return 0;
    }
    sfs_file_local_close(file); /* descriptors of the old chunk files */
    file->attr.pattern         = attr->pattern;
    file->attr.pattern_targets = attr->pattern_targets;
    return 1;
}

/* A target answered -ESTALE: the file's chunk moved (stripefs-ctl migrate,
 * docs/migration.md). Fetch its pattern again (by path, the same entry);
 * 0 when it changed. A chunk being moved (fenced, its commit not yet seen)
 * is waited for, up to 10 s. */
int sfs_file_refetch_pattern(sfs_file_t *file)
{
    sfs_meta_req_t *req;
    sfs_attr_t      attr;
    sfs_cap_t       cap;
    int             rc = -ESTALE;

    if (file->attr.pattern.type == SFS_PATTERN_MIRROR || !SFS_ALLOC_PTR(req)) {
        return -ESTALE;
    }
    snprintf(req->path, sizeof(req->path), "%s", file->path);
    req->flags = ((file->cap.access & SFS_CAP_READ) ? SFS_OPEN_READ : 0) |
                 ((file->cap.access & SFS_CAP_WRITE) ? SFS_OPEN_WRITE : 0);
    for (int wait = 0; wait < 100 && rc == -ESTALE; wait++) {
        if (wait) {
            usleep(100000);
        }
        if (sfs_client_meta_attr(file->client, SFS_OP_LOOKUP, req, &attr, NULL, &cap) != 0 ||
            attr.entry_id != file->attr.entry_id) {
            break; /* gone or replaced: the ESTALE stands */
        }
        if (sfs_file_adopt_pattern(file, &attr)) {
            if (cap.entry_id == attr.entry_id) {
                file->cap = cap;
            }
            rc = 0;
        }
    }
    free(req);
    return rc;
}
