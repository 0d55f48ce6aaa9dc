/*
 * The fencing lease of a storage rank (docs/mirroring.md, "Fencing"): a
 * rank may acknowledge a mirrored change as a group's primary only while
 * it holds a lease from management. Each heartbeat (or registration) that
 * management answered renews it for `length_ms` counted from when that
 * heartbeat was SENT, on this rank's monotonic clock. Management records
 * the contact when the heartbeat ARRIVES, later than it was sent, and
 * promotes a buddy only after the offline timeout T of silence after it:
 * with length = T / 2 the lease ends at least T / 2 before any promotion,
 * whatever the two clocks read; only their rates matter (a rank clock
 * running at half management's rate or slower could outlive it). Pure
 * arithmetic, no I/O: unit-tested in tests/unit/service/test_lease.c.
 */
#ifndef SFS_LEASE_H
#define SFS_LEASE_H

#include <stdint.h>

typedef struct sfs_lease {
    uint64_t length_ms;
    uint64_t sent_ms; /* the send time of the newest heartbeat answered */
    int      held;    /* a heartbeat was ever answered */
    int      told;    /* the expiry has been logged (until the next renewal) */
} sfs_lease_t;

/* The lease length for an offline timeout: half of it (0 only for 0). */
uint64_t sfs_lease_length_ms(uint64_t offline_timeout_ms);
void     sfs_lease_init(sfs_lease_t *lease, uint64_t offline_timeout_ms);
/* Management answered a heartbeat sent at `sent_ms`: the lease runs to
 * sent_ms + length (never moved back by an older heartbeat's answer). */
void sfs_lease_renew(sfs_lease_t *lease, uint64_t sent_ms);
/* Non-zero while the lease holds at `now_ms`. */
int sfs_lease_valid(const sfs_lease_t *lease, uint64_t now_ms);
/* How long ago the heartbeat that renewed it was sent (UINT64_MAX: never). */
uint64_t sfs_lease_age_ms(const sfs_lease_t *lease, uint64_t now_ms);

#endif
