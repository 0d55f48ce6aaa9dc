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

#define SFS_MGMT_META_MIRROR_FILE "meta-mirror-state"

static void sfs_mgmt_meta_mirror_save(sfs_mgmt_t *mgmt)
{
    char path[PATH_MAX], buf[128];
    int  len, rc;

    if (sfs_mgmt_state_path(mgmt->service->config, SFS_MGMT_META_MIRROR_FILE, path, sizeof(path)) <=
        0) {
        return;
    }
    len = sfs_mgmt_meta_mirror_format(mgmt->meta_mirror_state, mgmt->meta_mirror_seq, buf,
                                      sizeof(buf));
    rc  = len < 0 ? len : sfs_mgmt_state_write(path, buf, (size_t)len);
    if (rc) {
        /* the change holds in memory; a restart would not know it */
        sfs_error("metadata mirror state not saved: %s", sfs_error_detail());
    }
}

void sfs_mgmt_meta_mirror_set(sfs_mgmt_t *mgmt, uint32_t state, uint64_t seq)
{
    mgmt->meta_mirror_state = state;
    mgmt->meta_mirror_seq   = seq;
    sfs_mgmt_meta_mirror_save(mgmt);
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
    if (mgmt->meta_promoted && state.node_id != mgmt->meta_node) {
        /* a cut-off old server: ESTALE ends its fence, so it acknowledges
         * nothing the promoted copy lacks (sfs_meta_mirror_report.c) */
        node = sfs_mgmt_find_node(mgmt, mgmt->meta_node);
        sfs_tp_request_reply_error(req, -ESTALE,
                                   "management promoted the metadata mirror: rank %u on %s is the "
                                   "metadata server now, not rank %" PRIu32,
                                   mgmt->meta_node, node ? node->host : "?", state.node_id);
        return;
    }
    if (mgmt->promote_rpc && state.node_id == mgmt->meta_node) {
        /* not recorded while the mirror may already serve: the old server's
         * fence waits (and at worst fails), it does not acknowledge */
        sfs_tp_request_reply_error(req, -EAGAIN,
                                   "management is promoting the metadata mirror (rank %u): the "
                                   "state of rank %" PRIu32 " is not recorded meanwhile",
                                   mgmt->promote_to, state.node_id);
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
