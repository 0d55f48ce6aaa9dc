#define SFS_LOG_FAC "workq"
#include "sfs_workq.h"

#include "sfs_alloc.h"
#include "sfs_errno.h"
#include "sfs_log.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

struct sfs_workq {
    pthread_mutex_t  lock;
    pthread_cond_t   cond;
    sfs_list_t       queue;
    uint32_t         depth;
    int              stopping;
    uint32_t         thread_count;
    pthread_t       *threads;
    sfs_tp_worker_t *worker;
    char             name[32];
};

static void sfs_workq_done_cb(void *arg)
{
    sfs_work_t *work = arg;

    work->done(work);
}

static void *sfs_workq_thread(void *arg)
{
    sfs_workq_t *workq = arg;

    for (;;) {
        sfs_list_t *elem;
        sfs_work_t *work;

        pthread_mutex_lock(&workq->lock);
        while (sfs_list_is_empty(&workq->queue) && !workq->stopping) {
            pthread_cond_wait(&workq->cond, &workq->lock);
        }
        elem = sfs_list_pop_head(&workq->queue);
        pthread_mutex_unlock(&workq->lock);
        if (!elem) {
            return NULL; /* stopping and drained */
        }
        work = sfs_container_of(elem, sfs_work_t, list);
        work->run(work);
        pthread_mutex_lock(&workq->lock);
        workq->depth--;
        pthread_mutex_unlock(&workq->lock);
        if (sfs_tp_worker_post(workq->worker, sfs_workq_done_cb, work) != 0) {
            sfs_error("%s: cannot hand a finished item back: out of memory", workq->name);
        }
    }
}

int sfs_workq_create(uint32_t threads, const char *name, sfs_tp_worker_t *worker,
                     sfs_workq_t **workq_p)
{
    sfs_workq_t *workq;
    int          rc;

    if (!SFS_ALLOC_PTR(workq) || !SFS_ALLOC_ARRAY(workq->threads, threads)) {
        free(workq);
        return -ENOMEM;
    }
    pthread_mutex_init(&workq->lock, NULL);
    pthread_cond_init(&workq->cond, NULL);
    sfs_list_init(&workq->queue);
    workq->worker = worker;
    snprintf(workq->name, sizeof(workq->name), "%s", name);
    for (uint32_t i = 0; i < threads; i++) {
        rc = pthread_create(&workq->threads[i], NULL, sfs_workq_thread, workq);
        if (rc) {
            sfs_error("%s: cannot start thread %u: %s", name, i, strerror(rc));
            workq->thread_count = i;
            sfs_workq_destroy(workq);
            return -rc;
        }
        workq->thread_count = i + 1;
    }
    *workq_p = workq;
    return 0;
}

void sfs_workq_submit(sfs_workq_t *workq, sfs_work_t *work)
{
    pthread_mutex_lock(&workq->lock);
    sfs_list_add_tail(&workq->queue, &work->list);
    workq->depth++;
    pthread_cond_signal(&workq->cond);
    pthread_mutex_unlock(&workq->lock);
}

uint32_t sfs_workq_depth(sfs_workq_t *workq)
{
    uint32_t depth;

    pthread_mutex_lock(&workq->lock);
    depth = workq->depth;
    pthread_mutex_unlock(&workq->lock);
    return depth;
}

void sfs_workq_destroy(sfs_workq_t *workq)
{
    if (!workq) {
        return;
    }
    pthread_mutex_lock(&workq->lock);
    workq->stopping = 1;
    pthread_cond_broadcast(&workq->cond);
    pthread_mutex_unlock(&workq->lock);
    for (uint32_t i = 0; i < workq->thread_count; i++) {
        pthread_join(workq->threads[i], NULL);
    }
    pthread_mutex_destroy(&workq->lock);
    pthread_cond_destroy(&workq->cond);
    free(workq->threads);
    free(workq);
}
