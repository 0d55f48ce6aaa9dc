/*
 * Every decoder of wire messages, fed arbitrary bytes. The first byte picks
 * the decoder (and for opcode-dependent ones, the opcode); the rest is the
 * message. Decoders must never read out of bounds, and whatever they accept
 * must encode again to the same bytes where the encoding is canonical.
 */
#include "sfs_buf.h"
#include "sfs_map.h"
#include "sfs_path.h"
#include "sfs_proto.h"

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
    case 4: {
        sfs_hello_req_t req;

        sfs_proto_hello_req_unpack(&rb, &req);
        if (!rb.error) {
            ROUND_TRIP(sfs_proto_hello_req_pack(&wb, &req), rb.offset);
        }
        break;
    }
    case 5: {
        sfs_hello_reply_t reply;

        sfs_proto_hello_reply_unpack(&rb, &reply);
        if (!rb.error) {
            ROUND_TRIP(sfs_proto_hello_reply_pack(&wb, &reply), rb.offset);
        }
        break;
    }
    case 6: {
        sfs_dirent_t dirent;

        while (!rb.error && sfs_rbuf_remaining(&rb)) {
            sfs_proto_dirent_unpack(&rb, &dirent);
        }
        break;
    }
    case 7: {
        sfs_map_t *map;

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
