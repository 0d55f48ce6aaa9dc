/*
 * A replicated command applied: one of management's state files replaced
 * by the text a command carries (sfs_mgmt_raft.h), checked first with the
 * file's own parser, then written as management writes it itself.
 */
#define SFS_LOG_FAC "mgmt"
#include "sfs_mgmt_internal.h"

#include "sfs_errno.h"
#include "sfs_mgmt_raft_cmd.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* text (NUL-terminated) parses as `kind`'s file for this config */
static int sfs_mgmt_state_check(const sfs_config_t *config, uint32_t kind, const char *text,
                                const char *path)
{
    sfs_mgmt_mirror_t *groups;
    uint32_t           state, rank;
    uint64_t           seq;
    int                rc;

    switch (kind) {
    case SFS_MGMT_RAFT_MIRROR_STATE:
        groups =
            calloc(config->mirror_group_count ? config->mirror_group_count : 1, sizeof(*groups));
        if (!groups) {
            return sfs_error_set(-ENOMEM, "%s: out of memory", path);
        }
        sfs_mgmt_mirror_from_config(config, groups);
        rc = sfs_mgmt_mirror_parse(config, text, path, groups);
        free(groups);
        return rc;
    case SFS_MGMT_RAFT_META_MIRROR_STATE:
        return sfs_mgmt_meta_mirror_parse(text, path, &state, &seq);
    case SFS_MGMT_RAFT_META_PRIMARY:
        return sfs_mgmt_meta_primary_parse(text, path, &rank, &seq);
    default:
        return sfs_error_set(-EINVAL, "management state: unknown kind %u", kind);
    }
}

int sfs_mgmt_state_apply(const sfs_config_t *config, uint32_t kind, const char *text, size_t length)
{
    const char *name = sfs_mgmt_raft_kind_name(kind);
    char        path[PATH_MAX];
    char       *copy;
    int         rc;

    if (!name) {
        return sfs_error_set(-EINVAL, "management state: unknown kind %u", kind);
    }
    rc = sfs_mgmt_state_path(config, name, path, sizeof(path));
    if (rc <= 0) {
        return rc; /* an error, or nothing kept (a config from memory) */
    }
    if (memchr(text, '\0', length)) {
        return sfs_error_set(-EBADMSG, "%s: the new text holds a NUL byte; not written", path);
    }
    copy = malloc(length + 1);
    if (!copy) {
        return sfs_error_set(-ENOMEM, "%s: out of memory", path);
    }
    memcpy(copy, text, length);
    copy[length] = '\0';
    rc           = sfs_mgmt_state_check(config, kind, copy, path);
    if (rc == 0) {
        rc = sfs_mgmt_state_write(path, copy, length);
    }
    free(copy);
    return rc;
}
