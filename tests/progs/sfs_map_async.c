/*
 * The asynchronous cluster-map refresh (sfs_cluster_refresh_map_start/poll,
 * used by the metadata server every heartbeat) against a fake management
 * server in this process that holds GET_MAP requests (a slow management):
 * sending returns at once, the thread goes on serving while the request is
 * out, a late reply installs the map, a request never answered fails at its
 * deadline and the last map is kept. For contrast it times the blocking
 * sfs_cluster_refresh_map (what the metadata server did before) against the
 * same silent server. Exit 0 when all holds; FAILED lines say what did not.
 */
#include "sfs_cluster.h"

#include "sfs_buf.h"
#include "sfs_errno.h"
#include "sfs_proto.h"
#include "sfs_time.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the fake management runs on its own thread (UCX workers are one per
 * thread); these flags are how the main thread steers it */
static sfs_tp_worker_t  *mgmt_worker, *worker;
static sfs_tp_request_t *held;       /* the GET_MAP it holds (its thread only) */
static sfs_tp_request_t *ignored[8]; /* later ones, never answered */
static int               ignored_count;
static atomic_int        got_request, reply_now, stop;
static int               failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            printf("FAILED: " __VA_ARGS__);                                                        \
            printf("\n");                                                                          \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static void on_request(sfs_tp_request_t *req, void *arg)
{
    (void)arg;
    if (sfs_tp_request_opcode(req) == SFS_OP_GET_MAP && !held) {
        held = req;
        atomic_store(&got_request, 1);
        return;
    }
    if (sfs_tp_request_opcode(req) == SFS_OP_GET_MAP && ignored_count < 8) {
        ignored[ignored_count++] = req;
        return;
    }
    sfs_tp_request_reply_error(req, -ENOSYS, "fake management");
}

/* Progress both sides for `ms`; returns how many rounds ran (the work a
 * progress thread gets done meanwhile). */
static long progress_for(uint64_t ms, sfs_cluster_t *cluster, int *polled)
{
    uint64_t end    = sfs_time_ms() + ms;
    long     rounds = 0;

    while (sfs_time_ms() < end) {
        sfs_tp_worker_progress(worker, 1);
        if (cluster && *polled == 0) {
            *polled = sfs_cluster_refresh_map_poll(cluster);
        }
        rounds++;
    }
    return rounds;
}

static void reply_map(void)
{
    sfs_map_t    map = {.version = 7, .meta_node = 0};
    uint8_t      buf[4096];
    sfs_wbuf_t   wb;
    struct iovec iov;

    snprintf(map.cluster, sizeof(map.cluster), "fake");
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    sfs_map_pack(&wb, &map);
    iov.iov_base = buf;
    iov.iov_len  = wb.length;
    sfs_tp_request_reply(held, 0, NULL, 0, &iov, 1, NULL, NULL);
    held = NULL;
}

static void *mgmt_thread(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop)) {
        sfs_tp_worker_progress(mgmt_worker, 1);
        if (atomic_load(&reply_now) && held) {
            reply_map();
            atomic_store(&reply_now, 0);
        }
    }
    if (held) {
        sfs_tp_request_reply_error(held, -ECANCELED, "done");
        held = NULL;
    }
    for (int i = 0; i < ignored_count; i++) {
        sfs_tp_request_reply_error(ignored[i], -ECANCELED, "done");
    }
    return NULL;
}

