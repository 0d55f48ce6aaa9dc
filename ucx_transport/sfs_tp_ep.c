/*
 * Endpoints: closing one without blocking (the request is freed by its
 * callback, and the worker counts closes in flight so that destroy can wait
 * for them), and naming the transports UCX chose for one.
 */
#define SFS_LOG_FAC "ucx"
#include "sfs_tp_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void sfs_tp_ep_close_cb(void *request, ucs_status_t status, void *user_data)
{
    sfs_tp_worker_t *worker = user_data;

    (void)status;
    worker->closes_out--;
    ucp_request_free(request);
}

int sfs_tp_ep_close(sfs_tp_worker_t *worker, ucp_ep_h ep, int force)
{
    ucp_request_param_t param = {
        .op_attr_mask =
            UCP_OP_ATTR_FIELD_FLAGS | UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
        .flags     = force ? UCP_EP_CLOSE_FLAG_FORCE : 0,
        .cb.send   = sfs_tp_ep_close_cb,
        .user_data = worker,
    };
    ucs_status_ptr_t req;

    if (!ep) {
        return 0;
    }
    req = ucp_ep_close_nbx(ep, &param);
    if (UCS_PTR_IS_ERR(req)) {
        return sfs_tp_ucs_errno(UCS_PTR_STATUS(req));
    }
    if (req != NULL) {
        worker->closes_out++;
    }
    return 0;
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
    for (char *line = text; line && *line;) {
        char *end   = strchr(line, '\n');
        char *lane  = strstr(line, "lane[");
        char *colon = lane ? strchr(lane, ':') : NULL;

        if (end) {
            *end = '\0';
        }
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
