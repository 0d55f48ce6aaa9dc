/* stripefs-ctl info: every tunable of every subsystem with its current value
 * (as `ucx_info -c` does). Needs no service and no config: it reads only
 * this process's environment. */
#define SFS_LOG_FAC "ctl"
#include "stripefs_ctl.h"

#include "sfs_client_tunables.h"
#include "sfs_errno.h"
#include "sfs_log.h"
#include "sfs_name_prefix.h"
#include "sfs_preload_tunables.h"
#include "sfs_storage_tunables.h"
#include "sfs_tp.h"
#include "sfs_tunable.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>

/* The subsystems' tables, in layer order (tests/service/test_client_env.sh
 * checks that every STRIPEFS_ variable the tree names is listed). */
static const sfs_tunable_table_t *const ctl_info_tables[] = {
    &sfs_log_tunables,     &sfs_tp_tunables,   &sfs_client_tunables,  &sfs_storage_tunables,
    &sfs_preload_tunables, &sfs_name_tunables, &ctl_migrate_tunables,
};

int ctl_info(ctl_t *ctl, int argc, char **argv)
{
    int invalid = 0;

    (void)ctl;
    (void)argc; /* main refused operands */
    (void)argv;
    for (size_t t = 0; t < sizeof(ctl_info_tables) / sizeof(ctl_info_tables[0]); t++) {
        invalid += sfs_tunable_print(stdout, ctl_info_tables[t]); /* parses each value once */
    }
    if (invalid) {
        fprintf(stderr,
                "stripefs-ctl info: %d invalid value%s: clients and servers refuse to "
                "start with them\n",
                invalid, invalid == 1 ? "" : "s");
    }
    return invalid ? 1 : 0;
}
