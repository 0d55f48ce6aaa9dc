/* The storage server's chunk store (service/sfs_chunk_store.c and its
 * cache and mapped reads) on the in-memory backend (service/sfs_chunk_mem.c):
 * bytes read back as written, holes and missing chunks read as zeros,
 * truncate, unlink, listing, the sync flag (what survives a power loss),
 * the capacity limit, a full device, injected errors and the no-wait
 * paths, each error naming the target and the chunk. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sfs_chunk_mem.h"
#include "sfs_chunk_store.h"
#include "sfs_errno.h"

#define TARGET 101

typedef struct fixture {
    sfs_chunk_target_t *target;
    void               *mem;
} fixture_t;

static int open_target(void **state, uint64_t capacity, uint64_t device_size)
{
    sfs_config_target_t       config;
    sfs_chunk_target_params_t params = {
        .field_mask  = SFS_CHUNK_TARGET_PARAM_BACKEND | SFS_CHUNK_TARGET_PARAM_DEVICE_SIZE,
        .backend     = &sfs_chunk_backend_mem,
        .device_size = device_size,
    };
    fixture_t *f = calloc(1, sizeof(*f));

    if (!f) {
        return -1;
    }
    memset(&config, 0, sizeof(config));
    config.id       = TARGET;
    config.capacity = capacity;
    snprintf(config.dir, sizeof(config.dir), "/nonexistent/mem-target");
    if (sfs_chunk_target_open_params(&config, "test", &params, &f->target) != 0) {
        fprintf(stderr, "cannot open a mem target: %s\n", sfs_error_detail());
        free(f);
        return -1;
    }
    f->mem = sfs_chunk_target_backend_state(f->target);
    *state = f;
    return 0;
}

static int setup(void **state)
{
    return open_target(state, 0, 0);
}

static int setup_capacity(void **state)
{
    return open_target(state, 1 << 20, 0); /* the config's capacity: 1 MiB */
}

static int setup_small_device(void **state)
{
    return open_target(state, 0, 256 * 1024);
}

static int teardown(void **state)
{
    fixture_t *f = *state;

    sfs_chunk_target_close(f->target);
    free(f);
    return 0;
}

static void fill(uint8_t *buf, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        buf[i] = (uint8_t)(seed + i * 7);
    }
}

static int all_zero(const uint8_t *buf, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (buf[i]) {
            return 0;
        }
    }
    return 1;
}

static void write_one(fixture_t *f, uint64_t id, uint64_t offset, const void *data, uint64_t n,
                      unsigned flags)
{
    sfs_io_extent_t ext = {.chunk_offset = offset, .length = n};
    uint64_t        length;
    int             rc = sfs_chunk_write(f->target, id, &ext, 1, data, flags, &length);

    if (rc) {
        fail_msg("write of chunk %lu: %d (%s)", (unsigned long)id, rc, sfs_error_detail());
    }
    assert_true(length >= offset + n);
}

static uint64_t read_one(fixture_t *f, uint64_t id, uint64_t offset, void *buf, uint64_t n)
{
    sfs_io_extent_t ext = {.chunk_offset = offset, .length = n};
    uint64_t        length;
    int             rc = sfs_chunk_read(f->target, id, &ext, 1, buf, 0, &length);

    if (rc) {
        fail_msg("read of chunk %lu: %d (%s)", (unsigned long)id, rc, sfs_error_detail());
    }
    return length;
}

static void assert_detail(const char *what)
{
    if (!strstr(sfs_error_detail(), what)) {
        fail_msg("expected '%s' in the detail, got '%s'", what, sfs_error_detail());
    }
}

static void test_write_read_back(void **state)
{
    fixture_t      *f = *state;
    uint8_t         in[3000], out[3000];
    sfs_io_extent_t ext[2] = {{.chunk_offset = 0, .length = 1000},
                              {.chunk_offset = 5000, .length = 2000}};
    uint64_t        length;

    fill(in, sizeof(in), 1);
    assert_int_equal(sfs_chunk_write(f->target, 7, ext, 2, in, 0, &length), 0);
    assert_true(length >= 7000);
    memset(out, 0xee, sizeof(out));
    assert_int_equal(sfs_chunk_read(f->target, 7, ext, 2, out, 0, &length), 0);
    assert_int_equal(length, 7000);
    assert_memory_equal(in, out, sizeof(in));
    assert_int_equal(sfs_chunk_stat(f->target, 7, &length), 0);
    assert_int_equal(length, 7000);
    /* overwrite in the middle */
    fill(in, 100, 99);
    write_one(f, 7, 5050, in, 100, 0);
    assert_int_equal(read_one(f, 7, 5050, out, 100), 7000);
    assert_memory_equal(in, out, 100);
}

