/*
 * HELLO's feature bits (docs/protocol.md): what a peer can do, what a
 * server needs of its clients and a client of its servers, and their
 * names. Included by sfs_proto.h; an includer needs only that one.
 */
#ifndef SFS_PROTO_FEATURES_H
#define SFS_PROTO_FEATURES_H

#include <stddef.h>
#include <stdint.h>

/* What a peer can do, announced in HELLO and its reply (`features`) so
 * that neighbouring versions talk during a rolling upgrade: a peer
 * ignores bits it does not know, and refuses a peer that lacks one it
 * requires, saying which. Bits are never renumbered or reused
 * (docs/protocol.md). */
#define SFS_FEATURE_MUNGE_AUTH    (1ull << 0)  /* MUNGE handshakes (SFS_AUTH_METHOD_MUNGE) */
#define SFS_FEATURE_CAPABILITIES  (1ull << 1)  /* storage requests carry capabilities */
#define SFS_FEATURE_FD_HANDOFF    (1ull << 2)  /* CHUNK_OPEN hands chunk files over (fdpass) */
#define SFS_FEATURE_DIRECT_COPY   (1ull << 3)  /* same-host direct copies (sfs_tp_direct.c) */
#define SFS_FEATURE_TYPED_CURSORS (1ull << 4)  /* wire of SFS_PROTO_OPS' codecs: READDIR, */
                                               /* META_LIST cursors, CHUNK_UNLINK ids */
#define SFS_FEATURE_BYTE_LOCKS    (1ull << 5)  /* LOCK/UNLOCK: byte-range locks (atomic mode) */
#define SFS_FEATURE_DYNAMIC_ATTRS (1ull << 6)  /* STAT answers sizes, SIZE registers writers */
#define SFS_FEATURE_MIRROR        (1ull << 7)  /* SFS_CHUNK_MIRRORED, MIRROR_LIST */
#define SFS_FEATURE_REPLY_CACHE   (1ull << 18) /* metadata changes carry op_tag; */
                                               /* a resent one is answered once */
#define SFS_FEATURE_COUNTER_TAGS (1ull << 19)  /* COUNTER carries op_tag: the same */
                                               /* (its reply lost) is answered once */
#define SFS_FEATURE_LOCK_OWNERS (1ull << 20)   /* byte-range locks belong to the client */
                                               /* process, kept while its link is lost */
                                               /* (offline + RPC timeout); LOCK and */
                                               /* UNLOCK sent again are answered once */
/* bit 10: SFS_FEATURE_POOLS, in sfs_proto_pool.h; bit 11: SFS_FEATURE_QUOTAS, in
 * sfs_proto_quota.h; bit 14: SFS_FEATURE_MIGRATE, in sfs_proto_migrate.h; bit 15:
 * SFS_FEATURE_MIGRATE_LEASE, in sfs_proto_migrate.h; bit 16: SFS_FEATURE_BOUNDS, in
 * sfs_proto_bound.h; bit 17: SFS_FEATURE_POOL_SET, in
 * sfs_proto_pool.h. What this version does. */
#define SFS_FEATURES_THIS                                                                          \
    (SFS_FEATURE_MUNGE_AUTH | SFS_FEATURE_CAPABILITIES | SFS_FEATURE_FD_HANDOFF |                  \
     SFS_FEATURE_DIRECT_COPY | SFS_FEATURE_TYPED_CURSORS | SFS_FEATURE_BYTE_LOCKS |                \
     SFS_FEATURE_DYNAMIC_ATTRS | SFS_FEATURE_MIRROR | SFS_FEATURE_POOLS | SFS_FEATURE_QUOTAS |     \
     SFS_FEATURE_MIGRATE | SFS_FEATURE_MIGRATE_LEASE | SFS_FEATURE_BOUNDS | SFS_FEATURE_POOL_SET | \
     SFS_FEATURE_REPLY_CACHE | SFS_FEATURE_COUNTER_TAGS | SFS_FEATURE_LOCK_OWNERS)
/* What a server needs of its clients: without capabilities a client's I/O
 * is refused, an older client's listings would be misread, and one that
 * does not know mirroring would write a mirrored file's primary only. */
#define SFS_FEATURES_REQUIRED_OF_CLIENT                                                            \
    (SFS_FEATURE_CAPABILITIES | SFS_FEATURE_TYPED_CURSORS | SFS_FEATURE_MIRROR)
/* What a client (or a server rank connecting to another) needs of a server. */
#define SFS_FEATURES_REQUIRED_OF_SERVER SFS_FEATURE_TYPED_CURSORS

/* The names of the bits in `features` ("capabilities, direct-copy"; an
 * unknown bit as "bit 42") into buf; returns buf. */
const char *sfs_features_string(uint64_t features, char *buf, size_t size);

#endif
