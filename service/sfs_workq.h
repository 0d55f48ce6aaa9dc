/*
 * A pool of threads for work that must not block the progress thread (disk
 * I/O). Each item runs on a pool thread, then its `done` runs on the
 * progress thread (through sfs_tp_worker_post), where it may reply.
 */
#ifndef SFS_WORKQ_H
#define SFS_WORKQ_H

#include "sfs_list.h"
#include "sfs_tp.h"

typedef struct sfs_work sfs_work_t;
typedef void (*sfs_work_fn_t)(sfs_work_t *work);

struct sfs_work {
    sfs_list_t    list;
    sfs_work_fn_t run;  /* on a pool thread */
    sfs_work_fn_t done; /* then on the progress thread */
};

typedef struct sfs_workq sfs_workq_t;

int  sfs_workq_create(uint32_t threads, const char *name, sfs_tp_worker_t *worker,
                      sfs_workq_t **workq_p);
void sfs_workq_submit(sfs_workq_t *workq, sfs_work_t *work);
/* Items queued and running (approximate, for stats). */
uint32_t sfs_workq_depth(sfs_workq_t *workq);
/* Finish what is queued, then stop the threads. */
void sfs_workq_destroy(sfs_workq_t *workq);

#endif
