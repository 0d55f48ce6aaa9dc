/*
 * The transport's environment knobs (sfs_tunable.h), and the UCX variables
 * whose presence decides whether our own UCX configuration applies: where the
 * user set one, the user's value wins (sfs_tp_context.c).
 */
#include "sfs_tp.h"

static const sfs_tunable_t sfs_tp_tunable_entries[] = {
    {
        .name          = "STRIPEFS_DIRECT_COPY",
        .type          = SFS_TUNABLE_BOOL,
        .default_value = "1",
        .help          = "same-host servers copy replies of 64 KiB or more straight into the "
                         "requester's memory (0: every reply goes through UCX)",
    },
    {
        .name          = "STRIPEFS_DIRECT_PULL",
        .type          = SFS_TUNABLE_BOOL,
        .default_value = "1",
        .help          = "same-host servers copy write data straight out of the requester's "
                         "memory (0: no pulls, asked for or served; the data goes through UCX)",
    },
    {
        .name          = "STRIPEFS_SPIN_US",
        .type          = SFS_TUNABLE_INT,
        .default_value = "50",
        .min           = 0,
        .max           = 1000000,
        .help          = "microseconds the progress loop busy-polls before it sleeps in epoll "
                         "(more: lower latency, more CPU)",
    },
    {
        .name          = "STRIPEFS_UCX_LISTENER",
        .type          = SFS_TUNABLE_BOOL,
        .default_value = "1",
        .help          = "servers take UCX connections on a listener and peers connect there "
                         "(TCP: a socket per endpoint); 0: servers publish no listener and "
                         "peers connect to their UCX worker address, where UCX 1.13's TCP "
                         "transport can crash after a network heal (docs/faults.md)",
    },
    {
        .name  = "UCX_TLS",
        .type  = SFS_TUNABLE_STRING,
        .help  = "UCX's transports; when set it wins over the ones stripefs picks (a client "
                 "of another user than the servers': no shared memory, no CMA)",
        .flags = SFS_TUNABLE_EXTERNAL,
    },
    {
        .name  = "UCX_NET_DEVICES",
        .type  = SFS_TUNABLE_STRING,
        .help  = "UCX's network devices; a server publishes the IPv4 address of the first one "
                 "that has one as its UCX listener's (docs/protocol.md, \"Connections\")",
        .flags = SFS_TUNABLE_EXTERNAL,
    },
    {
        .name  = "UCX_POSIX_ERROR_HANDLING",
        .type  = SFS_TUNABLE_STRING,
        .help  = "unless this or UCX_SYSV_ERROR_HANDLING is set, stripefs turns on peer-failure "
                 "detection for UCX's shared-memory transports (MM_ERROR_HANDLING=y)",
        .flags = SFS_TUNABLE_EXTERNAL,
    },
    {
        .name  = "UCX_SYSV_ERROR_HANDLING",
        .type  = SFS_TUNABLE_STRING,
        .help  = "see UCX_POSIX_ERROR_HANDLING",
        .flags = SFS_TUNABLE_EXTERNAL,
    },
    {
        .name  = "UCX_KEEPALIVE_INTERVAL",
        .type  = SFS_TUNABLE_STRING,
        .help  = "unless set, stripefs sets 2s: a dead peer is noticed in seconds, not UCX's 20 s",
        .flags = SFS_TUNABLE_EXTERNAL,
    },
    {
        .name  = "UCX_LOG_LEVEL",
        .type  = SFS_TUNABLE_STRING,
        .help  = "unless set, a client sets UCX's log level to fatal for its whole process, so "
                 "that UCX's messages do not reach the application's user (servers keep warn)",
        .flags = SFS_TUNABLE_EXTERNAL,
    },
};

const sfs_tunable_table_t sfs_tp_tunables = SFS_TUNABLE_TABLE("transport", sfs_tp_tunable_entries);
