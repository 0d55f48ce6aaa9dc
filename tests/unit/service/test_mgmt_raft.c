/* Management's replicated state (service/sfs_mgmt_raft.c, _cmd.c): three
 * real replicas of libraft in this process, on 127.0.0.1, each with its
 * log in a directory of its own.
 * - a command proposed at the leader is applied on all three; at a
 *   follower it is refused, naming the leader;
 * - the leader stopped: another is elected and commits; the old one,
 *   started again on its log, catches up (from a snapshot: its log was
 *   compacted meanwhile);
 * - one replica alone cannot commit (no majority), and commits again once
 *   a second is back;
 * - all three stopped and started again: the state comes back from the logs;
 * - each replica writes what it applies to its own state files
 *   (sfs_mgmt_state_apply): the three directories end with the same files,
 *   which management's own parsers read; a text the file's parser refuses
 *   is not written;
 * - the command codec: what is encoded decodes the same; every malformed
 *   command and snapshot is refused with a detail that says why. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "sfs_errno.h"
#include "sfs_mgmt_internal.h"
#include "sfs_mgmt_raft.h"
#include "sfs_mgmt_raft_cmd.h"
#include "sfs_time.h"

#define REPLICAS 3
#define WAIT_MS  15000 /* a leader or an apply: generous for a loaded CI host */

typedef struct replica {
    sfs_mgmt_raft_t *raft;
    sfs_config_t     config; /* path: its directory's stripefs.yaml (the files beside it) */
    pthread_mutex_t  lock;
    char             texts[SFS_MGMT_RAFT_KINDS][256];
    unsigned         applies;
    unsigned         writes_failed;
} replica_t;

static sfs_config_mirror_group_t groups[] = {{1, 101, 201, 0}, {2, 301, 401, 0}};

static replica_t   replicas[REPLICAS];
static char        addresses[REPLICAS][32];
static const char *address_list[REPLICAS];
static char        root[] = "/tmp/sfs-raft-test.XXXXXX";

static void on_apply(void *arg, uint32_t kind, const char *text, size_t length)
{
    replica_t *r = arg;

    assert_true(kind >= 1 && kind <= SFS_MGMT_RAFT_KINDS);
    assert_true(length < sizeof(r->texts[0]));
    pthread_mutex_lock(&r->lock);
    memcpy(r->texts[kind - 1], text, length);
    r->texts[kind - 1][length] = '\0';
    r->applies++;
    if (sfs_mgmt_state_apply(&r->config, kind, text, length) != 0) {
        print_error("replica %s: %s\n", r->config.path, sfs_error_detail());
        r->writes_failed++;
    }
    pthread_mutex_unlock(&r->lock);
}

static void replica_start(int i)
{
    sfs_mgmt_raft_params_t params;
    char                   dir[128];

    snprintf(dir, sizeof(dir), "%s/r%d", root, i + 1);
    memset(&params, 0, sizeof(params));
    params.id                   = (uint32_t)i + 1;
    params.count                = REPLICAS;
    params.addresses            = address_list;
    params.dir                  = dir;
    params.election_timeout_ms  = 300;
    params.heartbeat_timeout_ms = 50;
    params.snapshot_threshold   = 8;
    params.snapshot_trailing    = 2;
    params.apply                = on_apply;
    params.arg                  = &replicas[i];
    pthread_mutex_lock(&replicas[i].lock);
    memset(replicas[i].texts, 0, sizeof(replicas[i].texts));
    replicas[i].applies = 0;
    pthread_mutex_unlock(&replicas[i].lock);
    if (sfs_mgmt_raft_start(&params, &replicas[i].raft) != 0) {
        fail_msg("replica %d: %s", i + 1, sfs_error_detail());
    }
}

static void replica_stop(int i)
{
    sfs_mgmt_raft_stop(replicas[i].raft);
    replicas[i].raft = NULL;
}

/* the replica that leads (among those running), waiting for an election */
static int leader_wait(void)
{
    uint64_t until = sfs_time_ms() + WAIT_MS;

    do {
        for (int i = 0; i < REPLICAS; i++) {
            if (replicas[i].raft && sfs_mgmt_raft_leading(replicas[i].raft, NULL)) {
                return i;
            }
        }
        usleep(20000);
    } while (sfs_time_ms() < until);
    fail_msg("no leader within %d ms", WAIT_MS);
    return -1;
}

