/*
 * The in-memory chunk backend, for unit tests of the chunk store and the
 * storage server: chunks are byte arrays in a table, an emulated device of
 * `device_size` bytes fills up (ENOSPC), and what was made durable (fsync,
 * sync) is kept apart from what was only written, so that a test can
 * "crash" the device and see what a power loss would leave. Errors can be
 * injected per operation. No mapped reads, no file descriptors.
 */
#define SFS_LOG_FAC "chunk"
#include "sfs_chunk_mem.h"

#include "sfs_alloc.h"
#include "sfs_errno.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct sfs_chunk_mem sfs_chunk_mem_t;

struct sfs_chunk_obj {
    sfs_chunk_mem_t      *mem;
    uint64_t              entry_id;
    uint8_t              *data;
    uint64_t              length;
    uint64_t              capacity;
    uint8_t              *durable; /* what survives a crash */
    uint64_t              durable_length;
    int                   durable_exists; /* synced at least once (or synced as removed) */
    int                   linked;         /* in the table (not unlinked) */
    uint32_t              refs;           /* the table's and each open's */
    struct sfs_chunk_obj *next;
};

struct sfs_chunk_mem {
    pthread_mutex_t  lock;
    sfs_chunk_obj_t *chunks; /* linked chunks, newest first */
    uint64_t         device_size;
    uint64_t         used; /* bytes of every chunk's data, linked or open */
    int              fail_rc[SFS_CHUNK_MEM_OPS];
    uint32_t         fail_count[SFS_CHUNK_MEM_OPS];
    uint64_t         calls[SFS_CHUNK_MEM_OPS];
};

/* 0, or the error injected for this call of `op` (lock held). */
static int sfs_chunk_mem_call(sfs_chunk_mem_t *mem, sfs_chunk_mem_op_t op)
{
    mem->calls[op]++;
    if (mem->fail_count[op] == 0) {
        return 0;
    }
    mem->fail_count[op]--;
    return mem->fail_rc[op];
}

static sfs_chunk_obj_t *sfs_chunk_mem_find(sfs_chunk_mem_t *mem, uint64_t entry_id)
{
    for (sfs_chunk_obj_t *c = mem->chunks; c; c = c->next) {
        if (c->entry_id == entry_id) {
            return c;
        }
    }
    return NULL;
}

static void sfs_chunk_mem_unref(sfs_chunk_mem_t *mem, sfs_chunk_obj_t *c)
{
    if (--c->refs > 0) {
        return;
    }
    mem->used -= c->length;
    free(c->data);
    free(c->durable);
    free(c);
}

static void sfs_chunk_mem_unlist(sfs_chunk_mem_t *mem, sfs_chunk_obj_t *c)
{
    for (sfs_chunk_obj_t **p = &mem->chunks; *p; p = &(*p)->next) {
        if (*p == c) {
            *p        = c->next;
            c->next   = NULL;
            c->linked = 0;
            sfs_chunk_mem_unref(mem, c);
            return;
        }
    }
}

/* Grow or shrink a chunk's bytes to `length` (new bytes are zeros), within
 * the device (lock held). */
static int sfs_chunk_mem_resize(sfs_chunk_mem_t *mem, sfs_chunk_obj_t *c, uint64_t length)
{
    if (length > c->length && mem->device_size &&
        mem->used + (length - c->length) > mem->device_size) {
        return -ENOSPC;
    }
    if (length > c->capacity) {
        uint64_t capacity = c->capacity ? c->capacity : 4096;
        uint8_t *grown;

        while (capacity < length) {
            capacity *= 2;
        }
        grown = realloc(c->data, capacity);
        if (!grown) {
            return -ENOMEM;
        }
        c->data     = grown;
        c->capacity = capacity;
    }
    if (length > c->length) {
        memset(c->data + c->length, 0, length - c->length);
    }
    mem->used += length;
    mem->used -= c->length;
    c->length = length;
    return 0;
}

static int sfs_chunk_mem_make_durable(sfs_chunk_obj_t *c)
{
    uint8_t *copy = NULL;

    if (c->length && !(copy = malloc(c->length))) {
        return -ENOMEM;
    }
    if (c->length) {
        memcpy(copy, c->data, c->length);
    }
    free(c->durable);
    c->durable        = copy;
    c->durable_length = c->length;
    c->durable_exists = 1;
    return 0;
}

static int sfs_chunk_mem_attach(const sfs_chunk_backend_params_t *params, void **state_p)
{
    sfs_chunk_mem_t *mem;

    if (!SFS_ALLOC_PTR(mem)) {
        return sfs_error_set(-ENOMEM, "mem backend of target %u: out of memory", params->target_id);
    }
    pthread_mutex_init(&mem->lock, NULL);
    mem->device_size = params->device_size;
    *state_p         = mem;
    return 0;
}

static void sfs_chunk_mem_detach(void *state)
{
    sfs_chunk_mem_t *mem = state;

    while (mem->chunks) {
        sfs_chunk_mem_unlist(mem, mem->chunks);
    }
    pthread_mutex_destroy(&mem->lock);
    free(mem);
}

