/*
 * What the config unit tests (test_config.c, test_config_write.c) share:
 * a small valid config that error cases change one line of, the Imaging
 * example, a scratch directory, and checks that print what went wrong.
 */
#ifndef TEST_CONFIG_LIB_H
#define TEST_CONFIG_LIB_H

#include "sfs_config.h"

#include <limits.h>
#include <stddef.h>

#define KIB (1ull << 10)
#define MIB (1ull << 20)
#define GIB (1ull << 30)
#define TIB (1ull << 40)

/* A small valid config that the error cases below change one line of. */
#define BASE_TOP                                                                                   \
    "connauth_file: /etc/sfs/connauth\n" /* 1 */                                                   \
    "mgmt: {host: h1}\n"                 /* 2 */                                                   \
    "meta: {host: h1, dir: /meta}\n"     /* 3 */
#define BASE_STORAGE                                                                               \
    "storage:\n"                          /* 4 */                                                  \
    "  - {id: 101, host: h1, dir: /t1}\n" /* 5 */
#define BASE BASE_TOP BASE_STORAGE

extern const char imaging_yaml[];         /* examples/imaging.yaml without its comments */
extern char       test_tmp_dir[PATH_MAX]; /* made by setup_tmp, removed by teardown_tmp */

int setup_tmp(void **state);
int teardown_tmp(void **state);

/* Parse `text`, which must be a valid config. */
sfs_config_t *parse_ok(const char *text, const char *name);

/* Parse `length` bytes and expect -EINVAL with every non-NULL string in the
 * message. */
void expect_error_len(const char *text, size_t length, const char *want1, const char *want2);
void expect_error(const char *text, const char *want1, const char *want2);

void check_imaging(const sfs_config_t *config);

/* Everything but `path` and the line numbers. */
void assert_config_equal(const sfs_config_t *a, const sfs_config_t *b);

/* `text` is an absolute path ending in `end`. */
int ends_with(const char *text, const char *end);

/* The source directory (SFS_SRC, else the one configure saw). */
const char *src_dir(void);

#endif
