/*
 * Inside the storage role: its state and one chunk request in flight,
 * shared by sfs_storage.c (targets, disk I/O, replies) and
 * sfs_storage_handlers.c (decoding and checking requests).
 */
#ifndef SFS_STORAGE_INTERNAL_H
#define SFS_STORAGE_INTERNAL_H

#include "sfs_service.h"

#include "sfs_chunk_store.h"
#include "sfs_errno.h"
#include "sfs_workq.h"

#define SFS_STORAGE_LIST_MAX 4096

struct sfs_storage {
    sfs_service_t       *service;
    sfs_chunk_target_t **targets;
    uint32_t             target_count;
    sfs_workq_t         *workq;
    uint64_t             in_flight;
    int                  hand_over_files; /* CHUNK_OPEN allowed (STRIPEFS_LOCAL_READ is not 0) */
    uint64_t             refusals;        /* requests refused for want of a capability */
};

typedef struct sfs_storage_op {
    sfs_work_t              work;
    sfs_storage_t          *storage;
    sfs_tp_request_t       *req;
    sfs_chunk_target_t     *target;
    uint32_t                opcode;
    sfs_chunk_req_t         chunk; /* decoded request */
    void                   *data;  /* WRITE: the payload; READ: the reply buffer */
    uint64_t                data_length;
    int                     owns_data; /* data is a pool buffer of ours */
    int                     pull;      /* WRITE: copy the payload from the client first */
    sfs_chunk_map_t         map;       /* READ served from the mapped chunk file */
    unsigned                io_flags;  /* SFS_CHUNK_IO_NOWAIT while tried inline */
    uint64_t                length;    /* chunk length after the operation */
    uint32_t                count;     /* CHUNK_UNLINK / CHUNK_LIST results */
    sfs_chunk_unlink_req_t *unlink;    /* CHUNK_UNLINK */
    uint64_t               *ids;
    uint64_t               *lengths;
    int                     status;
    char                    detail[SFS_ERROR_DETAIL_MAX];
} sfs_storage_op_t;

sfs_chunk_target_t *sfs_storage_find(sfs_storage_t *storage, uint32_t target_id);
/* The disk I/O of an op (sfs_work_t run) and its reply (done). */
void sfs_storage_run(sfs_work_t *work);
void sfs_storage_done(sfs_work_t *work);
/* Free an op that was never run (its data buffer is the caller's). */
void sfs_storage_op_free(sfs_storage_op_t *op);

#endif
