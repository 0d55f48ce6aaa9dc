/*
 * Endpoints: closing one without blocking (the request is freed by its
 * callback; the worker keeps the closes in flight so that destroy can wait
 * for them, and give back to UCX those that never finish), and naming the
 * transports UCX chose for one.
 */
#define SFS_LOG_FAC "ucx"
#include "sfs_tp_internal.h"

#include "sfs_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An endpoint close UCX has not finished. UCX owns `req` until the
 * callback, and we must free it there (ucp_request_free) unless destroy
 * already gave it back; ucp_worker_destroy asserts that every close request
 * still queued has been given back (ucp_ep.c:382 in UCX 1.13.1, `req->flags
 * & UCP_REQUEST_FLAG_RELEASED`). */
typedef struct sfs_tp_closing {
    sfs_list_t       list; /* in worker->closing, then worker->closes_given_up */
    sfs_tp_worker_t *worker;
    void            *req;
    int              given_up; /* ucp_request_free was called: UCX frees it */
    int              forced;
    uint64_t         started_ms;
    char             peer[SFS_TP_PEER_NAME_MAX];
} sfs_tp_closing_t;

static void sfs_tp_ep_close_cb(void *request, ucs_status_t status, void *user_data)
{
    sfs_tp_closing_t *closing = user_data;

    if (status != UCS_OK && !closing->given_up) {
        sfs_debug("closing the endpoint to %s ended: %s", closing->peer, ucs_status_string(status));
    }
    if (!closing->given_up) {
        closing->worker->closes_out--;
        ucp_request_free(request);
    }
    sfs_list_del(&closing->list);
    free(closing);
}

int sfs_tp_ep_close(sfs_tp_worker_t *worker, ucp_ep_h ep, int force, const char *peer)
{
    ucp_request_param_t param = {
        .op_attr_mask =
            UCP_OP_ATTR_FIELD_FLAGS | UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
        .flags   = force ? UCP_EP_CLOSE_FLAG_FORCE : 0,
        .cb.send = sfs_tp_ep_close_cb,
    };
    sfs_tp_closing_t *closing;
    ucs_status_ptr_t  req;

    if (!ep) {
        return 0;
    }
    closing = calloc(1, sizeof(*closing));
    if (!closing) {
        /* without a record the close still must happen: at once */
        param.flags        = UCP_EP_CLOSE_FLAG_FORCE;
        param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
        req                = ucp_ep_close_nbx(ep, &param);
        if (UCS_PTR_IS_PTR(req)) {
            ucp_request_free(req); /* UCX frees it when done */
        }
        return UCS_PTR_IS_ERR(req) ? sfs_tp_ucs_errno(UCS_PTR_STATUS(req)) : 0;
    }
    closing->worker     = worker;
    closing->forced     = force;
    closing->started_ms = sfs_tp_now_ms();
    snprintf(closing->peer, sizeof(closing->peer), "%s", peer ? peer : "a peer");
    sfs_list_init(&closing->list);
    param.user_data = closing;
    req             = ucp_ep_close_nbx(ep, &param);
    if (!UCS_PTR_IS_PTR(req)) {
        free(closing); /* done already (or failed): no callback comes */
        return UCS_PTR_IS_ERR(req) ? sfs_tp_ucs_errno(UCS_PTR_STATUS(req)) : 0;
    }
    closing->req = req;
    sfs_list_add_tail(&worker->closing, &closing->list);
    worker->closes_out++;
    return 0;
}

unsigned sfs_tp_ep_closes_give_up(sfs_tp_worker_t *worker, uint64_t waited_ms)
{
    sfs_list_t *elem, *tmp;
    unsigned    count = 0;

    sfs_list_for_each_safe(elem, tmp, &worker->closing)
    {
        sfs_tp_closing_t *closing = sfs_container_of(elem, sfs_tp_closing_t, list);

        sfs_warn("closing the %sendpoint to %s did not finish within %lu ms (the peer does not "
                 "answer: unreachable, or its side already gone); left to UCX to end",
                 closing->forced ? "(forced) " : "", closing->peer, (unsigned long)waited_ms);
        sfs_list_del(&closing->list);
        sfs_list_add_tail(&worker->closes_given_up, &closing->list);
        closing->given_up = 1;
        worker->closes_out--;
        ucp_request_free(closing->req); /* marks it released: UCX frees it */
        count++;
    }
    return count;
}

void sfs_tp_ep_closes_free(sfs_tp_worker_t *worker)
{
    sfs_list_t *elem;

    while ((elem = sfs_list_pop_head(&worker->closes_given_up)) != NULL) {
        free(sfs_container_of(elem, sfs_tp_closing_t, list));
    }
}

void sfs_tp_describe_transports(ucp_ep_h ep, char *buf, size_t buflen)
{
    char  *text = NULL;
    size_t size = 0;
    FILE  *stream;
    size_t used = 0;

    buf[0] = '\0';
    stream = open_memstream(&text, &size);
    if (!stream) {
        return;
    }
    ucp_ep_print_info(ep, stream);
    fclose(stream);
    /* lines look like "#   lane[0]:  8:posix/memory.0 md[4] ..." */
    /* a connection manager's lane ("lane[0]: cm tcp") names no transport */
    for (char *line = text; line && *line;) {
        char *end = strchr(line, '\n');
        char *lane, *colon;

        if (end) {
            *end = '\0'; /* first: the search must not run into the next line */
        }
        lane  = strstr(line, "lane[");
        colon = lane ? strchr(lane, ':') : NULL;
        if (colon) {
            char *tl = strchr(colon + 1, ':');
            char  name[64];

            if (tl && sscanf(tl + 1, "%63s", name) == 1) {
                char *dot = strrchr(name, '.');

                if (dot) {
                    *dot = '\0';
                }
                if (!strstr(buf, name) && used + strlen(name) + 3 < buflen) {
                    used +=
                        (size_t)snprintf(buf + used, buflen - used, "%s%s", used ? ", " : "", name);
                }
            }
        }
        line = end ? end + 1 : NULL;
    }
    free(text);
}