static int sfs_chunk_mem_space(void *state, uint64_t *capacity_p, uint64_t *free_p)
{
    sfs_chunk_mem_t *mem = state;
    int              rc;

    pthread_mutex_lock(&mem->lock);
    rc = sfs_chunk_mem_call(mem, SFS_CHUNK_MEM_SPACE);
    if (rc == 0) {
        *capacity_p = mem->device_size ? mem->device_size : UINT64_MAX;
        *free_p     = mem->device_size ? mem->device_size - mem->used : UINT64_MAX;
    }
    pthread_mutex_unlock(&mem->lock);
    return rc;
}

static int sfs_chunk_mem_sync(void *state)
{
    sfs_chunk_mem_t *mem = state;
    int              rc;

    pthread_mutex_lock(&mem->lock);
    rc = sfs_chunk_mem_call(mem, SFS_CHUNK_MEM_SYNC);
    for (sfs_chunk_obj_t *c = mem->chunks; c && rc == 0; c = c->next) {
        rc = sfs_chunk_mem_make_durable(c);
    }
    pthread_mutex_unlock(&mem->lock);
    return rc;
}

static int sfs_chunk_mem_open(void *state, uint64_t entry_id, int create, sfs_chunk_obj_t **obj_p)
{
    sfs_chunk_mem_t *mem = state;
    sfs_chunk_obj_t *c;
    int              rc;

    pthread_mutex_lock(&mem->lock);
    rc = sfs_chunk_mem_call(mem, SFS_CHUNK_MEM_OPEN);
    c  = rc ? NULL : sfs_chunk_mem_find(mem, entry_id);
    if (rc == 0 && !c && !create) {
        rc = -ENOENT;
    }
    if (rc == 0 && !c) {
        if (!SFS_ALLOC_PTR(c)) {
            rc = -ENOMEM;
        } else {
            c->mem      = mem;
            c->entry_id = entry_id;
            c->linked   = 1;
            c->refs     = 1;
            c->next     = mem->chunks;
            mem->chunks = c;
        }
    }
    if (rc == 0) {
        c->refs++;
        *obj_p = c;
    }
    pthread_mutex_unlock(&mem->lock);
    return rc;
}

static void sfs_chunk_mem_close(void *state, sfs_chunk_obj_t *obj)
{
    sfs_chunk_mem_t *mem = state;

    pthread_mutex_lock(&mem->lock);
    sfs_chunk_mem_unref(mem, obj);
    pthread_mutex_unlock(&mem->lock);
}

static ssize_t sfs_chunk_mem_pread(sfs_chunk_obj_t *c, void *buf, size_t length, uint64_t offset,
                                   int nowait)
{
    sfs_chunk_mem_t *mem = c->mem;
    ssize_t          rc;

    pthread_mutex_lock(&mem->lock);
    rc = sfs_chunk_mem_call(mem, nowait ? SFS_CHUNK_MEM_PREAD_NOWAIT : SFS_CHUNK_MEM_PREAD);
    if (rc == 0 && offset < c->length) {
        rc = (ssize_t)(length < c->length - offset ? length : c->length - offset);
        memcpy(buf, c->data + offset, (size_t)rc);
    }
    pthread_mutex_unlock(&mem->lock);
    return rc;
}

static ssize_t sfs_chunk_mem_pwrite(sfs_chunk_obj_t *c, const void *buf, size_t length,
                                    uint64_t offset, int nowait)
{
    sfs_chunk_mem_t *mem = c->mem;
    ssize_t          rc;

    pthread_mutex_lock(&mem->lock);
    rc = sfs_chunk_mem_call(mem, nowait ? SFS_CHUNK_MEM_PWRITE_NOWAIT : SFS_CHUNK_MEM_PWRITE);
    if (rc == 0 && offset + length > c->length) {
        rc = sfs_chunk_mem_resize(mem, c, offset + length);
    }
    if (rc == 0) {
        memcpy(c->data + offset, buf, length);
        rc = (ssize_t)length;
    }
    pthread_mutex_unlock(&mem->lock);
    return rc;
}

static int sfs_chunk_mem_size(sfs_chunk_obj_t *c, uint64_t *length_p)
{
    pthread_mutex_lock(&c->mem->lock);
    *length_p = c->length;
    pthread_mutex_unlock(&c->mem->lock);
    return 0;
}

static int sfs_chunk_mem_truncate(sfs_chunk_obj_t *c, uint64_t length)
{
    sfs_chunk_mem_t *mem = c->mem;
    int              rc;

    pthread_mutex_lock(&mem->lock);
    rc = sfs_chunk_mem_call(mem, SFS_CHUNK_MEM_TRUNCATE);
    if (rc == 0) {
        rc = sfs_chunk_mem_resize(mem, c, length);
    }
    pthread_mutex_unlock(&mem->lock);
    return rc;
}

