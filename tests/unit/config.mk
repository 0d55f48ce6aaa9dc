# config unit tests (see tests/local.mk): reading, writing and generating
# configs share test_config_lib.c; sizes and durations, and directory
# fsyncs (sfs_dirsync), stand alone.
if HAVE_CMOCKA
SFS_CONFIG_TEST_CFLAGS = $(SFS_UNIT_CFLAGS) -DSFS_TEST_SRCDIR='"$(abs_top_srcdir)"'
check_PROGRAMS += tests/unit/common/test_config
tests_unit_common_test_config_SOURCES = tests/unit/common/test_config.c \
	tests/unit/common/test_config_lib.c tests/unit/common/test_config_lib.h
tests_unit_common_test_config_CFLAGS  = $(SFS_CONFIG_TEST_CFLAGS)
tests_unit_common_test_config_LDADD   = libsfs_common.la $(SFS_UNIT_LDADD)
check_PROGRAMS += tests/unit/common/test_config_write
tests_unit_common_test_config_write_SOURCES = tests/unit/common/test_config_write.c \
	tests/unit/common/test_config_lib.c tests/unit/common/test_config_lib.h
tests_unit_common_test_config_write_CFLAGS  = $(SFS_CONFIG_TEST_CFLAGS)
tests_unit_common_test_config_write_LDADD   = libsfs_common.la $(SFS_UNIT_LDADD)
check_PROGRAMS += tests/unit/common/test_config_mirror
tests_unit_common_test_config_mirror_SOURCES = tests/unit/common/test_config_mirror.c \
	tests/unit/common/test_config_lib.c tests/unit/common/test_config_lib.h
tests_unit_common_test_config_mirror_CFLAGS  = $(SFS_CONFIG_TEST_CFLAGS)
tests_unit_common_test_config_mirror_LDADD   = libsfs_common.la $(SFS_UNIT_LDADD)
check_PROGRAMS += tests/unit/common/test_config_pool
tests_unit_common_test_config_pool_SOURCES = tests/unit/common/test_config_pool.c \
	tests/unit/common/test_config_lib.c tests/unit/common/test_config_lib.h
tests_unit_common_test_config_pool_CFLAGS  = $(SFS_CONFIG_TEST_CFLAGS)
tests_unit_common_test_config_pool_LDADD   = libsfs_common.la $(SFS_UNIT_LDADD)
check_PROGRAMS += tests/unit/common/test_units
tests_unit_common_test_units_SOURCES = tests/unit/common/test_units.c
tests_unit_common_test_units_CFLAGS  = $(SFS_UNIT_CFLAGS)
tests_unit_common_test_units_LDADD   = libsfs_common.la $(SFS_UNIT_LDADD)
check_PROGRAMS += tests/unit/common/test_dirsync
tests_unit_common_test_dirsync_SOURCES = tests/unit/common/test_dirsync.c
tests_unit_common_test_dirsync_CFLAGS  = $(SFS_UNIT_CFLAGS)
tests_unit_common_test_dirsync_LDADD   = libsfs_common.la $(SFS_UNIT_LDADD)
endif
