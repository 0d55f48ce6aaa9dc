/*
 * A "modified client" against the storage targets' quota check
 * (docs/quotas.md, "Enforced by the storage targets"): it opens files
 * through the client library, writes honestly once (so that it holds the
 * metadata server's grant and its write bound), then sends hand-made WRITE
 * and TRUNCATE requests straight to the targets with the open's own
 * capability, as a client that skips QUOTA_GROW would.
 *
 *   sfs_quota_bypass PATH OTHER    (as a user with a space limit of 2 MiB)
 *
 * Expects: a write one byte past the bound, one at 16 MiB, one with no
 * bound and a truncate to 1 GiB refused with EDQUOT; the 4 KiB ending
 * exactly at the bound stored; a raised bound and OTHER's bound refused
 * with EACCES; a write and a CHUNK_STAT flagged as a mirror buddy's copy
 * (SFS_CHUNK_BUDDY) refused with EPERM (servers only: from a client it
 * would change one copy of a mirrored file); nothing readable at the
 * refused offsets; each chunk file within its bound. Prints "ok: ..." per check, PASSED and exits
 * 0, or FAILED lines and exits 1.
 */
#include "sfs_client_internal.h"

#include "sfs_cluster.h"
#include "sfs_errno.h"
#include "sfs_tp.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BYPASS_CHUNK (64u * 1024)
#define BYPASS_PIECE 4096u
#define MIB          (1024u * 1024)

static int      failures;
static uint32_t extra_flags; /* OR'd into every hand-made request's flags */
static char     detail[SFS_ERROR_DETAIL_MAX];

static void check(int ok, const char *fmt, ...)
{
    va_list ap;

    printf("%s: ", ok ? "ok" : "FAILED");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    failures += !ok;
}

/* One hand-made request to the target of pattern index `index`: a WRITE
 * of `length` bytes at chunk file offset `chunk_offset`, a TRUNCATE
 * (exact) of its chunk file to `chunk_offset`, or a CHUNK_STAT (its length
 * into *length_p). `bound` NULL: none sent. */
static int chunk_call(sfs_file_t *file, uint32_t opcode, uint32_t index, uint64_t chunk_offset,
                      uint64_t length, const void *data, const sfs_bound_t *bound,
                      uint64_t *length_p)
{
    const sfs_pattern_t *p     = &file->attr.pattern;
    sfs_chunk_req_t     *chunk = calloc(1, sizeof(*chunk));
    uint8_t             *args  = malloc(SFS_PROTO_ARGS_MAX);
    sfs_tp_rpc_params_t  params;
    sfs_tp_rpc_t        *rpc = NULL;
    sfs_tp_conn_t       *conn;
    struct iovec         iov = {.iov_base = (void *)data, .iov_len = length};
    sfs_wbuf_t           wb;
    int                  rc;

    if (!chunk || !args) {
        free(chunk);
        free(args);
        return -ENOMEM;
    }
    chunk->target_id = sfs_client_mirror_target(file->client, p, index);
    chunk->entry_id  = file->attr.entry_id;
    chunk->cap       = file->cap;
    if (opcode == SFS_OP_WRITE) {
        chunk->extent_count            = 1;
        chunk->extents[0].chunk_offset = chunk_offset;
        chunk->extents[0].length       = length;
    } else if (opcode == SFS_OP_TRUNCATE) {
        chunk->length = chunk_offset;
        chunk->flags  = SFS_TRUNCATE_EXACT;
    }
    if (opcode != SFS_OP_CHUNK_STAT && p->type == SFS_PATTERN_MIRROR) {
        chunk->flags |= SFS_CHUNK_MIRRORED;
    }
    chunk->flags |= extra_flags;
    if (bound) {
        chunk->flags |= SFS_CHUNK_BOUND;
        chunk->bound = *bound;
    }
    sfs_wbuf_init(&wb, args, SFS_PROTO_ARGS_MAX);
    sfs_proto_chunk_req_pack(&wb, opcode, chunk);
    memset(&params, 0, sizeof(params));
    params.opcode      = opcode;
    params.args        = args;
    params.args_length = wb.length;
    params.alloc_reply = 1;
    params.timeout_ms  = 10000;
    if (opcode == SFS_OP_WRITE) {
        params.payload       = &iov;
        params.payload_count = 1;
    }
    rc = wb.error ? wb.error
                  : sfs_cluster_target_conn(file->client->cluster, chunk->target_id, &conn);
    if (rc == 0) {
        rc = sfs_tp_call(conn, &params, &rpc);
    }
    snprintf(detail, sizeof(detail), "%s",
             rc == 0 ? "served" : (rpc ? sfs_tp_rpc_error_detail(rpc) : sfs_error_detail()));
    if (rc == 0 && length_p) {
        size_t             n;
        const void        *reply = sfs_tp_rpc_reply_args(rpc, &n);
        sfs_rbuf_t         rb;
        sfs_length_reply_t lr;

        sfs_rbuf_init(&rb, reply, n);
        sfs_proto_length_reply_unpack(&rb, &lr);
        rc        = rb.error ? -EPROTO : 0;
        *length_p = lr.length;
    }
    sfs_tp_rpc_release(rpc);
    free(chunk);
    free(args);
    return rc;
}