static void test_sparse_and_missing(void **state)
{
    fixture_t *f = *state;
    uint8_t    in[4096], out[8192];
    uint64_t   length;

    fill(in, sizeof(in), 3);
    write_one(f, 9, 1 << 20, in, sizeof(in), 0);
    /* a hole before the data */
    memset(out, 0xee, sizeof(out));
    assert_int_equal(read_one(f, 9, 4096, out, sizeof(out)), (1 << 20) + 4096);
    assert_true(all_zero(out, sizeof(out)));
    /* across the end: data, then zeros */
    memset(out, 0xee, sizeof(out));
    read_one(f, 9, 1 << 20, out, sizeof(out));
    assert_memory_equal(out, in, sizeof(in));
    assert_true(all_zero(out + 4096, 4096));
    /* wholly past the end */
    memset(out, 0xee, sizeof(out));
    read_one(f, 9, 4 << 20, out, 100);
    assert_true(all_zero(out, 100));
    /* a chunk that was never written: zeros, length 0, and nothing made */
    memset(out, 0xee, sizeof(out));
    assert_int_equal(read_one(f, 12345, 0, out, sizeof(out)), 0);
    assert_true(all_zero(out, sizeof(out)));
    assert_int_equal(sfs_chunk_stat(f->target, 12345, &length), 0);
    assert_int_equal(length, 0);
    assert_int_equal(sfs_chunk_mem_used(f->mem), (1 << 20) + 4096);
}

static void test_truncate(void **state)
{
    fixture_t *f = *state;
    uint8_t    in[1000], out[1000];
    uint64_t   length;

    fill(in, sizeof(in), 5);
    write_one(f, 3, 0, in, sizeof(in), 0);
    /* shrink-only does not grow */
    assert_int_equal(sfs_chunk_truncate(f->target, 3, 5000, SFS_TRUNCATE_SHRINK_ONLY), 0);
    assert_int_equal(sfs_chunk_stat(f->target, 3, &length), 0);
    assert_int_equal(length, 1000);
    assert_int_equal(sfs_chunk_truncate(f->target, 3, 400, SFS_TRUNCATE_SHRINK_ONLY), 0);
    assert_int_equal(read_one(f, 3, 0, out, sizeof(out)), 400);
    assert_memory_equal(out, in, 400);
    assert_true(all_zero(out + 400, 600));
    /* exact grows with zeros */
    assert_int_equal(sfs_chunk_truncate(f->target, 3, 3000, SFS_TRUNCATE_EXACT), 0);
    assert_int_equal(read_one(f, 3, 0, out, sizeof(out)), 3000);
    assert_memory_equal(out, in, 400);
    assert_true(all_zero(out + 400, 600));
    assert_int_equal(sfs_chunk_mem_used(f->mem), 3000);
    /* shrinking what is not there makes nothing; exact makes the chunk */
    assert_int_equal(sfs_chunk_truncate(f->target, 4, 100, SFS_TRUNCATE_SHRINK_ONLY), 0);
    assert_int_equal(sfs_chunk_stat(f->target, 4, &length), 0);
    assert_int_equal(length, 0);
    assert_int_equal(sfs_chunk_truncate(f->target, 5, 100, SFS_TRUNCATE_EXACT), 0);
    assert_int_equal(sfs_chunk_stat(f->target, 5, &length), 0);
    assert_int_equal(length, 100);
}

static void test_unlink(void **state)
{
    fixture_t *f = *state;
    uint8_t    in[500], out[500];
    uint64_t   length;

    fill(in, sizeof(in), 7);
    write_one(f, 11, 0, in, sizeof(in), 0); /* now open in the store's cache */
    assert_int_equal(sfs_chunk_unlink(f->target, 11), 0);
    assert_int_equal(sfs_chunk_stat(f->target, 11, &length), 0);
    assert_int_equal(length, 0);
    assert_int_equal(read_one(f, 11, 0, out, sizeof(out)), 0);
    assert_true(all_zero(out, sizeof(out)));
    assert_int_equal(sfs_chunk_mem_used(f->mem), 0);
    /* removing what is not there is no error */
    assert_int_equal(sfs_chunk_unlink(f->target, 11), 0);
    assert_int_equal(sfs_chunk_unlink(f->target, 999), 0);
    /* a new chunk of the same id starts empty, not with the old bytes */
    write_one(f, 11, 400, in, 10, 0);
    assert_int_equal(read_one(f, 11, 0, out, 400), 410);
    assert_true(all_zero(out, 400));
}

