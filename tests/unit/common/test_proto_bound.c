/* Write bounds (common/sfs_proto_bound.[ch], common/sfs_cap.c): the seal
 * and the targets' check (a chunk file's length exact for any stripe
 * pattern; forged, another entry's, uid's or target's: EACCES; expired:
 * EKEYEXPIRED), and the codecs that carry one: WRITE and TRUNCATE with
 * SFS_CHUNK_BOUND, SIZE's reply with SFS_SIZE_BOUND, QUOTA_GROW's reply. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sfs_cap.h"
#include "sfs_proto.h"

static sfs_auth_key_t key;

static void bound_make(sfs_bound_t *b, uint64_t end)
{
    memset(b, 0, sizeof(*b));
    b->entry_id             = 42;
    b->uid                  = 1001;
    b->end                  = end;
    b->expires_s            = 200;
    b->pattern.type         = SFS_PATTERN_RAID0;
    b->pattern.chunk_size   = 65536;
    b->pattern.stripe_count = 3;
    b->pattern.targets[0]   = 101;
    b->pattern.targets[1]   = 202;
    b->pattern.targets[2]   = 303;
    sfs_bound_seal(&key, b);
}

/* The bound's check on `target` (`alt`: its mirror buddy, or 0), and the
 * length the target's chunk file may reach (as the storage server turns
 * the end into it: sfs_layout_chunk_length_for_size). */
static int check_on(const sfs_bound_t *b, uint64_t entry, uint32_t uid, uint32_t target,
                    uint32_t alt, uint64_t now, uint64_t *length_p)
{
    const uint32_t ids[2] = {target, alt};
    uint32_t       index  = 99;
    int            rc     = sfs_bound_check(&key, b, entry, uid, ids, now, &index);

    if (rc == 0) {
        assert_true(index < b->pattern.stripe_count);
        *length_p = sfs_layout_chunk_length_for_size(&b->pattern, index, b->end);
    }
    return rc;
}

static void test_bound_check(void **state)
{
    sfs_auth_key_t cluster;
    sfs_bound_t    b, c;
    uint64_t       length, sum;
    uint32_t       index;
    const uint32_t none[2] = {101, 0};

    (void)state;
    memset(&cluster, 7, sizeof(cluster));
    sfs_cap_key(&cluster, &key);
    /* 3 targets of 64 KiB chunks, end 5 chunks + 100 bytes: chunks 0,3 on
     * 101, 1,4 on 202, 2 and 100 bytes of chunk 5 on 303 */
    bound_make(&b, 5 * 65536 + 100);
    assert_int_equal(check_on(&b, 42, 1001, 101, 0, 100, &length), 0);
    assert_int_equal(length, 2 * 65536);
    assert_int_equal(check_on(&b, 42, 1001, 202, 0, 100, &length), 0);
    assert_int_equal(length, 2 * 65536);
    assert_int_equal(check_on(&b, 42, 1001, 303, 0, 100, &length), 0);
    assert_int_equal(length, 65536 + 100);
    /* a promoted mirror buddy (999) of 202 serves 202's chunk file */
    assert_int_equal(check_on(&b, 42, 1001, 999, 202, 100, &length), 0);
    assert_int_equal(length, 2 * 65536);
    /* for any end, the targets' lengths add up to it */
    for (uint64_t end = 0; end < 8 * 65536; end += 65536 / 2 + 17) {
        bound_make(&b, end);
        sum = 0;
        for (uint32_t t = 0; t < 3; t++) {
            assert_int_equal(check_on(&b, 42, 1001, b.pattern.targets[t], 0, 100, &length), 0);
            sum += length;
        }
        assert_int_equal(sum, end);
    }

    bound_make(&b, 65536);
    assert_int_equal(check_on(&b, 42, 1001, 404, 0, 100, &length), -EACCES); /* not its target */
    assert_int_equal(check_on(&b, 43, 1001, 101, 0, 100, &length), -EACCES); /* another entry */
    assert_int_equal(check_on(&b, 42, 1002, 101, 0, 100, &length), -EACCES); /* another uid */
    assert_int_equal(check_on(&b, 42, 1001, 101, 0, 200, &length), -EKEYEXPIRED);
    /* any change breaks the seal: a raised end, another pattern, the MAC */
    c = b;
    c.end++;
    assert_int_equal(check_on(&c, 42, 1001, 101, 0, 100, &length), -EACCES);
    c                    = b;
    c.pattern.targets[2] = 404;
    assert_int_equal(check_on(&c, 42, 1001, 404, 0, 100, &length), -EACCES);
    c = b;
    c.pattern.chunk_size <<= 1;
    assert_int_equal(check_on(&c, 42, 1001, 101, 0, 100, &length), -EACCES);
    c = b;
    c.expires_s += 3600;
    assert_int_equal(check_on(&c, 42, 1001, 101, 0, 100, &length), -EACCES);
    c = b;
    c.mac[3] ^= 1;
    assert_int_equal(check_on(&c, 42, 1001, 101, 0, 100, &length), -EACCES);
    memset(&c, 0, sizeof(c)); /* none at all */
    assert_int_equal(sfs_bound_check(&key, &c, 42, 1001, none, 100, &index), -EACCES);
}

