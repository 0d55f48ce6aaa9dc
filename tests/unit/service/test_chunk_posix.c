/* The chunk store on its posix backend (service/sfs_chunk_posix.c) in a
 * temporary directory: the target.id marker, where chunk files live and
 * what they hold, bytes used counted again at open, listing, the read-only
 * descriptor handed to local clients, mapped reads (none on a throttled
 * target), and a shrink that waits for a mapped read to end. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sfs_chunk_store.h"
#include "sfs_errno.h"

#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TARGET 101

typedef struct fixture {
    char                root[64];
    sfs_config_target_t config;
    sfs_chunk_target_t *target;
} fixture_t;

static int reopen(fixture_t *f)
{
    sfs_chunk_target_close(f->target);
    f->target = NULL;
    return sfs_chunk_target_open(&f->config, "test", &f->target);
}

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof(*f));

    if (!f) {
        return -1;
    }
    snprintf(f->root, sizeof(f->root), "/tmp/sfs-test-chunk-posix.XXXXXX");
    if (!mkdtemp(f->root)) {
        free(f);
        return -1;
    }
    f->config.id = TARGET;
    snprintf(f->config.dir, sizeof(f->config.dir), "%s/t101", f->root);
    if (sfs_chunk_target_open(&f->config, "test", &f->target) != 0) {
        fprintf(stderr, "cannot open a target in %s: %s\n", f->config.dir, sfs_error_detail());
        return -1;
    }
    *state = f;
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

    sfs_chunk_target_close(f->target);
    nftw(f->root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(f);
    return 0;
}

static void fill(uint8_t *buf, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        buf[i] = (uint8_t)(seed + i * 13);
    }
}

static void write_one(fixture_t *f, uint64_t id, uint64_t offset, const void *data, uint64_t n)
{
    sfs_io_extent_t ext = {.chunk_offset = offset, .length = n};
    uint64_t        length;
    int             rc = sfs_chunk_write(f->target, id, &ext, 1, data, 0, &length);

    if (rc) {
        fail_msg("write of chunk %lu: %d (%s)", (unsigned long)id, rc, sfs_error_detail());
    }
}

static void chunk_path(fixture_t *f, uint64_t id, char *buf, size_t n)
{
    snprintf(buf, n, "%s/chunks/%02x/%016lx", f->config.dir, (unsigned)(id & 0xff),
             (unsigned long)id);
}

static void write_file(const char *path, const char *text)
{
    FILE *file = fopen(path, "w");

    assert_non_null(file);
    fputs(text, file);
    assert_int_equal(fclose(file), 0);
}

/* The file's first line (a static buffer). */
static const char *read_text(const char *path)
{
    static char line[256];
    FILE       *file = fopen(path, "r");

    assert_non_null(file);
    line[0] = '\0';
    assert_non_null(fgets(line, sizeof(line), file));
    fclose(file);
    return line;
}

