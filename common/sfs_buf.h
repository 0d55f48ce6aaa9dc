/*
 * Bounded little-endian codec for wire messages. Writers never overrun their
 * buffer and readers never read past the received length: the first overrun
 * sets `error` (-EMSGSIZE for writers, -EBADMSG for readers) and every later
 * call is a no-op returning zeros, so a decoder can read all fields and check
 * the error once at the end.
 */
#ifndef SFS_BUF_H
#define SFS_BUF_H

#include <errno.h>
#include <stdint.h>
#include <string.h>

typedef struct sfs_wbuf {
    uint8_t *data;
    size_t   capacity;
    size_t   length;
    int      error;
} sfs_wbuf_t;

typedef struct sfs_rbuf {
    const uint8_t *data;
    size_t         length;
    size_t         offset;
    int            error;
} sfs_rbuf_t;

static inline void sfs_wbuf_init(sfs_wbuf_t *wb, void *data, size_t capacity)
{
    wb->data     = data;
    wb->capacity = capacity;
    wb->length   = 0;
    wb->error    = 0;
}

static inline void sfs_rbuf_init(sfs_rbuf_t *rb, const void *data, size_t length)
{
    rb->data   = data;
    rb->length = length;
    rb->offset = 0;
    rb->error  = 0;
}

/* Reserve `n` bytes; returns where to write them or NULL on overflow. */
static inline uint8_t *sfs_wbuf_reserve(sfs_wbuf_t *wb, size_t n)
{
    uint8_t *p;

    if (wb->error || n > wb->capacity - wb->length) {
        wb->error = -EMSGSIZE;
        return NULL;
    }
    p = wb->data + wb->length;
    wb->length += n;
    return p;
}

static inline void sfs_wbuf_bytes(sfs_wbuf_t *wb, const void *src, size_t n)
{
    uint8_t *p = sfs_wbuf_reserve(wb, n);

    if (p && n) {
        memcpy(p, src, n);
    }
}

static inline void sfs_wbuf_u64(sfs_wbuf_t *wb, uint64_t v)
{
    uint8_t *p = sfs_wbuf_reserve(wb, 8);

    if (p) {
        for (int i = 0; i < 8; i++) {
            p[i] = (uint8_t)(v >> (8 * i));
        }
    }
}

static inline void sfs_wbuf_u32(sfs_wbuf_t *wb, uint32_t v)
{
    uint8_t *p = sfs_wbuf_reserve(wb, 4);

    if (p) {
        for (int i = 0; i < 4; i++) {
            p[i] = (uint8_t)(v >> (8 * i));
        }
    }
}

static inline void sfs_wbuf_u16(sfs_wbuf_t *wb, uint16_t v)
{
    uint8_t *p = sfs_wbuf_reserve(wb, 2);

    if (p) {
        p[0] = (uint8_t)v;
        p[1] = (uint8_t)(v >> 8);
    }
}

static inline void sfs_wbuf_u8(sfs_wbuf_t *wb, uint8_t v)
{
    uint8_t *p = sfs_wbuf_reserve(wb, 1);

    if (p) {
        p[0] = v;
    }
}

static inline void sfs_wbuf_i32(sfs_wbuf_t *wb, int32_t v)
{
    sfs_wbuf_u32(wb, (uint32_t)v);
}

/* A string as a u16 length and the bytes, without NUL. */
static inline void sfs_wbuf_str(sfs_wbuf_t *wb, const char *s)
{
    size_t n = strlen(s);

    if (n > UINT16_MAX) {
        wb->error = -ENAMETOOLONG;
        return;
    }
    sfs_wbuf_u16(wb, (uint16_t)n);
    sfs_wbuf_bytes(wb, s, n);
}

/* A blob as a u32 length and the bytes. */
static inline void sfs_wbuf_blob(sfs_wbuf_t *wb, const void *src, size_t n)
{
    if (n > UINT32_MAX) {
        wb->error = -EMSGSIZE;
        return;
    }
    sfs_wbuf_u32(wb, (uint32_t)n);
    sfs_wbuf_bytes(wb, src, n);
}

static inline const uint8_t *sfs_rbuf_take(sfs_rbuf_t *rb, size_t n)
{
    const uint8_t *p;

    if (rb->error || n > rb->length - rb->offset) {
        rb->error = -EBADMSG;
        return NULL;
    }
    p = rb->data + rb->offset;
    rb->offset += n;
    return p;
}

static inline uint64_t sfs_rbuf_u64(sfs_rbuf_t *rb)
{
    const uint8_t *p = sfs_rbuf_take(rb, 8);
    uint64_t       v = 0;

    if (p) {
        for (int i = 7; i >= 0; i--) {
            v = (v << 8) | p[i];
        }
    }
    return v;
}

static inline uint32_t sfs_rbuf_u32(sfs_rbuf_t *rb)
{
    const uint8_t *p = sfs_rbuf_take(rb, 4);

    return p ? (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24
             : 0;
}

static inline uint16_t sfs_rbuf_u16(sfs_rbuf_t *rb)
{
    const uint8_t *p = sfs_rbuf_take(rb, 2);

    return p ? (uint16_t)(p[0] | p[1] << 8) : 0;
}

static inline uint8_t sfs_rbuf_u8(sfs_rbuf_t *rb)
{
    const uint8_t *p = sfs_rbuf_take(rb, 1);

    return p ? p[0] : 0;
}

static inline int32_t sfs_rbuf_i32(sfs_rbuf_t *rb)
{
    return (int32_t)sfs_rbuf_u32(rb);
}

static inline void sfs_rbuf_bytes(sfs_rbuf_t *rb, void *dst, size_t n)
{
    const uint8_t *p = sfs_rbuf_take(rb, n);

    if (p && n) {
        memcpy(dst, p, n);
    } else if (n) {
        memset(dst, 0, n);
    }
}

/* Read a string into dst (capacity dst_size including the NUL). A string
 * that does not fit or contains a NUL byte is an error (-ENAMETOOLONG /
 * -EBADMSG); dst is then "". */
static inline void sfs_rbuf_str(sfs_rbuf_t *rb, char *dst, size_t dst_size)
{
    uint16_t       n = sfs_rbuf_u16(rb);
    const uint8_t *p = sfs_rbuf_take(rb, n);

    dst[0] = '\0';
    if (!p) {
        return;
    }
    if ((size_t)n >= dst_size) {
        rb->error = -ENAMETOOLONG;
        return;
    }
    if (n && memchr(p, '\0', n)) {
        rb->error = -EBADMSG;
        return;
    }
    memcpy(dst, p, n);
    dst[n] = '\0';
}

/* A blob by reference into the buffer (no copy); *len_p gets its length. */
static inline const void *sfs_rbuf_blob(sfs_rbuf_t *rb, size_t *len_p)
{
    uint32_t       n = sfs_rbuf_u32(rb);
    const uint8_t *p = sfs_rbuf_take(rb, n);

    *len_p = p ? n : 0;
    return p;
}

/* Bytes left to read. */
static inline size_t sfs_rbuf_remaining(const sfs_rbuf_t *rb)
{
    return rb->error ? 0 : rb->length - rb->offset;
}

#endif