static void test_list(void **state)
{
    fixture_t *f = *state;
    uint64_t   ids[8], lengths[8];
    uint32_t   count;
    uint8_t    byte = 1;

    /* written out of order, listed in id order */
    write_one(f, 0x300, 9, &byte, 1, 0);
    write_one(f, 0x100, 0, &byte, 1, 0);
    write_one(f, 0x2ff, 99, &byte, 1, 0);
    write_one(f, 0x200, 4, &byte, 1, 0);
    assert_int_equal(sfs_chunk_list(f->target, 0, 8, ids, lengths, &count), 0);
    assert_int_equal(count, 4);
    assert_int_equal(ids[0], 0x100);
    assert_int_equal(ids[1], 0x200);
    assert_int_equal(ids[2], 0x2ff);
    assert_int_equal(ids[3], 0x300);
    assert_int_equal(lengths[0], 1);
    assert_int_equal(lengths[1], 5);
    assert_int_equal(lengths[2], 100);
    assert_int_equal(lengths[3], 10);
    /* paged: after an id, at most max */
    assert_int_equal(sfs_chunk_list(f->target, 0x200, 1, ids, lengths, &count), 0);
    assert_int_equal(count, 1);
    assert_int_equal(ids[0], 0x2ff);
    assert_int_equal(sfs_chunk_list(f->target, 0x300, 8, ids, lengths, &count), 0);
    assert_int_equal(count, 0);
    assert_int_equal(sfs_chunk_unlink(f->target, 0x200), 0);
    assert_int_equal(sfs_chunk_list(f->target, 0, 8, ids, lengths, &count), 0);
    assert_int_equal(count, 3);
    assert_int_equal(ids[1], 0x2ff);
    /* the backend's failure is reported, naming the target */
    sfs_chunk_mem_fail(f->mem, SFS_CHUNK_MEM_LIST, -EIO, 1);
    assert_int_equal(sfs_chunk_list(f->target, 0, 8, ids, lengths, &count), -EIO);
    assert_detail("target 101: cannot list the chunks");
}

static void test_sync_flag(void **state)
{
    fixture_t *f = *state;
    uint8_t    a[100], b[100], out[100];
    uint64_t   fsyncs = sfs_chunk_mem_calls(f->mem, SFS_CHUNK_MEM_FSYNC);

    fill(a, sizeof(a), 11);
    fill(b, sizeof(b), 22);
    /* a plain write is not durable: a power loss takes it */
    write_one(f, 21, 0, a, sizeof(a), 0);
    assert_int_equal(sfs_chunk_mem_calls(f->mem, SFS_CHUNK_MEM_FSYNC), fsyncs);
    /* SFS_CHUNK_IO_SYNC: durable when the write returns */
    write_one(f, 22, 0, a, sizeof(a), SFS_CHUNK_IO_SYNC);
    assert_int_equal(sfs_chunk_mem_calls(f->mem, SFS_CHUNK_MEM_FSYNC), fsyncs + 1);
    /* a later plain write on the synced chunk is lost too */
    write_one(f, 22, 0, b, sizeof(b), 0);
    assert_int_equal(sfs_chunk_mem_crash(f->mem), 0);
    assert_int_equal(read_one(f, 21, 0, out, sizeof(out)), 0);
    assert_true(all_zero(out, sizeof(out)));
    assert_int_equal(read_one(f, 22, 0, out, sizeof(out)), sizeof(a));
    assert_memory_equal(out, a, sizeof(a));
    /* fsync of one chunk, sync of the whole target */
    write_one(f, 23, 0, b, sizeof(b), 0);
    assert_int_equal(sfs_chunk_fsync(f->target, 23), 0);
    write_one(f, 24, 0, b, sizeof(b), 0);
    assert_int_equal(sfs_chunk_target_sync(f->target), 0);
    assert_int_equal(sfs_chunk_mem_crash(f->mem), 0);
    assert_int_equal(read_one(f, 23, 0, out, sizeof(out)), sizeof(b));
    assert_memory_equal(out, b, sizeof(b));
    assert_int_equal(read_one(f, 24, 0, out, sizeof(out)), sizeof(b));
    assert_memory_equal(out, b, sizeof(b));
    /* fsync of a chunk that does not exist is no error */
    assert_int_equal(sfs_chunk_fsync(f->target, 4242), 0);
    /* a failed fsync fails the synced write, naming the chunk */
    sfs_chunk_mem_fail(f->mem, SFS_CHUNK_MEM_FSYNC, -EIO, 1);
    {
        sfs_io_extent_t ext = {.chunk_offset = 0, .length = sizeof(a)};
        uint64_t        length;

        assert_int_equal(sfs_chunk_write(f->target, 25, &ext, 1, a, SFS_CHUNK_IO_SYNC, &length),
                         -EIO);
        assert_detail("target 101: writing chunk 0000000000000019 failed");
    }
}

