/*
 * The payload buffer pool: buffers by power-of-two size class (4 KiB to
 * 128 MiB), 64-byte aligned, kept on free lists up to
 * SFS_TP_POOL_KEEP_BYTES per worker; larger ones are plain allocations.
 * Thread-safe (storage threads return buffers). The count of buffers out is
 * the leak check at destroy.
 */
#define SFS_LOG_FAC "ucx"
#include "sfs_tp_internal.h"

#include "sfs_log.h"

#include <stdlib.h>

/* Pool buffers carry a small header so a put knows their class. */
typedef struct sfs_tp_buf_hdr {
    void    *next_free;
    uint32_t size_class;
    uint32_t magic;
    uint64_t pad[6]; /* keep the data 64-byte aligned */
} sfs_tp_buf_hdr_t;

#define SFS_TP_BUF_MAGIC 0x53464250u

static int sfs_tp_size_class(size_t size)
{
    int cls = 0;

    while (cls < SFS_TP_POOL_CLASSES && (1ull << (cls + SFS_TP_POOL_MIN_SHIFT)) < size) {
        cls++;
    }
    return cls; /* SFS_TP_POOL_CLASSES: too big to pool */
}

void *sfs_tp_buf_get(sfs_tp_worker_t *worker, size_t size)
{
    int               cls = sfs_tp_size_class(size);
    size_t            bytes;
    sfs_tp_buf_hdr_t *hdr = NULL;

    pthread_mutex_lock(&worker->pool_lock);
    if (cls < SFS_TP_POOL_CLASSES && worker->pool[cls]) {
        hdr               = worker->pool[cls];
        worker->pool[cls] = hdr->next_free;
        worker->pool_free_bytes -= 1ull << (cls + SFS_TP_POOL_MIN_SHIFT);
    }
    worker->buffers_out++;
    pthread_mutex_unlock(&worker->pool_lock);
    if (!hdr) {
        bytes = cls < SFS_TP_POOL_CLASSES ? (1ull << (cls + SFS_TP_POOL_MIN_SHIFT)) : size;
        if (posix_memalign((void **)&hdr, 64, sizeof(*hdr) + bytes) != 0) {
            pthread_mutex_lock(&worker->pool_lock);
            worker->buffers_out--;
            pthread_mutex_unlock(&worker->pool_lock);
            return NULL;
        }
        hdr->size_class = (uint32_t)cls;
        hdr->magic      = SFS_TP_BUF_MAGIC;
    }
    hdr->next_free = NULL;
    return hdr + 1;
}

void sfs_tp_buf_put(sfs_tp_worker_t *worker, void *buf)
{
    sfs_tp_buf_hdr_t *hdr;
    uint64_t          bytes;

    if (!buf) {
        return;
    }
    hdr = (sfs_tp_buf_hdr_t *)buf - 1;
    if (hdr->magic != SFS_TP_BUF_MAGIC) {
        sfs_error("buffer %p returned to the pool was not from it", buf);
        return;
    }
    pthread_mutex_lock(&worker->pool_lock);
    worker->buffers_out--;
    if (hdr->size_class < SFS_TP_POOL_CLASSES) {
        bytes = 1ull << (hdr->size_class + SFS_TP_POOL_MIN_SHIFT);
        if (worker->pool_free_bytes + bytes <= SFS_TP_POOL_KEEP_BYTES) {
            hdr->next_free                = worker->pool[hdr->size_class];
            worker->pool[hdr->size_class] = hdr;
            worker->pool_free_bytes += bytes;
            hdr = NULL;
        }
    }
    pthread_mutex_unlock(&worker->pool_lock);
    free(hdr);
}

void sfs_tp_pool_cleanup(sfs_tp_worker_t *worker)
{
    if (worker->buffers_out) {
        sfs_warn("worker %p: %lu payload buffers not returned at destroy", (void *)worker,
                 (unsigned long)worker->buffers_out);
    }
    for (int c = 0; c < SFS_TP_POOL_CLASSES; c++) {
        while (worker->pool[c]) {
            sfs_tp_buf_hdr_t *hdr = worker->pool[c];

            worker->pool[c] = hdr->next_free;
            free(hdr);
        }
    }
    worker->pool_free_bytes = 0;
}