static void test_marker(void **state)
{
    fixture_t  *f = *state;
    char        path[PATH_MAX + 32], line[128] = "";
    FILE       *file;
    struct stat st;

    snprintf(path, sizeof(path), "%s/target.id", f->config.dir);
    file = fopen(path, "r");
    assert_non_null(file);
    assert_non_null(fgets(line, sizeof(line), file));
    fclose(file);
    assert_string_equal(line, "stripefs target 101 cluster test\n");
    snprintf(path, sizeof(path), "%s/chunks/ff", f->config.dir);
    assert_int_equal(stat(path, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    /* the same directory given to another target is refused */
    sfs_chunk_target_close(f->target);
    f->target    = NULL;
    f->config.id = 102;
    assert_int_equal(sfs_chunk_target_open(&f->config, "test", &f->target), -EINVAL);
    assert_non_null(strstr(sfs_error_detail(), "belongs to target 101"));
    assert_null(f->target);
    /* and a marker that is not one */
    f->config.id = TARGET;
    snprintf(path, sizeof(path), "%s/target.id", f->config.dir);
    write_file(path, "hello\n");
    assert_int_equal(sfs_chunk_target_open(&f->config, "test", &f->target), -EINVAL);
    assert_non_null(strstr(sfs_error_detail(), "is not a stripefs marker"));
    write_file(path, "stripefs target 101 cluster test\n");
    assert_int_equal(sfs_chunk_target_open(&f->config, "test", &f->target), 0);
}

static void test_chunk_files(void **state)
{
    fixture_t      *f = *state;
    uint8_t         in[5000], out[8000];
    char            path[PATH_MAX + 64];
    sfs_io_extent_t ext = {.chunk_offset = 0, .length = sizeof(out)};
    uint64_t        length;
    struct stat     st;
    int             fd;

    fill(in, sizeof(in), 1);
    write_one(f, 0x1234, 3000, in, sizeof(in));
    /* one file per chunk, at chunks/<id % 256>/<id>, holding the bytes */
    chunk_path(f, 0x1234, path, sizeof(path));
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_size, 8000);
    fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(pread(fd, out, sizeof(in), 3000), sizeof(in));
    close(fd);
    assert_memory_equal(in, out, sizeof(in));
    /* through the store: the hole before reads as zeros */
    memset(out, 0xee, sizeof(out));
    assert_int_equal(sfs_chunk_read(f->target, 0x1234, &ext, 1, out, 0, &length), 0);
    assert_int_equal(length, 8000);
    for (int i = 0; i < 3000; i++) {
        assert_int_equal(out[i], 0);
    }
    assert_memory_equal(out + 3000, in, sizeof(in));
    /* the descriptor a local client gets reads the same file */
    fd = sfs_chunk_open_readonly(f->target, 0x1234);
    assert_true(fd >= 0);
    assert_int_equal(pread(fd, out, 10, 3000), 10);
    assert_memory_equal(out, in, 10);
    assert_int_equal(write(fd, in, 1), -1); /* read-only */
    close(fd);
    assert_int_equal(sfs_chunk_open_readonly(f->target, 0x9999), -ENOENT);
    /* truncate and unlink act on the file */
    assert_int_equal(sfs_chunk_truncate(f->target, 0x1234, 100, SFS_TRUNCATE_EXACT), 0);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_size, 100);
    assert_int_equal(sfs_chunk_unlink(f->target, 0x1234), 0);
    assert_int_equal(stat(path, &st), -1);
    assert_int_equal(sfs_chunk_unlink(f->target, 0x1234), 0);
}

/* The file system id: none at first, kept durably, read back after a
 * reopen, a damaged record named; the read-only survey sees the same and
 * whether any chunk file is there. */
static void test_fs_id(void **state)
{
    fixture_t *f = *state;
    uint64_t   id, chunks;
    uint8_t    in[100];
    char       path[PATH_MAX + 64];

    assert_int_equal(sfs_chunk_target_fs_id(f->target, &id, &chunks), 0);
    assert_int_equal(id, 0);
    assert_int_equal(chunks, 0);
    assert_int_equal(sfs_chunk_target_survey(&f->config, &id, &chunks), 0);
    assert_int_equal(id, 0);
    assert_int_equal(chunks, 0);
    assert_int_equal(sfs_chunk_target_set_fs_id(f->target, 0x0123456789abcdefull), 0);
    snprintf(path, sizeof(path), "%s/filesystem.id", f->config.dir);
    assert_string_equal(read_text(path), "stripefs file system 0123456789abcdef\n");
    fill(in, sizeof(in), 2);
    write_one(f, 7, 0, in, sizeof(in));
    write_one(f, 8, 0, in, sizeof(in));
    assert_int_equal(reopen(f), 0);
    assert_int_equal(sfs_chunk_target_fs_id(f->target, &id, &chunks), 0);
    assert_int_equal(id, 0x0123456789abcdefull);
    assert_int_equal(chunks, 2);
    assert_int_equal(sfs_chunk_target_survey(&f->config, &id, &chunks), 0);
    assert_int_equal(id, 0x0123456789abcdefull);
    assert_int_equal(chunks, 1); /* the survey stops at the first */
    write_file(path, "stripefs file system 12345\n");
    assert_int_equal(sfs_chunk_target_fs_id(f->target, &id, &chunks), -EBADMSG);
    assert_non_null(strstr(sfs_error_detail(), "filesystem.id is damaged"));
    assert_int_equal(sfs_chunk_target_survey(&f->config, &id, &chunks), -EBADMSG);
    write_file(path, "stripefs file system 0123456789abcdefg\n");
    assert_int_equal(sfs_chunk_target_fs_id(f->target, &id, &chunks), -EBADMSG);
    write_file(path, "stripefs file system 0000000000000000\n");
    assert_int_equal(sfs_chunk_target_fs_id(f->target, &id, &chunks), -EBADMSG);
    write_file(path, "stripefs file system 0123456789ABCDEF\n");
    assert_int_equal(sfs_chunk_target_fs_id(f->target, &id, &chunks), -EBADMSG);
    write_file(path, "stripefs file system 0123456789abcdef");
    assert_int_equal(sfs_chunk_target_fs_id(f->target, &id, &chunks), -EBADMSG);
    write_file(path, "stripefs file system fedcba9876543210\n");
    assert_int_equal(sfs_chunk_target_fs_id(f->target, &id, &chunks), 0);
    assert_int_equal(id, 0xfedcba9876543210ull);
    /* a directory that does not exist yet: nothing recorded, nothing held */
    snprintf(f->config.dir, sizeof(f->config.dir), "%s/not-yet", f->root);
    assert_int_equal(sfs_chunk_target_survey(&f->config, &id, &chunks), 0);
    assert_int_equal(id, 0);
    assert_int_equal(chunks, 0);
    snprintf(f->config.dir, sizeof(f->config.dir), "%s/t101", f->root);
}

