/*
 * The metadata mirror as management knows it (docs/metadata-mirror.md,
 * "Management knows the mirror's state"): good, needs-resync or resyncing,
 * as the metadata server reports it (META_MIRROR_STATE), kept in the file
 * meta-mirror-state (sfs_mgmt_internal.h) so that a management that
 * restarts does not take a copy that was left behind for one in step, and
 * shown by MIRROR_LIST (stripefs-ctl mirror list).
 */
#define SFS_LOG_FAC "mgmt"
#include "sfs_mgmt_internal.h"

#include "sfs_errno.h"
#include "sfs_handlers.h"
#include "sfs_log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SFS_MGMT_META_MIRROR_HEADER "stripefs meta mirror state 1"
#define SFS_MGMT_META_MIRROR_FILE   "meta-mirror-state"

int sfs_mgmt_meta_mirror_parse(const char *text, const char *path, uint32_t *state_p,
                               uint64_t *seq_p)
{
    const char        *nl = strchr(text, '\n');
    char               name[32], batch[32], end;
    unsigned long long seq;
    size_t             hl = strlen(SFS_MGMT_META_MIRROR_HEADER);

    if (!nl || (size_t)(nl - text) != hl || strncmp(text, SFS_MGMT_META_MIRROR_HEADER, hl) != 0) {
        return sfs_error_set(-EBADMSG, "%s, line 1: not \"%s\"%s", path,
                             SFS_MGMT_META_MIRROR_HEADER, nl ? "" : " (a torn write?)");
    }
    text = nl + 1;
    nl   = strchr(text, '\n');
    /* exactly "state NAME batch DIGITS\n", and nothing after it */
    if (!nl || nl[1] != '\0' ||
        sscanf(text, "state %31[a-z-] batch %31[0-9]%c", name, batch, &end) != 3 || end != '\n' ||
        strlen(batch) > 20) {
        return sfs_error_set(-EBADMSG,
                             "%s, line 2: not \"state good|needs-resync|resyncing "
                             "batch N\" as the last line",
                             path);
    }
    errno = 0;
    seq   = strtoull(batch, NULL, 10);
    if (errno) {
        return sfs_error_set(-EBADMSG, "%s, line 2: batch %s is out of range", path, batch);
    }
    /* (bad is a storage member's state: a metadata mirror is never rebuilt) */
    if (sfs_mgmt_mirror_state_parse(name, state_p) != 0 || *state_p == SFS_MIRROR_STATE_BAD) {
        return sfs_error_set(-EBADMSG, "%s, line 2: unknown state \"%s\"", path, name);
    }
    *seq_p = seq;
    return 0;
}

static void sfs_mgmt_meta_mirror_save(sfs_mgmt_t *mgmt)
{
    char path[PATH_MAX], buf[128];
    int  len, rc;

    if (sfs_mgmt_state_path(mgmt->service->config, SFS_MGMT_META_MIRROR_FILE, path, sizeof(path)) <=
        0) {
        return;
    }
    len =
        snprintf(buf, sizeof(buf), "%s\nstate %s batch %" PRIu64 "\n", SFS_MGMT_META_MIRROR_HEADER,
                 sfs_mirror_state_name(mgmt->meta_mirror_state), mgmt->meta_mirror_seq);
    rc = sfs_mgmt_state_write(path, buf, (size_t)len);
    if (rc) {
        /* the change holds in memory; a restart would not know it */
        sfs_error("metadata mirror state not saved: %s", sfs_error_detail());
    }
}

int sfs_mgmt_meta_mirror_load(sfs_mgmt_t *mgmt)
{
    char path[PATH_MAX], *text;
    int  rc;

    mgmt->meta_mirror_state = SFS_MIRROR_STATE_NEEDS_RESYNC;
    mgmt->meta_mirror_seq   = 0;
    if (!mgmt->service->config->meta_mirror_host[0]) {
        return 0;
    }
    rc = sfs_mgmt_state_path(mgmt->service->config, SFS_MGMT_META_MIRROR_FILE, path, sizeof(path));
    if (rc <= 0) {
        return rc;
    }
    rc = sfs_mgmt_state_read(path, &text);
    if (rc == 1) {
        return 0; /* never reported: not known to be in step */
    }
    if (rc) {
        return rc;
    }
    rc = sfs_mgmt_meta_mirror_parse(text, path, &mgmt->meta_mirror_state, &mgmt->meta_mirror_seq);
    free(text);
    if (rc == 0) {
        sfs_info("metadata mirror: %s since batch %" PRIu64 " (from %s), until the metadata "
                 "server says more",
                 sfs_mirror_state_name(mgmt->meta_mirror_state), mgmt->meta_mirror_seq, path);
    }
    return rc;
}

void sfs_mgmt_meta_mirror_list(sfs_mgmt_t *mgmt, sfs_meta_mirror_info_t *info)
{
    memset(info, 0, sizeof(*info));
    if (mgmt->service->config->meta_mirror_host[0]) {
        info->configured = 1;
        info->state      = mgmt->meta_mirror_state;
        info->seq        = mgmt->meta_mirror_seq;
    }
}

void sfs_handle_meta_mirror_state(sfs_service_t *service, sfs_tp_request_t *req)
{
    sfs_mgmt_t                 *mgmt = service->mgmt;
    sfs_meta_mirror_state_req_t state;
    sfs_mgmt_node_t            *node;

    if (!(sfs_tp_session_cred(sfs_tp_request_session(req))->flags & SFS_CRED_SERVER)) {
        sfs_tp_request_reply_error(req, -EPERM,
                                   "only the metadata server may report the metadata mirror's "
                                   "state");
        return;
    }
    if (sfs_handler_decode(req, &state, sizeof(state), 0) != 0) {
        return;
    }
    node = sfs_mgmt_find_node(mgmt, state.node_id);
    if (!node || !(node->roles & SFS_ROLE_META)) {
        sfs_tp_request_reply_error(req, -EINVAL,
                                   "metadata mirror state from rank %" PRIu32
                                   ", which is not the registered metadata server",
                                   state.node_id);
        return;
    }
    if (!service->config->meta_mirror_host[0]) {
        sfs_tp_request_reply_error(req, -EINVAL,
                                   "metadata mirror state, but the config names no meta.mirror");
        return;
    }
    if (state.state != mgmt->meta_mirror_state) {
        sfs_log(state.state == SFS_MIRROR_STATE_GOOD ? SFS_LOG_INFO : SFS_LOG_WARN,
                "metadata mirror: %s -> %s (at batch %" PRIu64 ")",
                sfs_mirror_state_name(mgmt->meta_mirror_state), sfs_mirror_state_name(state.state),
                state.seq);
        mgmt->meta_mirror_state = state.state;
        mgmt->meta_mirror_seq   = state.seq;
        sfs_mgmt_meta_mirror_save(mgmt); /* before the answer: the server then knows it is kept */
    }
    sfs_tp_request_reply(req, 0, NULL, 0, NULL, 0, NULL, NULL);
}
