/*
 * Management's replicated commands (sfs_mgmt_raft_cmd.h).
 */
#include "sfs_mgmt_raft_cmd.h"

#include "sfs_buf.h"
#include "sfs_errno.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define SFS_MGMT_RAFT_CMD_MAGIC   "SFRC"
#define SFS_MGMT_RAFT_CMD_VERSION 1u

static const char *const kind_names[SFS_MGMT_RAFT_KINDS] = {
    "mirror-state",
    "meta-mirror-state",
    "meta-primary",
};

const char *sfs_mgmt_raft_kind_name(uint32_t kind)
{
    return kind >= 1 && kind <= SFS_MGMT_RAFT_KINDS ? kind_names[kind - 1] : NULL;
}

/* the state files are text: printable ASCII, tabs and newlines; -1 or the
 * offset of the first other byte */
static long text_bad_at(const char *text, size_t length)
{
    for (size_t i = 0; i < length; i++) {
        unsigned char c = (unsigned char)text[i];

        if (!(c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7f))) {
            return (long)i;
        }
    }
    return -1;
}

size_t sfs_mgmt_raft_cmd_size(size_t length)
{
    /* libraft's on-disk log wants entries of whole 8-byte words */
    return (SFS_MGMT_RAFT_CMD_HEADER + length + 7) & ~(size_t)7;
}

int sfs_mgmt_raft_cmd_encode(uint32_t kind, const char *text, size_t length, void *buf, size_t size)
{
    static const uint8_t padding[8];
    sfs_wbuf_t           wb;
    long                 bad;

    if (!sfs_mgmt_raft_kind_name(kind)) {
        return sfs_error_set(-EINVAL, "management command: unknown kind %u", kind);
    }
    if (length > SFS_MGMT_RAFT_CMD_TEXT_MAX) {
        return sfs_error_set(-EINVAL, "management command %s: text of %zu bytes (at most %u)",
                             kind_names[kind - 1], length, SFS_MGMT_RAFT_CMD_TEXT_MAX);
    }
    bad = text_bad_at(text, length);
    if (bad >= 0) {
        return sfs_error_set(-EINVAL,
                             "management command %s: byte 0x%02x at offset %ld of its text",
                             kind_names[kind - 1], (unsigned char)text[bad], bad);
    }
    if (size < sfs_mgmt_raft_cmd_size(length)) {
        return sfs_error_set(-ENOSPC, "management command %s: %zu bytes, room for %zu",
                             kind_names[kind - 1], sfs_mgmt_raft_cmd_size(length), size);
    }
    sfs_wbuf_init(&wb, buf, size);
    sfs_wbuf_bytes(&wb, SFS_MGMT_RAFT_CMD_MAGIC, 4);
    sfs_wbuf_u8(&wb, SFS_MGMT_RAFT_CMD_VERSION);
    sfs_wbuf_u8(&wb, (uint8_t)kind);
    sfs_wbuf_u16(&wb, 0);
    sfs_wbuf_u32(&wb, (uint32_t)length);
    sfs_wbuf_bytes(&wb, text, length);
    sfs_wbuf_bytes(&wb, padding, sfs_mgmt_raft_cmd_size(length) - wb.length);
    return (int)sfs_mgmt_raft_cmd_size(length);
}

