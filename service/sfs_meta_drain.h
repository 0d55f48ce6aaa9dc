/*
 * Draining flags kept in the metadata store, and migrate leases
 * (docs/migration.md).
 *
 * MIGRATE_DRAIN's SET and CLEAR are writes: queued for the metadata thread,
 * which puts or removes the record "drain:" + the target id (big endian) in
 * the counters table in the batch's transaction; after the commit the
 * chooser takes the flag and the reply goes (sfs_meta_reply.c), so a flag
 * answered survives kill -9. At start sfs_meta_drain_load gives the stored
 * flags to the chooser before any request is served. LIST is answered on
 * the progress thread from the chooser's memory.
 *
 * MIGRATE_LEASE: one migrate run per target. Leases live in the metadata
 * server's memory only (a restart forgets them; a run that outlives a
 * restart renews its lease as a new one), on the progress thread; a lease
 * not renewed runs out after its holder's lease_s.
 */
#ifndef SFS_META_DRAIN_H
#define SFS_META_DRAIN_H

#include "sfs_meta_chooser.h"
#include "sfs_meta_store.h"
#include "sfs_proto.h"

#include <stdint.h>

struct sfs_meta;
struct sfs_meta_op;

/* Give the stored draining flags to `chooser` (at start, before the
 * metadata thread runs). Returns 0 or a negative errno with the detail. */
int sfs_meta_drain_load(sfs_meta_store_t *store, sfs_meta_chooser_t *chooser);
/* MIGRATE_DRAIN SET or CLEAR of op->migrate.from in `txn` (metadata
 * thread). Returns 0 or a negative errno with sfs_error_set. */
int sfs_meta_drain_run(sfs_meta_txn_t *txn, struct sfs_meta_op *op);
/* After the commit (progress thread): the chooser takes the flag, and
 * `wb` gets the reply (the draining list). Returns 0 or -ENOMEM. */
int sfs_meta_drain_reply(struct sfs_meta *meta, struct sfs_meta_op *op, sfs_wbuf_t *wb);

#endif
