/* The metadata role's byte-range lock table (service/sfs_meta_lock.c):
 * compatible locks are granted at once, conflicting ones queue in arrival
 * order and are granted when what blocks them goes, an owner that goes
 * away loses everything it held or waited for, and a request asked again
 * (its reply lost) is answered as the first. The records of the clients
 * that own locks (service/sfs_meta_lock_client.c): found by uuid and uid,
 * the locks they released lately, and the lost ones whose time is over. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sfs_meta_lock.h"
#include "sfs_meta_lock_client.h"
#include "sfs_proto.h"

#include <errno.h>
#include <string.h>

/* What the callback saw: waiters in the order they ended, and how. */
typedef struct {
    int order[64];
    int status[64];
    int count;
} ended_t;

static void done_cb(void *waiter, int status, void *arg)
{
    ended_t *ended = arg;

    ended->order[ended->count]  = (int)(intptr_t)waiter;
    ended->status[ended->count] = status;
    ended->count++;
}

#define A ((const void *)0x1)
#define B ((const void *)0x2)
#define C ((const void *)0x3)

static int lock(sfs_lock_table_t *t, const void *owner, uint64_t id, uint64_t off, uint64_t len,
                uint32_t mode, int waiter)
{
    sfs_lock_spec_t spec = {
        .owner = owner, .entry_id = 7, .lock_id = id, .offset = off, .length = len, .mode = mode};

    return sfs_lock_acquire(t, &spec, (void *)(intptr_t)waiter);
}

static void test_compatible_granted_at_once(void **state)
{
    ended_t           ended = {0};
    sfs_lock_table_t *t;
    size_t            queued;

    (void)state;
    assert_int_equal(sfs_lock_table_create(done_cb, &ended, &t), 0);
    /* shared locks overlap freely; exclusive ones on disjoint ranges too */
    assert_int_equal(lock(t, A, 1, 0, 100, SFS_LOCK_SHARED, 1), 0);
    assert_int_equal(lock(t, B, 1, 50, 100, SFS_LOCK_SHARED, 2), 0);
    assert_int_equal(lock(t, C, 1, 200, 10, SFS_LOCK_EXCLUSIVE, 3), 0);
    assert_int_equal(lock(t, C, 2, 210, 10, SFS_LOCK_EXCLUSIVE, 4), 0); /* adjacent: no overlap */
    assert_int_equal(sfs_lock_count(t, &queued), 4);
    assert_int_equal(queued, 0);
    /* another file is another space */
    sfs_lock_spec_t other = {
        .owner = A, .entry_id = 8, .lock_id = 1, .length = 0, .mode = SFS_LOCK_EXCLUSIVE};
    assert_int_equal(sfs_lock_acquire(t, &other, NULL), 0);
    assert_int_equal(ended.count, 0);
    sfs_lock_table_destroy(t, -ESHUTDOWN);
}

