/*
 * Every decoder of wire messages, fed arbitrary bytes. The first byte picks
 * the decoder (and for opcode-dependent ones, the opcode); the rest is the
 * message. Decoders must never read out of bounds, and whatever they accept
 * must encode again to the same bytes where the encoding is canonical.
 *
 * A first byte below 0x80 picks one of the decoders by hand (below: 6
 * directory entries, 21 one entry of STAT's listing with attributes, 7 a
 * map and a transport address); from
 * 0x80 on, fuzz_table() goes through the table of operations
 * (sfs_proto_op_info): every request and reply codec of SFS_PROTO_OPS
 * (heartbeat, CHUNK_UNLINK, PING, NET_INFO, ...), then the payloads and
 * same-host messages that are not arguments: NET_INFO's sessions, the
 * direct-copy proof, the file-handoff message.
 */
#include "sfs_buf.h"
#include "sfs_map.h"
#include "sfs_path.h"
#include "sfs_proto.h"
#include "sfs_proto_address.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const uint32_t meta_ops[]  = {SFS_OP_LOOKUP,      SFS_OP_CREATE,     SFS_OP_MKDIR,
                                     SFS_OP_RMDIR,       SFS_OP_UNLINK,     SFS_OP_RENAME,
                                     SFS_OP_READDIR,     SFS_OP_SETPATTERN, SFS_OP_SETATTR,
                                     SFS_OP_META_STATFS, SFS_OP_META_LIST};
static const uint32_t chunk_ops[] = {SFS_OP_WRITE,    SFS_OP_READ,  SFS_OP_CHUNK_STAT,
                                     SFS_OP_TRUNCATE, SFS_OP_FSYNC, SFS_OP_CHUNK_LIST};

/* Re-encode what was decoded and check it matches the input prefix. */
#define ROUND_TRIP(_pack_call, _consumed)                                                          \
    do {                                                                                           \
        uint8_t   *out = malloc(SFS_PROTO_ARGS_MAX * 2);                                           \
        sfs_wbuf_t wb;                                                                             \
        if (out) {                                                                                 \
            sfs_wbuf_init(&wb, out, SFS_PROTO_ARGS_MAX * 2);                                       \
            _pack_call;                                                                            \
            if (!wb.error && (wb.length != (_consumed) || memcmp(out, data, wb.length) != 0)) {    \
                abort();                                                                           \
            }                                                                                      \
            free(out);                                                                             \
        }                                                                                          \
    } while (0)

/* Decode args of `op` through the table; what is accepted encodes again,
 * decodes again, and encodes to the same bytes; canonical codecs (all but
 * HELLO's, whose end may be absent or longer) to the input itself. */
static void fuzz_op(uint32_t op, int reply, const uint8_t *data, size_t length)
{
    const sfs_proto_op_info_t *info = sfs_proto_op_info(op);
    size_t                     size = reply ? info->reply_size : info->request_size;
    void                      *one  = malloc(size);
    void                      *two  = malloc(size);
    uint8_t                   *out1 = malloc(SFS_PROTO_ARGS_MAX * 2);
    uint8_t                   *out2 = malloc(SFS_PROTO_ARGS_MAX * 2);
    sfs_wbuf_t                 wb1, wb2;

    if (!one || !two || !out1 || !out2 ||
        sfs_proto_decode(op, reply, data, length, one, size) != 0) {
        goto out;
    }
    sfs_wbuf_init(&wb1, out1, SFS_PROTO_ARGS_MAX * 2);
    if (sfs_proto_encode(op, reply, one, size, &wb1) != 0) {
        goto out; /* a struct the encoder refuses (a count it caps) */
    }
    if (op != SFS_OP_HELLO && (wb1.length != length || memcmp(out1, data, length) != 0)) {
        abort();
    }
    if (sfs_proto_decode(op, reply, out1, wb1.length, two, size) != 0) {
        abort();
    }
    sfs_wbuf_init(&wb2, out2, SFS_PROTO_ARGS_MAX * 2);
    if (sfs_proto_encode(op, reply, two, size, &wb2) != 0 || wb2.length != wb1.length ||
        memcmp(out1, out2, wb1.length) != 0) {
        abort();
    }
out:
    free(one);
    free(two);
    free(out1);
    free(out2);
}

/* A same-host message: header and arguments; accepted, it encodes again to
 * the same bytes. */