static void test_device_full(void **state)
{
    fixture_t      *f = *state;
    static uint8_t  big[200 * 1024];
    sfs_io_extent_t ext = {.chunk_offset = 0, .length = sizeof(big)};
    uint64_t        length, capacity, avail;

    write_one(f, 1, 0, big, sizeof(big), 0);
    assert_int_equal(sfs_chunk_target_space(f->target, &capacity, &avail), 0);
    assert_int_equal(capacity, 256 * 1024);
    assert_int_equal(avail, 56 * 1024);
    /* the device's own ENOSPC (no capacity limit in the config) */
    assert_int_equal(sfs_chunk_write(f->target, 2, &ext, 1, big, 0, &length), -ENOSPC);
    assert_detail("target 101: writing chunk 0000000000000002 failed");
    assert_detail("ENOSPC");
    /* removing a chunk makes room */
    assert_int_equal(sfs_chunk_unlink(f->target, 1), 0);
    assert_int_equal(sfs_chunk_write(f->target, 2, &ext, 1, big, 0, &length), 0);
}

static void test_capacity_limit(void **state)
{
    fixture_t      *f = *state;
    static uint8_t  chunk[600 * 1024];
    sfs_io_extent_t ext = {.chunk_offset = 0, .length = sizeof(chunk)};
    uint64_t        length, capacity, avail;

    write_one(f, 1, 0, chunk, sizeof(chunk), 0);
    assert_int_equal(sfs_chunk_target_space(f->target, &capacity, &avail), 0);
    assert_int_equal(capacity, 1 << 20);
    assert_int_equal(avail, (1 << 20) - sizeof(chunk));
    assert_int_equal(sfs_chunk_write(f->target, 2, &ext, 1, chunk, 0, &length), -ENOSPC);
    assert_detail("target 101 is full (capacity limit 1048576 bytes)");
    /* overwriting in place needs no room */
    write_one(f, 1, 0, chunk, sizeof(chunk), 0);
    /* the limit counts what truncate and unlink give back */
    assert_int_equal(sfs_chunk_truncate(f->target, 1, 100 * 1024, SFS_TRUNCATE_EXACT), 0);
    assert_int_equal(sfs_chunk_write(f->target, 2, &ext, 1, chunk, 0, &length), 0);
    assert_int_equal(sfs_chunk_write(f->target, 3, &ext, 1, chunk, 0, &length), -ENOSPC);
    assert_int_equal(sfs_chunk_unlink(f->target, 2), 0);
    assert_int_equal(sfs_chunk_write(f->target, 3, &ext, 1, chunk, 0, &length), 0);
    /* a no-wait write must know the growth: never on a limited target */
    assert_int_equal(sfs_chunk_write(f->target, 3, &ext, 1, chunk, SFS_CHUNK_IO_NOWAIT, &length),
                     -EAGAIN);
}

/* A target that answered ENOSPC reports no free space at once (with room
 * left for smaller writes: the metadata server must place no new file
 * there) and has news for management until it reported so; a chunk that
 * goes gives it its free space back. So does growth by 1% of the capacity. */
