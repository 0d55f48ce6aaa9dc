/*
 * stripefs-server: one rank of the stripefs service. Started for the whole
 * cluster by one mpirun; each rank takes the roles the config gives its host.
 *
 *   mpirun -np 4 --host imaging-01,imaging-02,imaging-03,imaging-04 \
 *          stripefs-server -c /etc/stripefs/imaging.yaml
 *   mpirun -np 1 stripefs-server --one-host --state ./stripefs-state
 *
 * MPI is used only to start: to share the config and the management
 * address, to check the job against the config, and to agree that every
 * rank is up. Everything else goes over UCX. This file holds main, the
 * start of a rank of the full job and the loop; sfs_server.h lists the rest.
 */
#define SFS_LOG_FAC "server"
#include "sfs_server.h"

#include "sfs_errno.h"
#include "sfs_log.h"
#include "sfs_munged.h"
#include "sfs_time.h"

#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static sfs_service_t *sfs_server_service;

static void sfs_server_signal(int signo)
{
    (void)signo;
    if (sfs_server_service) {
        sfs_service_request_stop(sfs_server_service);
    }
}

void sfs_server_catch_signals(sfs_service_t *service)
{
    sfs_server_service = service;
    signal(SIGTERM, sfs_server_signal);
    signal(SIGINT, sfs_server_signal);
    signal(SIGPIPE, SIG_IGN);
}

void sfs_server_release_signals(void)
{
    sfs_server_service = NULL;
}

void sfs_server_loop(sfs_service_t *service)
{
    while (!sfs_service_stopping(service)) {
        sfs_service_progress(service, 100);
    }
}

/* Keep serving while waiting for every rank (a blocking barrier would stop
 * this rank from answering the others). */
static int sfs_server_barrier(sfs_service_t *service, uint32_t timeout_ms)
{
    MPI_Request request;
    uint64_t    deadline = sfs_time_ms() + timeout_ms;
    int         done     = 0;

    MPI_Ibarrier(MPI_COMM_WORLD, &request);
    while (!done) {
        if (service) {
            sfs_service_progress(service, 1);
        } else {
            usleep(1000);
        }
        MPI_Test(&request, &done, MPI_STATUS_IGNORE);
        if (!done && timeout_ms && sfs_time_ms() > deadline) {
            return -ETIMEDOUT; /* a rank is gone: it will never arrive */
        }
    }
    return 0;
}

/* Everyone learns whether any rank failed; each failing rank says why. */
static int sfs_server_agree(int rank, const char *host, int rc, const char *what)
{
    int worst = 0;

    if (rc) {
        fprintf(stderr, "stripefs-server: rank %d on %s: %s: %s\n", rank, host, what,
                sfs_error_detail()[0] ? sfs_error_detail() : sfs_strerror(rc));
    }
    MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return worst;
}

void sfs_server_write_ready(const char *path, const sfs_config_t *config)
{
    char  tmp[PATH_MAX + 8];
    FILE *file;

    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    file = fopen(tmp, "w");
    if (!file) {
        sfs_error("cannot write ready file %s: %m", tmp);
        return;
    }
    fprintf(file, "mgmt=%s:%u\nconfig=%s\nconnauth=%s\npid=%d\n", config->mgmt_host,
            config->mgmt_port, config->path, config->connauth_file, (int)getpid());
    fclose(file);
    if (rename(tmp, path) != 0) {
        sfs_error("cannot write ready file %s: %m", path);
    }
}

/* Everyone registers with management, whose address the job shares. */
static int sfs_server_register(sfs_server_t *server)
{
    const void *address        = NULL;
    size_t      address_length = 0;
    long long   shared_length;
    char       *shared;
    int         mgmt_rank = (int)server->plan->mgmt_rank;
    int         rc;

    if (server->rank == mgmt_rank) {
        address = sfs_tp_worker_address(server->service->worker, &address_length);
    }
    shared_length = (long long)address_length;
    MPI_Bcast(&shared_length, 1, MPI_LONG_LONG, mgmt_rank, MPI_COMM_WORLD);
    shared = malloc((size_t)shared_length);
    if (!shared) {
        return sfs_error_set(-ENOMEM, "out of memory for management's address");
    }
    if (address) {
        memcpy(shared, address, address_length);
    }
    MPI_Bcast(shared, (int)shared_length, MPI_BYTE, mgmt_rank, MPI_COMM_WORLD);
    rc = sfs_service_register(server->service, shared, (size_t)shared_length);
    free(shared);
    return rc;
}

/* Check the job against the config, deal out the roles, start this rank's
 * service and register it; every rank learns whether all did. */
static int sfs_server_start(sfs_server_t *server)
{
    const sfs_config_t *config = server->config;
    int                 rc;

    rc = sfs_role_plan_create(config, server->host_of, (uint32_t)server->size, &server->plan);
    if (rc) {
        if (server->rank == 0) {
            fprintf(stderr, "stripefs-server: refusing to start: %s\n", sfs_error_detail());
        }
        return 1;
    }
    if (sfs_server_check_new_store(server) != 0) {
        return 1;
    }
    rc = sfs_service_create(config, server->plan, (uint32_t)server->rank, &server->service);
    if (sfs_server_agree(server->rank, server->host, rc, "cannot start")) {
        return 1;
    }
    if (sfs_server_check_identity(server) != 0) {
        return 1;
    }
    sfs_server_catch_signals(server->service);
    rc = sfs_server_register(server);
    sfs_server_barrier(server->service, 0);
    if (sfs_server_agree(server->rank, server->host, rc, "cannot register with management")) {
        return 1;
    }
    if (server->service->meta) {
        sfs_meta_map_changed(server->service->meta);
    }
    if (server->rank == 0) {
        sfs_info("stripefs service ready: %d rank%s, %u target%s, management at %s:%u, "
                 "config %s",
                 server->size, server->size == 1 ? "" : "s", config->target_count,
                 config->target_count == 1 ? "" : "s", config->mgmt_host, config->mgmt_port,
                 config->path);
        sfs_server_save_pending_config(server); /* before anyone is told it is ready */
        if (server->args.ready_file) {
            sfs_server_write_ready(server->args.ready_file, config);
        }
    }
    return 0;
}