/* propose at whoever leads, again at a new leader if it changed meanwhile */
static void propose(uint32_t kind, const char *text)
{
    uint64_t until = sfs_time_ms() + WAIT_MS;
    int      rc;

    do {
        int i = leader_wait();

        rc = sfs_mgmt_raft_propose(replicas[i].raft, kind, text, strlen(text), 5000);
        if (rc == 0) {
            return;
        }
        assert_true(rc == -ENOTCONN || rc == -ECONNABORTED || rc == -ETIMEDOUT);
    } while (sfs_time_ms() < until);
    fail_msg("\"%s\" not committed: %s", text, sfs_error_detail());
}

static int text_is(int i, uint32_t kind, const char *text)
{
    int same;

    pthread_mutex_lock(&replicas[i].lock);
    same = strcmp(replicas[i].texts[kind - 1], text) == 0;
    pthread_mutex_unlock(&replicas[i].lock);
    return same;
}

static void applied_wait(int i, uint32_t kind, const char *text)
{
    uint64_t until = sfs_time_ms() + WAIT_MS;

    while (!text_is(i, kind, text)) {
        if (sfs_time_ms() > until) {
            fail_msg("replica %d never applied %s \"%s\" (it has \"%s\")", i + 1,
                     sfs_mgmt_raft_kind_name(kind), text, replicas[i].texts[kind - 1]);
        }
        usleep(20000);
    }
}

static int setup(void **state)
{
    int base = 21000 + (int)(getpid() % 3000) * 3; /* below the ephemeral ports */

    (void)state;
    if (!mkdtemp(root)) {
        return -1;
    }
    for (int i = 0; i < REPLICAS; i++) {
        snprintf(addresses[i], sizeof(addresses[i]), "127.0.0.1:%d", base + i);
        address_list[i] = addresses[i];
        pthread_mutex_init(&replicas[i].lock, NULL);
        snprintf(replicas[i].config.path, sizeof(replicas[i].config.path), "%s/r%d/stripefs.yaml",
                 root, i + 1);
        replicas[i].config.mirror_groups      = groups;
        replicas[i].config.mirror_group_count = 2;
    }
    for (int i = 0; i < REPLICAS; i++) {
        replica_start(i);
    }
    return 0;
}

