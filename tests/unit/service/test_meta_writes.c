/* Metadata mirroring's first half (service/sfs_meta_writes.c,
 * sfs_meta_store_writes.c): a primary store that records its writes and a
 * mirror that applies them end byte for byte equal, table by table, after
 * creates, mkdir, chmod, rename, unlink (with its pending deletion), a
 * failed operation whose nested transaction aborted, and a repair of the
 * consistency check that deletes through a cursor. A malformed set (cut
 * anywhere, a flipped byte, an unknown table, trailing bytes) is refused
 * before anything changes; so is a set whose delete finds nothing (the
 * mirror is not a copy of the primary). A store that does not record keeps
 * nothing. A full copy in pieces replaces a mirror that differs. Kept
 * replies (sfs_meta_reply_table.h) travel as notes with their batch (one
 * of an aborted change does not), leave both stores alone, read back from
 * the mirror's table as they were kept, are forgotten per client past
 * SFS_META_REPLY_KEEP and by age, and a malformed record is refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sfs_errno.h"
#include "sfs_meta_store.h"
#include "sfs_meta_reply_record.h"
#include "sfs_meta_reply_table.h"
#include "sfs_meta_store_internal.h"
#include "sfs_meta_writes.h"
#include "sfs_ns_test.h"

#include <ftw.h>
#include <unistd.h>

typedef struct {
    char              dir[2][64];
    sfs_meta_store_t *store[2]; /* 0: the primary (records), 1: its mirror */
    sfs_cred_t        server;
} fixture_t;

static int choose_two(void *arg, uint32_t pool, uint32_t count, uint32_t start_target,
                      uint32_t *targets)
{
    (void)arg;
    (void)pool;
    (void)start_target;
    targets[0] = 101;
    if (count > 1) {
        targets[1] = 201;
        return 2;
    }
    return 1;
}

