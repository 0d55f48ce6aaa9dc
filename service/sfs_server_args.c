/*
 * stripefs-server's command line: the options, their checks and --help.
 */
#define SFS_LOG_FAC "server"
#include "sfs_server.h"

#include "sfs_errno.h"
#include "sfs_log.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
                 "                        config once the service is ready (a different\n"
                 "                        --targets is refused)\n"
                 "      --ready-file F    write F (mgmt address and config path) once serving\n"
                 "      --rejoin RANK     come back as RANK of a running service whose rank was\n"
                 "                        lost (a job of one rank); the rank that ran\n"
                 "                        management and metadata first, if it was lost\n"
                 "      --join            serve the config's targets on this host that the\n"
                 "                        running service does not have yet, as a new rank\n"
                 "                        (a drive or a host added to the config; -np 1)\n"
                 "      --log-level L     error, warn, info (default), debug, trace\n"
                 "  -h, --help            this text\n"
                 "\n"
                 "Stop it with 'stripefs-ctl shutdown' or SIGTERM to mpirun: every rank then\n"
                 "flushes metadata and chunk files and exits 0.\n");
}

static int sfs_server_parse(int argc, char **argv, sfs_server_args_t *args)
{
    static const struct option options[] = {{"config", required_argument, NULL, 'c'},
                                            {"one-host", no_argument, NULL, 'o'},
                                            {"state", required_argument, NULL, 's'},
                                            {"targets", required_argument, NULL, 't'},
                                            {"port", required_argument, NULL, 'p'},
                                            {"ready-file", required_argument, NULL, 'r'},
                                            {"log-level", required_argument, NULL, 'l'},
                                            {"help", no_argument, NULL, 'h'},
                                            {"rejoin", required_argument, NULL, 'j'},
                                            {"join", no_argument, NULL, 'J'},
                                            {NULL, 0, NULL, 0}};
    int                        opt;

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
        case 'J':
            args->join = 1;
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
    if (args->join && args->rejoin_rank >= 0) {
        return sfs_error_set(-EINVAL, "--join (new targets) and --rejoin RANK (a lost rank) "
                                      "exclude each other");
    }
    if (args->join && args->targets_given) {
        return sfs_error_set(-EINVAL, "--join takes its targets from the config: add them there "
                                      "instead of giving --targets");
    }
    return 0;
}

int sfs_server_command_line(sfs_server_t *server, int argc, char **argv)
{
    int rc = sfs_server_parse(argc, argv, &server->args);

    if (rc) {
        if (server->rank == 0) {
            if (rc > 0) {
                sfs_server_usage(stdout);
            } else {
                fprintf(stderr, "stripefs-server: %s\n", sfs_error_detail());
            }
        }
        server->exit_code = rc > 0 ? 0 : 2;
        return 1;
    }
    sfs_log_set_default_level((sfs_log_level_t)sfs_log_level_parse(server->args.log_level));
    return 0;
}