static void test_conflicts_queue_and_grant_in_order(void **state)
{
    ended_t           ended = {0};
    sfs_lock_table_t *t;
    size_t            queued;

    (void)state;
    assert_int_equal(sfs_lock_table_create(done_cb, &ended, &t), 0);
    assert_int_equal(lock(t, A, 1, 0, 100, SFS_LOCK_EXCLUSIVE, 1), 0);
    assert_int_equal(lock(t, B, 1, 99, 1, SFS_LOCK_SHARED, 2), SFS_LOCK_QUEUED);
    assert_int_equal(lock(t, C, 1, 0, 0, SFS_LOCK_EXCLUSIVE, 3), SFS_LOCK_QUEUED); /* to EOF */
    /* same owner, conflicting range: waits too (no nesting) */
    assert_int_equal(lock(t, A, 2, 10, 10, SFS_LOCK_SHARED, 4), SFS_LOCK_QUEUED);
    assert_int_equal(sfs_lock_count(t, &queued), 1);
    assert_int_equal(queued, 3);
    assert_int_equal(ended.count, 0);

    /* A's exclusive lock goes: B's shared one is granted; C's exclusive
     * waits for it, and A's shared one, queued after C, waits behind C
     * (fairness) although it is compatible with B's */
    assert_int_equal(sfs_lock_release(t, A, 7, 1), 0);
    assert_int_equal(ended.count, 1);
    assert_int_equal(ended.order[0], 2);
    assert_int_equal(ended.status[0], 0);
    assert_int_equal(sfs_lock_release(t, B, 7, 1), 0);
    assert_int_equal(ended.count, 2);
    assert_int_equal(ended.order[1], 3);
    assert_int_equal(sfs_lock_release(t, C, 7, 1), 0);
    assert_int_equal(ended.count, 3);
    assert_int_equal(ended.order[2], 4);
    assert_int_equal(sfs_lock_release(t, A, 7, 2), 0);
    assert_int_equal(sfs_lock_count(t, &queued), 0);
    assert_int_equal(queued, 0);
    /* nothing left to release */
    assert_int_equal(sfs_lock_release(t, A, 7, 2), -ENOENT);
    sfs_lock_table_destroy(t, -ESHUTDOWN);
    assert_int_equal(ended.count, 3);
}

static void test_shared_readers_granted_together(void **state)
{
    ended_t           ended = {0};
    sfs_lock_table_t *t;

    (void)state;
    assert_int_equal(sfs_lock_table_create(done_cb, &ended, &t), 0);
    assert_int_equal(lock(t, A, 1, 0, 10, SFS_LOCK_EXCLUSIVE, 1), 0);
    assert_int_equal(lock(t, B, 1, 0, 10, SFS_LOCK_SHARED, 2), SFS_LOCK_QUEUED);
    assert_int_equal(lock(t, C, 1, 5, 10, SFS_LOCK_SHARED, 3), SFS_LOCK_QUEUED);
    assert_int_equal(sfs_lock_release(t, A, 7, 1), 0);
    assert_int_equal(ended.count, 2); /* both readers at once */
    assert_int_equal(ended.order[0], 2);
    assert_int_equal(ended.order[1], 3);
    sfs_lock_table_destroy(t, -ESHUTDOWN);
}

static void test_cancel_queued(void **state)
{
    ended_t           ended = {0};
    sfs_lock_table_t *t;

    (void)state;
    assert_int_equal(sfs_lock_table_create(done_cb, &ended, &t), 0);
    assert_int_equal(lock(t, A, 1, 0, 10, SFS_LOCK_EXCLUSIVE, 1), 0);
    assert_int_equal(lock(t, B, 1, 0, 10, SFS_LOCK_EXCLUSIVE, 2), SFS_LOCK_QUEUED);
    assert_int_equal(lock(t, C, 1, 0, 10, SFS_LOCK_SHARED, 3), SFS_LOCK_QUEUED);
    /* B gives up (its LOCK timed out): its request ends cancelled, and C,
     * which waited behind it, still waits for A */
    assert_int_equal(sfs_lock_release(t, B, 7, 1), 0);
    assert_int_equal(ended.count, 1);
    assert_int_equal(ended.order[0], 2);
    assert_int_equal(ended.status[0], -ECANCELED);
    assert_int_equal(sfs_lock_release(t, A, 7, 1), 0);
    assert_int_equal(ended.count, 2);
    assert_int_equal(ended.order[1], 3);
    assert_int_equal(ended.status[1], 0);
    sfs_lock_table_destroy(t, -ESHUTDOWN);
}

