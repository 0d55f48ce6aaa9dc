# Unit tests of client/, built in tests/unit/client/ as every unit test
# mirrors the source tree (test_statfs: sfs_statfs.c; test_tunables:
# sfs_client_tunables.c).
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/client/test_statfs
tests_unit_client_test_statfs_SOURCES  = tests/unit/client/test_statfs.c
tests_unit_client_test_statfs_CPPFLAGS = $(SFS_CPPFLAGS_CLIENT)
tests_unit_client_test_statfs_CFLAGS   = $(SFS_UNIT_CFLAGS) $(UCX_CFLAGS)
tests_unit_client_test_statfs_LDADD    = libsfs_client.la $(SFS_CORE_LIBS) $(SFS_UNIT_LDADD)
check_PROGRAMS += tests/unit/client/test_tunables
tests_unit_client_test_tunables_SOURCES  = tests/unit/client/test_tunables.c
tests_unit_client_test_tunables_CPPFLAGS = $(SFS_CPPFLAGS_CLIENT)
tests_unit_client_test_tunables_CFLAGS   = $(SFS_UNIT_CFLAGS) $(UCX_CFLAGS)
tests_unit_client_test_tunables_LDADD    = libsfs_client.la $(SFS_CORE_LIBS) $(SFS_UNIT_LDADD)
endif
