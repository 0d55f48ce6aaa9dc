# Unit tests of client/ (the binaries sit in tests/unit/ where run-suite.sh
# looks for them, named test_client_<object>).
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_client_statfs
tests_unit_test_client_statfs_SOURCES  = tests/unit/client/test_statfs.c
tests_unit_test_client_statfs_CPPFLAGS = $(SFS_CPPFLAGS_CLIENT)
tests_unit_test_client_statfs_CFLAGS   = $(SFS_UNIT_CFLAGS) $(UCX_CFLAGS)
tests_unit_test_client_statfs_LDADD    = libsfs_client.la $(SFS_CORE_LIBS) $(SFS_UNIT_LDADD)
check_PROGRAMS += tests/unit/test_client_tunables
tests_unit_test_client_tunables_SOURCES  = tests/unit/client/test_tunables.c
tests_unit_test_client_tunables_CPPFLAGS = $(SFS_CPPFLAGS_CLIENT)
tests_unit_test_client_tunables_CFLAGS   = $(SFS_UNIT_CFLAGS) $(UCX_CFLAGS)
tests_unit_test_client_tunables_LDADD    = libsfs_client.la $(SFS_CORE_LIBS) $(SFS_UNIT_LDADD)
endif