int main(void)
{
    sfs_tp_worker_params_t wp;
    sfs_cluster_params_t   cp;
    sfs_auth_key_t         key;
    sfs_cluster_t         *cluster;
    const void            *address;
    size_t                 length;
    uint64_t               start, took;
    long                   rounds;
    pthread_t              thread;
    int                    polled = 0, rc;

    setvbuf(stdout, NULL, _IOLBF, 0);
    memset(&key, 0x5a, sizeof(key));
    memset(&wp, 0, sizeof(wp));
    wp.field_mask =
        SFS_TP_WORKER_PARAM_KEY | SFS_TP_WORKER_PARAM_HANDLER | SFS_TP_WORKER_PARAM_NAME;
    wp.key        = &key;
    wp.on_request = on_request;
    wp.name       = "fake-mgmt";
    rc            = sfs_tp_worker_create(&wp, &mgmt_worker);
    if (rc == 0) {
        wp.field_mask =
            SFS_TP_WORKER_PARAM_KEY | SFS_TP_WORKER_PARAM_NAME | SFS_TP_WORKER_PARAM_RPC_TIMEOUT;
        wp.name           = "sfs_map_async";
        wp.rpc_timeout_ms = 2000;
        rc                = sfs_tp_worker_create(&wp, &worker);
    }
    if (rc) {
        printf("FAILED: workers: %s\n", sfs_error_detail());
        return 1;
    }
    address = sfs_tp_worker_address(mgmt_worker, &length);
    memset(&cp, 0, sizeof(cp));
    cp.field_mask          = SFS_CLUSTER_PARAM_MGMT_ADDRESS | SFS_CLUSTER_PARAM_NO_MAP;
    cp.worker              = worker;
    cp.mgmt_address        = address;
    cp.mgmt_address_length = length;
    if (pthread_create(&thread, NULL, mgmt_thread, NULL) != 0) {
        printf("FAILED: cannot start the fake management thread\n");
        return 1;
    }
    rc = sfs_cluster_connect(&cp, &cluster);
    if (rc) {
        printf("FAILED: connect: %s\n", sfs_error_detail());
        return 1;
    }

    /* 1. a request held 1.5 s and then answered */
    start = sfs_time_ms();
    rc    = sfs_cluster_refresh_map_start(cluster, 5000);
    took  = sfs_time_ms() - start;
    CHECK(rc == 0, "refresh_map_start: %d (%s)", rc, sfs_error_detail());
    CHECK(took < 200, "sending the request took %lu ms", (unsigned long)took);
    CHECK(sfs_cluster_refresh_map_start(cluster, 5000) == -EALREADY, "a second request went out");
    rounds = progress_for(1500, cluster, &polled);
    printf("async: sent in %lu ms; %ld progress rounds ran while management held it 1.5 s\n",
           (unsigned long)took, rounds);
    CHECK(atomic_load(&got_request), "the fake management never got GET_MAP");
    CHECK(polled == 0, "poll said %d while the request was held", polled);
    CHECK(sfs_cluster_map(cluster) == NULL, "a map appeared before the reply");
    atomic_store(&reply_now, 1);
    progress_for(300, cluster, &polled);
    CHECK(polled == 1, "the late reply was not installed: poll %d (%s)", polled,
          sfs_error_detail());
    CHECK(sfs_cluster_map(cluster) && sfs_cluster_map(cluster)->version == 7,
          "the installed map is not the one sent");

    /* 2. a request never answered: fails at its deadline, the map stays */
    polled = 0;
    start  = sfs_time_ms();
    CHECK(sfs_cluster_refresh_map_start(cluster, 1000) == 0, "second request: %s",
          sfs_error_detail());
    progress_for(2500, cluster, &polled);
    printf("async: an unanswered request ended with %d (%s)\n", polled, sfs_error_detail());
    CHECK(polled == -ETIMEDOUT, "an unanswered request ended with %d, not -ETIMEDOUT", polled);
    CHECK(sfs_cluster_map(cluster) && sfs_cluster_map(cluster)->version == 7,
          "the last map was not kept");

    /* 3. for contrast, the blocking call against the same silent server
     * (management holds the last request; this one gets no answer either) */
    start = sfs_time_ms();
    rc    = sfs_cluster_refresh_map(cluster);
    took  = sfs_time_ms() - start;
    printf("blocking: sfs_cluster_refresh_map returned %d after %lu ms (the thread served "
           "nothing meanwhile)\n",
           rc, (unsigned long)took);
    CHECK(rc != 0 && took >= 1500,
          "the blocking call against a silent server returned %d in %lu ms", rc,
          (unsigned long)took);

    sfs_cluster_destroy(cluster);
    atomic_store(&stop, 1);
    pthread_join(thread, NULL);
    sfs_tp_worker_destroy(worker);
    sfs_tp_worker_destroy(mgmt_worker);
    printf("%d check%s failed\n", failures, failures == 1 ? "" : "s");
    return failures ? 1 : 0;
}