static int sfs_chunk_mem_fsync(sfs_chunk_obj_t *c)
{
    sfs_chunk_mem_t *mem = c->mem;
    int              rc;

    pthread_mutex_lock(&mem->lock);
    rc = sfs_chunk_mem_call(mem, SFS_CHUNK_MEM_FSYNC);
    if (rc == 0) {
        rc = sfs_chunk_mem_make_durable(c);
    }
    pthread_mutex_unlock(&mem->lock);
    return rc;
}

static int sfs_chunk_mem_stat(void *state, uint64_t entry_id, uint64_t *length_p)
{
    sfs_chunk_mem_t *mem = state;
    sfs_chunk_obj_t *c;
    int              rc;

    pthread_mutex_lock(&mem->lock);
    rc = sfs_chunk_mem_call(mem, SFS_CHUNK_MEM_STAT);
    if (rc == 0) {
        c  = sfs_chunk_mem_find(mem, entry_id);
        rc = c ? 0 : -ENOENT;
        if (c) {
            *length_p = c->length;
        }
    }
    pthread_mutex_unlock(&mem->lock);
    return rc;
}

static int sfs_chunk_mem_unlink(void *state, uint64_t entry_id, uint64_t *length_p)
{
    sfs_chunk_mem_t *mem = state;
    sfs_chunk_obj_t *c;
    int              rc;

    pthread_mutex_lock(&mem->lock);
    rc = sfs_chunk_mem_call(mem, SFS_CHUNK_MEM_UNLINK);
    if (rc == 0) {
        c  = sfs_chunk_mem_find(mem, entry_id);
        rc = c ? 0 : -ENOENT;
        if (c) {
            *length_p = c->length;
            sfs_chunk_mem_unlist(mem, c);
        }
    }
    pthread_mutex_unlock(&mem->lock);
    return rc;
}

static int sfs_chunk_mem_list(void *state, sfs_chunk_list_cb cb, void *arg)
{
    sfs_chunk_mem_t *mem = state;
    int              rc;

    /* the callback runs with the lock held: it must not call back in */
    pthread_mutex_lock(&mem->lock);
    rc = sfs_chunk_mem_call(mem, SFS_CHUNK_MEM_LIST);
    for (sfs_chunk_obj_t *c = mem->chunks; c && rc == 0; c = c->next) {
        rc = cb(arg, c->entry_id, c->length);
    }
    pthread_mutex_unlock(&mem->lock);
    return rc;
}

const sfs_chunk_backend_ops_t sfs_chunk_backend_mem = {
    .name     = "mem",
    .attach   = sfs_chunk_mem_attach,
    .detach   = sfs_chunk_mem_detach,
    .space    = sfs_chunk_mem_space,
    .sync     = sfs_chunk_mem_sync,
    .open     = sfs_chunk_mem_open,
    .close    = sfs_chunk_mem_close,
    .pread    = sfs_chunk_mem_pread,
    .pwrite   = sfs_chunk_mem_pwrite,
    .size     = sfs_chunk_mem_size,
    .truncate = sfs_chunk_mem_truncate,
    .fsync    = sfs_chunk_mem_fsync,
    .stat     = sfs_chunk_mem_stat,
    .unlink   = sfs_chunk_mem_unlink,
    .list     = sfs_chunk_mem_list,
    /* no writeback hint, no file descriptors, no mapped reads */
};

void sfs_chunk_mem_fail(void *state, sfs_chunk_mem_op_t op, int rc, uint32_t times)
{
    sfs_chunk_mem_t *mem = state;

    pthread_mutex_lock(&mem->lock);
    mem->fail_rc[op]    = rc;
    mem->fail_count[op] = times;
    pthread_mutex_unlock(&mem->lock);
}

uint64_t sfs_chunk_mem_calls(void *state, sfs_chunk_mem_op_t op)
{
    sfs_chunk_mem_t *mem = state;
    uint64_t         n;

    pthread_mutex_lock(&mem->lock);
    n = mem->calls[op];
    pthread_mutex_unlock(&mem->lock);
    return n;
}

uint64_t sfs_chunk_mem_used(void *state)
{
    sfs_chunk_mem_t *mem = state;
    uint64_t         n;

    pthread_mutex_lock(&mem->lock);
    n = mem->used;
    pthread_mutex_unlock(&mem->lock);
    return n;
}

int sfs_chunk_mem_crash(void *state)
{
    sfs_chunk_mem_t *mem = state;
    sfs_chunk_obj_t *c, *next;
    int              rc = 0;

    /* in place: a chunk the store keeps open sees what the device kept */
    pthread_mutex_lock(&mem->lock);
    for (c = mem->chunks; c && rc == 0; c = next) {
        next = c->next;
        if (!c->durable_exists) {
            sfs_chunk_mem_resize(mem, c, 0); /* never made durable: gone */
            sfs_chunk_mem_unlist(mem, c);
            continue;
        }
        mem->used -= c->length;
        free(c->data);
        c->data           = c->durable;
        c->length         = c->durable_length;
        c->capacity       = c->durable_length;
        c->durable        = NULL;
        c->durable_exists = 0;
        mem->used += c->length;
        rc = sfs_chunk_mem_make_durable(c);
    }
    pthread_mutex_unlock(&mem->lock);
    return rc;
}
