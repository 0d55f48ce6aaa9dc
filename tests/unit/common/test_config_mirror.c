/*
 * Mirror groups in the config (common/sfs_config_mirror.c): parsing, the
 * checks (two hosts, one group per target, known targets), the Imaging
 * example's groups, and writing them back.
 */
#include "test_config_lib.h"

#include "sfs_errno.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#define STORAGE4                                                                                   \
    "storage:\n"                                                                                   \
    "  - {id: 101, host: h1, dir: /t1}\n"                                                          \
    "  - {id: 102, host: h1, dir: /t2}\n"                                                          \
    "  - {id: 201, host: h2, dir: /t1}\n"                                                          \
    "  - {id: 301, host: h3, dir: /t1}\n"

static void test_groups_parse(void **state)
{
    sfs_config_t *config;

    (void)state;
    config = parse_ok(BASE_TOP STORAGE4 "mirror:\n"
                                        "  groups:\n"
                                        "    - {primary: 101, secondary: 201}\n"
                                        "    - {primary: 301, secondary: 102}\n"
                                        "  default: true\n",
                      "t.yaml");
    assert_int_equal(config->mirror_group_count, 2);
    assert_int_equal(config->mirror_groups[0].id, 1);
    assert_int_equal(config->mirror_groups[0].primary, 101);
    assert_int_equal(config->mirror_groups[0].secondary, 201);
    assert_int_equal(config->mirror_groups[1].id, 2);
    assert_int_equal(config->mirror_groups[1].primary, 301);
    assert_int_equal(config->mirror_groups[1].secondary, 102);
    assert_int_equal(config->mirror_default, 1);
    assert_int_equal(config->mirror_same_host, 0);
    assert_int_equal(config->mirror_stale_reads, 0); /* reads fenced by default */
    assert_ptr_equal(sfs_config_mirror_group_of(config, 102), &config->mirror_groups[1]);
    assert_ptr_equal(sfs_config_mirror_group_of(config, 201), &config->mirror_groups[0]);
    assert_null(sfs_config_mirror_group_of(config, 999));
    sfs_config_destroy(config);

    /* without mirror: nothing is mirrored */
    config = parse_ok(BASE_TOP STORAGE4, "t.yaml");
    assert_int_equal(config->mirror_group_count, 0);
    assert_int_equal(config->mirror_default, 0);
    sfs_config_destroy(config);
}

static void test_groups_refused(void **state)
{
    (void)state;
    expect_error(BASE_TOP STORAGE4 "mirror: {groups: [{primary: 101, secondary: 102}]}\n",
                 "t.yaml:9: mirror.groups[0]", "targets 101 and 102 are both on host h1");
    expect_error(BASE_TOP STORAGE4 "mirror: {groups: [{primary: 101, secondary: 201}, "
                                   "{primary: 301, secondary: 201}]}\n",
                 "mirror.groups[1]", "target 201 is already in mirror group 1 (101+201");
    expect_error(BASE_TOP STORAGE4 "mirror: {groups: [{primary: 101, secondary: 201}, "
                                   "{primary: 101, secondary: 301}]}\n",
                 "mirror.groups[1]", "target 101 is already in mirror group 1");
    expect_error(BASE_TOP STORAGE4 "mirror: {groups: [{primary: 101, secondary: 999}]}\n",
                 "mirror.groups[0]", "target 999 is not in storage");
    expect_error(BASE_TOP STORAGE4 "mirror: {groups: [{primary: 201, secondary: 201}]}\n",
                 "mirror.groups[0]", "cannot mirror itself");
    expect_error(BASE_TOP STORAGE4 "mirror: {groups: [{primary: 101}]}\n", "secondary", NULL);
    expect_error(BASE_TOP STORAGE4 "mirror: {groups: []}\n", "mirror.groups",
                 "name at least one group");
    expect_error(BASE_TOP STORAGE4 "mirror: {groups: [{primary: 101, secondary: 201, x: 1}]}\n",
                 "x", NULL);
}

static void test_same_host_allowed(void **state)
{
    sfs_config_t *config;

    (void)state;
    config = parse_ok(BASE_TOP STORAGE4
                      "mirror: {groups: [{primary: 101, secondary: 102}], same_host: true}\n",
                      "t.yaml");
    assert_int_equal(config->mirror_group_count, 1);
    assert_int_equal(config->mirror_same_host, 1);
    sfs_config_destroy(config);
    /* mirror.stale_reads: reads without a lease (docs/mirroring.md) */
    config = parse_ok(BASE_TOP STORAGE4 "mirror: {groups: [{primary: 101, secondary: 201}], "
                                        "stale_reads: true}\n",
                      "t.yaml");
    assert_int_equal(config->mirror_stale_reads, 1);
    sfs_config_destroy(config);
    expect_error(BASE_TOP STORAGE4 "mirror: {groups: [{primary: 101, secondary: 201}], "
                                   "stale_reads: sometimes}\n",
                 "mirror.stale_reads", NULL);
}

