/*
 * Capabilities: what a storage target asks for before it serves I/O.
 *
 * The metadata server checks an open against the file's mode and issues a
 * capability naming the entry, the access granted, the uid it was granted to
 * and an expiry, sealed with a key only servers hold (derived from the
 * connauth secret). A storage server serves READ/CHUNK_OPEN only with a
 * capability that grants read, WRITE/TRUNCATE only with one that grants
 * write, and only to a session proven to belong to that uid; so a client
 * cannot bypass the metadata server by talking to a target directly.
 *
 * A write capability with SFS_CAP_BOUNDED (the file's owner or group has a
 * space quota) is served WRITE and TRUNCATE only within a write bound of
 * the metadata server's (sfs_proto_bound.h, sfs_bound_check below).
 *
 * It names the uid rather than one session because an MPI job opens a file
 * on one rank and hands the open file to the others (ROMIO's collective
 * open): each rank has its own sessions, all proven to be the same user.
 */
#ifndef SFS_CAP_H
#define SFS_CAP_H

#include "sfs_auth.h"
#include "sfs_buf.h"
#include "sfs_proto.h"

#include <stdint.h>

#define SFS_CAP_LIFETIME_DEFAULT_S 3600u

/* The key capabilities are sealed with, from the cluster key. */
void sfs_cap_key(const sfs_auth_key_t *cluster_key, sfs_auth_key_t *cap_key);

/* Fill in the MAC of `cap` (its other fields set). */
void sfs_cap_seal(const sfs_auth_key_t *cap_key, sfs_cap_t *cap);

/* Check a capability for an operation on `entry_id` needing `access` by
 * `uid` at `now_s`: 0; -EACCES (forged, another entry or user, too little
 * access, or none: the all-zero capability); -EKEYEXPIRED (expired). The
 * detail says which. */
int sfs_cap_check(const sfs_auth_key_t *cap_key, const sfs_cap_t *cap, uint64_t entry_id,
                  uint32_t access, uint32_t uid, uint64_t now_s);

/* Write bounds (sfs_proto_bound.h): fill in the MAC of `bound`, sealed
 * with the capabilities' key. */
void sfs_bound_seal(const sfs_auth_key_t *cap_key, sfs_bound_t *bound);

/* Check a bound presented with a WRITE or TRUNCATE of `entry_id` by `uid`
 * at `now_s` on target target_ids[0] (target_ids[1], if not 0: the same
 * chunk file's other mirror target, which a failover may have put in its
 * place): 0 and *index_p the target's index in the bound's pattern (the
 * caller turns the end into its chunk file's length with
 * sfs_layout_chunk_length_for_size); -EACCES (forged, malformed, another
 * entry, uid or target); -EKEYEXPIRED (expired). The detail says which. */
int sfs_bound_check(const sfs_auth_key_t *cap_key, const sfs_bound_t *bound, uint64_t entry_id,
                    uint32_t uid, const uint32_t target_ids[2], uint64_t now_s, uint32_t *index_p);

#endif
