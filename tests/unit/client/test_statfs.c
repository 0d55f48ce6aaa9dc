/* sfs_admin_fs_groups: which targets sfs_statfs counts as one file system.
 * Only targets whose server is on this host, whose directories this host can
 * stat, on one device and of one capacity are merged. */
#include "sfs_admin.h"
#include "sfs_map.h"

#include <setjmp.h> /* cmocka needs these before it */
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmp_dir[64], shm_dir[64];

static void sub(char *out, const char *dir, const char *name)
{
    snprintf(out, PATH_MAX, "%s/%s", dir, name);
    assert_int_equal(mkdir(out, 0700), 0);
}

static void test_fs_groups(void **state)
{
    char             here[HOST_NAME_MAX + 1];
    sfs_map_node_t   nodes[3];
    sfs_map_target_t targets[7];
    sfs_map_t        map;
    uint32_t         group_of[7];
    struct stat      a, c;

    (void)state;
    assert_int_equal(gethostname(here, sizeof(here)), 0);
    memset(nodes, 0, sizeof(nodes));
    memset(targets, 0, sizeof(targets));
    memset(&map, 0, sizeof(map));
    for (uint32_t n = 0; n < 3; n++) {
        nodes[n].node_id = n + 1;
        snprintf(nodes[n].host, sizeof(nodes[n].host), "%s", n == 2 ? "elsewhere.invalid" : here);
    }
    for (uint32_t t = 0; t < 7; t++) {
        targets[t].target_id = 101 + t;
        targets[t].node_id   = 1;
        targets[t].state     = SFS_STATE_ONLINE;
        targets[t].capacity  = 1000;
    }
    sub(targets[0].dir, tmp_dir, "a");
    sub(targets[1].dir, tmp_dir, "b"); /* another rank, same disk: merged */
    targets[1].node_id = 2;
    sub(targets[2].dir, shm_dir, "c");                        /* another file system */
    snprintf(targets[3].dir, PATH_MAX, "%s", targets[0].dir); /* same path, another host */
    targets[3].node_id = 3;
    sub(targets[4].dir, tmp_dir, "d"); /* offline */
    targets[4].state = SFS_STATE_OFFLINE;
    sub(targets[5].dir, tmp_dir, "e"); /* a capacity limit: its own pool */
    targets[5].capacity = 500;
    snprintf(targets[6].dir, PATH_MAX, "%s/missing", tmp_dir); /* cannot stat it */
    map.node_count   = 3;
    map.nodes        = nodes;
    map.target_count = 7;
    map.targets      = targets;

    assert_int_equal(sfs_admin_fs_groups(&map, group_of), 0);
    assert_int_equal(group_of[0], 0);
    assert_int_equal(group_of[1], 0);
    assert_int_equal(stat(targets[0].dir, &a), 0);
    assert_int_equal(stat(targets[2].dir, &c), 0);
    if (a.st_dev != c.st_dev) {
        assert_int_equal(group_of[2], 2);
    } else {
        print_message("(%s and %s are on one device here: not checked)\n", tmp_dir, shm_dir);
    }
    assert_int_equal(group_of[3], 3);
    assert_int_equal(group_of[4], 4);
    assert_int_equal(group_of[5], 5);
    assert_int_equal(group_of[6], 6);
    assert_int_equal(sfs_admin_fs_groups(NULL, group_of), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_fs_groups)};
    char                    cmd[200];
    int                     rc;

    snprintf(tmp_dir, sizeof(tmp_dir), "/tmp/sfs-statfs.XXXXXX");
    snprintf(shm_dir, sizeof(shm_dir), "/dev/shm/sfs-statfs.XXXXXX");
    if (!mkdtemp(tmp_dir) || !mkdtemp(shm_dir)) {
        perror("mkdtemp");
        return 1;
    }
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", tmp_dir, shm_dir);
    if (system(cmd) != 0) {
        fprintf(stderr, "could not remove %s and %s\n", tmp_dir, shm_dir);
    }
    return rc;
}
