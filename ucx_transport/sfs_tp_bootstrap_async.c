/*
 * A bootstrap fetch (sfs_tp_bootstrap_fetch) in a thread of its own: a
 * progress thread starts it and polls it at each turn of its loop, and so
 * goes on serving while an unreachable host lets the connect run to its
 * timeout. The fetch and its caller each hold a reference; the last to let
 * go frees it, so a caller that cancels never waits for the thread.
 */
#define SFS_LOG_FAC "ucx"
#include "sfs_tp.h"

#include "sfs_alloc.h"
#include "sfs_errno.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sfs_tp_bootstrap_async {
    pthread_mutex_t lock;
    int             refs; /* the thread's and the caller's */
    int             done;
    int             rc;
    char            detail[512]; /* the thread's error detail (thread-local there) */
    void           *address;
    size_t          length;
    char            host[256];
    uint16_t        port;
    uint32_t        timeout_ms;
};

static void sfs_tp_bootstrap_async_put(sfs_tp_bootstrap_async_t *fetch)
{
    int last;

    pthread_mutex_lock(&fetch->lock);
    last = --fetch->refs == 0;
    pthread_mutex_unlock(&fetch->lock);
    if (last) {
        pthread_mutex_destroy(&fetch->lock);
        free(fetch->address);
        free(fetch);
    }
}

static void *sfs_tp_bootstrap_async_run(void *arg)
{
    sfs_tp_bootstrap_async_t *fetch   = arg;
    void                     *address = NULL;
    size_t                    length  = 0;
    int rc = sfs_tp_bootstrap_fetch(fetch->host, fetch->port, fetch->timeout_ms, &address, &length);

    pthread_mutex_lock(&fetch->lock);
    fetch->rc      = rc;
    fetch->address = address;
    fetch->length  = length;
    if (rc) {
        snprintf(fetch->detail, sizeof(fetch->detail), "%s", sfs_error_detail());
    }
    fetch->done = 1;
    pthread_mutex_unlock(&fetch->lock);
    sfs_tp_bootstrap_async_put(fetch);
    return NULL;
}

int sfs_tp_bootstrap_fetch_start(const char *host, uint16_t port, uint32_t timeout_ms,
                                 sfs_tp_bootstrap_async_t **fetch_p)
{
    sfs_tp_bootstrap_async_t *fetch;
    pthread_attr_t            attr;
    pthread_t                 thread;
    int                       rc;

    if (strlen(host) >= sizeof(fetch->host)) {
        return sfs_error_set(-ENAMETOOLONG, "management host name '%.64s...' is too long", host);
    }
    if (!SFS_ALLOC_PTR(fetch)) {
        return -ENOMEM;
    }
    pthread_mutex_init(&fetch->lock, NULL);
    snprintf(fetch->host, sizeof(fetch->host), "%s", host);
    fetch->port       = port;
    fetch->timeout_ms = timeout_ms;
    fetch->refs       = 2;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    rc = pthread_create(&thread, &attr, sfs_tp_bootstrap_async_run, fetch);
    pthread_attr_destroy(&attr);
    if (rc) {
        pthread_mutex_destroy(&fetch->lock);
        free(fetch);
        return sfs_error_set(-rc, "cannot start a thread to ask %s:%u for its address: %s", host,
                             port, strerror(rc));
    }
    *fetch_p = fetch;
    return 0;
}

int sfs_tp_bootstrap_fetch_poll(sfs_tp_bootstrap_async_t *fetch, void **address_p, size_t *length_p)
{
    int rc;

    pthread_mutex_lock(&fetch->lock);
    if (!fetch->done) {
        pthread_mutex_unlock(&fetch->lock);
        return -EINPROGRESS;
    }
    rc = fetch->rc;
    if (rc == 0) {
        *address_p     = fetch->address;
        *length_p      = fetch->length;
        fetch->address = NULL;
    }
    pthread_mutex_unlock(&fetch->lock);
    if (rc) {
        sfs_error_set(rc, "%s", fetch->detail);
    }
    sfs_tp_bootstrap_async_put(fetch);
    return rc;
}

void sfs_tp_bootstrap_fetch_cancel(sfs_tp_bootstrap_async_t *fetch)
{
    if (fetch) {
        sfs_tp_bootstrap_async_put(fetch);
    }
}
