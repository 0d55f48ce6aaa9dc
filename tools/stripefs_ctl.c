/*
 * stripefs-ctl: the administrator's tool, with the verbs BeeGFS users know.
 *
 *   stripefs-ctl [--config FILE | --mgmt HOST:PORT --connauth FILE] VERB [ARGS]
 *
 * Output is plain columns for scripts; exit 0 on success, 1 when the
 * operation failed, 2 on a usage error. The verbs live in
 * tools/stripefs_ctl_*.c (stripefs_ctl.h lists them).
 */
#include "stripefs_ctl.h"

#include "sfs_config.h"
#include "sfs_errno.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ctl_verb {
    const char *name;
    int (*run)(ctl_t *ctl, int argc, char **argv);
    int         needs_service;
    int         no_operands; /* main refuses operands before connecting */
    const char *synopsis;
    const char *help;
} ctl_verb_t;

int ctl_fail(const char *verb, int rc)
{
    fprintf(stderr, "stripefs-ctl %s: %s\n", verb,
            sfs_client_error()[0] ? sfs_client_error() : sfs_strerror(rc));
    return 1;
}

const char *ctl_size(uint64_t bytes, char *buf, size_t buflen)
{
    return sfs_format_size(bytes, buf, buflen);
}

int ctl_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            return 1;
        }
    }
    return 0;
}

int ctl_no_operands(int argc, char **argv, const char *synopsis)
{
    if (argc > 1) {
        fprintf(stderr, "stripefs-ctl %s: unexpected operand '%s'\nusage: stripefs-ctl %s\n",
                argv[0], argv[1], synopsis);
        return EXIT_USAGE;
    }
    return 0;
}

int ctl_parse_size_arg(const char *verb, const char *text, uint64_t *out)
{
    if (sfs_parse_size(text, out) != 0) {
        fprintf(stderr, "stripefs-ctl %s: '%s' is not a size (e.g. 512k, 1m, 4g)\n", verb, text);
        return -1;
    }
    return 0;
}

/* Connect now (chmod and chown check their arguments first, so that a
 * usage error is exit 2 with or without a service). */
int ctl_connect(ctl_t *ctl)
{
    if (sfs_client_connect(&ctl->params, &ctl->client) != 0) {
        fprintf(stderr, "stripefs-ctl: %s\n", sfs_client_error());
        return 1;
    }
    return 0;
}

/* A failure on one path: the server's words when they name the path,
 * else the path and the errno. */
int ctl_fail_path(const char *verb, const char *path, int rc)
{
    const char *detail = sfs_client_error();

    if (detail[0] && strstr(detail, path)) {
        fprintf(stderr, "stripefs-ctl %s: %s\n", verb, detail);
    } else {
        fprintf(stderr, "stripefs-ctl %s: %s: %s\n", verb, path,
                detail[0] ? detail : sfs_strerror(rc));
    }
    return 1;
}

