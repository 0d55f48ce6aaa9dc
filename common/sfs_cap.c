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