static void test_reopen_counts_and_lists(void **state)
{
    fixture_t      *f = *state;
    static uint8_t  data[600 * 1024];
    sfs_io_extent_t ext = {.chunk_offset = 0, .length = sizeof(data)};
    char            path[PATH_MAX + 64];
    uint64_t        ids[8], lengths[8], length, capacity, avail;
    uint32_t        count;

    write_one(f, 0x201, 0, data, sizeof(data));
    write_one(f, 0x102, 0, data, 10);
    /* something that is not a chunk, left in a chunk directory */
    snprintf(path, sizeof(path), "%s/chunks/01/notes.txt", f->config.dir);
    write_file(path, "not a chunk");
    /* after a restart with a 1 MiB limit, the 600 KiB already there count */
    f->config.capacity = 1 << 20;
    assert_int_equal(reopen(f), 0);
    assert_int_equal(sfs_chunk_target_space(f->target, &capacity, &avail), 0);
    assert_int_equal(capacity, 1 << 20);
    assert_int_equal(avail, (1 << 20) - sizeof(data) - 10);
    assert_int_equal(sfs_chunk_list(f->target, 0, 8, ids, lengths, &count), 0);
    assert_int_equal(count, 2);
    assert_int_equal(ids[0], 0x102);
    assert_int_equal(lengths[0], 10);
    assert_int_equal(ids[1], 0x201);
    assert_int_equal(lengths[1], sizeof(data));
    assert_int_equal(sfs_chunk_stat(f->target, 0x201, &length), 0);
    assert_int_equal(length, sizeof(data));
    assert_int_equal(sfs_chunk_write(f->target, 0x301, &ext, 1, data, 0, &length), -ENOSPC);
    assert_non_null(strstr(sfs_error_detail(), "target 101 is full"));
    /* without a limit: the file system's own numbers */
    f->config.capacity = 0;
    assert_int_equal(reopen(f), 0);
    assert_int_equal(sfs_chunk_target_space(f->target, &capacity, &avail), 0);
    assert_true(capacity > (1 << 20) && avail <= capacity);
    assert_int_equal(sfs_chunk_target_sync(f->target), 0);
    assert_int_equal(sfs_chunk_fsync(f->target, 0x201), 0);
}

static void test_mapped_read(void **state)
{
    fixture_t      *f = *state;
    static uint8_t  in[1 << 20];
    sfs_io_extent_t ext = {.chunk_offset = 4096 + 100, .length = 512 * 1024};
    sfs_chunk_map_t map;
    uint64_t        length;

    fill(in, sizeof(in), 9);
    write_one(f, 0x77, 0, in, sizeof(in)); /* now in the page cache */
    assert_int_equal(sfs_chunk_read_map(f->target, 0x77, &ext, 0, &map, &length), 0);
    assert_int_equal(length, sizeof(in));
    assert_non_null(map.addr);
    assert_memory_equal(map.data, in + ext.chunk_offset, ext.length);
    sfs_chunk_unmap(f->target, &map);
    assert_null(map.addr);
    /* again: served by the mapping the open file keeps */
    assert_int_equal(sfs_chunk_read_map(f->target, 0x77, &ext, 0, &map, &length), 0);
    assert_int_equal(map.kept, 1);
    assert_memory_equal(map.data, in + ext.chunk_offset, ext.length);
    sfs_chunk_unmap(f->target, &map);
    /* reaching past the end of the file, or no file: read it instead */
    ext.chunk_offset = sizeof(in) - 100;
    ext.length       = 4096;
    assert_int_equal(sfs_chunk_read_map(f->target, 0x77, &ext, 0, &map, &length), -EAGAIN);
    assert_int_equal(sfs_chunk_read_map(f->target, 0x78, &ext, 0, &map, &length), -EAGAIN);
}

