#include "sfs_cap.h"

#include "sfs_errno.h"

#include <sodium.h>
#include <string.h>

void sfs_cap_key(const sfs_auth_key_t *cluster_key, sfs_auth_key_t *cap_key)
{
    static const char label[] = "stripefs-capability-key-v1";

    crypto_generichash(cap_key->bytes, sizeof(cap_key->bytes), (const uint8_t *)label,
                       sizeof(label), cluster_key->bytes, sizeof(cluster_key->bytes));
}

/* The MAC covers every field in wire order. */
static void sfs_cap_mac(const sfs_auth_key_t *cap_key, const sfs_cap_t *cap,
                        uint8_t mac[SFS_CAP_MAC_SIZE])
{
    uint8_t    fields[SFS_CAP_WIRE_SIZE];
    sfs_wbuf_t wb;

    sfs_wbuf_init(&wb, fields, sizeof(fields));
    sfs_wbuf_u64(&wb, cap->entry_id);
    sfs_wbuf_u32(&wb, cap->access);
    sfs_wbuf_u32(&wb, cap->uid);
    sfs_wbuf_u64(&wb, cap->expires_s);
    crypto_generichash(mac, SFS_CAP_MAC_SIZE, fields, wb.length, cap_key->bytes,
                       sizeof(cap_key->bytes));
}

void sfs_cap_seal(const sfs_auth_key_t *cap_key, sfs_cap_t *cap)
{
    sfs_cap_mac(cap_key, cap, cap->mac);
}

int sfs_cap_check(const sfs_auth_key_t *cap_key, const sfs_cap_t *cap, uint64_t entry_id,
                  uint32_t access, uint32_t uid, uint64_t now_s)
{
    uint8_t expected[SFS_CAP_MAC_SIZE];

    if (cap->entry_id == 0 && cap->access == 0) {
        return sfs_error_set(-EACCES, "entry %lu: no capability: open the file first",
                             (unsigned long)entry_id);
    }
    sfs_cap_mac(cap_key, cap, expected);
    if (sodium_memcmp(expected, cap->mac, SFS_CAP_MAC_SIZE) != 0) {
        return sfs_error_set(-EACCES, "entry %lu: forged capability", (unsigned long)entry_id);
    }
    if (cap->entry_id != entry_id) {
        return sfs_error_set(-EACCES, "entry %lu: the capability is for entry %lu",
                             (unsigned long)entry_id, (unsigned long)cap->entry_id);
    }
    if (cap->uid != uid) {
        return sfs_error_set(-EACCES, "entry %lu: the capability was granted to uid %u, not %u",
                             (unsigned long)entry_id, cap->uid, uid);
    }
    if ((cap->access & access) != access) {
        return sfs_error_set(-EACCES, "entry %lu: the file was opened %s", (unsigned long)entry_id,
                             (cap->access & SFS_CAP_WRITE) ? "write-only" : "read-only");
    }
    if (cap->expires_s <= now_s) {
        return sfs_error_set(-EKEYEXPIRED, "entry %lu: the capability expired %lu s ago",
                             (unsigned long)entry_id, (unsigned long)(now_s - cap->expires_s));
    }
    return 0;
}

/* The MAC of a bound covers a label (so that no capability's fields read
 * as a bound's) and every field in wire order. */
static void sfs_bound_mac(const sfs_auth_key_t *cap_key, const sfs_bound_t *bound,
                          uint8_t mac[SFS_BOUND_MAC_SIZE])
{
    static const char label[] = "stripefs-write-bound-v1";
    uint8_t           fields[sizeof(label) + 48 + 4 * SFS_STRIPE_COUNT_MAX + SFS_BOUND_MAC_SIZE];
    sfs_bound_t       unsealed = *bound;
    sfs_wbuf_t        wb;

    memset(unsealed.mac, 0, sizeof(unsealed.mac));
    sfs_wbuf_init(&wb, fields, sizeof(fields));
    sfs_wbuf_bytes(&wb, label, sizeof(label));
    sfs_bound_pack(&wb, &unsealed);
    crypto_generichash(mac, SFS_BOUND_MAC_SIZE, fields, wb.length, cap_key->bytes,
                       sizeof(cap_key->bytes));
}

void sfs_bound_seal(const sfs_auth_key_t *cap_key, sfs_bound_t *bound)
{
    sfs_bound_mac(cap_key, bound, bound->mac);
}

int sfs_bound_check(const sfs_auth_key_t *cap_key, const sfs_bound_t *bound, uint64_t entry_id,
                    uint32_t uid, const uint32_t target_ids[2], uint64_t now_s, uint32_t *index_p)
{
    uint8_t  expected[SFS_BOUND_MAC_SIZE];
    uint32_t index = SFS_STRIPE_COUNT_MAX;

    if (bound->pattern.stripe_count == 0 || bound->pattern.stripe_count > SFS_STRIPE_COUNT_MAX ||
        bound->pattern.chunk_size == 0) {
        return sfs_error_set(-EACCES, "entry %lu: malformed write bound", (unsigned long)entry_id);
    }
    sfs_bound_mac(cap_key, bound, expected);
    if (sodium_memcmp(expected, bound->mac, SFS_BOUND_MAC_SIZE) != 0) {
        return sfs_error_set(-EACCES, "entry %lu: forged write bound (end %lu)",
                             (unsigned long)entry_id, (unsigned long)bound->end);
    }
    if (bound->entry_id != entry_id) {
        return sfs_error_set(-EACCES, "entry %lu: the write bound is for entry %lu",
                             (unsigned long)entry_id, (unsigned long)bound->entry_id);
    }
    if (bound->uid != uid) {
        return sfs_error_set(-EACCES, "entry %lu: the write bound was granted to uid %u, not %u",
                             (unsigned long)entry_id, bound->uid, uid);
    }
    if (bound->expires_s <= now_s) {
        return sfs_error_set(-EKEYEXPIRED, "entry %lu: the write bound expired %lu s ago",
                             (unsigned long)entry_id, (unsigned long)(now_s - bound->expires_s));
    }
    for (uint32_t i = 0; i < bound->pattern.stripe_count && index == SFS_STRIPE_COUNT_MAX; i++) {
        if (bound->pattern.targets[i] == target_ids[0] ||
            (target_ids[1] && bound->pattern.targets[i] == target_ids[1])) {
            index = i;
        }
    }
    if (index == SFS_STRIPE_COUNT_MAX) {
        return sfs_error_set(-EACCES, "entry %lu: target %u is not in the write bound's pattern",
                             (unsigned long)entry_id, target_ids[0]);
    }
    *index_p = index;
    return 0;
}
