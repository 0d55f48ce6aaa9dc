/*
 * Quotas for the project's own tools (stripefs-ctl quota) and the file
 * code: setting and reading per-user and per-group limits and usage
 * (docs/quotas.md), and the writer's grant before a write grows a file
 * past what its owner was charged for. Not part of the public API.
 */
#ifndef SFS_QUOTA_H
#define SFS_QUOTA_H

#include "sfs/sfs_client.h"
#include "sfs_proto.h"

/* QUOTA_SET: the limits `flags` names (SFS_QUOTA_SET_FILES, _SPACE; a
 * limit of 0 removes it) of a user or group (SFS_QUOTA_USER, _GROUP).
 * Administrators only (-EPERM). */
int sfs_quota_set(sfs_client_t *client, uint32_t kind, uint32_t id, uint32_t flags,
                  uint64_t files_limit, uint64_t space_limit);
/* The usage and limits of one user or group (zeros where none). */
int sfs_quota_get(sfs_client_t *client, uint32_t kind, uint32_t id, sfs_quota_entry_t *entry);
/* Records from (kind, id) on: up to `max` into entries, *count_p of them,
 * *eof_p after the last. Administrators only. */
int sfs_quota_list(sfs_client_t *client, uint32_t kind, uint32_t id, uint32_t max,
                   sfs_quota_entry_t *entries, uint32_t *count_p, int *eof_p);

#endif