static void test_enospc_reported(void **state)
{
    fixture_t      *f = *state;
    static uint8_t  chunk[600 * 1024];
    sfs_io_extent_t ext = {.chunk_offset = 0, .length = sizeof(chunk)};
    uint64_t        length, capacity, avail;

    assert_int_equal(sfs_chunk_target_space(f->target, &capacity, &avail), 0);
    assert_false(sfs_chunk_target_has_news(f->target));
    write_one(f, 1, 0, chunk, 1024, 0); /* 0.1% of 1 MiB: no news */
    assert_false(sfs_chunk_target_has_news(f->target));
    write_one(f, 1, 0, chunk, sizeof(chunk), 0);
    assert_true(sfs_chunk_target_has_news(f->target)); /* grew by 58% */
    assert_int_equal(sfs_chunk_target_space(f->target, &capacity, &avail), 0);
    assert_int_equal(avail, (1 << 20) - sizeof(chunk));
    assert_false(sfs_chunk_target_has_news(f->target));
    assert_int_equal(sfs_chunk_write(f->target, 2, &ext, 1, chunk, 0, &length), -ENOSPC);
    assert_true(sfs_chunk_target_has_news(f->target));
    assert_int_equal(sfs_chunk_target_space(f->target, &capacity, &avail), 0);
    assert_int_equal(avail, 0);
    assert_false(sfs_chunk_target_has_news(f->target));
    assert_int_equal(sfs_chunk_unlink(f->target, 1), 0);
    assert_true(sfs_chunk_target_has_news(f->target));
    assert_int_equal(sfs_chunk_target_space(f->target, &capacity, &avail), 0);
    assert_int_equal(avail, 1 << 20);
}

static void test_injected_errors(void **state)
{
    fixture_t      *f = *state;
    uint8_t         buf[64];
    sfs_io_extent_t ext = {.chunk_offset = 0, .length = sizeof(buf)};
    uint64_t        length;

    fill(buf, sizeof(buf), 1);
    write_one(f, 0x42, 0, buf, sizeof(buf), 0);
    sfs_chunk_mem_fail(f->mem, SFS_CHUNK_MEM_PREAD, -EIO, 1);
    assert_int_equal(sfs_chunk_read(f->target, 0x42, &ext, 1, buf, 0, &length), -EIO);
    assert_detail("target 101: reading chunk 0000000000000042 failed: EIO");
    /* the next read works (one failure injected) */
    assert_int_equal(read_one(f, 0x42, 0, buf, sizeof(buf)), sizeof(buf));
    /* an interrupted call is retried */
    sfs_chunk_mem_fail(f->mem, SFS_CHUNK_MEM_PWRITE, -EINTR, 2);
    write_one(f, 0x42, 0, buf, sizeof(buf), 0);
    /* opening fails: the chunk is named */
    sfs_chunk_mem_fail(f->mem, SFS_CHUNK_MEM_OPEN, -EACCES, 1);
    assert_int_equal(sfs_chunk_write(f->target, 0x43, &ext, 1, buf, 0, &length), -EACCES);
    assert_detail("target 101: cannot open chunk 0000000000000043");
    sfs_chunk_mem_fail(f->mem, SFS_CHUNK_MEM_STAT, -EIO, 1);
    assert_int_equal(sfs_chunk_stat(f->target, 0x42, &length), -EIO);
    assert_detail("target 101: stat chunk 0000000000000042");
    sfs_chunk_mem_fail(f->mem, SFS_CHUNK_MEM_UNLINK, -EROFS, 1);
    assert_int_equal(sfs_chunk_unlink(f->target, 0x42), -EROFS);
    assert_detail("target 101: unlink chunk 0000000000000042");
    sfs_chunk_mem_fail(f->mem, SFS_CHUNK_MEM_TRUNCATE, -EIO, 1);
    assert_int_equal(sfs_chunk_truncate(f->target, 0x42, 1, SFS_TRUNCATE_EXACT), -EIO);
    assert_detail("target 101: truncating chunk 0000000000000042");
    sfs_chunk_mem_fail(f->mem, SFS_CHUNK_MEM_SYNC, -EIO, 1);
    assert_int_equal(sfs_chunk_target_sync(f->target), -EIO);
    assert_detail("target 101: syncfs");
}