static int setup(void **state)
{
    fixture_t              *f = calloc(1, sizeof(*f));
    sfs_meta_store_params_t params;

    if (!f) {
        return -1;
    }
    for (int i = 0; i < 2; i++) {
        snprintf(f->dir[i], sizeof(f->dir[i]), "/tmp/sfs-test-writes.XXXXXX");
        if (!mkdtemp(f->dir[i])) {
            return -1;
        }
        memset(&params, 0, sizeof(params));
        params.dir          = f->dir[i];
        params.map_size     = 64ull << 20;
        params.stripe_count = 2;
        if (sfs_meta_store_open(&params, &f->store[i]) != 0) {
            fail_msg("cannot open a metadata store in %s: %s", f->dir[i], sfs_error_detail());
        }
    }
    sfs_meta_store_record_writes(f->store[0], 1);
    f->server.flags = SFS_CRED_SERVER;
    *state          = f;
    return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static int teardown(void **state)
{
    fixture_t *f = *state;

    for (int i = 0; i < 2; i++) {
        sfs_meta_store_close(f->store[i]);
        nftw(f->dir[i], rm_entry, 8, FTW_DEPTH | FTW_PHYS);
    }
    free(f);
    return 0;
}

/* Every record of one table of both stores, compared in key order. */
static void expect_table_equal(fixture_t *f, int table)
{
    MDB_txn    *txn[2];
    MDB_cursor *cursor[2];
    MDB_val     key[2], val[2];
    int         rc[2];
    unsigned    n = 0;

    for (int i = 0; i < 2; i++) {
        sfs_meta_store_t *s   = f->store[i];
        MDB_dbi           dbi = table == 0   ? s->inodes
                                : table == 1 ? s->dentries
                                : table == 2 ? s->counters
                                             : s->unlinked;

        assert_int_equal(mdb_txn_begin(s->env, NULL, MDB_RDONLY, &txn[i]), 0);
        assert_int_equal(mdb_cursor_open(txn[i], dbi, &cursor[i]), 0);
        rc[i] = mdb_cursor_get(cursor[i], &key[i], &val[i], MDB_FIRST);
    }
    for (;;) {
        if (rc[0] != rc[1]) {
            fail_msg("table %s: record %u is on the %s only", sfs_meta_table_name(table), n + 1,
                     rc[0] == 0 ? "primary" : "mirror");
        }
        if (rc[0] != 0) {
            break;
        }
        if (key[0].mv_size != key[1].mv_size ||
            memcmp(key[0].mv_data, key[1].mv_data, key[0].mv_size) != 0 ||
            val[0].mv_size != val[1].mv_size ||
            memcmp(val[0].mv_data, val[1].mv_data, val[0].mv_size) != 0) {
            fail_msg("table %s: record %u differs", sfs_meta_table_name(table), n + 1);
        }
        n++;
        for (int i = 0; i < 2; i++) {
            rc[i] = mdb_cursor_get(cursor[i], &key[i], &val[i], MDB_NEXT);
        }
    }
    for (int i = 0; i < 2; i++) {
        mdb_cursor_close(cursor[i]);
        mdb_txn_abort(txn[i]);
    }
}

static void expect_stores_equal(fixture_t *f)
{
    for (int t = 0; t < SFS_META_TABLE_REPLIES; t++) { /* the store's tables */
        expect_table_equal(f, t);
    }
}

/* Commit the primary's transaction and apply what it kept to the mirror. */
static int commit_and_mirror(fixture_t *f, sfs_meta_txn_t *txn)
{
    sfs_meta_writes_t *writes = sfs_meta_txn_writes(txn);
    const void        *data;
    size_t             length;
    void              *copy;
    int                rc;

    assert_non_null(writes);
    data = sfs_meta_writes_encoded(writes, &length);
    assert_non_null(data);
    copy = malloc(length);
    assert_non_null(copy);
    memcpy(copy, data, length);
    assert_int_equal(sfs_meta_txn_commit(txn), 0);
    rc = sfs_meta_store_apply(f->store[1], copy, length, 0);
    free(copy);
    return rc;
}

static void create(sfs_meta_txn_t *txn, fixture_t *f, const char *path)
{
    sfs_ns_create_args_t args;
    sfs_attr_t           attr;
    int                  created = 0;

    memset(&args, 0, sizeof(args));
    args.cred   = &f->server;
    args.path   = path;
    args.mode   = 0640;
    args.uid    = 4001;
    args.gid    = 4101;
    args.now_ns = 7;
    args.choose = choose_two;
    assert_int_equal(sfs_ns_create(txn, &args, &attr, &created), 0);
    assert_int_equal(created, 1);
}

/* One batch as the metadata thread runs it: each operation in a nested
 * transaction, a failing one aborted. */
static void test_batch_mirrored(void **state)
{
    fixture_t      *f = *state;
    sfs_meta_txn_t *txn, *nested;
    sfs_attr_t      attr;

    assert_int_equal(sfs_meta_txn_begin(f->store[0], 1, &txn), 0);
    assert_int_equal(sfs_ns_mkdir(txn, &f->server, "/d", 0755, 4001, 4101, 3, &attr), 0);
    create(txn, f, "/d/a");
    create(txn, f, "/d/b");
    /* fails: nothing of it may reach the mirror */
    assert_int_equal(sfs_meta_txn_begin_nested(txn, &nested), 0);
    create(nested, f, "/d/c");
    assert_int_equal(sfs_ns_mkdir(nested, &f->server, "/d", 0755, 0, 0, 4, &attr), -EEXIST);
    sfs_meta_txn_abort(nested);
    /* succeeds in a nested transaction */
    assert_int_equal(sfs_meta_txn_begin_nested(txn, &nested), 0);
    assert_int_equal(
        sfs_ns_setattr(nested, &f->server, "/d/a", SFS_SETATTR_MODE, 0600, 0, 0, 0, 0, 5, &attr),
        0);
    assert_int_equal(sfs_meta_txn_commit(nested), 0);
    assert_int_equal(sfs_ns_rename(txn, &f->server, "/d/a", "/d/z", 6), 0);
    assert_int_equal(sfs_ns_unlink(txn, &f->server, "/d/b", 8, &attr), 0);
    assert_int_equal(commit_and_mirror(f, txn), 0);
    expect_stores_equal(f);

    /* the mirror holds what was asked, not only the same bytes */
    assert_int_equal(sfs_meta_txn_begin(f->store[1], 0, &txn), 0);
    assert_int_equal(sfs_ns_lookup(txn, &f->server, "/d/z", 0, &attr), 0);
    assert_int_equal(attr.mode & 07777, 0600);
    assert_int_equal(sfs_ns_lookup(txn, &f->server, "/d/b", 0, &attr), -ENOENT);
    assert_int_equal(sfs_ns_lookup(txn, &f->server, "/d/c", 0, &attr), -ENOENT);
    sfs_meta_txn_abort(txn);

    /* a second batch: the chunk deletions done, a directory removed */
    assert_int_equal(sfs_meta_txn_begin(f->store[0], 1, &txn), 0);
    {
        uint64_t      ids[4];
        sfs_pattern_t patterns[4];
        uint32_t      count = 0;

        assert_int_equal(sfs_ns_pending_deletes(txn, 0, 4, 0, ids, patterns, &count), 0);
        assert_int_equal(count, 1);
        assert_int_equal(sfs_ns_deletes_done(txn, ids, count), 0);
    }
    assert_int_equal(sfs_ns_unlink(txn, &f->server, "/d/z", 9, &attr), 0);
    assert_int_equal(sfs_ns_rmdir(txn, &f->server, "/d", 10), 0);
    assert_int_equal(commit_and_mirror(f, txn), 0);
    expect_stores_equal(f);
}

static void count_problem(void *arg, const char *line)
{
    (void)line;
    (*(unsigned *)arg)++;
}

/* The consistency check's repair deletes a dangling name through its
 * cursor: the mirror loses it too. */
static void test_check_repair_mirrored(void **state)
{
    fixture_t           *f = *state;
    sfs_meta_txn_t      *txn;
    sfs_ns_check_stats_t stats;
    sfs_attr_t           attr;
    unsigned             problems = 0;

    assert_int_equal(sfs_meta_txn_begin(f->store[0], 1, &txn), 0);
    create(txn, f, "/x");
    assert_int_equal(sfs_ns_lookup(txn, &f->server, "/x", 0, &attr), 0);
    assert_int_equal(commit_and_mirror(f, txn), 0);
    /* the same damage on both: the inode of /x gone, its name left */
    for (int i = 0; i < 2; i++) {
        sfs_meta_txn_t *damage;

        sfs_meta_store_record_writes(f->store[i], 0);
        assert_int_equal(sfs_meta_txn_begin(f->store[i], 1, &damage), 0);
        assert_int_equal(sfs_ns_test_drop_inode(damage, attr.entry_id), 0);
        assert_int_equal(sfs_meta_txn_commit(damage), 0);
    }
    expect_stores_equal(f);
    sfs_meta_store_record_writes(f->store[0], 1);
    assert_int_equal(sfs_meta_txn_begin(f->store[0], 1, &txn), 0);
    memset(&stats, 0, sizeof(stats));
    assert_int_equal(sfs_ns_check(txn, 1, count_problem, &problems, &stats), 0);
    assert_true(problems >= 1);
    assert_true(stats.repaired >= 1);
    assert_int_equal(commit_and_mirror(f, txn), 0);
    expect_stores_equal(f);
}

/* Malformed sets change nothing, whatever is wrong with them. */
static void test_malformed_refused(void **state)
{
    fixture_t      *f = *state;
    sfs_meta_txn_t *txn;
    sfs_attr_t      attr;
    const void     *data;
    size_t          length;
    uint8_t        *copy;

    assert_int_equal(sfs_meta_txn_begin(f->store[0], 1, &txn), 0);
    assert_int_equal(sfs_ns_mkdir(txn, &f->server, "/m", 0755, 0, 0, 3, &attr), 0);
    data = sfs_meta_writes_encoded(sfs_meta_txn_writes(txn), &length);
    copy = malloc(length + 1);
    assert_non_null(copy);
    memcpy(copy, data, length);
    sfs_meta_txn_abort(txn); /* the primary never committed it */

    for (size_t cut = 0; cut < length; cut++) {
        assert_int_equal(sfs_meta_store_apply(f->store[1], copy, cut, 0), -EPROTO);
    }
    copy[length] = 0;
    assert_int_equal(sfs_meta_store_apply(f->store[1], copy, length + 1, 0), -EPROTO);
    copy[0] ^= 1; /* magic */
    assert_int_equal(sfs_meta_store_apply(f->store[1], copy, length, 0), -EPROTO);
    copy[0] ^= 1;
    copy[SFS_META_WRITES_HEADER + 1] = SFS_META_TABLES; /* the first record's table */
    assert_int_equal(sfs_meta_store_apply(f->store[1], copy, length, 0), -EPROTO);
    assert_non_null(strstr(sfs_error_detail(), "record 1: unknown table"));
    free(copy);

    assert_int_equal(sfs_meta_txn_begin(f->store[1], 0, &txn), 0);
    assert_int_equal(sfs_ns_lookup(txn, &f->server, "/m", 0, &attr), -ENOENT);
    sfs_meta_txn_abort(txn);
    expect_table_equal(f, SFS_META_TABLE_DENTRIES); /* neither has /m */
}

/* A delete of a record the mirror does not have: refused, nothing of the
 * set applied, and the message says the stores differ. */
static void test_diverged_refused(void **state)
{
    fixture_t      *f = *state;
    sfs_meta_txn_t *txn;
    sfs_attr_t      attr;
    const void     *data;
    size_t          length;
    void           *copy;

    /* /e exists on the primary only */
    sfs_meta_store_record_writes(f->store[0], 0);
    assert_int_equal(sfs_meta_txn_begin(f->store[0], 1, &txn), 0);
    assert_int_equal(sfs_ns_mkdir(txn, &f->server, "/e", 0755, 0, 0, 3, &attr), 0);
    assert_int_equal(sfs_meta_txn_commit(txn), 0);
    sfs_meta_store_record_writes(f->store[0], 1);

    assert_int_equal(sfs_meta_txn_begin(f->store[0], 1, &txn), 0);
    assert_int_equal(sfs_ns_mkdir(txn, &f->server, "/f", 0755, 0, 0, 4, &attr), 0);
    assert_int_equal(sfs_ns_rmdir(txn, &f->server, "/e", 5), 0);
    data = sfs_meta_writes_encoded(sfs_meta_txn_writes(txn), &length);
    copy = malloc(length);
    assert_non_null(copy);
    memcpy(copy, data, length);
    assert_int_equal(sfs_meta_txn_commit(txn), 0);
    assert_int_equal(sfs_meta_store_apply(f->store[1], copy, length, 0), -ESTALE);
    assert_non_null(strstr(sfs_error_detail(), "differs from its primary's"));
    free(copy);
    assert_int_equal(sfs_meta_txn_begin(f->store[1], 0, &txn), 0);
    assert_int_equal(sfs_ns_lookup(txn, &f->server, "/f", 0, &attr), -ENOENT);
    sfs_meta_txn_abort(txn);
}

/* A full copy (sfs_meta_store_copy) in small pieces replaces a mirror that
 * differs: the first piece empties it; afterwards both stores are equal and
 * at the same batch. A copy cut short leaves the mirror at batch 0 (the
 * number comes last), so it is never taken for a whole one. */
static void test_full_copy(void **state)
{
    fixture_t         *f = *state;
    sfs_meta_txn_t    *txn;
    sfs_attr_t         attr;
    sfs_meta_writes_t *pieces = NULL;
    uint32_t           count  = 0;
    uint64_t           seq = 0, theirs = 0;
    char               path[32];

    sfs_meta_store_record_writes(f->store[0], 0);
    assert_int_equal(sfs_meta_txn_begin(f->store[0], 1, &txn), 0);
    for (int i = 0; i < 20; i++) {
        snprintf(path, sizeof(path), "/dir%02d", i);
        assert_int_equal(sfs_ns_mkdir(txn, &f->server, path, 0755, 4001, 4101, 3, &attr), 0);
        snprintf(path, sizeof(path), "/dir%02d/file", i);
        create(txn, f, path);
    }
    assert_int_equal(sfs_meta_txn_mirror_seq_next(txn, &seq), 0);
    assert_int_equal(sfs_meta_txn_mirror_seq_next(txn, &seq), 0);
    assert_int_equal(seq, 2);
    assert_int_equal(sfs_meta_txn_commit(txn), 0);
    /* the mirror holds something else */
    assert_int_equal(sfs_meta_txn_begin(f->store[1], 1, &txn), 0);
    assert_int_equal(sfs_ns_mkdir(txn, &f->server, "/only-here", 0755, 0, 0, 3, &attr), 0);
    assert_int_equal(sfs_meta_txn_commit(txn), 0);

    assert_int_equal(sfs_meta_store_copy(f->store[0], 512, &pieces, &count), 0);
    assert_true(count > 3);
    /* cut short: all but the last piece */
    for (uint32_t i = 0; i + 1 < count; i++) {
        size_t      length;
        const void *data = sfs_meta_writes_encoded(&pieces[i], &length);

        assert_true(length <= 512 || pieces[i].count == 1);
        assert_int_equal(sfs_meta_store_apply(f->store[1], data, length, i == 0), 0);
    }
    assert_int_equal(sfs_meta_store_mirror_seq(f->store[1], &theirs), 0);
    assert_int_equal(theirs, 0);
    /* whole */
    for (uint32_t i = 0; i < count; i++) {
        size_t      length;
        const void *data = sfs_meta_writes_encoded(&pieces[i], &length);

        assert_int_equal(sfs_meta_store_apply(f->store[1], data, length, i == 0), 0);
    }
    for (uint32_t i = 0; i < count; i++) {
        sfs_meta_writes_free(&pieces[i]);
    }
    free(pieces);
    expect_stores_equal(f);
    assert_int_equal(sfs_meta_store_mirror_seq(f->store[1], &theirs), 0);
    assert_int_equal(theirs, 2);
    assert_int_equal(sfs_meta_txn_begin(f->store[1], 0, &txn), 0);
    assert_int_equal(sfs_ns_lookup(txn, &f->server, "/only-here", 0, &attr), -ENOENT);
    assert_int_equal(sfs_ns_lookup(txn, &f->server, "/dir19/file", 0, &attr), 0);
    sfs_meta_txn_abort(txn);
}

/* Without recording, a write transaction keeps nothing. */
static void test_not_recording(void **state)
{
    fixture_t      *f = *state;
    sfs_meta_txn_t *txn;
    sfs_attr_t      attr;

    sfs_meta_store_record_writes(f->store[0], 0);
    assert_int_equal(sfs_meta_txn_begin(f->store[0], 1, &txn), 0);
    assert_null(sfs_meta_txn_writes(txn));
    assert_int_equal(sfs_ns_mkdir(txn, &f->server, "/n", 0755, 0, 0, 3, &attr), 0);
    assert_int_equal(sfs_meta_txn_commit(txn), 0);
    sfs_meta_store_record_writes(f->store[0], 1);
    assert_int_equal(sfs_meta_txn_begin(f->store[0], 0, &txn), 0); /* reads never keep */
    assert_null(sfs_meta_txn_writes(txn));
    sfs_meta_txn_abort(txn);
}

/* The codec alone: records round trip; what cannot be encoded is refused. */
static int count_records(void *arg, sfs_meta_write_op_t op, sfs_meta_table_t table, const void *key,
                         size_t key_length, const void *value, size_t value_length)
{
    unsigned *n = arg;

    (void)value;
    if (*n == 0) {
        assert_int_equal(op, SFS_META_WRITE_PUT);
        assert_int_equal(table, SFS_META_TABLE_COUNTERS);
        assert_memory_equal(key, "k", 1);
        assert_int_equal(key_length, 1);
        assert_int_equal(value_length, 3);
    } else {
        assert_int_equal(op, SFS_META_WRITE_DEL);
        assert_int_equal(value_length, 0);
    }
    (*n)++;
    return 0;
}

static void test_codec(void **state)
{
    sfs_meta_writes_t      w;
    sfs_meta_writes_mark_t mark;
    char                   big[SFS_META_WRITES_KEY_MAX + 1];
    const void            *data;
    size_t                 length;
    unsigned               n = 0;

    (void)state;
    sfs_meta_writes_init(&w);
    assert_null(sfs_meta_writes_encoded(&w, &length));
    assert_int_equal(length, 0);
    assert_int_equal(
        sfs_meta_writes_add(&w, SFS_META_WRITE_PUT, SFS_META_TABLE_COUNTERS, "k", 1, "abc", 3), 0);
    sfs_meta_writes_mark(&w, &mark);
    assert_int_equal(
        sfs_meta_writes_add(&w, SFS_META_WRITE_DEL, SFS_META_TABLE_INODES, "12345678", 8, NULL, 0),
        0);
    sfs_meta_writes_rewind(&w, &mark);
    assert_int_equal(sfs_meta_writes_add(&w, SFS_META_WRITE_DEL, SFS_META_TABLE_UNLINKED,
                                         "87654321", 8, NULL, 0),
                     0);
    memset(big, 'x', sizeof(big));
    assert_int_equal(sfs_meta_writes_add(&w, SFS_META_WRITE_PUT, SFS_META_TABLE_COUNTERS, big,
                                         sizeof(big), "v", 1),
                     -EINVAL);
    assert_int_equal(
        sfs_meta_writes_add(&w, SFS_META_WRITE_PUT, SFS_META_TABLE_COUNTERS, "", 0, "v", 1),
        -EINVAL);
    data = sfs_meta_writes_encoded(&w, &length);
    assert_int_equal(sfs_meta_writes_parse(data, length, count_records, &n), 0);
    assert_int_equal(n, 2);
    sfs_meta_writes_free(&w);
}

static size_t reply_value(uint64_t tag, uint64_t time_ns, uint8_t *buf, size_t size)
{
    sfs_meta_reply_record_t record;

    memset(&record, 0, sizeof(record));
    record.opcode                  = SFS_OP_MKDIR;
    record.uid                     = 4001;
    record.has_attr                = 1;
    record.time_ns                 = time_ns;
    record.attr.entry_id           = 1000 + tag;
    record.attr.type               = SFS_TYPE_DIR;
    record.attr.mode               = 0755;
    record.attr.uid                = 4001;
    record.attr.pattern.chunk_size = 1 << 20;
    return sfs_meta_reply_record_encode(&record, buf, size);
}

/* A change's note in its own nested transaction; `commit` 0 aborts it. */
static void note_reply(sfs_meta_txn_t *txn, uint64_t client, uint64_t tag, int commit)
{
    uint8_t         key[SFS_META_REPLY_KEY], value[SFS_META_REPLY_RECORD_MAX];
    size_t          length = reply_value(tag, 100, value, sizeof(value));
    sfs_meta_txn_t *nested;

    sfs_meta_reply_key(client, tag, key);
    assert_int_equal(sfs_meta_txn_begin_nested(txn, &nested), 0);
    assert_int_equal(
        sfs_meta_txn_note(nested, SFS_META_TABLE_REPLIES, key, sizeof(key), value, length), 0);
    if (commit) {
        assert_int_equal(sfs_meta_txn_commit(nested), 0);
    } else {
        sfs_meta_txn_abort(nested);
    }
}

/* A write set of one kept reply, applied to `table` at `now_ns`. */
static void apply_reply(sfs_meta_reply_table_t *table, uint64_t client, uint64_t tag,
                        uint64_t now_ns)
{
    sfs_meta_writes_t writes;
    uint8_t           key[SFS_META_REPLY_KEY], value[SFS_META_REPLY_RECORD_MAX];
    size_t            length = reply_value(tag, now_ns, value, sizeof(value));
    const void       *data;

    sfs_meta_writes_init(&writes);
    sfs_meta_reply_key(client, tag, key);
    assert_int_equal(sfs_meta_writes_add(&writes, SFS_META_WRITE_PUT, SFS_META_TABLE_REPLIES, key,
                                         sizeof(key), value, length),
                     0);
    data = sfs_meta_writes_encoded(&writes, &length);
    assert_int_equal(sfs_meta_reply_table_apply(table, data, length, now_ns), 0);
    sfs_meta_writes_free(&writes);
}

static void test_replies_mirrored(void **state)
{
    fixture_t              *f = *state;
    sfs_meta_txn_t         *txn;
    sfs_meta_reply_table_t *table;
    sfs_meta_reply_record_t record;
    sfs_attr_t              attr;
    uint8_t                 buf[SFS_META_REPLY_RECORD_MAX];
    size_t                  length;
    const void             *data;
    void                   *copy;
    uint64_t                hour = (uint64_t)SFS_META_REPLY_MAX_AGE_S * 1000000000ull;

    assert_int_equal(sfs_meta_reply_table_create(&table), 0);
    assert_int_equal(sfs_meta_txn_begin(f->store[0], 1, &txn), 0);
    assert_int_equal(sfs_ns_mkdir(txn, &f->server, "/r", 0755, 4001, 4101, 3, &attr), 0);
    note_reply(txn, 0xa1, 1, 1);
    note_reply(txn, 0xa1, 2, 1);
    note_reply(txn, 0xb2, 1, 1);
    note_reply(txn, 0xc3, 9, 0); /* its change aborted: nothing of it goes */
    data = sfs_meta_writes_encoded(sfs_meta_txn_writes(txn), &length);
    copy = malloc(length);
    assert_non_null(copy);
    memcpy(copy, data, length);
    assert_int_equal(commit_and_mirror(f, txn), 0);
    expect_stores_equal(f); /* the notes are in no store */

    /* the mirror keeps them in memory; it answers as the primary would have */
    assert_int_equal(sfs_meta_reply_table_apply(table, copy, length, 1000), 0);
    free(copy);
    assert_int_equal(sfs_meta_reply_table_count(table), 3);
    assert_int_equal(sfs_meta_reply_table_get(table, 0xa1, 2, &record), 0);
    assert_int_equal(record.opcode, SFS_OP_MKDIR);
    assert_int_equal(record.uid, 4001);
    assert_int_equal(record.attr.entry_id, 1002);
    assert_int_equal(record.attr.mode, 0755);
    assert_int_equal(sfs_meta_reply_table_get(table, 0xa1, 3, &record), -ENOENT);
    assert_int_equal(sfs_meta_reply_table_get(table, 0xb3, 1, &record), -ENOENT);
    assert_int_equal(sfs_meta_reply_table_get(table, 0xc3, 9, &record), -ENOENT);

    /* a client's change SFS_META_REPLY_KEEP after its first forgets it */
    apply_reply(table, 0xa1, 1 + SFS_META_REPLY_KEEP, 2000);
    assert_int_equal(sfs_meta_reply_table_get(table, 0xa1, 1, &record), -ENOENT);
    assert_int_equal(sfs_meta_reply_table_get(table, 0xa1, 2, &record), 0);
    assert_int_equal(sfs_meta_reply_table_get(table, 0xb2, 1, &record), 0); /* another client's */

    /* by age: an hour after the first ones, they go */
    apply_reply(table, 0xd4, 1, 1500 + hour);
    assert_int_equal(sfs_meta_reply_table_get(table, 0xb2, 1, &record), -ENOENT);
    assert_int_equal(sfs_meta_reply_table_get(table, 0xa1, 2, &record), -ENOENT);
    assert_int_equal(sfs_meta_reply_table_get(table, 0xa1, 1 + SFS_META_REPLY_KEEP, &record), 0);
    assert_int_equal(sfs_meta_reply_table_count(table), 2);

    /* the server's own reply, put directly once its batch is committed */
    record.opcode = SFS_OP_UNLINK;
    record.uid    = 4002;
    assert_int_equal(sfs_meta_reply_table_put(table, 0xe5, 7, &record, 1999 + hour), 0);
    memset(&record, 0, sizeof(record));
    assert_int_equal(sfs_meta_reply_table_get(table, 0xe5, 7, &record), 0);
    assert_int_equal(record.opcode, SFS_OP_UNLINK);
    assert_int_equal(record.uid, 4002);
    assert_int_equal(sfs_meta_reply_table_count(table), 3);
    record.opcode = SFS_OP_STAT; /* not a change: refused, as a note of it would be */
    assert_int_equal(sfs_meta_reply_table_put(table, 0xe5, 8, &record, 1999 + hour), -EINVAL);
    record.opcode = SFS_OP_UNLINK;
    sfs_meta_reply_table_destroy(table);

    /* the record's codec: canonical, and strict */
    length = sfs_meta_reply_record_encode(&record, buf, sizeof(buf));
    assert_true(length > 20);
    assert_int_equal(sfs_meta_reply_record_decode(buf, length, &record), 0);
    assert_int_equal(sfs_meta_reply_record_decode(buf, length - 1, &record), -EPROTO);
    buf[0] = 2; /* another version */
    assert_int_equal(sfs_meta_reply_record_decode(buf, length, &record), -EPROTO);
    buf[0] = 1;
    buf[4] = SFS_OP_STAT; /* not a change */
    assert_int_equal(sfs_meta_reply_record_decode(buf, length, &record), -EPROTO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_codec),
        cmocka_unit_test_setup_teardown(test_batch_mirrored, setup, teardown),
        cmocka_unit_test_setup_teardown(test_check_repair_mirrored, setup, teardown),
        cmocka_unit_test_setup_teardown(test_malformed_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_diverged_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_recording, setup, teardown),
        cmocka_unit_test_setup_teardown(test_full_copy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replies_mirrored, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