static void test_owner_gone_releases_everything(void **state)
{
    ended_t           ended = {0};
    sfs_lock_table_t *t;
    size_t            queued;

    (void)state;
    assert_int_equal(sfs_lock_table_create(done_cb, &ended, &t), 0);
    assert_int_equal(lock(t, A, 1, 0, 10, SFS_LOCK_EXCLUSIVE, 1), 0);
    assert_int_equal(lock(t, A, 2, 100, 10, SFS_LOCK_EXCLUSIVE, 2), 0);
    assert_int_equal(lock(t, B, 1, 0, 200, SFS_LOCK_EXCLUSIVE, 3), SFS_LOCK_QUEUED);
    assert_int_equal(lock(t, A, 3, 150, 10, SFS_LOCK_SHARED, 4), SFS_LOCK_QUEUED);
    /* A dies: its two locks go, its queued request ends with the status
     * given, and B, which waited for both, is granted */
    assert_int_equal(sfs_lock_release_owner(t, A, -ECONNRESET), 3);
    assert_int_equal(ended.count, 2);
    assert_int_equal(ended.order[0], 4);
    assert_int_equal(ended.status[0], -ECONNRESET);
    assert_int_equal(ended.order[1], 3);
    assert_int_equal(ended.status[1], 0);
    assert_int_equal(sfs_lock_count(t, &queued), 1);
    assert_int_equal(queued, 0);
    assert_int_equal(sfs_lock_release_owner(t, A, -ECONNRESET), 0);
    assert_int_equal(sfs_lock_release(t, A, 7, 1), -ENOENT);
    sfs_lock_table_destroy(t, -ESHUTDOWN);
}

static void test_refusals(void **state)
{
    ended_t           ended = {0};
    sfs_lock_table_t *t;
    int               rc = 0;

    (void)state;
    assert_int_equal(sfs_lock_table_create(done_cb, &ended, &t), 0);
    assert_int_equal(lock(t, A, 1, 0, 10, SFS_LOCK_SHARED, 1), 0);
    assert_int_equal(lock(t, A, 1, 20, 10, SFS_LOCK_SHARED, 2), -EEXIST); /* id in use */
    /* another owner cannot release it by naming its id */
    assert_int_equal(sfs_lock_release(t, B, 7, 1), -ENOENT);
    assert_int_equal(sfs_lock_count(t, NULL), 1);
    assert_int_equal(lock(t, B, 1, 20, 10, 2, 3), -EINVAL); /* no such mode */
    /* offsets near the top do not wrap: [max - 5, +10) reaches the end */
    assert_int_equal(lock(t, B, 2, UINT64_MAX - 5, 10, SFS_LOCK_EXCLUSIVE, 4), 0);
    assert_int_equal(lock(t, C, 1, UINT64_MAX - 1, 1, SFS_LOCK_SHARED, 5), SFS_LOCK_QUEUED);
    /* one owner cannot hold the table hostage */
    for (uint64_t i = 0; i < SFS_LOCK_OWNER_MAX && rc == 0; i++) {
        rc = lock(t, C, 100 + i, 1000 + 2 * i, 1, SFS_LOCK_SHARED, 6);
    }
    assert_int_equal(rc, -ENOLCK);
    /* the queued request ends when the table goes */
    sfs_lock_table_destroy(t, -ESHUTDOWN);
    assert_int_equal(ended.count, 1);
    assert_int_equal(ended.order[0], 5);
    assert_int_equal(ended.status[0], -ESHUTDOWN);
}