static void test_nowait(void **state)
{
    fixture_t      *f = *state;
    uint8_t         buf[64];
    sfs_io_extent_t ext = {.chunk_offset = 0, .length = sizeof(buf)};
    uint64_t        length;

    fill(buf, sizeof(buf), 2);
    /* not open yet: opening could wait for the disk */
    assert_int_equal(sfs_chunk_write(f->target, 0x50, &ext, 1, buf, SFS_CHUNK_IO_NOWAIT, &length),
                     -EAGAIN);
    assert_int_equal(sfs_chunk_read(f->target, 0x50, &ext, 1, buf, SFS_CHUNK_IO_NOWAIT, &length),
                     -EAGAIN);
    write_one(f, 0x50, 0, buf, sizeof(buf), 0);
    /* open in the cache: served without waiting */
    assert_int_equal(sfs_chunk_write(f->target, 0x50, &ext, 1, buf, SFS_CHUNK_IO_NOWAIT, &length),
                     0);
    assert_int_equal(sfs_chunk_mem_calls(f->mem, SFS_CHUNK_MEM_PWRITE_NOWAIT), 1);
    assert_int_equal(sfs_chunk_read(f->target, 0x50, &ext, 1, buf, SFS_CHUNK_IO_NOWAIT, &length),
                     0);
    /* a synced write always waits */
    assert_int_equal(sfs_chunk_write(f->target, 0x50, &ext, 1, buf,
                                     SFS_CHUNK_IO_NOWAIT | SFS_CHUNK_IO_SYNC, &length),
                     -EAGAIN);
    /* the device would wait: -EAGAIN with no detail, to be done again */
    sfs_error_clear();
    sfs_chunk_mem_fail(f->mem, SFS_CHUNK_MEM_PREAD_NOWAIT, -EAGAIN, 1);
    assert_int_equal(sfs_chunk_read(f->target, 0x50, &ext, 1, buf, SFS_CHUNK_IO_NOWAIT, &length),
                     -EAGAIN);
    assert_string_equal(sfs_error_detail(), "");
    /* a device that cannot tell: no-wait writes are not tried again */
    sfs_chunk_mem_fail(f->mem, SFS_CHUNK_MEM_PWRITE_NOWAIT, -EOPNOTSUPP, 1);
    assert_int_equal(sfs_chunk_write(f->target, 0x50, &ext, 1, buf, SFS_CHUNK_IO_NOWAIT, &length),
                     -EAGAIN);
    assert_int_equal(sfs_chunk_write(f->target, 0x50, &ext, 1, buf, SFS_CHUNK_IO_NOWAIT, &length),
                     -EAGAIN);
    assert_int_equal(sfs_chunk_mem_calls(f->mem, SFS_CHUNK_MEM_PWRITE_NOWAIT), 2);
}

static void test_no_map_no_fd(void **state)
{
    fixture_t      *f = *state;
    uint8_t         buf[8192];
    sfs_io_extent_t ext = {.chunk_offset = 0, .length = sizeof(buf)};
    sfs_chunk_map_t map;
    uint64_t        length;

    fill(buf, sizeof(buf), 6);
    write_one(f, 0x60, 0, buf, sizeof(buf), 0);
    /* the mem backend maps nothing: the caller reads instead */
    assert_int_equal(sfs_chunk_read_map(f->target, 0x60, &ext, 0, &map, &length), -EAGAIN);
    assert_null(map.addr);
    sfs_chunk_unmap(f->target, &map); /* harmless on a map never made */
    /* and has no file descriptor to hand to a client */
    assert_int_equal(sfs_chunk_open_readonly(f->target, 0x60), -EOPNOTSUPP);
}

static void test_many_chunks(void **state)
{
    fixture_t *f = *state;
    uint8_t    in[16], out[16];
    uint64_t   ids[400], lengths[400];
    uint32_t   count;

    /* more chunks than the store keeps open: each is closed and reopened */
    for (unsigned i = 0; i < 300; i++) {
        fill(in, sizeof(in), i);
        write_one(f, 1000 + i, i, in, sizeof(in), 0);
    }
    for (unsigned i = 0; i < 300; i++) {
        fill(in, sizeof(in), i);
        assert_int_equal(read_one(f, 1000 + i, i, out, sizeof(out)), i + sizeof(in));
        assert_memory_equal(in, out, sizeof(in));
    }
    assert_int_equal(sfs_chunk_list(f->target, 0, 400, ids, lengths, &count), 0);
    assert_int_equal(count, 300);
    assert_int_equal(ids[299], 1299);
    assert_true(sfs_chunk_mem_calls(f->mem, SFS_CHUNK_MEM_OPEN) > 300);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_write_read_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sparse_and_missing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_truncate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unlink, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sync_flag, setup, teardown),
        cmocka_unit_test_setup_teardown(test_device_full, setup_small_device, teardown),
        cmocka_unit_test_setup_teardown(test_capacity_limit, setup_capacity, teardown),
        cmocka_unit_test_setup_teardown(test_enospc_reported, setup_capacity, teardown),
        cmocka_unit_test_setup_teardown(test_injected_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nowait, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_map_no_fd, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_chunks, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
