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
 * rank is up. Everything else goes over UCX.
 */
#define SFS_LOG_FAC "server"
#include "sfs_munged.h"
#include "sfs_service.h"

#include "sfs_alloc.h"
#include "sfs_errno.h"
#include "sfs_log.h"
#include "sfs_time.h"

#include <getopt.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SFS_SERVER_TEXT_MAX (1u << 20)

typedef struct sfs_server_args {
    const char *config_path;
    int         one_host;
    const char *state_dir;
    uint32_t    targets;
    uint32_t    port;
    int         targets_given; /* --targets or --port was on the command line */
    int         port_given;
    const char *ready_file;
    const char *log_level;
    int         rejoin_rank; /* -1: part of the full job */
} sfs_server_args_t;

static sfs_service_t *sfs_server_service;

static void sfs_server_signal(int signo)
{
    (void)signo;
    if (sfs_server_service) {
        sfs_service_request_stop(sfs_server_service);
    }
}

static void sfs_server_usage(FILE *out)
{
    fprintf(out, "usage: mpirun [-np N --host ...] stripefs-server -c CLUSTER.yaml [options]\n"
                 "       mpirun -np N stripefs-server --one-host [--state DIR] [options]\n"
                 "\n"
                 "Runs the stripefs service: every rank serves the roles (management,\n"
                 "metadata, storage targets) that the config gives its host.\n"
                 "\n"
                 "  -c, --config FILE     cluster config (see docs/config.md)\n"
                 "      --one-host        all roles on this host, targets under the state dir;\n"
                 "                        makes the config and connauth file on first start\n"
                 "      --state DIR       state dir for --one-host (default ./stripefs-state)\n"
                 "      --targets N       targets for --one-host (default 4)\n"
                 "      --port N          management port for --one-host (default 8008); on\n"
                 "                        an existing state dir, a new port is saved in its\n"
                 "                        config (a different --targets is refused)\n"
                 "      --ready-file F    write F (mgmt address and config path) once serving\n"
                 "      --rejoin RANK     come back as RANK of a running service whose rank was\n"
                 "                        lost (a job of one rank; management must be up)\n"
                 "      --log-level L     error, warn, info (default), debug, trace\n"
                 "  -h, --help            this text\n"
                 "\n"
                 "Stop it with 'stripefs-ctl shutdown' or SIGTERM to mpirun: every rank then\n"
                 "flushes metadata and chunk files and exits 0.\n");
}

static int sfs_server_parse(int argc, char **argv, sfs_server_args_t *args)
{
    static const struct option options[] = {
        {"config", required_argument, NULL, 'c'},    {"one-host", no_argument, NULL, 'o'},
        {"state", required_argument, NULL, 's'},     {"targets", required_argument, NULL, 't'},
        {"port", required_argument, NULL, 'p'},      {"ready-file", required_argument, NULL, 'r'},
        {"log-level", required_argument, NULL, 'l'}, {"help", no_argument, NULL, 'h'},
        {"rejoin", required_argument, NULL, 'j'},    {NULL, 0, NULL, 0}};
    int opt;

    memset(args, 0, sizeof(*args));
    args->state_dir   = "./stripefs-state";
    args->targets     = 4;
    args->port        = SFS_CONFIG_DEFAULT_PORT;
    args->log_level   = "info";
    args->rejoin_rank = -1;
    opterr            = 0;
    while ((opt = getopt_long(argc, argv, "c:h", options, NULL)) != -1) {
        char *end;

        switch (opt) {
        case 'c':
            args->config_path = optarg;
            break;
        case 'o':
            args->one_host = 1;
            break;
        case 's':
            args->state_dir = optarg;
            break;
        case 't':
            args->targets = (uint32_t)strtoul(optarg, &end, 10);
            if (*end || args->targets < 1 || args->targets > 64) {
                return sfs_error_set(-EINVAL, "--targets must be 1..64, not '%s'", optarg);
            }
            args->targets_given = 1;
            break;
        case 'p':
            args->port = (uint32_t)strtoul(optarg, &end, 10);
            if (*end || args->port < 1 || args->port > 65535) {
                return sfs_error_set(-EINVAL, "--port must be 1..65535, not '%s'", optarg);
            }
            args->port_given = 1;
            break;
        case 'r':
            args->ready_file = optarg;
            break;
        case 'l':
            if (sfs_log_level_parse(optarg) < 0) {
                return sfs_error_set(-EINVAL, "unknown --log-level '%s'", optarg);
            }
            args->log_level = optarg;
            break;
        case 'j':
            args->rejoin_rank = (int)strtol(optarg, &end, 10);
            if (*end || args->rejoin_rank < 0) {
                return sfs_error_set(-EINVAL, "--rejoin needs a rank number, not '%s'", optarg);
            }
            break;
        case 'h':
            return 1;
        default:
            return sfs_error_set(-EINVAL, "unknown option '%s' (see --help)", argv[optind - 1]);
        }
    }
    if (optind < argc) {
        return sfs_error_set(-EINVAL, "unexpected argument '%s' (see --help)", argv[optind]);
    }
    if (!args->config_path == !args->one_host) {
        return sfs_error_set(-EINVAL, "give either -c CLUSTER.yaml or --one-host (see --help)");
    }
    return 0;
}