static void test_bound_codecs(void **state)
{
    sfs_chunk_req_t *req = calloc(2, sizeof(*req)), *got = req + 1;
    sfs_size_reply_t size = {.base = 1 | SFS_SIZE_QUOTA | SFS_SIZE_BOUND, .granted = 1234}, sgot;
    sfs_quota_grow_reply_t grow = {.granted = 5u << 20, .limited = 1, .has_bound = 1}, ggot;
    uint8_t               *buf  = malloc(SFS_PROTO_ARGS_MAX);
    sfs_wbuf_t             wb;
    sfs_rbuf_t             rb;

    (void)state;
    assert_non_null(req);
    assert_non_null(buf);
    req->target_id    = 101;
    req->entry_id     = 42;
    req->flags        = SFS_CHUNK_BOUND;
    req->extent_count = 1;
    req->extents[0]   = (sfs_io_extent_t){.chunk_offset = 4096, .length = 4096};
    bound_make(&req->bound, 1u << 20);
    sfs_wbuf_init(&wb, buf, SFS_PROTO_ARGS_MAX);
    sfs_proto_chunk_req_pack(&wb, SFS_OP_WRITE, req);
    assert_int_equal(wb.error, 0);
    sfs_rbuf_init(&rb, buf, wb.length);
    sfs_proto_chunk_req_unpack(&rb, SFS_OP_WRITE, got);
    assert_int_equal(rb.error, 0);
    assert_int_equal(sfs_rbuf_remaining(&rb), 0);
    assert_memory_equal(&got->bound, &req->bound, sizeof(req->bound));
    /* without the flag no bound travels; READ never carries one */
    sfs_rbuf_init(&rb, buf, wb.length);
    sfs_proto_chunk_req_unpack(&rb, SFS_OP_READ, got);
    assert_true(rb.error != 0 || sfs_rbuf_remaining(&rb) != 0);
    /* TRUNCATE with a bound */
    req->flags  = SFS_TRUNCATE_EXACT | SFS_CHUNK_BOUND;
    req->length = 1u << 30;
    sfs_wbuf_init(&wb, buf, SFS_PROTO_ARGS_MAX);
    sfs_proto_chunk_req_pack(&wb, SFS_OP_TRUNCATE, req);
    sfs_rbuf_init(&rb, buf, wb.length);
    sfs_proto_chunk_req_unpack(&rb, SFS_OP_TRUNCATE, got);
    assert_int_equal(rb.error, 0);
    assert_int_equal(got->flags, SFS_TRUNCATE_EXACT | SFS_CHUNK_BOUND);
    assert_memory_equal(&got->bound, &req->bound, sizeof(req->bound));
    /* a bound whose pattern is not valid is refused: stripe count 0 (its
     * low byte, little-endian: after 24 bytes of request, 40 of capability,
     * 40 of bound) */
    buf[24 + 40 + 40] = 0;
    sfs_rbuf_init(&rb, buf, wb.length);
    sfs_proto_chunk_req_unpack(&rb, SFS_OP_TRUNCATE, got);
    assert_int_not_equal(rb.error, 0);

    bound_make(&size.bound, 1234);
    sfs_wbuf_init(&wb, buf, SFS_PROTO_ARGS_MAX);
    sfs_proto_size_reply_pack(&wb, &size);
    sfs_rbuf_init(&rb, buf, wb.length);
    sfs_proto_size_reply_unpack(&rb, &sgot);
    assert_int_equal(rb.error, 0);
    assert_int_equal(sgot.base, size.base);
    assert_memory_equal(&sgot.bound, &size.bound, sizeof(size.bound));

    bound_make(&grow.bound, 5u << 20);
    sfs_wbuf_init(&wb, buf, SFS_PROTO_ARGS_MAX);
    sfs_proto_quota_grow_reply_pack(&wb, &grow);
    sfs_rbuf_init(&rb, buf, wb.length);
    sfs_proto_quota_grow_reply_unpack(&rb, &ggot);
    assert_int_equal(rb.error, 0);
    assert_int_equal(ggot.limited, 1);
    assert_int_equal(ggot.has_bound, 1);
    assert_memory_equal(&ggot.bound, &grow.bound, sizeof(grow.bound));
    buf[8] = 0x4; /* an unknown bit beside limited */
    sfs_rbuf_init(&rb, buf, wb.length);
    sfs_proto_quota_grow_reply_unpack(&rb, &ggot);
    assert_int_equal(rb.error, -EBADMSG);
    free(buf);
    free(req);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bound_check),
        cmocka_unit_test(test_bound_codecs),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