static void test_asked_again(void **state)
{
    ended_t           ended = {0};
    sfs_lock_table_t *t;

    (void)state;
    assert_int_equal(sfs_lock_table_create(done_cb, &ended, &t), 0);
    assert_int_equal(lock(t, A, 1, 0, 10, SFS_LOCK_EXCLUSIVE, 1), 0);
    /* granted: the same request again is granted, not a second lock */
    assert_int_equal(lock(t, A, 1, 0, 10, SFS_LOCK_EXCLUSIVE, 1), 0);
    assert_int_equal(sfs_lock_owner_count(t, A), 1);
    /* the same id for another range or mode is still refused */
    assert_int_equal(lock(t, A, 1, 0, 20, SFS_LOCK_EXCLUSIVE, 1), -EEXIST);
    assert_int_equal(lock(t, A, 1, 0, 10, SFS_LOCK_SHARED, 1), -EEXIST);
    /* queued: asked again, it keeps its place; the first waiter ends */
    assert_int_equal(lock(t, B, 1, 5, 10, SFS_LOCK_SHARED, 2), SFS_LOCK_QUEUED);
    assert_int_equal(lock(t, C, 1, 5, 10, SFS_LOCK_EXCLUSIVE, 3), SFS_LOCK_QUEUED);
    assert_int_equal(lock(t, B, 1, 5, 10, SFS_LOCK_SHARED, 4), SFS_LOCK_QUEUED);
    assert_int_equal(ended.count, 1);
    assert_int_equal(ended.order[0], 2);
    assert_int_equal(ended.status[0], -ECANCELED);
    assert_int_equal(sfs_lock_owner_count(t, B), 1);
    /* A goes: B (ahead of C) is granted, to its second request */
    assert_int_equal(sfs_lock_release(t, A, 7, 1), 0);
    assert_int_equal(ended.count, 2);
    assert_int_equal(ended.order[1], 4);
    assert_int_equal(ended.status[1], 0);
    assert_int_equal(sfs_lock_owner_count(t, A), 0);
    sfs_lock_table_destroy(t, -ESHUTDOWN);
    assert_int_equal(ended.count, 3);
    assert_int_equal(ended.order[2], 3);
}

static int expired_seen;

static void expired_cb(sfs_lock_client_t *client, void *arg)
{
    expired_seen++;
    sfs_lock_client_forget(arg, client);
}

static void test_lock_clients(void **state)
{
    sfs_lock_clients_t clients;
    sfs_lock_client_t *one, *other;

    (void)state;
    assert_int_equal(sfs_lock_clients_init(&clients), 0);
    one = sfs_lock_client_speaks(&clients, 5, 1000, 10, "hostA", 42);
    assert_non_null(one);
    assert_ptr_equal(sfs_lock_client_find(&clients, 5, 1000), one);
    /* another uid claiming the same uuid is another client */
    assert_null(sfs_lock_client_find(&clients, 5, 1001));
    other = sfs_lock_client_speaks(&clients, 5, 1001, 11, "hostB", 43);
    assert_true(other && other != one);
    /* a new session of the same process is the same record */
    one->lost_ms = 1000;
    assert_ptr_equal(sfs_lock_client_speaks(&clients, 5, 1000, 12, "hostA", 42), one);
    assert_int_equal(one->session_id, 12);
    assert_int_equal(one->lost_ms, 0);
    /* the locks released lately, the last SFS_LOCK_CLIENT_RELEASED */
    sfs_lock_client_note_released(one, 7, 1);
    assert_true(sfs_lock_client_released_lately(one, 7, 1));
    assert_false(sfs_lock_client_released_lately(one, 7, 2));
    assert_false(sfs_lock_client_released_lately(one, 8, 1));
    assert_false(sfs_lock_client_released_lately(other, 7, 1));
    for (uint64_t i = 0; i < SFS_LOCK_CLIENT_RELEASED; i++) {
        sfs_lock_client_note_released(one, 7, 100 + i);
    }
    assert_false(sfs_lock_client_released_lately(one, 7, 1));
    assert_true(sfs_lock_client_released_lately(one, 7, 100));
    /* a lost client is handed over once its grace is over, not before */
    one->lost_ms = 1000;
    sfs_lock_clients_expired(&clients, 1999, 1000, expired_cb, &clients);
    assert_int_equal(expired_seen, 0);
    sfs_lock_clients_expired(&clients, 2000, 1000, expired_cb, &clients);
    assert_int_equal(expired_seen, 1);
    assert_null(sfs_lock_client_find(&clients, 5, 1000));
    assert_ptr_equal(sfs_lock_client_find(&clients, 5, 1001), other);
    sfs_lock_clients_cleanup(&clients);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compatible_granted_at_once),
        cmocka_unit_test(test_conflicts_queue_and_grant_in_order),
        cmocka_unit_test(test_shared_readers_granted_together),
        cmocka_unit_test(test_cancel_queued),
        cmocka_unit_test(test_owner_gone_releases_everything),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_asked_again),
        cmocka_unit_test(test_lock_clients),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
