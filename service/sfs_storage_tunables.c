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
};

const sfs_tunable_table_t sfs_storage_tunables =
    SFS_TUNABLE_TABLE("storage", sfs_storage_tunable_entries);