#define META_MIRROR_TOP(_meta)                                                                     \
    "connauth_file: /etc/sfs/connauth\n"                                                           \
    "mgmt: {host: h1}\n"                                                                           \
    "meta: {host: h1, dir: /meta" _meta "}\n"

/* meta.mirror: the metadata mirror's host and directory */
static void test_meta_mirror(void **state)
{
    sfs_config_t *config;
    char          path[PATH_MAX + 32];
    sfs_config_t *back = NULL;

    (void)state;
    config = parse_ok(META_MIRROR_TOP(", mirror: h2") STORAGE4, "t.yaml");
    assert_string_equal(config->meta_mirror_host, "h2");
    assert_string_equal(config->meta_mirror_dir, "/meta"); /* meta.dir, on its own host */
    sfs_config_destroy(config);
    config = parse_ok(META_MIRROR_TOP(", mirror: h3, mirror_dir: /m2") STORAGE4, "t.yaml");
    assert_string_equal(config->meta_mirror_dir, "/m2");
    snprintf(path, sizeof(path), "%s/meta-mirror.yaml", test_tmp_dir);
    assert_int_equal(sfs_config_write(config, path), 0);
    if (sfs_config_load(path, &back) != 0) {
        fail_msg("%s: %s", path, sfs_error_detail());
    }
    assert_config_equal(config, back);
    sfs_config_destroy(back);
    sfs_config_destroy(config);
    /* none: nothing mirrored */
    config = parse_ok(BASE_TOP STORAGE4, "t.yaml");
    assert_string_equal(config->meta_mirror_host, "");
    sfs_config_destroy(config);
    /* on the metadata host: one-host trials only, in a directory of its own */
    config = parse_ok(META_MIRROR_TOP(", mirror: h1, mirror_dir: /m") STORAGE4
                      "mirror: {same_host: true}\n",
                      "t.yaml");
    assert_string_equal(config->meta_mirror_host, "h1");
    sfs_config_destroy(config);
    expect_error(META_MIRROR_TOP(", mirror: h1, mirror_dir: /m") STORAGE4, "t.yaml:3: meta.mirror",
                 "is the metadata server's own host: the copy would be lost with it");
    expect_error(META_MIRROR_TOP(", mirror: h1") STORAGE4 "mirror: {same_host: true}\n",
                 "meta.mirror_dir", "is meta.dir, on the same host");
    expect_error(META_MIRROR_TOP(", mirror_dir: /m") STORAGE4, "meta.mirror_dir",
                 "is set but meta.mirror");
    expect_error(META_MIRROR_TOP(", mirror: h2, mirror_dir: /t1") STORAGE4, "meta.mirror_dir",
                 "/t1 on host h2 is also the directory of target 201");
    expect_error(META_MIRROR_TOP(", mirror: 'bad host!'") STORAGE4, "meta.mirror", NULL);
}

static void test_imaging_groups(void **state)
{
    char          path[PATH_MAX];
    sfs_config_t *config = NULL;

    (void)state;
    snprintf(path, sizeof(path), "%s/examples/imaging.yaml", src_dir());
    if (sfs_config_load(path, &config) != 0) {
        fail_msg("%s: %s", path, sfs_error_detail());
    }
    assert_int_equal(config->mirror_group_count, 2);
    assert_int_equal(config->mirror_groups[0].primary, 101);
    assert_int_equal(config->mirror_groups[0].secondary, 201);
    assert_int_equal(config->mirror_groups[1].primary, 301);
    assert_int_equal(config->mirror_groups[1].secondary, 401);
    assert_int_equal(config->mirror_default, 0);
    sfs_config_destroy(config);
}

static void test_groups_written_back(void **state)
{
    sfs_config_t *config, *back = NULL;
    char          path[PATH_MAX + 16];

    (void)state;
    config = parse_ok(BASE_TOP STORAGE4 "mirror:\n"
                                        "  groups:\n"
                                        "    - {primary: 101, secondary: 201}\n"
                                        "    - {primary: 301, secondary: 102}\n"
                                        "  default: true\n",
                      "t.yaml");
    snprintf(path, sizeof(path), "%s/mirror.yaml", test_tmp_dir);
    assert_int_equal(sfs_config_write(config, path), 0);
    if (sfs_config_load(path, &back) != 0) {
        fail_msg("%s: %s", path, sfs_error_detail());
    }
    assert_config_equal(config, back);
    assert_int_equal(back->mirror_group_count, 2);
    for (uint32_t i = 0; i < 2; i++) {
        assert_int_equal(back->mirror_groups[i].primary, config->mirror_groups[i].primary);
        assert_int_equal(back->mirror_groups[i].secondary, config->mirror_groups[i].secondary);
    }
    assert_int_equal(back->mirror_default, 1);
    sfs_config_destroy(back);
    sfs_config_destroy(config);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_groups_parse),
        cmocka_unit_test(test_groups_refused),
        cmocka_unit_test(test_same_host_allowed),
        cmocka_unit_test(test_imaging_groups),
        cmocka_unit_test_setup_teardown(test_meta_mirror, setup_tmp, teardown_tmp),
        cmocka_unit_test_setup_teardown(test_groups_written_back, setup_tmp, teardown_tmp),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