int sfs_mgmt_raft_cmd_decode(const void *data, size_t size, uint32_t *kind_p, const char **text_p,
                             size_t *length_p, size_t *used_p)
{
    const uint8_t *magic, *text, *padding;
    const char    *name;
    uint32_t       version, kind, reserved, length;
    size_t         pad;
    sfs_rbuf_t     rb;
    long           bad;

    if (size < SFS_MGMT_RAFT_CMD_HEADER) {
        return sfs_error_set(-EBADMSG, "management command: %zu bytes, shorter than its header",
                             size);
    }
    sfs_rbuf_init(&rb, data, size);
    magic    = sfs_rbuf_take(&rb, 4);
    version  = sfs_rbuf_u8(&rb);
    kind     = sfs_rbuf_u8(&rb);
    reserved = sfs_rbuf_u16(&rb);
    length   = sfs_rbuf_u32(&rb);
    if (memcmp(magic, SFS_MGMT_RAFT_CMD_MAGIC, 4) != 0) {
        return sfs_error_set(-EBADMSG, "management command: not one (no SFRC magic)");
    }
    if (version != SFS_MGMT_RAFT_CMD_VERSION) {
        return sfs_error_set(-EBADMSG, "management command: version %u (this build knows %u)",
                             version, SFS_MGMT_RAFT_CMD_VERSION);
    }
    name = sfs_mgmt_raft_kind_name(kind);
    if (!name) {
        return sfs_error_set(-EBADMSG, "management command: unknown kind %u", kind);
    }
    if (reserved) {
        return sfs_error_set(-EBADMSG, "management command %s: reserved bytes not zero", name);
    }
    if (length > SFS_MGMT_RAFT_CMD_TEXT_MAX || length > sfs_rbuf_remaining(&rb)) {
        return sfs_error_set(-EBADMSG,
                             "management command %s: text of %u bytes, %zu there (at most %u)",
                             name, length, sfs_rbuf_remaining(&rb), SFS_MGMT_RAFT_CMD_TEXT_MAX);
    }
    text = sfs_rbuf_take(&rb, length);
    bad  = text_bad_at((const char *)text, length);
    if (bad >= 0) {
        return sfs_error_set(-EBADMSG,
                             "management command %s: byte 0x%02x at offset %ld of its text", name,
                             text[bad], bad);
    }
    pad     = sfs_mgmt_raft_cmd_size(length) - SFS_MGMT_RAFT_CMD_HEADER - length;
    padding = sfs_rbuf_take(&rb, pad);
    if (!padding) {
        return sfs_error_set(-EBADMSG, "management command %s: its padding is cut off", name);
    }
    for (size_t i = 0; i < pad; i++) {
        if (padding[i]) {
            return sfs_error_set(-EBADMSG, "management command %s: padding not zero", name);
        }
    }
    *kind_p   = kind;
    *text_p   = (const char *)text;
    *length_p = length;
    *used_p   = rb.offset;
    return 0;
}

int sfs_mgmt_raft_cmd_decode_one(const void *data, size_t size, uint32_t *kind_p,
                                 const char **text_p, size_t *length_p)
{
    size_t used;
    int    rc = sfs_mgmt_raft_cmd_decode(data, size, kind_p, text_p, length_p, &used);

    if (rc == 0 && used != size) {
        return sfs_error_set(-EBADMSG, "management command %s: %zu bytes after it",
                             kind_names[*kind_p - 1], size - used);
    }
    return rc;
}

size_t sfs_mgmt_raft_snapshot_size(const char *const texts[SFS_MGMT_RAFT_KINDS],
                                   const size_t      lengths[SFS_MGMT_RAFT_KINDS])
{
    size_t size = 0;

    for (uint32_t k = 0; k < SFS_MGMT_RAFT_KINDS; k++) {
        if (texts[k]) {
            size += sfs_mgmt_raft_cmd_size(lengths[k]);
        }
    }
    return size;
}

int sfs_mgmt_raft_snapshot_encode(const char *const texts[SFS_MGMT_RAFT_KINDS],
                                  const size_t lengths[SFS_MGMT_RAFT_KINDS], void *buf, size_t size)
{
    size_t at = 0;

    for (uint32_t k = 0; k < SFS_MGMT_RAFT_KINDS; k++) {
        int rc;

        if (!texts[k]) {
            continue;
        }
        rc = sfs_mgmt_raft_cmd_encode(k + 1, texts[k], lengths[k], (uint8_t *)buf + at, size - at);
        if (rc < 0) {
            return rc;
        }
        at += (size_t)rc;
    }
    return (int)at;
}

int sfs_mgmt_raft_snapshot_decode(const void *data, size_t size,
                                  const char *texts[SFS_MGMT_RAFT_KINDS],
                                  size_t      lengths[SFS_MGMT_RAFT_KINDS])
{
    size_t at = 0;

    for (uint32_t k = 0; k < SFS_MGMT_RAFT_KINDS; k++) {
        texts[k]   = NULL;
        lengths[k] = 0;
    }
    while (at < size) {
        uint32_t    kind;
        const char *text;
        size_t      length, used;
        int rc = sfs_mgmt_raft_cmd_decode((const uint8_t *)data + at, size - at, &kind, &text,
                                          &length, &used);

        if (rc) {
            char why[256];

            snprintf(why, sizeof(why), "%s", sfs_error_detail());
            return sfs_error_set(rc, "management snapshot, at byte %zu: %s", at, why);
        }
        if (texts[kind - 1]) {
            return sfs_error_set(-EBADMSG, "management snapshot: %s twice (at byte %zu)",
                                 kind_names[kind - 1], at);
        }
        texts[kind - 1]   = text;
        lengths[kind - 1] = length;
        at += used;
    }
    return 0;
}