static void fuzz_local(int handoff, const uint8_t *data, size_t length)
{
    sfs_proto_hdr_t    hdr;
    sfs_direct_proof_t proof;
    sfs_fd_handoff_t   file;
    uint8_t            out[SFS_FD_HANDOFF_MSG_SIZE];
    sfs_wbuf_t         wb;
    int                rc;

    rc = handoff ? sfs_proto_fd_handoff_msg_unpack(data, length, &hdr, &file)
                 : sfs_proto_direct_proof_msg_unpack(data, length, &hdr, &proof);
    if (rc != 0) {
        return;
    }
    sfs_proto_hdr_pack(&hdr, out);
    sfs_wbuf_init(&wb, out + SFS_PROTO_HDR_SIZE, sizeof(out) - SFS_PROTO_HDR_SIZE);
    if (handoff) {
        sfs_proto_fd_handoff_pack(&wb, &file);
    } else {
        sfs_proto_direct_proof_pack(&wb, &proof);
    }
    if (wb.error || SFS_PROTO_HDR_SIZE + wb.length != length || memcmp(out, data, length) != 0) {
        abort();
    }
}

/* NET_INFO's payload: sessions, each encoding again to its bytes. */
static void fuzz_sessions(const uint8_t *data, size_t length)
{
    sfs_net_session_t *one = malloc(sizeof(*one));
    uint8_t           *out = malloc(length + 1);
    sfs_rbuf_t         rb;

    sfs_rbuf_init(&rb, data, length);
    while (one && out && !rb.error && sfs_rbuf_remaining(&rb)) {
        size_t     start = rb.offset;
        sfs_wbuf_t wb;

        sfs_proto_net_session_unpack(&rb, one);
        if (!rb.error) {
            sfs_wbuf_init(&wb, out, length);
            sfs_proto_net_session_pack(&wb, one);
            if (wb.error || wb.length != rb.offset - start ||
                memcmp(out, data + start, wb.length) != 0) {
                abort();
            }
        }
    }
    free(one);
    free(out);
}

/* First byte 0x80 | opcode << 1 | reply: that operation's request or reply
 * codec, by the table (stable as operations are added). Opcode 0, which no
 * operation has: NET_INFO's sessions (0x80), the file-handoff message
 * (0x81). DIRECT's request (0x8c) is also tried as a whole proof datagram. */
