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
    uint32_t             write_jitter_us; /* STRIPEFS_TEST_WRITE_JITTER_US */
    /* mirrored requests in arrival order, started or waiting for an
     * overlapping earlier one (sfs_storage_mirror.c) */
    struct sfs_storage_op *mirror_head, *mirror_tail;
    uint64_t               mirror_forwards;
    /* this rank's group members: change logs, reports to management */
    struct sfs_storage_mirrors *mirrors;
    /* fences and tombstones of moved chunk files (sfs_chunk_tombstone.c) */
    struct sfs_tombstones *tombstones;
    /* chunk files removed lately: stale copies from the buddy are dropped
     * (sfs_chunk_removed.h); how many were */
    struct sfs_chunk_removed *removed;
    uint64_t                  stale_copies;
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
    /* a mirrored request on the group's primary (sfs_storage_mirror.c) */
    int mirror;       /* 1: forward to the buddy before replying */
    int mirror_stage; /* 0: our copy; 1: the buddy's; 2: both done */
    int served_alone; /* the buddy was lost: acknowledged once management knows (fencing) */
    int mirror_wait;  /* waits for an overlapping earlier request */
    int mirror_read;  /* a mirrored READ/CHUNK_OPEN as primary: fenced
                       * again at the answer */
    int           forward_taken;  /* the buddy took the forward as secondary */
    int           forward_resent; /* sent again once (its connection was closed under it) */
    uint64_t      forward_sent_ms;
    int           unlink_noted;   /* CHUNK_UNLINK: recorded in the change log at admission */
    uint64_t      unlink_log_gen; /* ... in the log's pass generation then */
    uint32_t      buddy_id;       /* the secondary target */
    uint64_t      bytes;          /* for sfs_storage_submit */
    uint64_t      lo, hi;         /* chunk file range it changes ([0, 0): none) */
    uint64_t      primary_length;
    sfs_tp_rpc_t *forward;
    uint8_t      *forward_args;
    struct iovec  forward_iov; /* the payload it sends (valid until its reply) */
    struct sfs_storage_op *mirror_next, *mirror_prev;
} sfs_storage_op_t;

sfs_chunk_target_t *sfs_storage_find(sfs_storage_t *storage, uint32_t target_id);
/* The disk I/O of an op (sfs_work_t run) and its reply (done). */
void sfs_storage_run(sfs_work_t *work);
void sfs_storage_done(sfs_work_t *work);
/* Run an op inline or on a disk thread (sfs_storage_handlers.c). */
void sfs_storage_submit(sfs_storage_t *storage, sfs_storage_op_t *op, uint64_t bytes);

/* Mirroring (sfs_storage_mirror.c). Admit: a request flagged
 * SFS_CHUNK_MIRRORED must reach a group's primary (else it is refused and
 * answered: non-zero); CHUNK_UNLINK is never forwarded (the metadata
 * server sends it to both members).
 * Start: in order behind overlapping earlier requests. Step (from done):
 * non-zero while the op goes on (to the buddy); zero when it is to be
 * answered now. */
/* This rank's group members (sfs_storage_mirror_state.c): their change
 * logs (NULL for a target in no group), and "tell management". */
int                    sfs_storage_mirror_init(sfs_storage_t *storage);
void                   sfs_storage_mirror_fini(sfs_storage_t *storage);
struct sfs_mirror_log *sfs_storage_mirror_log(sfs_storage_t *storage, uint32_t target_id);
void                   sfs_storage_mirror_changed(sfs_storage_t *storage);
/* A client named a local member the primary while this rank's map names
 * the other one: a promotion not heard of yet (the map is asked every
 * heartbeat). Ask for the map now, at most every 200 ms. */
void sfs_storage_mirror_map_soon(sfs_storage_t *storage);
/* The resync (and rebuild) state of local member `target_id`, or NULL. */
struct sfs_mirror_resync *sfs_storage_mirror_resync_of(sfs_storage_t *storage, uint32_t target_id);
/* The member serving `group` now, as the last map says (the config's
 * primary before any map). */
uint32_t sfs_storage_mirror_primary(sfs_storage_t *storage, const sfs_config_mirror_group_t *group);
/* What may stand in for management's lease (sfs_buddy_word.h). */
typedef enum {
    SFS_WORD_NONE,  /* nothing: a CHUNK_OPEN (its descriptor outlives the answer), a
                     * change served alone */
    SFS_WORD_HOLDS, /* the buddy's word, if it holds now: a read, a change the buddy took */
    SFS_WORD_ASKED, /* the buddy's word, which this change's forward will ask for */
} sfs_storage_word_use_t;
/* The fencing lease (sfs_storage_mirror_state.c, sfs_lease.h): 0 while
 * this rank may act as the primary of target_id's group (management's
 * lease holds, or the buddy's word as `use` allows), else -ESTALE with the
 * detail set naming `what` and the target (and logged once per lapse). */
int sfs_storage_mirror_fenced(sfs_storage_t *storage, uint32_t target_id, uint32_t buddy_id,
                              const char *what, sfs_storage_word_use_t use);
/* A forward of local primary `target_id`, sent at `sent_ms`, was taken by
 * its buddy as secondary (taken > 0), failed (0) or was refused by a buddy
 * that is the primary now (< 0): the word is dropped. */
void sfs_storage_mirror_word_taken(sfs_storage_t *storage, uint32_t target_id, uint64_t sent_ms,
                                   int taken);
/* Local secondary `target_id` took a copy from its buddy: its word given. */
void sfs_storage_mirror_word_given(sfs_storage_t *storage, uint32_t target_id);
/* Before local member `target_id` acts as its group's primary: 0, or
 * -ESTALE (detail set) while a word it gave its buddy may still hold. */
int  sfs_storage_mirror_word_wait(sfs_storage_t *storage, uint32_t target_id, uint32_t buddy_id,
                                  const char *what);
int  sfs_storage_mirror_admit(sfs_storage_t *storage, sfs_storage_op_t *op);
void sfs_storage_mirror_start(sfs_storage_t *storage, sfs_storage_op_t *op, uint64_t bytes);
int  sfs_storage_mirror_step(sfs_storage_op_t *op);
/* Before a primary's answer: the lease is checked again; without it the
 * op's status becomes ESTALE (with the reason in its detail). */
void sfs_storage_mirror_answer(sfs_storage_op_t *op);
/* A CHUNK_UNLINK's removal is done (before its answer): recorded again in
 * the change log where a resync pass began, or the log was cleared, since
 * its admission; 0, or the error (the op's detail set). */
int sfs_storage_mirror_unlinked(sfs_storage_op_t *op);

/* Answer a request done with `length` (the length reply of WRITE,
 * TRUNCATE, FSYNC) without running it. */
void sfs_storage_reply_length(sfs_tp_request_t *req, uint64_t length);

/* Free an op that was never run (its data buffer is the caller's). */
void sfs_storage_op_free(sfs_storage_op_t *op);

#endif
