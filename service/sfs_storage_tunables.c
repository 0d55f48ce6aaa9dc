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
};

const sfs_tunable_table_t sfs_storage_tunables =
    SFS_TUNABLE_TABLE("storage", sfs_storage_tunable_entries);
