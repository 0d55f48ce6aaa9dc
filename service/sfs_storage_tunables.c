/* The storage service's environment knobs (sfs_storage_tunables.h). */
#include "sfs_storage_tunables.h"

static const sfs_tunable_t sfs_storage_tunable_entries[] = {
    {
        .name          = "STRIPEFS_LOCAL_READ",
        .type          = SFS_TUNABLE_BOOL,
        .default_value = "1",
        .help          = "storage servers hand same-host clients the chunk files to read "
                         "themselves (0: they serve every read)",
    },
    {
        .name          = "STRIPEFS_EARLY_WRITEBACK",
        .type          = SFS_TUNABLE_INT,
        .default_value = "262144",
        .min           = 0,
        .max           = 1073741824,
        .help          = "writes of at least this many bytes start their writeback to the "
                         "disk at once (sync_file_range), not when the kernel's dirty "
                         "thresholds say (0: never; benchmarks/README.md measures both)",
    },
    {
        .name          = "STRIPEFS_TEST_WRITE_JITTER_US",
        .type          = SFS_TUNABLE_INT,
        .default_value = "0",
        .min           = 0,
        .max           = 100000,
        .help          = "testing only: each write on a disk thread first sleeps a random "
                         "0..N microseconds, so that concurrent writes finish out of order "
                         "(tests/service/test_service_mirror.sh)",
    },
    {
        .name = "STRIPEFS_TEST_DROP_HEARTBEATS",
        .type = SFS_TUNABLE_STRING,
        .help = "testing only: PATH; while a file PATH.RANK exists, storage rank RANK (of a "
                "service with mirror groups) sends management nothing (no heartbeat, "
                "registration, map request or mirror report) and goes on serving clients: "
                "a cut between it and management only "
                "(tests/faults/test_fault_mirror_fence.sh)",
    },
    {
        .name = "STRIPEFS_TEST_META_DIE_BEFORE_REPLY",
        .type = SFS_TUNABLE_STRING,
        .help = "testing only: PATH; while a file PATH.RANK exists that names an opcode "
                "(MKDIR), metadata rank RANK kills itself (SIGKILL) once a batch holding a "
                "client's successful request of that opcode is committed (on its mirror too), "
                "before any reply of the batch goes (tests/cluster/test_cluster_meta_failover.sh)",
    },
    {
        .name          = "STRIPEFS_META_READ_NOW",
        .type          = SFS_TUNABLE_BOOL,
        .default_value = "1",
        .help          = "the metadata server answers a STAT, LOOKUP or READDIR on arrival, on "
                         "its progress thread, while its metadata thread is idle (0: every "
                         "read is queued for the metadata thread, as before 2026-12-07; "
                         "docs/metadata.md, \"Reads answered on arrival\")",
    },
    {
        .name          = "STRIPEFS_META_TIMING",
        .type          = SFS_TUNABLE_BOOL,
        .default_value = "1",
        .help          = "the metadata server times each request's phases (queue, handler, "
                         "commit wait, commit, reply) per opcode for `stripefs-ctl stats meta` "
                         "(0: no clock reads)",
    },
};

const sfs_tunable_table_t sfs_storage_tunables =
    SFS_TUNABLE_TABLE("storage", sfs_storage_tunable_entries);