static int sfs_server_read_file(const char *path, char **text_p, size_t *length_p)
{
    FILE  *file = fopen(path, "r");
    char  *text;
    size_t length;

    if (!file) {
        return sfs_error_set(-errno, "cannot open config %s: %m", path);
    }
    text = malloc(SFS_SERVER_TEXT_MAX);
    if (!text) {
        fclose(file);
        return -ENOMEM;
    }
    length = fread(text, 1, SFS_SERVER_TEXT_MAX, file);
    if (ferror(file) || length == SFS_SERVER_TEXT_MAX) {
        fclose(file);
        free(text);
        return sfs_error_set(-EINVAL, "config %s is unreadable or larger than %u bytes", path,
                             SFS_SERVER_TEXT_MAX);
    }
    fclose(file);
    *text_p   = text;
    *length_p = length;
    return 0;
}

/* --one-host on an existing state dir: its saved config wins, but an option
 * given on the command line must not be silently ignored. A new --port is
 * saved (clients read the port from that file); the target count is fixed by
 * the data already in the state dir, so a different --targets is refused. */
static int sfs_server_apply_one_host_options(const sfs_server_args_t *args, const char *path)
{
    sfs_config_t *config;
    uint16_t      old_port;
    int           rc;

    if (!args->port_given && !args->targets_given) {
        return 0;
    }
    rc = sfs_config_load(path, &config);
    if (rc) {
        return rc;
    }
    if (args->targets_given && config->target_count != args->targets) {
        rc = sfs_error_set(-EINVAL,
                           "--targets %u: state dir %s already holds %u targets (see %s); "
                           "start without --targets or use a new --state dir",
                           args->targets, args->state_dir, config->target_count, path);
        goto out;
    }
    old_port = config->mgmt_port;
    if (args->port_given && old_port != args->port) {
        if (args->rejoin_rank >= 0) {
            rc = sfs_error_set(-EINVAL,
                               "--rejoin: the running service listens on port %u (%s), not on "
                               "--port %u",
                               old_port, path, args->port);
            goto out;
        }
        config->mgmt_port = (uint16_t)args->port;
        rc                = sfs_config_write(config, path);
        if (rc == 0) {
            sfs_info("management port %u, not %u as before: saved in %s", args->port, old_port,
                     path);
        }
    }
out:
    sfs_config_destroy(config);
    return rc;
}

/* Rank 0: the config text everyone parses. For --one-host, make the state
 * directory, its config and its connauth file on first start. */
