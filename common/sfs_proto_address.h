/*
 * A peer's transport address, as the cluster map, the bootstrap port and
 * HELLO carry it: where a server's UCX listener takes connections (UCX's
 * client-server connection establishment) and the process's UCX worker
 * address (for peers told to connect by worker address, and for clients,
 * which have no listener).
 *
 * Layout: "SFSA" | u8 version (1) | u8 family (0: no listener, 4: IPv4) |
 * u16 listener port | 4 bytes IPv4 address, network order | u32 length |
 * the UCX worker address. Decoding is strict: anything else, or a byte
 * left over, is refused.
 */
#ifndef SFS_PROTO_ADDRESS_H
#define SFS_PROTO_ADDRESS_H

#include "sfs_buf.h"

#include <stddef.h>
#include <stdint.h>

#define SFS_PEER_ADDRESS_MAGIC   "SFSA"
#define SFS_PEER_ADDRESS_VERSION 1
#define SFS_PEER_ADDRESS_NONE    0 /* family: no listener (a client) */
#define SFS_PEER_ADDRESS_IPV4    4
#define SFS_PEER_ADDRESS_HEAD    16 /* bytes before the worker address */
#define SFS_PEER_ADDRESS_IPV4_AT 8  /* where the IPv4 address is (rewritten in place) */

typedef struct sfs_peer_address {
    uint8_t     family;  /* SFS_PEER_ADDRESS_NONE or _IPV4 */
    uint16_t    port;    /* the UCX listener's port (host order) */
    uint8_t     ipv4[4]; /* network order */
    const void *ucx;     /* the UCX worker address (points into the message) */
    size_t      ucx_length;
} sfs_peer_address_t;

/* Appends the encoding of `address` to `wb` (wb->error on overflow). */
void sfs_peer_address_pack(sfs_wbuf_t *wb, const sfs_peer_address_t *address);

/* Decodes `length` bytes; 0, or -EPROTO with sfs_error_set() saying what is
 * wrong ("... from PEER"). `address->ucx` points into `data`. */
int sfs_peer_address_unpack(const void *data, size_t length, const char *peer,
                            sfs_peer_address_t *address);

#endif
