# config unit tests (see tests/local.mk)
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_config
tests_unit_test_config_SOURCES = tests/unit/test_config.c
tests_unit_test_config_CFLAGS  = $(SFS_UNIT_CFLAGS) -DSFS_TEST_SRCDIR='"$(abs_top_srcdir)"'
tests_unit_test_config_LDADD   = libsfs_common.la $(SFS_UNIT_LDADD)
endif