static int sfs_server_config_text(const sfs_server_args_t *args, int size, char *name,
                                  size_t name_size, char **text_p, size_t *length_p)
{
    char          path[PATH_MAX];
    char          host[SFS_HOST_MAX];
    sfs_config_t *config;
    int           rc;

    if (args->config_path) {
        snprintf(name, name_size, "%s", args->config_path);
        return sfs_server_read_file(args->config_path, text_p, length_p);
    }
    /* users reach the config and the munge socket in it; the targets, the
     * metadata and the keys inside stay the service's own */
    if (mkdir(args->state_dir, 0755) != 0 && errno != EEXIST) {
        return sfs_error_set(-errno, "cannot create state dir %s: %m", args->state_dir);
    }
    snprintf(path, sizeof(path), "%s/stripefs.yaml", args->state_dir);
    if (access(path, F_OK) != 0 && args->rejoin_rank >= 0) {
        return sfs_error_set(-ENOENT,
                             "--rejoin: %s does not exist (no service was started in "
                             "%s)",
                             path, args->state_dir);
    }
    if (access(path, F_OK) != 0) {
        if (gethostname(host, sizeof(host)) != 0) {
            snprintf(host, sizeof(host), "localhost");
        }
        rc = sfs_config_one_host(args->state_dir, host, args->targets, (uint16_t)args->port,
                                 &config);
        if (rc) {
            return rc;
        }
        config->hosts[0].ranks = (uint32_t)size;
        rc                     = sfs_config_write(config, path);
        if (rc == 0 && access(config->connauth_file, F_OK) != 0) {
            rc = sfs_auth_make_connauth(config->connauth_file, SFS_CONNAUTH_DEFAULT_SIZE);
        }
        sfs_config_destroy(config);
        if (rc) {
            return rc;
        }
    } else {
        rc = sfs_server_apply_one_host_options(args, path);
        if (rc) {
            return rc;
        }
    }
    snprintf(name, name_size, "%s", path);
    return sfs_server_read_file(path, text_p, length_p);
}