/* A hand-made write of [offset, offset + length) of the file, a request
 * per chunk it touches; the first error. */
static int write_by_hand(sfs_file_t *file, uint64_t offset, uint64_t length, const uint8_t *data,
                         const sfs_bound_t *bound)
{
    const sfs_pattern_t *p = &file->attr.pattern;

    while (length > 0) {
        uint64_t piece = p->chunk_size - offset % p->chunk_size;
        int      rc;

        piece = piece < length ? piece : length;
        rc    = chunk_call(file, SFS_OP_WRITE, sfs_layout_target_index(p, offset),
                           sfs_layout_chunk_file_offset(p, offset), piece, data, bound, NULL);
        if (rc) {
            return rc;
        }
        offset += piece;
        length -= piece;
        data += piece;
    }
    return 0;
}

static int open_and_write(sfs_client_t *client, const char *path, const uint8_t *data,
                          sfs_file_t **file_p)
{
    sfs_open_params_t params = {.field_mask =
                                    SFS_OPEN_PARAM_CHUNK_SIZE | SFS_OPEN_PARAM_STRIPE_COUNT,
                                .chunk_size   = BYPASS_CHUNK,
                                .stripe_count = 2};
    int               rc;

    rc = sfs_file_open(client, path, SFS_O_RDWR | SFS_O_CREAT | SFS_O_TRUNC, 0644, &params, file_p);
    if (rc == 0 && sfs_file_pwrite(*file_p, data, BYPASS_PIECE, 0) != BYPASS_PIECE) {
        rc = -EIO;
    }
    check(rc == 0, "%s: an honest write of 4 KiB at 0 (%s)", path, rc ? sfs_client_error() : "");
    return rc;
}