static void fuzz_table(uint8_t which, const uint8_t *data, size_t length)
{
    uint32_t op    = (which & 0x7f) >> 1;
    int      reply = which & 1;

    if (op == 0) {
        if (reply) {
            fuzz_local(1, data, length);
        } else {
            fuzz_sessions(data, length);
        }
        return;
    }
    if (op == SFS_OP_DIRECT && !reply) {
        fuzz_local(0, data, length);
    }
    if (sfs_proto_op_info(op)) {
        fuzz_op(op, reply, data, length);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *input, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *input, size_t size)
{
    sfs_rbuf_t     rb;
    const uint8_t *data;
    size_t         length;
    uint8_t        which;

    if (size < 1) {
        return 0;
    }
    which  = input[0];
    data   = input + 1;
    length = size - 1;
    if (which & 0x80) {
        fuzz_table(which, data, length);
        return 0;
    }
    sfs_rbuf_init(&rb, data, length);
    switch (which % 15) {
    case 0: {
        sfs_proto_hdr_t hdr;

        if (sfs_proto_hdr_unpack(data, length, 64ull << 20, &hdr) == 0) {
            uint8_t out[SFS_PROTO_HDR_SIZE];

            sfs_proto_hdr_pack(&hdr, out);
            if (memcmp(out, data, SFS_PROTO_HDR_SIZE) != 0) {
                abort();
            }
        }
        break;
    }
    case 1: {
        sfs_meta_req_t *req = malloc(sizeof(*req));
        uint32_t        op  = meta_ops[(which / 12) % (sizeof(meta_ops) / sizeof(meta_ops[0]))];

        if (req) {
            sfs_proto_meta_req_unpack(&rb, op, req);
            if (!rb.error) {
                ROUND_TRIP(sfs_proto_meta_req_pack(&wb, op, req), rb.offset);
                sfs_path_check(req->path);
            }
            free(req);
        }
        break;
    }
    case 2: {
        sfs_chunk_req_t *req = malloc(sizeof(*req));
        uint32_t         op  = chunk_ops[(which / 12) % (sizeof(chunk_ops) / sizeof(chunk_ops[0]))];

        if (req) {
            sfs_proto_chunk_req_unpack(&rb, op, req);
            if (!rb.error) {
                (void)sfs_chunk_req_bytes(req);
                ROUND_TRIP(sfs_proto_chunk_req_pack(&wb, op, req), rb.offset);
            }
            free(req);
        }
        break;
    }
    case 3: {
        sfs_attr_t attr;

        sfs_proto_attr_unpack(&rb, &attr);
        if (!rb.error) {
            ROUND_TRIP(sfs_proto_attr_pack(&wb, &attr), rb.offset);
        }
        break;
    }
    case 4: /* HELLO and its reply: not canonical (features may be absent) */
    case 5:
        fuzz_op(SFS_OP_HELLO, which % 15 == 5, data, length);
        break;
    case 6: {
        sfs_dirent_t dirent;

        if ((which / 15) % 2) { /* STAT's listing: an entry with its attributes */
            sfs_dirent_plus_t plus;

            sfs_proto_dirent_plus_unpack(&rb, &plus);
            if (!rb.error) {
                ROUND_TRIP(sfs_proto_dirent_plus_pack(&wb, &plus), rb.offset);
            }
            break;
        }
        while (!rb.error && sfs_rbuf_remaining(&rb)) {
            sfs_proto_dirent_unpack(&rb, &dirent);
        }
        break;
    }
    case 7: {
        sfs_map_t         *map;
        sfs_peer_address_t peer;

        /* a map's node addresses (and the bootstrap port's, and HELLO's)
         * are transport addresses: strict, and canonical */
        if (sfs_peer_address_unpack(data, length, "fuzz", &peer) == 0) {
            ROUND_TRIP(sfs_peer_address_pack(&wb, &peer), length);
        }
        if (sfs_map_unpack(data, length, &map) == 0) {
            sfs_map_t *copy;

            if (sfs_map_dup(map, &copy) == 0) {
                sfs_map_destroy(copy);
            }
            for (uint32_t i = 0; i < map->target_count; i++) {
                (void)sfs_map_find_node(map, map->targets[i].node_id);
            }
            sfs_map_destroy(map);
        }
        break;
    }
    case 8: {
        sfs_register_req_t *req = malloc(sizeof(*req));

        if (req) {
            sfs_proto_register_req_unpack(&rb, req);
            if (!rb.error) {
                ROUND_TRIP(sfs_proto_register_req_pack(&wb, req), rb.offset);
            }
            free(req);
        }
        break;
    }
    case 9: {
        char *path = malloc(length + 1);
        char  out[SFS_PATH_MAX];

        if (path) {
            memcpy(path, data, length);
            path[length] = '\0';
            if (sfs_path_normalize(path, out, sizeof(out)) == 0 && sfs_path_check(out) != 0) {
                abort(); /* a normalised path must be canonical */
            }
            sfs_path_check(path);
            free(path);
        }
        break;
    }
    case 10: {
        sfs_auth_req_t *auth = malloc(sizeof(*auth));

        if (auth) {
            sfs_proto_auth_req_unpack(&rb, auth);
            if (!rb.error) {
                ROUND_TRIP(sfs_proto_auth_req_pack(&wb, auth), rb.offset);
            }
            free(auth);
        }
        break;
    }
    case 13: {
        /* a capability (chunk requests, open replies) */
        sfs_cap_t cap;

        sfs_cap_unpack(&rb, &cap);
        if (!rb.error) {
            ROUND_TRIP(sfs_cap_pack(&wb, &cap), rb.offset);
        }
        break;
    }
    case 12: {
        sfs_counter_req_t req;

        sfs_proto_counter_req_unpack(&rb, &req);
        if (!rb.error) {
            ROUND_TRIP(sfs_proto_counter_req_pack(&wb, &req), rb.offset);
        }
        break;
    }
    case 11: {
        /* the direct-copy descriptor at the end of a request's arguments */
        sfs_direct_desc_t *desc = malloc(sizeof(*desc));
        long               before;

        if (desc) {
            before = sfs_proto_direct_desc_unpack(data, length, desc);
            if (before >= 0) {
                if ((size_t)before + sfs_proto_direct_desc_size(desc->count) != length) {
                    abort();
                }
                uint8_t   *out = malloc(length);
                sfs_wbuf_t wb;

                if (out) { /* it encodes again to the same bytes */
                    sfs_wbuf_init(&wb, out, length);
                    sfs_proto_direct_desc_pack(&wb, desc);
                    if (wb.error || wb.length != length - (size_t)before ||
                        memcmp(out, data + before, wb.length) != 0) {
                        abort();
                    }
                    free(out);
                }
            }
            free(desc);
        }
        break;
    }
    default: {
        /* the generic codec primitives */
        char blob_name[300];

        while (!rb.error && sfs_rbuf_remaining(&rb)) {
            size_t n;

            switch (sfs_rbuf_u8(&rb) % 5) {
            case 0:
                (void)sfs_rbuf_u64(&rb);
                break;
            case 1:
                (void)sfs_rbuf_u32(&rb);
                break;
            case 2:
                (void)sfs_rbuf_u16(&rb);
                break;
            case 3:
                sfs_rbuf_str(&rb, blob_name, sizeof(blob_name));
                break;
            default:
                (void)sfs_rbuf_blob(&rb, &n);
                break;
            }
        }
        break;
    }
    }
    return 0;
}
