/*
 * The progress loop: drive UCX, run the callbacks other threads posted, fire
 * the timers (RPC deadlines, handshake expiry, the bootstrap and direct-copy
 * sockets), spin briefly when idle and then sleep in epoll on UCX's event fd,
 * our wakeup eventfd and the listening sockets. The wakeup fds are made here.
 */
#define SFS_LOG_FAC "ucx"
#include "sfs_tp_internal.h"

#include "sfs_alloc.h"
#include "sfs_errno.h"
#include "sfs_log.h"
#include "sfs_time.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define SFS_TP_TIMER_INTERVAL_MS 20

typedef struct sfs_tp_posted {
    sfs_list_t       list;
    sfs_tp_post_cb_t cb;
    void            *arg;
} sfs_tp_posted_t;

uint64_t sfs_tp_now_ms(void)
{
    return sfs_time_ms();
}

int sfs_tp_epoll_add(sfs_tp_worker_t *worker, int fd)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};

    if (epoll_ctl(worker->epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0) {
        int rc = -errno;

        return sfs_error_set(rc, "epoll_ctl(add fd %d) failed: %s", fd, strerror(-rc));
    }
    return 0;
}

int sfs_tp_wakeup_open(sfs_tp_worker_t *worker)
{
    ucs_status_t status = ucp_worker_get_efd(worker->ucp_worker, &worker->ucx_fd);
    int          rc;

    if (status != UCS_OK) {
        return sfs_error_set(-EIO, "ucp_worker_get_efd failed: %s", ucs_status_string(status));
    }
    worker->event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    worker->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (worker->event_fd < 0 || worker->epoll_fd < 0) {
        rc = -errno;
        sfs_error_set(rc, "cannot create eventfd/epoll: %s", strerror(-rc));
        goto err_close;
    }
    rc = sfs_tp_epoll_add(worker, worker->ucx_fd);
    if (rc == 0) {
        rc = sfs_tp_epoll_add(worker, worker->event_fd);
    }
    if (rc) {
        goto err_close;
    }
    return 0;

err_close:
    sfs_tp_wakeup_close(worker);
    return rc;
}

void sfs_tp_wakeup_close(sfs_tp_worker_t *worker)
{
    /* ucx_fd is UCX's own */
    if (worker->epoll_fd >= 0) {
        close(worker->epoll_fd);
        worker->epoll_fd = -1;
    }
    if (worker->event_fd >= 0) {
        close(worker->event_fd);
        worker->event_fd = -1;
    }
}

int sfs_tp_run_posted(sfs_tp_worker_t *worker)
{
    sfs_list_t  ready;
    sfs_list_t *elem;
    int         count = 0;

    sfs_list_init(&ready);
    pthread_mutex_lock(&worker->post_lock);
    sfs_list_splice_tail(&ready, &worker->posted);
    pthread_mutex_unlock(&worker->post_lock);
    while ((elem = sfs_list_pop_head(&ready)) != NULL) {
        sfs_tp_posted_t *posted = sfs_container_of(elem, sfs_tp_posted_t, list);

        posted->cb(posted->arg);
        free(posted);
        count++;
    }
    return count;
}

/* Returns how many RPCs changed state (so that a blocking progress call
 * returns to a caller waiting for one). */
static int sfs_tp_run_timers(sfs_tp_worker_t *worker)
{
    uint64_t now = sfs_tp_now_ms();

    if (now < worker->next_timer_ms) {
        return 0;
    }
    worker->next_timer_ms = now + SFS_TP_TIMER_INTERVAL_MS;
    /* a busy worker may not sleep in epoll for a long time: serve the
     * bootstrap port here too, so joining never starves */
    if (worker->bootstrap_fd >= 0) {
        sfs_tp_bootstrap_accept(worker);
    }
    sfs_tp_direct_recv(worker);
    sfs_tp_sessions_expire(worker, now);
    sfs_tp_accepted_expire(worker, now);
    return sfs_tp_rpcs_check_deadlines(worker, now);
}

static void sfs_tp_drain_eventfd(sfs_tp_worker_t *worker)
{
    uint64_t value;

    while (read(worker->event_fd, &value, sizeof(value)) == sizeof(value)) {
    }
}

/* Sleep until one of our fds has something, at most `wait_ms`, and serve
 * the sockets that woke us. */
static void sfs_tp_sleep(sfs_tp_worker_t *worker, int wait_ms)
{
    struct epoll_event events[4];
    int                n = epoll_wait(worker->epoll_fd, events, 4, wait_ms);

    for (int i = 0; i < n; i++) {
        if (events[i].data.fd == worker->event_fd) {
            sfs_tp_drain_eventfd(worker);
        } else if (events[i].data.fd == worker->bootstrap_fd) {
            sfs_tp_bootstrap_accept(worker);
        } else if (events[i].data.fd == worker->direct_fd) {
            sfs_tp_direct_recv(worker);
        }
    }
}

int sfs_tp_worker_progress(sfs_tp_worker_t *worker, int timeout_ms)
{
    uint64_t start_ns   = sfs_time_ns();
    uint64_t spin_until = start_ns + (uint64_t)worker->spin_us * 1000;
    uint64_t end_ns     = timeout_ms < 0 ? UINT64_MAX : start_ns + (uint64_t)timeout_ms * 1000000;

    for (;;) {
        int          count = 0, wait_ms;
        uint64_t     now;
        ucs_status_t status;

        while (ucp_worker_progress(worker->ucp_worker)) {
            count++;
        }
        count += sfs_tp_run_posted(worker);
        count += sfs_tp_run_timers(worker);
        if (count || timeout_ms == 0) {
            return 0;
        }
        now = sfs_time_ns();
        if (now >= end_ns) {
            return 0;
        }
        if (now < spin_until || worker->ucx_inflight) {
            /* spin a little (a reply is likely on its way), and while a
             * transfer is under way keep driving it; but yield the core,
             * which the peer may need to make that progress */
            sched_yield();
            continue;
        }
        status = ucp_worker_arm(worker->ucp_worker);
        if (status == UCS_ERR_BUSY) {
            continue;
        }
        if (status != UCS_OK) {
            return sfs_error_set(sfs_tp_ucs_errno(status), "ucp_worker_arm failed: %s",
                                 ucs_status_string(status));
        }
        /* wake up for the timers too */
        wait_ms = SFS_TP_TIMER_INTERVAL_MS;
        if (end_ns != UINT64_MAX && (end_ns - now) / 1000000 < (uint64_t)wait_ms) {
            wait_ms = (int)((end_ns - now) / 1000000) + 1;
        }
        sfs_tp_sleep(worker, wait_ms);
        /* after a wakeup, spin again briefly: more is likely on its way */
        spin_until = sfs_time_ns() + (uint64_t)worker->spin_us * 1000;
    }
}

int sfs_tp_worker_post(sfs_tp_worker_t *worker, sfs_tp_post_cb_t cb, void *arg)
{
    sfs_tp_posted_t *posted;

    if (!SFS_ALLOC_PTR(posted)) {
        return -ENOMEM;
    }
    posted->cb  = cb;
    posted->arg = arg;
    pthread_mutex_lock(&worker->post_lock);
    sfs_list_add_tail(&worker->posted, &posted->list);
    pthread_mutex_unlock(&worker->post_lock);
    sfs_tp_worker_wakeup(worker);
    return 0;
}

void sfs_tp_worker_wakeup(sfs_tp_worker_t *worker)
{
    uint64_t one = 1;

    if (write(worker->event_fd, &one, sizeof(one)) < 0 && errno != EAGAIN) {
        sfs_error("cannot signal the progress thread: %m");
    }
}
