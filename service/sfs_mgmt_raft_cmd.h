/*
 * The commands of management's replicated state (docs/management-raft.md):
 * pure encoders and decoders, no I/O, used by sfs_mgmt_raft.c for its log
 * entries and snapshots.
 *
 * A command replaces one of management's state files whole: its kind
 * (mirror-state, meta-mirror-state or meta-primary, sfs_mgmt_state.h) and
 * the file's new text, exactly as the file holds it. Applying commands in
 * log order on every replica leaves each with the same files.
 *
 * Encoding, little endian:
 *
 *     "SFRC"  version (1 byte, 1)  kind (1 byte)  0 (2 bytes)
 *     length of the text (4 bytes)  the text (no NUL; printable ASCII,
 *     tab and newline only)  zeros to a multiple of 8 bytes (libraft's
 *     on-disk log takes entries of whole 8-byte words only)
 *
 * A snapshot is the commands of the kinds held, one after another, each
 * kind at most once. Decoders are strict: anything else is -EBADMSG with a
 * detail (sfs_error_set) naming what is wrong.
 */
#ifndef SFS_MGMT_RAFT_CMD_H
#define SFS_MGMT_RAFT_CMD_H

#include <stddef.h>
#include <stdint.h>

#define SFS_MGMT_RAFT_MIRROR_STATE      1u /* mirror-state */
#define SFS_MGMT_RAFT_META_MIRROR_STATE 2u /* meta-mirror-state */
#define SFS_MGMT_RAFT_META_PRIMARY      3u /* meta-primary */
#define SFS_MGMT_RAFT_KINDS             3u

#define SFS_MGMT_RAFT_CMD_HEADER   12u
#define SFS_MGMT_RAFT_CMD_TEXT_MAX (64u << 10)

/* "mirror-state", "meta-mirror-state", "meta-primary"; NULL for another kind. */
const char *sfs_mgmt_raft_kind_name(uint32_t kind);

/* The encoded length of a command of `length` bytes of text. */
size_t sfs_mgmt_raft_cmd_size(size_t length);
/* Encode into buf (of sfs_mgmt_raft_cmd_size(length) bytes or more): the
 * length written; -EINVAL for an unknown kind, a text too long or with a
 * character the files never hold; -ENOSPC when buf is too small. */
int sfs_mgmt_raft_cmd_encode(uint32_t kind, const char *text, size_t length, void *buf,
                             size_t size);
/* Decode the command at the start of `data`: its kind, its text (pointing
 * into data) and *used_p, the bytes it took. */
int sfs_mgmt_raft_cmd_decode(const void *data, size_t size, uint32_t *kind_p, const char **text_p,
                             size_t *length_p, size_t *used_p);
/* A whole log entry: exactly one command, nothing after it. */
int sfs_mgmt_raft_cmd_decode_one(const void *data, size_t size, uint32_t *kind_p,
                                 const char **text_p, size_t *length_p);

/* A snapshot's commands: texts[k - 1] (of lengths[k - 1] bytes) for each
 * kind k held, NULL for a kind not held. decode fills both arrays (texts
 * point into data); a kind twice is -EBADMSG. */
size_t sfs_mgmt_raft_snapshot_size(const char *const texts[SFS_MGMT_RAFT_KINDS],
                                   const size_t      lengths[SFS_MGMT_RAFT_KINDS]);
int    sfs_mgmt_raft_snapshot_encode(const char *const texts[SFS_MGMT_RAFT_KINDS],
                                     const size_t lengths[SFS_MGMT_RAFT_KINDS], void *buf,
                                     size_t size);
int    sfs_mgmt_raft_snapshot_decode(const void *data, size_t size,
                                     const char *texts[SFS_MGMT_RAFT_KINDS],
                                     size_t      lengths[SFS_MGMT_RAFT_KINDS]);

#endif