static const ctl_verb_t ctl_verbs[] = {
    {"listnodes", ctl_listnodes, 1, 0, "listnodes [--nodetype management|meta|storage]",
     "List the server ranks with their roles, state and time since last contact."},
    {"listtargets", ctl_listtargets, 1, 1, "listtargets",
     "List the storage targets with state, capacity and free space."},
    {"df", ctl_df, 1, 1, "df",
     "Free space per target, per storage pool and in total, and metadata counts."},
    {"net", ctl_net, 1, 1, "net",
     "Show how this host reaches each server and who is connected to each."},
    {"check-servers", ctl_check_servers, 1, 1, "check-servers",
     "Ping every server rank; exit 1 if any is unreachable."},
    {"setpattern", ctl_setpattern, 1, 0,
     "setpattern [--chunksize SIZE] [--numtargets N] [--mirror|--no-mirror] [--pool NAME] DIR",
     "Set the stripe pattern new files in DIR get (chunk size 64K..4G, power of two; "
     "--mirror: each chunk on both targets of a mirror group, N counts groups; --pool: only "
     "that storage pool's targets, for new subdirectories too; none: any target)."},
    {"mirror", ctl_mirror, 0, 0, "mirror list | mirror rebuild TARGET",
     "List the mirror groups: their primary and secondary targets and consistency states; "
     "rebuild (administrators): copy everything to a member that lost its disk."},
    {"quota", ctl_quota, 0, 0,
     "quota set --user NAME|--group NAME [--files N] [--space SIZE] | show [--user NAME|--group "
     "NAME] | list",
     "Set (administrators) or show per-user and per-group limits of files and space, and "
     "their usage (docs/quotas.md)."},
    {"pool", ctl_pool, 0, 0,
     "pool list | pool create NAME [TARGET...] | pool add|remove NAME "
     "TARGET... | pool delete NAME",
     "List the storage pools with their targets and space; create, add, remove, delete "
     "(administrators): change them while the service runs (docs/pools.md)."},
    {"migrate", ctl_migrate, 0, 0,
     "migrate --from TARGET [--wait SECONDS] [--cancel] | migrate --rebalance [--pool POOL] "
     "[--tolerance PCT]",
     "Drain a storage target: mark it draining (no new files), then move its chunk files to "
     "other targets of its storage pool while files stay in use; rerun to continue, --wait "
     "for files open for writing, --cancel to take new files again. --rebalance: move files "
     "until every target of a pool is within PCT points of the pool's fill (docs/migration.md)."},
    {"getentryinfo", ctl_getentryinfo, 1, 0, "getentryinfo PATH",
     "Show a file's or directory's entry id, stripe pattern and targets."},
    {"mkdir", ctl_mkdir, 1, 0, "mkdir [-p] [-m MODE] PATH...", "Make directories."},
    {"ls", ctl_ls, 1, 0, "ls [-l] [PATH...]",
     "List directories (each under a PATH: header when there are several) and files."},
    {"stat", ctl_stat, 1, 0, "stat PATH...", "Show attributes and size."},
    {"chmod", ctl_chmod, 0, 0, "chmod MODE PATH...",
     "Set the permission bits (octal MODE, 0 to 7777; the server decides who may)."},
    {"chown", ctl_chown, 0, 0, "chown [USER|UID][:GROUP|GID] PATH...",
     "Set the owner and/or group (names looked up here; the server decides who may)."},
    {"rm", ctl_rm, 1, 0, "rm [-r] [--preserve-root] PATH...",
     "Remove files or (empty, or with -r any) directories; chunk files go in the "
     "background. The root directory is never removed, nor anything of a command that names "
     "it."},
    {"mv", ctl_mv, 1, 0, "mv FROM TO", "Rename (replaces a file or an empty directory)."},
    {"put", ctl_put, 1, 0, "put LOCAL_FILE|- PATH", "Copy a local file into stripefs."},
    {"get", ctl_get, 1, 0, "get PATH LOCAL_FILE|-", "Copy a stripefs file out."},
    {"shutdown", ctl_shutdown, 1, 1, "shutdown",
     "Stop the whole service cleanly (every rank flushes and exits 0)."},
    {"mkconnauth", ctl_mkconnauth, 0, 0, "mkconnauth [-s BYTES] FILE",
     "Create a connauth file of random bytes (mode 0400)."},
    {"genconfig", ctl_genconfig, 0, 0,
     "genconfig --hosts H1,H2,... [--storage-dir DIR] [--meta-dir DIR] [--connauth F] "
     "[--port N] [-o FILE]",
     "Write a cluster config: mgmt and meta on the first host, one target per host "
     "(consecutive hosts' targets paired into mirror groups)."},
    {"stats", ctl_stats, 0, 0, "stats meta [--reset]",
     "The metadata server's time per request, by opcode: queue, ahead, handler, commit wait, "
     "commit, reply (administrators and the service's user; --reset: count again)."},
    {"info", ctl_info, 0, 1, "info",
     "Print every environment tunable of every subsystem with its current value (no service "
     "needed); exit 1 if a value is invalid."},
    {"hosts-of", ctl_hosts_of, 0, 0, "hosts-of CLUSTER.yaml",
     "Print HOST:RANKS for every host of a config (what mpirun --host needs)."},
};