/* On the progress thread (SFS_CHUNK_IO_NOWAIT) a mapped read uses only a
 * chunk file that is open already: opening one may wait for the disk. */
static void test_mapped_read_nowait(void **state)
{
    fixture_t      *f = *state;
    static uint8_t  in[1 << 20];
    sfs_io_extent_t ext = {.chunk_offset = 0, .length = 256 * 1024};
    sfs_chunk_map_t map;
    uint64_t        length;
    char            path[PATH_MAX + 64];
    FILE           *file;

    fill(in, sizeof(in), 5);
    /* a chunk file made behind the store's back: on disk, not open */
    chunk_path(f, 0x7a, path, sizeof(path));
    file = fopen(path, "w");
    assert_non_null(file);
    assert_int_equal(fwrite(in, 1, sizeof(in), file), sizeof(in));
    assert_int_equal(fclose(file), 0);
    assert_int_equal(sfs_chunk_read_map(f->target, 0x7a, &ext, SFS_CHUNK_IO_NOWAIT, &map, &length),
                     -EAGAIN);
    /* a disk thread's call opens it ... */
    assert_int_equal(sfs_chunk_read_map(f->target, 0x7a, &ext, 0, &map, &length), 0);
    assert_memory_equal(map.data, in, ext.length);
    sfs_chunk_unmap(f->target, &map);
    /* ... and from then on the progress thread's call maps it too */
    assert_int_equal(sfs_chunk_read_map(f->target, 0x7a, &ext, SFS_CHUNK_IO_NOWAIT, &map, &length),
                     0);
    assert_int_equal(length, sizeof(in));
    assert_memory_equal(map.data, in, ext.length);
    sfs_chunk_unmap(f->target, &map);
}

typedef struct shrink_arg {
    sfs_chunk_target_t *target;
    int                 rc;
    int                 done;
} shrink_arg_t;

static void *shrink_thread(void *p)
{
    shrink_arg_t *arg = p;

    arg->rc = sfs_chunk_truncate(arg->target, 0x88, 4096, SFS_TRUNCATE_SHRINK_ONLY);
    __atomic_store_n(&arg->done, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

static void test_shrink_waits_for_mapped_read(void **state)
{
    fixture_t      *f = *state;
    static uint8_t  in[1 << 20];
    sfs_io_extent_t ext = {.chunk_offset = 512 * 1024, .length = 256 * 1024};
    sfs_chunk_map_t map;
    shrink_arg_t    arg   = {.target = f->target};
    struct timespec pause = {.tv_sec = 0, .tv_nsec = 200 * 1000 * 1000};
    pthread_t       thread;
    uint64_t        length;

    fill(in, sizeof(in), 4);
    write_one(f, 0x88, 0, in, sizeof(in));
    assert_int_equal(sfs_chunk_read_map(f->target, 0x88, &ext, 0, &map, &length), 0);
    assert_int_equal(pthread_create(&thread, NULL, shrink_thread, &arg), 0);
    nanosleep(&pause, NULL);
    /* the pages handed to the transport are still there */
    assert_int_equal(__atomic_load_n(&arg.done, __ATOMIC_SEQ_CST), 0);
    assert_memory_equal(map.data, in + ext.chunk_offset, ext.length);
    sfs_chunk_unmap(f->target, &map);
    assert_int_equal(pthread_join(thread, NULL), 0);
    assert_int_equal(arg.rc, 0);
    assert_int_equal(sfs_chunk_stat(f->target, 0x88, &length), 0);
    assert_int_equal(length, 4096);
}

static void test_throttled_target_does_not_map(void **state)
{
    fixture_t      *f = *state;
    static uint8_t  in[256 * 1024];
    sfs_io_extent_t ext = {.chunk_offset = 0, .length = sizeof(in)};
    sfs_chunk_map_t map;
    uint64_t        length;

    f->config.bandwidth = 1ull << 40; /* capped, if barely */
    assert_int_equal(reopen(f), 0);
    write_one(f, 0x99, 0, in, sizeof(in));
    assert_int_equal(sfs_chunk_read_map(f->target, 0x99, &ext, 0, &map, &length), -EAGAIN);
    assert_int_equal(sfs_chunk_read(f->target, 0x99, &ext, 1, in, 0, &length), 0);
    assert_int_equal(length, sizeof(in));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_marker, setup, teardown),
        cmocka_unit_test_setup_teardown(test_chunk_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fs_id, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reopen_counts_and_lists, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mapped_read, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mapped_read_nowait, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shrink_waits_for_mapped_read, setup, teardown),
        cmocka_unit_test_setup_teardown(test_throttled_target_does_not_map, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