/* --rejoin: what RANK serves, as management's map says. */
static int sfs_server_rejoin_plan(const sfs_config_t *config, uint32_t rank, const char *host,
                                  sfs_role_plan_t **plan_p)
{
    const sfs_config_host_t *mgmt_host = sfs_config_find_host(config, config->mgmt_host);
    sfs_tp_worker_params_t   params;
    sfs_cluster_params_t     cparams;
    sfs_tp_worker_t         *worker  = NULL;
    sfs_cluster_t           *cluster = NULL;
    const sfs_map_t         *map;
    const sfs_map_node_t    *node;
    sfs_role_plan_t         *plan = NULL;
    sfs_auth_key_t           key;
    uint32_t                 count = rank + 1;
    int                      rc;

    rc = sfs_auth_load_connauth(config->connauth_file, &key);
    if (rc) {
        return rc;
    }
    memset(&params, 0, sizeof(params));
    params.field_mask =
        SFS_TP_WORKER_PARAM_KEY | SFS_TP_WORKER_PARAM_PEER_KIND | SFS_TP_WORKER_PARAM_NAME;
    params.key       = &key;
    params.peer_kind = SFS_PEER_ADMIN;
    params.name      = "stripefs-server (rejoining)";
    rc               = sfs_tp_worker_create(&params, &worker);
    if (rc) {
        return rc;
    }
    memset(&cparams, 0, sizeof(cparams));
    cparams.field_mask = SFS_CLUSTER_PARAM_MGMT_HOST | SFS_CLUSTER_PARAM_TIMEOUT;
    cparams.worker     = worker;
    cparams.mgmt_host = mgmt_host && mgmt_host->address[0] ? mgmt_host->address : config->mgmt_host;
    cparams.mgmt_port = config->mgmt_port;
    cparams.connect_timeout_ms = config->connect_timeout_ms;
    rc                         = sfs_cluster_connect(&cparams, &cluster);
    if (rc) {
        goto out;
    }
    map  = sfs_cluster_map(cluster);
    node = sfs_map_find_node(map, rank);
    if (!node) {
        rc = sfs_error_set(-ENOENT, "management knows no rank %u: nothing to rejoin", rank);
        goto out;
    }
    if (!sfs_config_host_matches(node->host, host)) {
        rc = sfs_error_set(-EINVAL, "rank %u ran on host '%s', this is '%s': rejoin it there", rank,
                           node->host, host);
        goto out;
    }
    for (uint32_t i = 0; i < map->node_count; i++) {
        count = map->nodes[i].node_id + 1 > count ? map->nodes[i].node_id + 1 : count;
    }
    if (!SFS_ALLOC_PTR(plan) || !SFS_ALLOC_ARRAY(plan->ranks, count)) {
        rc = -ENOMEM;
        goto out;
    }
    plan->rank_count        = count;
    plan->mgmt_rank         = map->mgmt_node;
    plan->meta_rank         = map->meta_node;
    plan->ranks[rank].roles = node->roles & ~SFS_ROLE_MGMT;
    if (node->roles & SFS_ROLE_MGMT) {
        rc = sfs_error_set(-EOPNOTSUPP,
                           "rank %u runs management: restart the whole service "
                           "instead",
                           rank);
        goto out;
    }
    for (uint32_t h = 0; h < config->host_count; h++) {
        if (sfs_config_host_matches(config->hosts[h].name, host)) {
            plan->ranks[rank].host_index = h;
        }
    }
    for (uint32_t t = 0; t < map->target_count; t++) {
        if (map->targets[t].node_id != rank) {
            continue;
        }
        for (uint32_t c = 0; c < config->target_count; c++) {
            uint32_t *grown;

            if (config->targets[c].id != map->targets[t].target_id) {
                continue;
            }
            grown = realloc(plan->ranks[rank].targets,
                            (plan->ranks[rank].target_count + 1) * sizeof(*grown));
            if (!grown) {
                rc = -ENOMEM;
                goto out;
            }
            plan->ranks[rank].targets                                   = grown;
            plan->ranks[rank].targets[plan->ranks[rank].target_count++] = c;
        }
    }
    *plan_p = plan;
    plan    = NULL;
out:
    sfs_role_plan_destroy(plan);
    sfs_cluster_destroy(cluster);
    sfs_tp_worker_destroy(worker);
    return rc;
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

static void sfs_server_write_ready(const char *path, const sfs_config_t *config)
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

/* A lost rank comes back: a job of one rank takes the roles management
 * says that rank had, and registers again; clients reconnect to it. */
static int sfs_server_rejoin(const sfs_server_args_t *args, const sfs_config_t *config,
                             const char *host)
{
    const sfs_config_host_t *mgmt_host = sfs_config_find_host(config, config->mgmt_host);
    sfs_role_plan_t         *plan      = NULL;
    sfs_service_t           *service   = NULL;
    void                    *address   = NULL;
    size_t                   length;
    uint32_t                 rank = (uint32_t)args->rejoin_rank;
    int                      size, rc;

    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 1) {
        fprintf(stderr, "stripefs-server: --rejoin runs as a job of one rank (-np 1)\n");
        return 2;
    }
    rc = sfs_server_rejoin_plan(config, rank, host, &plan);
    if (rc == 0) {
        rc = sfs_service_create(config, plan, rank, &service);
    }
    if (rc == 0) {
        rc = sfs_tp_bootstrap_fetch(
            mgmt_host && mgmt_host->address[0] ? mgmt_host->address : config->mgmt_host,
            config->mgmt_port, config->connect_timeout_ms, &address, &length);
    }
    if (rc == 0) {
        rc = sfs_service_register(service, address, length);
    }
    free(address);
    if (rc) {
        fprintf(stderr, "stripefs-server: cannot rejoin as rank %u: %s\n", rank,
                sfs_error_detail());
        sfs_service_destroy(service);
        sfs_role_plan_destroy(plan);
        return 1;
    }
    sfs_server_service = service;
    signal(SIGTERM, sfs_server_signal);
    signal(SIGINT, sfs_server_signal);
    signal(SIGPIPE, SIG_IGN);
    if (service->meta) {
        sfs_meta_map_changed(service->meta);
    }
    sfs_info("rank %u rejoined the service on %s", rank, host);
    if (args->ready_file) {
        sfs_server_write_ready(args->ready_file, config);
    }
    while (!sfs_service_stopping(service)) {
        sfs_service_progress(service, 100);
    }
    rc = sfs_service_flush(service);
    sfs_info("rank %u stopped%s", rank, rc ? " (flush failed)" : " cleanly");
    sfs_server_service = NULL;
    sfs_service_destroy(service);
    sfs_role_plan_destroy(plan);
    return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
    sfs_server_args_t args;
    sfs_config_t     *config  = NULL;
    sfs_role_plan_t  *plan    = NULL;
    sfs_service_t    *service = NULL;
    char             *text    = NULL;
    char             *hosts   = NULL;
    const char      **host_of = NULL;
    char              name[PATH_MAX];
    char              host[SFS_HOST_MAX];
    long long         length     = 0;
    pid_t             munged_pid = 0;
    int               rank, size, provided, rc, exit_code = 1, lost_rank = 0;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    memset(host, 0, sizeof(host));
    if (gethostname(host, sizeof(host) - 1) != 0) {
        snprintf(host, sizeof(host), "unknown");
    }

    rc = sfs_server_parse(argc, argv, &args);
    if (rc) {
        if (rank == 0) {
            if (rc > 0) {
                sfs_server_usage(stdout);
            } else {
                fprintf(stderr, "stripefs-server: %s\n", sfs_error_detail());
            }
        }
        exit_code = rc > 0 ? 0 : 2;
        goto out_finalize;
    }
    sfs_log_set_default_level((sfs_log_level_t)sfs_log_level_parse(args.log_level));

    /* rank 0 reads the config; everyone parses the same text */
    if (rank == 0) {
        rc = sfs_server_config_text(&args, size, name, sizeof(name), &text, (size_t *)&length);
        if (rc) {
            fprintf(stderr, "stripefs-server: %s\n", sfs_error_detail());
            length = -1;
        }
    }
    MPI_Bcast(&length, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    if (length < 0) {
        goto out_finalize;
    }
    MPI_Bcast(name, sizeof(name), MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank != 0) {
        text = malloc((size_t)length + 1);
    }
    MPI_Bcast(text, (int)length, MPI_CHAR, 0, MPI_COMM_WORLD);
    rc = sfs_config_parse(text, (size_t)length, name, &config);
    if (rc) {
        if (rank == 0) {
            fprintf(stderr, "stripefs-server: %s\n", sfs_error_detail());
        }
        goto out_finalize;
    }
    snprintf(config->path, sizeof(config->path), "%s", name);
    /* a munged of the service's own (one host): before any rank needs it */
    if (config->munge && config->munged_key[0] && args.rejoin_rank < 0) {
        int started = 0;

        if (rank == 0) {
            started = sfs_munged_start(config, &munged_pid) == 0 ? 1 : -1;
            if (started < 0) {
                fprintf(stderr, "stripefs-server: %s\n", sfs_error_detail());
            }
        }
        MPI_Bcast(&started, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (started < 0) {
            goto out_finalize;
        }
    }
    if (args.one_host) {
        config->hosts[0].ranks = (uint32_t)size; /* one host: as many ranks as started */
    }

    /* check the job against the config and deal out the roles */
    hosts   = calloc((size_t)size, SFS_HOST_MAX);
    host_of = calloc((size_t)size, sizeof(*host_of));
    if (!hosts || !host_of) {
        goto out_finalize;
    }
    MPI_Allgather(host, SFS_HOST_MAX, MPI_CHAR, hosts, SFS_HOST_MAX, MPI_CHAR, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++) {
        host_of[r] = hosts + (size_t)r * SFS_HOST_MAX;
    }
    if (args.rejoin_rank >= 0) {
        exit_code = sfs_server_rejoin(&args, config, host);
        goto out_finalize;
    }
    rc = sfs_role_plan_create(config, host_of, (uint32_t)size, &plan);
    if (rc) {
        if (rank == 0) {
            fprintf(stderr, "stripefs-server: refusing to start: %s\n", sfs_error_detail());
        }
        goto out_finalize;
    }

    rc = sfs_service_create(config, plan, (uint32_t)rank, &service);
    if (sfs_server_agree(rank, host, rc, "cannot start")) {
        goto out_destroy;
    }
    sfs_server_service = service;
    signal(SIGTERM, sfs_server_signal);
    signal(SIGINT, sfs_server_signal);
    signal(SIGPIPE, SIG_IGN);

    /* everyone registers with management, whose address the job shares */
    {
        const void *address        = NULL;
        size_t      address_length = 0;
        long long   shared_length;
        char       *shared;

        if ((uint32_t)rank == plan->mgmt_rank) {
            address = sfs_tp_worker_address(service->worker, &address_length);
        }
        shared_length = (long long)address_length;
        MPI_Bcast(&shared_length, 1, MPI_LONG_LONG, (int)plan->mgmt_rank, MPI_COMM_WORLD);
        shared = malloc((size_t)shared_length);
        if (!shared) {
            goto out_destroy;
        }
        if (address) {
            memcpy(shared, address, address_length);
        }
        MPI_Bcast(shared, (int)shared_length, MPI_BYTE, (int)plan->mgmt_rank, MPI_COMM_WORLD);
        rc = sfs_service_register(service, shared, (size_t)shared_length);
        free(shared);
    }
    sfs_server_barrier(service, 0);
    if (sfs_server_agree(rank, host, rc, "cannot register with management")) {
        goto out_destroy;
    }
    if (service->meta) {
        sfs_meta_map_changed(service->meta);
    }
    if (rank == 0) {
        sfs_info("stripefs service ready: %d rank%s, %u target%s, management at %s:%u, "
                 "config %s",
                 size, size == 1 ? "" : "s", config->target_count,
                 config->target_count == 1 ? "" : "s", config->mgmt_host, config->mgmt_port,
                 config->path);
        if (args.ready_file) {
            sfs_server_write_ready(args.ready_file, config);
        }
    }

    while (!sfs_service_stopping(service)) {
        sfs_service_progress(service, 100);
    }
    rc = sfs_service_flush(service);
    if (rc) {
        sfs_error("flush on stop failed: %s", sfs_error_detail());
    }
    if (sfs_server_barrier(service, 15000) != 0) {
        /* a rank was lost (and maybe rejoined as a job of its own): MPI
         * would wait for it forever in MPI_Finalize, so leave without it */
        sfs_warn("not every rank of this job reached the end (a rank was lost earlier): "
                 "exiting without MPI_Finalize");
        lost_rank = 1;
    }
    if (rank == 0) {
        sfs_info("stripefs service stopped cleanly");
    }
    exit_code = rc ? 1 : 0;

out_destroy:
    sfs_server_service = NULL;
    sfs_service_destroy(service);
out_finalize:
    sfs_role_plan_destroy(plan);
    sfs_config_destroy(config);
    free(text);
    free(hosts);
    free(host_of);
    sfs_munged_stop(munged_pid);
    if (lost_rank) {
        fflush(NULL);
        _exit(exit_code);
    }
    MPI_Finalize();
    return exit_code;
}
