/*
 * Management's state files as text (sfs_mgmt_state.c): pure parsers and
 * formatters, no I/O. The files themselves (paths, atomic writes, loads)
 * are sfs_mgmt_mirror_store.c's and sfs_mgmt_meta_mirror.c's.
 *
 * mirror-state (docs/mirroring.md, "Management restarts"):
 *
 *     stripefs mirror state 1
 *     group 1 members 101 102 primary 102 states needs-resync good
 *
 * meta-mirror-state (docs/metadata-mirror.md):
 *
 *     stripefs meta mirror state 1
 *     state good batch 21
 *
 * meta-primary (docs/metadata-mirror.md, "Failover"): the metadata mirror's
 * rank was promoted, at the batch management last knew it in step:
 *
 *     stripefs meta primary 1
 *     rank 1 batch 21
 *
 * Parsers are strict: anything but what the formatter writes is -EBADMSG
 * with the detail naming `path` and the line. Formatters: the length
 * written, or -ENOSPC when `size` is too small.
 */
#ifndef SFS_MGMT_STATE_H
#define SFS_MGMT_STATE_H

#include "sfs_config.h"
#include "sfs_proto.h"

#include <stddef.h>
#include <stdint.h>

#define SFS_MGMT_MIRROR_HEADER       "stripefs mirror state 1"
#define SFS_MGMT_META_MIRROR_HEADER  "stripefs meta mirror state 1"
#define SFS_MGMT_META_PRIMARY_HEADER "stripefs meta primary 1"

/* A mirror group as management knows it (sfs_mgmt_mirror.c); [0] is the
 * config's primary, [1] its secondary. */
typedef struct sfs_mgmt_mirror {
    uint32_t member[2];
    uint32_t state[2]; /* SFS_MIRROR_STATE_* */
    uint64_t done[2];  /* a resync's progress, in chunk files */
    uint64_t total[2];
    uint32_t primary; /* the member serving the group now */
} sfs_mgmt_mirror_t;

/* groups[i] (config->mirror_group_count of them) as the config makes them:
 * members in its order, its primary serving, states zero (good). */
void sfs_mgmt_mirror_from_config(const sfs_config_t *config, sfs_mgmt_mirror_t *groups);
/* "good", "needs-resync", "resyncing" or "bad": 0 and the state, or -1. */
int sfs_mgmt_mirror_state_parse(const char *name, uint32_t *state_p);
/* mirror-state: the groups of `config` (in its order) take the file's
 * primary and states; a group the file leaves out keeps what it had. The
 * file's groups and members must be the config's. */
int sfs_mgmt_mirror_parse(const sfs_config_t *config, const char *text, const char *path,
                          sfs_mgmt_mirror_t *groups);
int sfs_mgmt_mirror_format(const sfs_config_t *config, const sfs_mgmt_mirror_t *groups, char *buf,
                           size_t size);
/* meta-mirror-state: a state other than bad, and the batch. */
int sfs_mgmt_meta_mirror_parse(const char *text, const char *path, uint32_t *state_p,
                               uint64_t *seq_p);
int sfs_mgmt_meta_mirror_format(uint32_t state, uint64_t seq, char *buf, size_t size);
/* meta-primary: the promoted rank and the batch. */
int sfs_mgmt_meta_primary_parse(const char *text, const char *path, uint32_t *rank_p,
                                uint64_t *seq_p);
int sfs_mgmt_meta_primary_format(uint32_t rank, uint64_t seq, char *buf, size_t size);

#endif
