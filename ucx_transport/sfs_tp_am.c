/*
 * Active messages: how a message is laid out (arguments in the AM header or
 * leading the data), handing one to UCX and receiving a rendezvous one,
 * sealing a header with its MAC, and counting the messages we drop.
 */
#define SFS_LOG_FAC "ucx"
#include "sfs_tp_internal.h"

#include "sfs_log.h"

#include <string.h>

int sfs_tp_ucs_errno(ucs_status_t status)
{
    switch (status) {
    case UCS_OK:
        return 0;
    case UCS_ERR_NO_MEMORY:
        return -ENOMEM;
    case UCS_ERR_TIMED_OUT:
        return -ETIMEDOUT;
    case UCS_ERR_UNREACHABLE:
        return -EHOSTUNREACH;
    case UCS_ERR_CANCELED:
        return -ECANCELED;
    case UCS_ERR_CONNECTION_RESET:
    case UCS_ERR_ENDPOINT_TIMEOUT:
        return -ECONNRESET;
    case UCS_ERR_INVALID_PARAM:
        return -EINVAL;
    case UCS_ERR_UNSUPPORTED:
        return -EOPNOTSUPP;
    case UCS_ERR_BUSY:
        return -EBUSY;
    default:
        return -EIO;
    }
}

void sfs_tp_note_dropped(sfs_tp_worker_t *worker, const char *why)
{
    uint64_t now = sfs_tp_now_ms();

    worker->dropped_messages++;
    /* one line per second at most: a flood must not flood the log too */
    if (now - worker->last_drop_log_ms >= 1000) {
        worker->last_drop_log_ms = now;
        sfs_warn("dropped a message: %s (%lu dropped so far)", why,
                 (unsigned long)worker->dropped_messages);
    }
}

void sfs_tp_hdr_seal(const sfs_proto_hdr_t *hdr, const sfs_auth_key_t *key, const void *args,
                     size_t args_length, uint8_t packed[SFS_PROTO_HDR_SIZE])
{
    sfs_proto_hdr_pack(hdr, packed);
    if (key) {
        sfs_auth_mac(key, packed, args, args_length, packed + SFS_PROTO_MAC_COVERS);
    } else {
        memset(packed + SFS_PROTO_MAC_COVERS, 0, SFS_PROTO_MAC_SIZE);
    }
}

int sfs_tp_args_in_header(const sfs_tp_worker_t *worker, size_t args_length)
{
    return args_length && SFS_PROTO_HDR_SIZE + args_length <= worker->max_am_header;
}

ucs_status_ptr_t sfs_tp_am_send(ucp_ep_h ep, unsigned am_id, uint32_t flags, const void *head,
                                size_t head_length, const ucp_dt_iov_t *iov, size_t iov_count,
                                ucp_send_nbx_callback_t cb, void *user_data)
{
    ucp_request_param_t param = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                        UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_FLAGS,
        .flags     = flags,
        .cb.send   = cb,
        .user_data = user_data,
    };

    if (iov_count == 1) {
        param.datatype = ucp_dt_make_contig(1);
        return ucp_am_send_nbx(ep, am_id, head, head_length, iov[0].buffer, iov[0].length, &param);
    }
    param.datatype = iov_count ? ucp_dt_make_iov() : ucp_dt_make_contig(1);
    return ucp_am_send_nbx(ep, am_id, head, head_length, iov_count ? (void *)iov : NULL, iov_count,
                           &param);
}

ucs_status_ptr_t sfs_tp_am_recv(sfs_tp_worker_t *worker, void *data, const ucp_dt_iov_t *iov,
                                size_t iov_count, ucp_am_recv_data_nbx_callback_t cb,
                                void *user_data)
{
    ucp_request_param_t param = {
        .op_attr_mask =
            UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_DATATYPE,
        .cb.recv_am = cb,
        .user_data  = user_data,
    };

    if (iov_count == 1) {
        param.datatype = ucp_dt_make_contig(1);
        return ucp_am_recv_data_nbx(worker->ucp_worker, data, iov[0].buffer, iov[0].length, &param);
    }
    param.datatype = ucp_dt_make_iov();
    return ucp_am_recv_data_nbx(worker->ucp_worker, data, (void *)iov, iov_count, &param);
}

int sfs_tp_message_layout(const sfs_proto_hdr_t *hdr, const void *header, size_t header_length,
                          const void *data, size_t length, const uint8_t **args_p)
{
    /* a directly delivered payload is not in the message */
    uint64_t carried = (hdr->flags & SFS_PROTO_FLAG_DELIVERED) ? 0 : hdr->payload_length;

    if (header_length == SFS_PROTO_HDR_SIZE + (size_t)hdr->args_length && hdr->args_length) {
        *args_p = (const uint8_t *)header + SFS_PROTO_HDR_SIZE;
        return length == carried ? 0 : -EPROTO;
    }
    *args_p = data;
    if (header_length != SFS_PROTO_HDR_SIZE) {
        return -EPROTO;
    }
    return (uint64_t)hdr->args_length + carried == length ? 0 : -EPROTO;
}