static void ctl_usage(FILE *out)
{
    fprintf(out, "usage: stripefs-ctl [--config FILE | --mgmt HOST:PORT --connauth FILE] "
                 "[--timeout SEC] VERB [ARGS]\n\nverbs:\n");
    for (size_t i = 0; i < sizeof(ctl_verbs) / sizeof(ctl_verbs[0]); i++) {
        fprintf(out, "  %-14s %s\n", ctl_verbs[i].name, ctl_verbs[i].help);
    }
    fprintf(out, "\n'stripefs-ctl VERB --help' shows a verb's arguments. Without --config or "
                 "--mgmt,\nSTRIPEFS_CONFIG, STRIPEFS_MGMT/STRIPEFS_CONNAUTH or "
                 "/etc/stripefs/stripefs.yaml\nsay where the service is.\n");
}

int main(int argc, char **argv)
{
    ctl_t ctl;
    int   i = 1, rc;

    memset(&ctl, 0, sizeof(ctl));
    ctl.params.field_mask = SFS_CLIENT_PARAM_PROGRAM | SFS_CLIENT_PARAM_ADMIN;
    ctl.params.program    = "stripefs-ctl";
    for (; i < argc && argv[i][0] == '-'; i++) {
        const char *opt = argv[i];

        if ((strcmp(opt, "--help") == 0 || strcmp(opt, "-h") == 0)) {
            ctl_usage(stdout);
            return 0;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "stripefs-ctl: %s needs a value\n", opt);
            return EXIT_USAGE;
        }
        if (strcmp(opt, "--config") == 0 || strcmp(opt, "-c") == 0) {
            ctl.params.field_mask |= SFS_CLIENT_PARAM_CONFIG;
            ctl.params.config_path = argv[++i];
        } else if (strcmp(opt, "--mgmt") == 0) {
            ctl.params.field_mask |= SFS_CLIENT_PARAM_MGMT;
            ctl.params.mgmt = argv[++i];
        } else if (strcmp(opt, "--connauth") == 0) {
            ctl.params.field_mask |= SFS_CLIENT_PARAM_CONNAUTH;
            ctl.params.connauth_file = argv[++i];
        } else if (strcmp(opt, "--timeout") == 0) {
            char  *end;
            double seconds = strtod(argv[++i], &end);

            if (end == argv[i] || *end || !(seconds >= 0.001 && seconds <= 86400)) {
                fprintf(stderr, "stripefs-ctl: --timeout %s: expected seconds, 0.001 to 86400\n",
                        argv[i]);
                return EXIT_USAGE;
            }
            ctl.params.field_mask |= SFS_CLIENT_PARAM_TIMEOUT;
            ctl.params.timeout_ms = (uint32_t)(seconds * 1000 + 0.5);
        } else {
            fprintf(stderr, "stripefs-ctl: unknown option '%s' (see --help)\n", opt);
            return EXIT_USAGE;
        }
    }
    if (i == argc) {
        ctl_usage(stderr);
        return EXIT_USAGE;
    }
    for (size_t v = 0; v < sizeof(ctl_verbs) / sizeof(ctl_verbs[0]); v++) {
        const ctl_verb_t *verb = &ctl_verbs[v];

        if (strcmp(argv[i], verb->name) != 0) {
            continue;
        }
        if (ctl_wants_help(argc - i, argv + i)) {
            printf("usage: stripefs-ctl %s\n\n%s\n", verb->synopsis, verb->help);
            return 0;
        }
        if (verb->no_operands && ctl_no_operands(argc - i, argv + i, verb->synopsis)) {
            return EXIT_USAGE;
        }
        if (verb->needs_service) {
            rc = sfs_client_connect(&ctl.params, &ctl.client);
            if (rc) {
                fprintf(stderr, "stripefs-ctl: %s\n", sfs_client_error());
                return 1;
            }
        }
        rc = verb->run(&ctl, argc - i, argv + i);
        sfs_client_disconnect(ctl.client);
        return rc;
    }
    fprintf(stderr, "stripefs-ctl: unknown verb '%s' (see --help)\n", argv[i]);
    return EXIT_USAGE;
}
