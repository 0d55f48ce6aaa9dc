/*
 * A peer's transport address: encoding and strict decoding (the layout is
 * in sfs_proto_address.h).
 */
#include "sfs_proto_address.h"

#include "sfs_errno.h"
#include "sfs_proto.h"

#include <errno.h>
#include <string.h>

void sfs_peer_address_pack(sfs_wbuf_t *wb, const sfs_peer_address_t *address)
{
    sfs_wbuf_bytes(wb, SFS_PEER_ADDRESS_MAGIC, 4);
    sfs_wbuf_u8(wb, SFS_PEER_ADDRESS_VERSION);
    sfs_wbuf_u8(wb, address->family);
    sfs_wbuf_u16(wb, address->port);
    sfs_wbuf_bytes(wb, address->ipv4, 4);
    sfs_wbuf_blob(wb, address->ucx, address->ucx_length);
}

int sfs_peer_address_unpack(const void *data, size_t length, const char *peer,
                            sfs_peer_address_t *address)
{
    sfs_rbuf_t     rb;
    const uint8_t *magic;
    uint8_t        version;

    memset(address, 0, sizeof(*address));
    sfs_rbuf_init(&rb, data, length);
    magic   = sfs_rbuf_take(&rb, 4);
    version = sfs_rbuf_u8(&rb);
    if (rb.error || memcmp(magic, SFS_PEER_ADDRESS_MAGIC, 4) != 0) {
        return sfs_error_set(-EPROTO,
                             "the transport address from %s is not one (no \"%s\" at its start; "
                             "a server of an older stripefs version?)",
                             peer, SFS_PEER_ADDRESS_MAGIC);
    }
    if (version != SFS_PEER_ADDRESS_VERSION) {
        return sfs_error_set(-EPROTO, "the transport address from %s is of version %u, not %u",
                             peer, version, SFS_PEER_ADDRESS_VERSION);
    }
    address->family = sfs_rbuf_u8(&rb);
    address->port   = sfs_rbuf_u16(&rb);
    sfs_rbuf_bytes(&rb, address->ipv4, 4);
    address->ucx = sfs_rbuf_blob(&rb, &address->ucx_length);
    if (rb.error || sfs_rbuf_remaining(&rb) != 0) {
        return sfs_error_set(-EPROTO, "the transport address from %s is cut short or too long",
                             peer);
    }
    if (address->family != SFS_PEER_ADDRESS_NONE && address->family != SFS_PEER_ADDRESS_IPV4) {
        return sfs_error_set(-EPROTO, "the transport address from %s names address family %u", peer,
                             address->family);
    }
    if ((address->family == SFS_PEER_ADDRESS_IPV4) != (address->port != 0)) {
        return sfs_error_set(-EPROTO,
                             "the transport address from %s has a listener port without an "
                             "address, or an address without a port",
                             peer);
    }
    if (address->ucx_length == 0 || address->ucx_length > SFS_ADDRESS_MAX) {
        return sfs_error_set(-EPROTO,
                             "the transport address from %s holds a UCX address of %zu bytes", peer,
                             address->ucx_length);
    }
    return 0;
}