/* After a stop: flush, and wait for the other ranks to get there too. */
static void sfs_server_stop(sfs_server_t *server)
{
    int rc = sfs_service_flush(server->service);

    if (rc) {
        sfs_error("flush on stop failed: %s", sfs_error_detail());
    }
    if (sfs_server_barrier(server->service, 15000) != 0) {
        /* a rank was lost (and maybe rejoined as a job of its own): MPI
         * would wait for it forever in MPI_Finalize, so leave without it */
        sfs_warn("not every rank of this job reached the end (a rank was lost earlier): "
                 "exiting without MPI_Finalize");
        server->lost_rank = 1;
    }
    if (server->rank == 0) {
        sfs_info("stripefs service stopped cleanly");
    }
    server->exit_code = rc ? 1 : 0;
}

/* One rank of the full job, from start to stop. */
static void sfs_server_serve(sfs_server_t *server)
{
    if (sfs_server_start(server) == 0) {
        sfs_server_loop(server->service);
        sfs_server_stop(server);
    }
}

static void sfs_server_begin(sfs_server_t *server, int *argc, char ***argv)
{
    int provided;

    memset(server, 0, sizeof(*server));
    server->exit_code = 1;
    MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &server->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &server->size);
    if (gethostname(server->host, sizeof(server->host) - 1) != 0) {
        snprintf(server->host, sizeof(server->host), "unknown");
    }
}

/* How long MPI_Finalize may take: it waits for every rank of the job (a
 * fence through Open MPI's runtime), and under stripefs-service
 * (orte_enable_recovery) a rank that died after the stop barrier, or whose
 * runtime connection broke, leaves the others there for ever. */
#define SFS_SERVER_FINALIZE_TIMEOUT_S 30

static char                  sfs_server_finalize_msg[SFS_HOST_MAX + 192];
static volatile sig_atomic_t sfs_server_finalize_code;

static void sfs_server_finalize_expired(int signo)
{
    (void)signo;
    /* only async-signal-safe calls here */
    if (write(STDERR_FILENO, sfs_server_finalize_msg, strlen(sfs_server_finalize_msg)) < 0) {
        /* nothing more to do: we are leaving */
    }
    _exit(sfs_server_finalize_code);
}

/* MPI_Finalize, bounded: past the limit the rank leaves without it (what it
 * had to do, flush and stop, is done; a stuck rank must not hang for ever). */
static void sfs_server_finalize(const sfs_server_t *server)
{
    struct sigaction action;

    snprintf(sfs_server_finalize_msg, sizeof(sfs_server_finalize_msg),
             "stripefs-server: rank %d on %s: MPI_Finalize did not finish within %d s (another "
             "rank died or cannot be reached): exiting without it\n",
             server->rank, server->host, SFS_SERVER_FINALIZE_TIMEOUT_S);
    sfs_server_finalize_code = server->exit_code;
    memset(&action, 0, sizeof(action));
    action.sa_handler = sfs_server_finalize_expired;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGALRM, &action, NULL) == 0) {
        alarm(SFS_SERVER_FINALIZE_TIMEOUT_S);
    }
    MPI_Finalize();
    alarm(0);
}

static int sfs_server_end(sfs_server_t *server)
{
    sfs_server_release_signals();
    sfs_service_destroy(server->service);
    sfs_role_plan_destroy(server->plan);
    sfs_config_destroy(server->config);
    free(server->hosts);
    free(server->host_of);
    sfs_munged_stop(server->munged_pid);
    sfs_server_drop_pending_config(server); /* a start that did not get ready */
    sfs_dirlock_release(server->state_lock);
    if (server->lost_rank) {
        fflush(NULL);
        _exit(server->exit_code);
    }
    sfs_server_finalize(server);
    return server->exit_code;
}

int main(int argc, char **argv)
{
    sfs_server_t server;

    sfs_server_begin(&server, &argc, &argv);                 /* MPI, rank, host name */
    if (sfs_server_command_line(&server, argc, argv) == 0 && /* options, --help */
        sfs_server_share_config(&server) == 0 &&             /* rank 0 reads, all parse */
        sfs_server_start_munged(&server) == 0 &&             /* the service's own, if any */
        sfs_server_gather_hosts(&server) == 0) {             /* every rank's host */
        if (server.args.rejoin_rank >= 0) {
            sfs_server_rejoin(&server); /* a lost rank comes back */
        } else if (server.args.join) {
            sfs_server_join(&server); /* new targets, as a new rank */
        } else {
            sfs_server_serve(&server); /* plan, start, register, loop, stop */
        }
    }
    return sfs_server_end(&server); /* tear down, MPI_Finalize */
}
