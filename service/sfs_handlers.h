/*
 * The servers' request handlers: one function sfs_handle_<handler> for each
 * `handler` named in SFS_PROTO_OPS (common/sfs_proto.h), declared here from
 * that list, so that an operation added without its handler fails to link.
 * One file per family:
 *   sfs_service_handlers.c  ping, net_info, stop (every rank), transport
 *   sfs_mgmt_handlers.c     register, heartbeat, get_map, shutdown
 *   sfs_meta_handlers.c     meta, meta_admin, counter
 *   sfs_meta_lock_rpc.c     lock (LOCK, UNLOCK)
 *   sfs_storage_handlers.c  chunk, chunk_unlink
 *   sfs_mgmt_mirror.c       mirror_list, mirror_report
 *   sfs_mgmt_meta_mirror.c  meta_mirror_state
 *   sfs_meta_promote.c      meta_promote
 *   sfs_mgmt_pool.c         pool_list
 *   sfs_meta_migrate.c      meta_migrate
 *   sfs_meta_drain.c        meta_drain, meta_lease
 *   sfs_chunk_tombstone.c   chunk_moved
 *   sfs_mirror_rebuild.c    mirror_rebuild
 * The dispatcher (sfs_service.c) calls a handler only on a rank that has
 * the operation's role; each handler decodes its request with the
 * operation's codec and replies exactly once.
 */
#ifndef SFS_HANDLERS_H
#define SFS_HANDLERS_H

#include "sfs_service.h"

typedef void sfs_handler_fn(sfs_service_t *service, sfs_tp_request_t *req);

#define SFS_HANDLER_DECLARE(_name, _num, _role, _req, _rep, _handler)                              \
    sfs_handler_fn sfs_handle_##_handler;
SFS_PROTO_OPS(SFS_HANDLER_DECLARE)
#undef SFS_HANDLER_DECLARE

/* Decode a request's arguments with its operation's codec into `out` (of
 * `size` bytes) and check it has no payload unless `payload_ok`; replies
 * -EBADMSG (or -ENAMETOOLONG) naming the operation and returns non-zero
 * when it is malformed. */
int sfs_handler_decode(sfs_tp_request_t *req, void *out, size_t size, int payload_ok);

#endif
