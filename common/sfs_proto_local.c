/*
 * Codecs of the same-host side channels (sfs_proto.h): the direct-copy pid
 * proof and the file-handoff message. Both travel over unix sockets, outside
 * UCX, so their whole message (header and arguments) is checked here.
 */
#include "sfs_proto.h"

#include <errno.h>

void sfs_proto_direct_proof_pack(sfs_wbuf_t *wb, const sfs_direct_proof_t *proof)
{
    sfs_wbuf_u64(wb, proof->now_ms);
}

void sfs_proto_direct_proof_unpack(sfs_rbuf_t *rb, sfs_direct_proof_t *proof)
{
    proof->now_ms = sfs_rbuf_u64(rb);
}

void sfs_proto_fd_handoff_pack(sfs_wbuf_t *wb, const sfs_fd_handoff_t *handoff)
{
    sfs_wbuf_u64(wb, handoff->device);
    sfs_wbuf_u64(wb, handoff->inode);
}

void sfs_proto_fd_handoff_unpack(sfs_rbuf_t *rb, sfs_fd_handoff_t *handoff)
{
    handoff->device = sfs_rbuf_u64(rb);
    handoff->inode  = sfs_rbuf_u64(rb);
}

/* The header of a side-channel message of `length` bytes that must be
 * `size` long with `args` bytes of arguments. */
static int sfs_proto_local_hdr(const uint8_t *msg, size_t length, size_t size, size_t args,
                               sfs_proto_hdr_t *hdr)
{
    if (length != size || sfs_proto_hdr_unpack(msg, SFS_PROTO_HDR_SIZE, 0, hdr) != 0 ||
        hdr->args_length != args || hdr->payload_length != 0) {
        return -EBADMSG;
    }
    return 0;
}

int sfs_proto_direct_proof_msg_unpack(const uint8_t *msg, size_t length, sfs_proto_hdr_t *hdr,
                                      sfs_direct_proof_t *proof)
{
    sfs_rbuf_t rb;

    if (sfs_proto_local_hdr(msg, length, SFS_DIRECT_PROOF_MSG_SIZE, 8, hdr) != 0 ||
        hdr->opcode != SFS_OP_DIRECT || (hdr->flags & SFS_PROTO_FLAG_REPLY)) {
        return -EBADMSG;
    }
    sfs_rbuf_init(&rb, msg + SFS_PROTO_HDR_SIZE, 8);
    sfs_proto_direct_proof_unpack(&rb, proof);
    return rb.error ? -EBADMSG : 0;
}

int sfs_proto_fd_handoff_msg_unpack(const uint8_t *msg, size_t length, sfs_proto_hdr_t *hdr,
                                    sfs_fd_handoff_t *handoff)
{
    sfs_rbuf_t rb;

    if (sfs_proto_local_hdr(msg, length, SFS_FD_HANDOFF_MSG_SIZE, 16, hdr) != 0 ||
        hdr->flags != SFS_PROTO_FLAG_REPLY || hdr->status != 0) {
        return -EBADMSG;
    }
    sfs_rbuf_init(&rb, msg + SFS_PROTO_HDR_SIZE, 16);
    sfs_proto_fd_handoff_unpack(&rb, handoff);
    return rb.error ? -EBADMSG : 0;
}