static int teardown(void **state)
{
    char cmd[128];

    (void)state;
    for (int i = 0; i < REPLICAS; i++) {
        if (replicas[i].raft) {
            replica_stop(i);
        }
    }
    snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_replicated_everywhere(void **state)
{
    const char *mirror  = "stripefs mirror state 1\ngroup 1 members 101 201 primary 201 states "
                          "needs-resync good\n";
    const char *meta    = "stripefs meta mirror state 1\nstate good batch 21\n";
    const char *primary = "stripefs meta primary 1\nrank 2 batch 21\n";
    uint32_t    leader_id;
    int         leader, follower, rc;

    (void)state;
    propose(SFS_MGMT_RAFT_MIRROR_STATE, mirror);
    propose(SFS_MGMT_RAFT_META_MIRROR_STATE, meta);
    propose(SFS_MGMT_RAFT_META_PRIMARY, primary);
    for (int i = 0; i < REPLICAS; i++) {
        applied_wait(i, SFS_MGMT_RAFT_MIRROR_STATE, mirror);
        applied_wait(i, SFS_MGMT_RAFT_META_MIRROR_STATE, meta);
        applied_wait(i, SFS_MGMT_RAFT_META_PRIMARY, primary);
    }
    /* a follower refuses and names the leader */
    leader   = leader_wait();
    follower = (leader + 1) % REPLICAS;
    while (sfs_mgmt_raft_leading(replicas[follower].raft, &leader_id) ||
           leader_id != (uint32_t)leader + 1) {
        usleep(20000); /* until it has heard the leader */
    }
    rc = sfs_mgmt_raft_propose(replicas[follower].raft, SFS_MGMT_RAFT_META_PRIMARY, "x", 1, 1000);
    assert_int_equal(rc, -ENOTCONN);
    assert_non_null(strstr(sfs_error_detail(), "is not the leader (replica"));
    assert_non_null(strstr(sfs_error_detail(), addresses[leader]));
    /* a text the state files never hold is refused before anything is sent */
    rc = sfs_mgmt_raft_propose(replicas[leader].raft, SFS_MGMT_RAFT_META_PRIMARY, "a\0b", 3, 1000);
    assert_int_equal(rc, -EINVAL);
    assert_true(text_is(leader, SFS_MGMT_RAFT_META_PRIMARY, primary));
}

static void test_leader_lost_and_back(void **state)
{
    char text[64];
    int  old, now;

    (void)state;
    old = leader_wait();
    replica_stop(old);
    now = leader_wait();
    assert_int_not_equal(now, old);
    /* more than the snapshot threshold: the old leader's place in the log
     * is compacted away while it is down */
    for (int n = 0; n < 20; n++) {
        snprintf(text, sizeof(text), "stripefs meta primary 1\nrank 2 batch %d\n", 100 + n);
        propose(SFS_MGMT_RAFT_META_PRIMARY, text);
    }
    for (int i = 0; i < REPLICAS; i++) {
        if (i != old) {
            applied_wait(i, SFS_MGMT_RAFT_META_PRIMARY, text);
        }
    }
    replica_start(old);
    applied_wait(old, SFS_MGMT_RAFT_META_PRIMARY, text);
    /* the kinds not proposed since came back with it too */
    applied_wait(old, SFS_MGMT_RAFT_META_MIRROR_STATE,
                 "stripefs meta mirror state 1\nstate good batch 21\n");
}

static void test_no_majority(void **state)
{
    const char *text = "stripefs meta mirror state 1\nstate needs-resync batch 40\n";
    int         alone, a, b, rc;
    uint64_t    until;

    (void)state;
    alone = leader_wait();
    a     = (alone + 1) % REPLICAS;
    b     = (alone + 2) % REPLICAS;
    replica_stop(a);
    replica_stop(b);
    /* alone it cannot commit: it either steps down (refused) or the
     * command waits out its timeout uncommitted */
    until = sfs_time_ms() + WAIT_MS;
    do {
        rc = sfs_mgmt_raft_propose(replicas[alone].raft, SFS_MGMT_RAFT_META_MIRROR_STATE, text,
                                   strlen(text), 1500);
        assert_int_not_equal(rc, 0);
    } while (rc != -ENOTCONN && sfs_time_ms() < until);
    assert_int_equal(rc, -ENOTCONN);
    until = sfs_time_ms() + 1000; /* what it publishes follows within a tick */
    while (sfs_mgmt_raft_leading(replicas[alone].raft, NULL) && sfs_time_ms() < until) {
        usleep(20000);
    }
    assert_false(sfs_mgmt_raft_leading(replicas[alone].raft, NULL));
    replica_start(a);
    propose(SFS_MGMT_RAFT_META_MIRROR_STATE, "stripefs meta mirror state 1\nstate good batch 41\n");
    applied_wait(alone, SFS_MGMT_RAFT_META_MIRROR_STATE,
                 "stripefs meta mirror state 1\nstate good batch 41\n");
    applied_wait(a, SFS_MGMT_RAFT_META_MIRROR_STATE,
                 "stripefs meta mirror state 1\nstate good batch 41\n");
    replica_start(b);
    applied_wait(b, SFS_MGMT_RAFT_META_MIRROR_STATE,
                 "stripefs meta mirror state 1\nstate good batch 41\n");
}

static void test_all_restarted(void **state)
{
    const char *text = "stripefs meta primary 1\nrank 1 batch 77\n";

    (void)state;
    propose(SFS_MGMT_RAFT_META_PRIMARY, text);
    for (int i = 0; i < REPLICAS; i++) {
        applied_wait(i, SFS_MGMT_RAFT_META_PRIMARY, text);
    }
    for (int i = 0; i < REPLICAS; i++) {
        replica_stop(i);
    }
    for (int i = 0; i < REPLICAS; i++) {
        replica_start(i);
    }
    for (int i = 0; i < REPLICAS; i++) {
        applied_wait(i, SFS_MGMT_RAFT_META_PRIMARY, text);
    }
    /* every replica's files: the same, what was last committed of each
     * kind, and read by management's own parsers */
    for (uint32_t kind = 1; kind <= SFS_MGMT_RAFT_KINDS; kind++) {
        char *first = NULL;

        for (int i = 0; i < REPLICAS; i++) {
            char  path[PATH_MAX];
            char *file = NULL;

            assert_int_equal(replicas[i].writes_failed, 0);
            assert_int_equal(sfs_mgmt_state_path(&replicas[i].config, sfs_mgmt_raft_kind_name(kind),
                                                 path, sizeof(path)),
                             1);
            assert_int_equal(sfs_mgmt_state_read(path, &file), 0);
            assert_string_equal(file, replicas[i].texts[kind - 1]);
            if (first) {
                assert_string_equal(file, first);
                free(file);
            } else {
                first = file;
            }
        }
        free(first);
    }
}

/* a text the file's own parser refuses is not written */
static void test_apply_checks(void **state)
{
    const char *good       = "stripefs meta primary 1\nrank 3 batch 5\n";
    const char *bad_rank   = "stripefs meta primary 1\nrank x batch 5\n";
    const char *bad_groups = "stripefs mirror state 1\ngroup 9 members 1 2 primary 1 states "
                             "good good\n";
    char        path[PATH_MAX];
    char       *file = NULL;

    (void)state;
    assert_int_equal(
        sfs_mgmt_state_apply(&replicas[0].config, SFS_MGMT_RAFT_META_PRIMARY, good, strlen(good)),
        0);
    assert_int_equal(sfs_mgmt_state_apply(&replicas[0].config, SFS_MGMT_RAFT_META_PRIMARY, bad_rank,
                                          strlen(bad_rank)),
                     -EBADMSG);
    assert_non_null(strstr(sfs_error_detail(), "meta-primary"));
    assert_int_equal(sfs_mgmt_state_apply(&replicas[0].config, SFS_MGMT_RAFT_MIRROR_STATE,
                                          bad_groups, strlen(bad_groups)),
                     -EBADMSG);
    assert_non_null(strstr(sfs_error_detail(), "mirror-state"));
    assert_int_equal(sfs_mgmt_state_path(&replicas[0].config, "meta-primary", path, sizeof(path)),
                     1);
    assert_int_equal(sfs_mgmt_state_read(path, &file), 0);
    assert_string_equal(file, good);
    free(file);
}

static void test_bad_params(void **state)
{
    sfs_mgmt_raft_params_t params;
    sfs_mgmt_raft_t       *raft           = NULL;
    const char            *bad[REPLICAS]  = {"127.0.0.1:1", "nohost", "127.0.0.1:3"};
    const char            *good[REPLICAS] = {"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"};

    (void)state;
    memset(&params, 0, sizeof(params));
    params.count     = REPLICAS;
    params.id        = 4;
    params.addresses = good;
    params.dir       = "/tmp";
    params.apply     = on_apply;
    assert_int_equal(sfs_mgmt_raft_start(&params, &raft), -EINVAL);
    assert_non_null(strstr(sfs_error_detail(), "replica 4 of 3"));
    params.id        = 1;
    params.addresses = bad;
    assert_int_equal(sfs_mgmt_raft_start(&params, &raft), -EINVAL);
    assert_non_null(strstr(sfs_error_detail(), "\"nohost\" is not host:port"));
    params.addresses = good;
    params.dir       = "/proc/no-such/raft";
    assert_int_not_equal(sfs_mgmt_raft_start(&params, &raft), 0);
    assert_non_null(strstr(sfs_error_detail(), "/proc/no-such/raft"));
    assert_null(raft);
}

static void test_codec(void **state)
{
    const char *texts[SFS_MGMT_RAFT_KINDS]   = {"a\n", NULL, "b\tc\n"}, *got[SFS_MGMT_RAFT_KINDS];
    size_t      lengths[SFS_MGMT_RAFT_KINDS] = {2, 0, 4}, got_lengths[SFS_MGMT_RAFT_KINDS];
    uint8_t     buf[256], copy[256];
    const char *text;
    size_t      length;
    uint32_t    kind;
    int         n;

    (void)state;
    n = sfs_mgmt_raft_cmd_encode(SFS_MGMT_RAFT_META_PRIMARY, "rank 1\n", 7, buf, sizeof(buf));
    assert_int_equal(n, 24); /* 12 + 7, padded to 8-byte words */
    assert_int_equal(sfs_mgmt_raft_cmd_decode_one(buf, (size_t)n, &kind, &text, &length), 0);
    assert_int_equal(kind, SFS_MGMT_RAFT_META_PRIMARY);
    assert_int_equal(length, 7);
    assert_memory_equal(text, "rank 1\n", 7);
    /* every truncation, and each damaged header field, is refused */
    for (int cut = 0; cut < n; cut++) {
        assert_int_equal(sfs_mgmt_raft_cmd_decode_one(buf, (size_t)cut, &kind, &text, &length),
                         -EBADMSG);
    }
    assert_int_equal(sfs_mgmt_raft_cmd_decode_one(buf, (size_t)n + 1, &kind, &text, &length),
                     -EBADMSG);
    assert_non_null(strstr(sfs_error_detail(), "1 bytes after it"));
    buf[n - 1] = 1;
    assert_int_equal(sfs_mgmt_raft_cmd_decode_one(buf, (size_t)n, &kind, &text, &length), -EBADMSG);
    assert_non_null(strstr(sfs_error_detail(), "padding not zero"));
    buf[n - 1] = 0;
    struct {
        int         at;
        uint8_t     value;
        const char *says;
    } damage[] = {{0, 'X', "no SFRC magic"},     {4, 2, "version 2"},
                  {5, 9, "unknown kind 9"},      {6, 1, "reserved bytes"},
                  {8, 200, "text of 200 bytes"}, {12, 0x01, "byte 0x01 at offset 0"}};
    for (size_t d = 0; d < sizeof(damage) / sizeof(damage[0]); d++) {
        memcpy(copy, buf, (size_t)n);
        copy[damage[d].at] = damage[d].value;
        assert_int_equal(sfs_mgmt_raft_cmd_decode_one(copy, (size_t)n, &kind, &text, &length),
                         -EBADMSG);
        assert_non_null(strstr(sfs_error_detail(), damage[d].says));
    }
    assert_int_equal(sfs_mgmt_raft_cmd_encode(7, "x", 1, buf, sizeof(buf)), -EINVAL);
    assert_int_equal(sfs_mgmt_raft_cmd_encode(1, "x", 1, buf, 5), -ENOSPC);
    /* snapshots: what is encoded decodes the same; a kind twice is refused */
    n = sfs_mgmt_raft_snapshot_encode(texts, lengths, buf, sizeof(buf));
    assert_int_equal((size_t)n, sfs_mgmt_raft_snapshot_size(texts, lengths));
    assert_int_equal(sfs_mgmt_raft_snapshot_decode(buf, (size_t)n, got, got_lengths), 0);
    assert_null(got[1]);
    assert_int_equal(got_lengths[0], 2);
    assert_memory_equal(got[0], "a\n", 2);
    assert_int_equal(got_lengths[2], 4);
    assert_memory_equal(got[2], "b\tc\n", 4);
    memcpy(buf + n, buf, (size_t)n);
    assert_int_equal(sfs_mgmt_raft_snapshot_decode(buf, 2 * (size_t)n, got, got_lengths), -EBADMSG);
    assert_non_null(strstr(sfs_error_detail(), "mirror-state twice"));
    assert_int_equal(sfs_mgmt_raft_snapshot_decode(buf, (size_t)n - 1, got, got_lengths), -EBADMSG);
    assert_non_null(strstr(sfs_error_detail(), "management snapshot, at byte 16"));
}

int main(void)
{
    const struct CMUnitTest codec[] = {
        cmocka_unit_test(test_codec),
        cmocka_unit_test(test_bad_params),
    };
    /* in order: each starts from what the one before left */
    const struct CMUnitTest replicas_tests[] = {
        cmocka_unit_test(test_replicated_everywhere), cmocka_unit_test(test_leader_lost_and_back),
        cmocka_unit_test(test_no_majority),           cmocka_unit_test(test_all_restarted),
        cmocka_unit_test(test_apply_checks),
    };
    int failed = cmocka_run_group_tests(codec, NULL, NULL);

    return failed + cmocka_run_group_tests(replicas_tests, setup, teardown);
}
