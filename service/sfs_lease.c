/* The fencing lease's arithmetic (sfs_lease.h). */
#include "sfs_lease.h"

uint64_t sfs_lease_length_ms(uint64_t offline_timeout_ms)
{
    /* strictly below the offline timeout by half of it: room for a rank
     * clock running slower than management's (up to a factor of 2) */
    return offline_timeout_ms / 2;
}

void sfs_lease_init(sfs_lease_t *lease, uint64_t offline_timeout_ms)
{
    lease->length_ms = sfs_lease_length_ms(offline_timeout_ms);
    lease->sent_ms   = 0;
    lease->held      = 0;
    lease->told      = 0;
}

void sfs_lease_renew(sfs_lease_t *lease, uint64_t sent_ms)
{
    if (!lease->held || sent_ms > lease->sent_ms) {
        lease->sent_ms = sent_ms;
    }
    lease->held = 1;
    lease->told = 0;
}

int sfs_lease_valid(const sfs_lease_t *lease, uint64_t now_ms)
{
    return lease->held && now_ms < lease->sent_ms + lease->length_ms;
}

uint64_t sfs_lease_age_ms(const sfs_lease_t *lease, uint64_t now_ms)
{
    if (!lease->held) {
        return UINT64_MAX;
    }
    return now_ms > lease->sent_ms ? now_ms - lease->sent_ms : 0;
}