int main(int argc, char **argv)
{
    sfs_client_t *client;
    sfs_file_t   *file, *other;
    uint8_t       data[BYPASS_PIECE], back[BYPASS_PIECE];
    sfs_bound_t   raised;
    uint64_t      end;
    int           rc;

    if (argc != 3) {
        fprintf(stderr, "usage: sfs_quota_bypass PATH OTHER\n");
        return 2;
    }
    for (size_t i = 0; i < sizeof(data); i++) {
        data[i] = (uint8_t)(i * 7 + 3);
    }
    if (sfs_client_connect(NULL, &client) != 0) {
        fprintf(stderr, "FAILED: connect: %s\n", sfs_client_error());
        return 1;
    }
    if (open_and_write(client, argv[1], data, &file) != 0 ||
        open_and_write(client, argv[2], data, &other) != 0) {
        return 1;
    }
    check((file->cap.access & SFS_CAP_BOUNDED) != 0, "the write open's capability is bounded");
    end = file->bound.end;
    check(end >= BYPASS_PIECE && end < 2 * MIB, "the grant's bound: file offset %lu",
          (unsigned long)end);

    /* within the bound: stored */
    rc = write_by_hand(file, end - BYPASS_PIECE, BYPASS_PIECE, data, &file->bound);
    check(rc == 0, "4 KiB ending exactly at the bound (%lu) stored: %s", (unsigned long)end,
          detail);
    /* past it */
    rc = write_by_hand(file, end, 1, data, &file->bound);
    check(rc == -EDQUOT && strstr(detail, "write bound"),
          "a write one byte past the bound: %s (%s)", sfs_strerror(rc), detail);
    rc = write_by_hand(file, 16 * MIB, BYPASS_PIECE, data, &file->bound);
    check(rc == -EDQUOT, "a write at 16 MiB: %s (%s)", sfs_strerror(rc), detail);
    rc = write_by_hand(file, 0, BYPASS_PIECE, data, NULL);
    check(rc == -EDQUOT && strstr(detail, "without a write bound"),
          "a write within the grant without its bound: %s (%s)", sfs_strerror(rc), detail);
    {
        const sfs_pattern_t *p    = &file->attr.pattern;
        uint64_t             size = 1024ull * MIB;
        uint32_t             last = sfs_layout_last_byte_target(p, size);

        rc =
            chunk_call(file, SFS_OP_TRUNCATE, last, sfs_layout_chunk_length_for_size(p, last, size),
                       0, NULL, &file->bound, NULL);
        check(rc == -EDQUOT, "a truncate to 1 GiB: %s (%s)", sfs_strerror(rc), detail);
    }
    /* forged and borrowed bounds */
    raised     = file->bound;
    raised.end = 32 * MIB;
    rc         = write_by_hand(file, 16 * MIB, BYPASS_PIECE, data, &raised);
    check(rc == -EACCES && strstr(detail, "forged"), "a raised bound: %s (%s)", sfs_strerror(rc),
          detail);
    rc = write_by_hand(file, 0, BYPASS_PIECE, data, &other->bound);
    check(rc == -EACCES && strstr(detail, "is for entry"), "another file's bound: %s (%s)",
          sfs_strerror(rc), detail);

    /* a mirror buddy's copy: for servers only */
    extra_flags = SFS_CHUNK_BUDDY;
    rc          = write_by_hand(file, 0, BYPASS_PIECE, data, &file->bound);
    check(rc == -EPERM && strstr(detail, "for servers only"),
          "a write flagged as a mirror buddy's copy: %s (%s)", sfs_strerror(rc), detail);
    rc = chunk_call(file, SFS_OP_CHUNK_STAT, 0, 0, 0, NULL, NULL, NULL);
    check(rc == -EPERM && strstr(detail, "for servers only"),
          "a CHUNK_STAT flagged as a mirror buddy's question: %s (%s)", sfs_strerror(rc), detail);
    extra_flags = 0;

    /* what the targets hold */
    memset(back, 0, sizeof(back));
    check(sfs_file_pread(file, back, BYPASS_PIECE, end - BYPASS_PIECE) == BYPASS_PIECE &&
              memcmp(back, data, sizeof(data)) == 0,
          "the 4 KiB below the bound read back equal");
    check(sfs_file_pread(file, back, 1, end) == 0, "nothing reads back at the bound");
    check(sfs_file_pread(file, back, BYPASS_PIECE, 16 * MIB) == 0, "nothing reads back at 16 MiB");
    for (uint32_t t = 0; t < file->attr.pattern.stripe_count; t++) {
        uint64_t length = UINT64_MAX;
        uint64_t most   = sfs_layout_chunk_length_for_size(&file->attr.pattern, t, end);

        rc = chunk_call(file, SFS_OP_CHUNK_STAT, t, 0, 0, NULL, NULL, &length);
        check(rc == 0 && length <= most, "chunk file on target %u: %lu bytes, its bound %lu (%s)",
              file->attr.pattern.targets[t], (unsigned long)length, (unsigned long)most, detail);
    }
    if ((rc = sfs_file_close(other)) != 0 || (rc = sfs_file_close(file)) != 0) {
        check(0, "close: %s", sfs_client_error());
    }
    sfs_client_disconnect(client);
    printf("%s\n", failures ? "FAILED" : "PASSED");
    return failures ? 1 : 0;
}
