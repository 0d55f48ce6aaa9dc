/*
 * Management's replicated commands and snapshots
 * (service/sfs_mgmt_raft_cmd.c), fed arbitrary bytes: the decoders must
 * never read out of bounds, and what they accept must be exactly what the
 * encoders write for what was decoded (the first byte picks: bit 0 set, a
 * snapshot; else one log entry).
 */
#include "sfs_mgmt_raft_cmd.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void fuzz_entry(const uint8_t *data, size_t size)
{
    uint32_t    kind;
    const char *text;
    size_t      length;
    uint8_t    *out;
    int         n;

    if (sfs_mgmt_raft_cmd_decode_one(data, size, &kind, &text, &length) != 0) {
        return;
    }
    out = malloc(size);
    if (!out) {
        return;
    }
    n = sfs_mgmt_raft_cmd_encode(kind, text, length, out, size);
    if (n < 0 || (size_t)n != size || memcmp(out, data, size) != 0) {
        abort();
    }
    free(out);
}

static void fuzz_snapshot(const uint8_t *data, size_t size)
{
    const char *texts[SFS_MGMT_RAFT_KINDS];
    size_t      lengths[SFS_MGMT_RAFT_KINDS];
    uint8_t    *out;
    int         n;

    if (sfs_mgmt_raft_snapshot_decode(data, size, texts, lengths) != 0) {
        return;
    }
    /* the encoder writes the kinds in order: accepted input in another
     * order is re-encoded to the same length, not the same bytes */
    if (sfs_mgmt_raft_snapshot_size(texts, lengths) != size) {
        abort();
    }
    out = malloc(size ? size : 1);
    if (!out) {
        return;
    }
    n = sfs_mgmt_raft_snapshot_encode(texts, lengths, out, size);
    if (n < 0 || (size_t)n != size) {
        abort();
    }
    if (sfs_mgmt_raft_snapshot_decode(out, size, texts, lengths) != 0) {
        abort();
    }
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t length)
{
    uint8_t *copy;

    if (length < 1 || length > (1u << 17)) {
        return 0;
    }
    copy = malloc(length - 1 ? length - 1 : 1); /* exactly the bytes: overreads are caught */
    if (!copy) {
        return 0;
    }
    memcpy(copy, data + 1, length - 1);
    if (data[0] & 1) {
        fuzz_snapshot(copy, length - 1);
    } else {
        fuzz_entry(copy, length - 1);
    }
    free(copy);
    return 0;
}
