# tests/: unit tests (cmocka), fuzz targets (libFuzzer), MPI integration
# tests (shell scripts that start the real service). tests/run-suite.sh runs
# them all and prints "N passed, N failed".

# Libraries a unit test links; each test adds its own.
SFS_UNIT_LDADD = $(CMOCKA_LIBS)
SFS_UNIT_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)

# Unit tests mirror the source tree: tests/unit/<dir>/test_<file>.c tests
# <dir>/sfs_<file>.c (tests/run-suite.sh runs every tests/unit/*/test_*).
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/layout/test_layout
tests_unit_layout_test_layout_SOURCES = tests/unit/layout/test_layout.c
tests_unit_layout_test_layout_CFLAGS  = $(SFS_UNIT_CFLAGS)
tests_unit_layout_test_layout_LDADD   = libsfs_layout.la $(SFS_UNIT_LDADD)
check_PROGRAMS += tests/unit/ucx_transport/test_tp_replay
tests_unit_ucx_transport_test_tp_replay_SOURCES = tests/unit/ucx_transport/test_tp_replay.c \
	ucx_transport/sfs_tp_replay.c
tests_unit_ucx_transport_test_tp_replay_CFLAGS  = $(SFS_UNIT_CFLAGS)
tests_unit_ucx_transport_test_tp_replay_LDADD   = $(SFS_UNIT_LDADD)
check_PROGRAMS += tests/unit/ucx_transport/test_tp_bootstrap_async
tests_unit_ucx_transport_test_tp_bootstrap_async_SOURCES = \
	tests/unit/ucx_transport/test_tp_bootstrap_async.c
tests_unit_ucx_transport_test_tp_bootstrap_async_CFLAGS  = $(SFS_UNIT_CFLAGS)
tests_unit_ucx_transport_test_tp_bootstrap_async_LDADD   = $(SFS_CORE_LIBS) $(SFS_UNIT_LDADD)
check_PROGRAMS += tests/unit/ucx_transport/test_tp_iov
tests_unit_ucx_transport_test_tp_iov_SOURCES = tests/unit/ucx_transport/test_tp_iov.c \
	ucx_transport/sfs_tp_iov.c
tests_unit_ucx_transport_test_tp_iov_CFLAGS  = $(SFS_UNIT_CFLAGS)
tests_unit_ucx_transport_test_tp_iov_LDADD   = $(SFS_UNIT_LDADD)
check_PROGRAMS += tests/unit/service/test_dirlock
tests_unit_service_test_dirlock_SOURCES  = tests/unit/service/test_dirlock.c service/sfs_dirlock.c
tests_unit_service_test_dirlock_CPPFLAGS = $(SFS_CPPFLAGS_SERVICE)
tests_unit_service_test_dirlock_CFLAGS   = $(SFS_UNIT_CFLAGS)
tests_unit_service_test_dirlock_LDADD    = libsfs_common.la $(SFS_UNIT_LDADD)
check_PROGRAMS += tests/unit/service/test_mirror_log
tests_unit_service_test_mirror_log_SOURCES  = tests/unit/service/test_mirror_log.c \
	service/sfs_mirror_log.c
tests_unit_service_test_mirror_log_CPPFLAGS = $(SFS_CPPFLAGS_SERVICE)
tests_unit_service_test_mirror_log_CFLAGS   = $(SFS_UNIT_CFLAGS)
tests_unit_service_test_mirror_log_LDADD    = libsfs_common.la $(SFS_UNIT_LDADD)
check_PROGRAMS += tests/unit/service/test_lease
tests_unit_service_test_lease_SOURCES  = tests/unit/service/test_lease.c service/sfs_lease.c
tests_unit_service_test_lease_CPPFLAGS = $(SFS_CPPFLAGS_SERVICE)
tests_unit_service_test_lease_CFLAGS   = $(SFS_UNIT_CFLAGS)
tests_unit_service_test_lease_LDADD    = $(SFS_UNIT_LDADD)
check_PROGRAMS += tests/unit/service/test_buddy_word
tests_unit_service_test_buddy_word_SOURCES  = tests/unit/service/test_buddy_word.c \
	service/sfs_buddy_word.c service/sfs_lease.c
tests_unit_service_test_buddy_word_CPPFLAGS = $(SFS_CPPFLAGS_SERVICE)
tests_unit_service_test_buddy_word_CFLAGS   = $(SFS_UNIT_CFLAGS)
tests_unit_service_test_buddy_word_LDADD    = $(SFS_UNIT_LDADD)
check_PROGRAMS += tests/unit/service/test_meta_lease
tests_unit_service_test_meta_lease_SOURCES  = tests/unit/service/test_meta_lease.c \
	service/sfs_meta_lease.c
tests_unit_service_test_meta_lease_CPPFLAGS = $(SFS_CPPFLAGS_SERVICE)
tests_unit_service_test_meta_lease_CFLAGS   = $(SFS_UNIT_CFLAGS)
tests_unit_service_test_meta_lease_LDADD    = libsfs_common.la $(SFS_UNIT_LDADD)
check_PROGRAMS += tests/unit/service/test_meta_counter
tests_unit_service_test_meta_counter_SOURCES  = tests/unit/service/test_meta_counter.c \
	service/sfs_meta_counter.c
tests_unit_service_test_meta_counter_CPPFLAGS = $(SFS_CPPFLAGS_SERVICE)
tests_unit_service_test_meta_counter_CFLAGS   = $(SFS_UNIT_CFLAGS) $(LMDB_CFLAGS) $(UCX_CFLAGS)
tests_unit_service_test_meta_counter_LDADD    = libsfs_common.la $(SFS_UNIT_LDADD)
check_PROGRAMS += tests/unit/service/test_perm
tests_unit_service_test_perm_SOURCES  = tests/unit/service/test_perm.c service/sfs_perm.c
tests_unit_service_test_perm_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/service
tests_unit_service_test_perm_CFLAGS   = $(SFS_UNIT_CFLAGS)
tests_unit_service_test_perm_LDADD    = libsfs_common.la $(SFS_UNIT_LDADD)
check_PROGRAMS += tests/unit/service/test_meta_quota
tests_unit_service_test_meta_quota_SOURCES  = tests/unit/service/test_meta_quota.c
tests_unit_service_test_meta_quota_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/service
tests_unit_service_test_meta_quota_CFLAGS   = $(SFS_UNIT_CFLAGS)
tests_unit_service_test_meta_quota_LDADD    = libsfs_service.la $(SFS_CORE_LIBS) $(SFS_UNIT_LDADD)
check_PROGRAMS += tests/unit/service/test_chunk_removed
tests_unit_service_test_chunk_removed_SOURCES  = tests/unit/service/test_chunk_removed.c
tests_unit_service_test_chunk_removed_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/service
tests_unit_service_test_chunk_removed_CFLAGS   = $(SFS_UNIT_CFLAGS)
tests_unit_service_test_chunk_removed_LDADD    = libsfs_service.la $(SFS_CORE_LIBS) $(SFS_UNIT_LDADD)
check_PROGRAMS += tests/unit/service/test_meta_removed_writer
tests_unit_service_test_meta_removed_writer_SOURCES  = tests/unit/service/test_meta_removed_writer.c
tests_unit_service_test_meta_removed_writer_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/service
tests_unit_service_test_meta_removed_writer_CFLAGS   = $(SFS_UNIT_CFLAGS)
tests_unit_service_test_meta_removed_writer_LDADD    = libsfs_service.la $(SFS_CORE_LIBS) $(SFS_UNIT_LDADD)
check_PROGRAMS += tests/unit/service/test_ns_pattern
tests_unit_service_test_ns_pattern_SOURCES  = tests/unit/service/test_ns_pattern.c
tests_unit_service_test_ns_pattern_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/service
tests_unit_service_test_ns_pattern_CFLAGS   = $(SFS_UNIT_CFLAGS)
tests_unit_service_test_ns_pattern_LDADD    = libsfs_service.la $(SFS_CORE_LIBS) $(SFS_UNIT_LDADD)
# (service/sfs_chunk_mem.c: the in-memory chunk backend, for tests only)
check_PROGRAMS += tests/unit/service/test_chunk_store
tests_unit_service_test_chunk_store_SOURCES  = tests/unit/service/test_chunk_store.c \
	service/sfs_chunk_mem.c service/sfs_chunk_mem.h
tests_unit_service_test_chunk_store_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/service
tests_unit_service_test_chunk_store_CFLAGS   = $(SFS_UNIT_CFLAGS)
tests_unit_service_test_chunk_store_LDADD    = libsfs_service.la $(SFS_CORE_LIBS) $(SFS_UNIT_LDADD)
check_PROGRAMS += tests/unit/service/test_chunk_tombstone
tests_unit_service_test_chunk_tombstone_SOURCES  = tests/unit/service/test_chunk_tombstone.c
tests_unit_service_test_chunk_tombstone_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/service
tests_unit_service_test_chunk_tombstone_CFLAGS   = $(SFS_UNIT_CFLAGS)
tests_unit_service_test_chunk_tombstone_LDADD    = libsfs_service.la $(SFS_CORE_LIBS) $(SFS_UNIT_LDADD)
check_PROGRAMS += tests/unit/service/test_chunk_posix
tests_unit_service_test_chunk_posix_SOURCES  = tests/unit/service/test_chunk_posix.c
tests_unit_service_test_chunk_posix_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/service
tests_unit_service_test_chunk_posix_CFLAGS   = $(SFS_UNIT_CFLAGS)
tests_unit_service_test_chunk_posix_LDADD    = libsfs_service.la $(SFS_CORE_LIBS) $(SFS_UNIT_LDADD)
check_PROGRAMS += tests/unit/service/test_sfs_meta_lock
tests_unit_service_test_sfs_meta_lock_SOURCES  = tests/unit/service/test_sfs_meta_lock.c \
	service/sfs_meta_lock.c service/sfs_meta_lock_client.c
tests_unit_service_test_sfs_meta_lock_CPPFLAGS = $(SFS_CPPFLAGS_SERVICE)
tests_unit_service_test_sfs_meta_lock_CFLAGS   = $(SFS_UNIT_CFLAGS)
tests_unit_service_test_sfs_meta_lock_LDADD    = $(SFS_UNIT_LDADD)
check_PROGRAMS += tests/unit/service/test_meta_chooser
tests_unit_service_test_meta_chooser_SOURCES  = tests/unit/service/test_meta_chooser.c \
	service/sfs_meta_chooser.c
tests_unit_service_test_meta_chooser_CPPFLAGS = $(SFS_CPPFLAGS_SERVICE)
tests_unit_service_test_meta_chooser_CFLAGS   = $(SFS_UNIT_CFLAGS)
tests_unit_service_test_meta_chooser_LDADD    = libsfs_common.la $(SFS_UNIT_LDADD)
check_PROGRAMS += tests/unit/service/test_mgmt_mirror
tests_unit_service_test_mgmt_mirror_SOURCES  = tests/unit/service/test_mgmt_mirror.c
tests_unit_service_test_mgmt_mirror_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/service
tests_unit_service_test_mgmt_mirror_CFLAGS   = $(SFS_UNIT_CFLAGS)
tests_unit_service_test_mgmt_mirror_LDADD    = libsfs_service.la $(SFS_CORE_LIBS) $(SFS_UNIT_LDADD)
check_PROGRAMS += tests/unit/service/test_mgmt_raft
tests_unit_service_test_mgmt_raft_SOURCES  = tests/unit/service/test_mgmt_raft.c
tests_unit_service_test_mgmt_raft_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/service
tests_unit_service_test_mgmt_raft_CFLAGS   = $(SFS_UNIT_CFLAGS)
tests_unit_service_test_mgmt_raft_LDADD    = libsfs_service.la $(SFS_CORE_LIBS) $(SFS_UNIT_LDADD)
check_PROGRAMS += tests/unit/service/test_meta_backlog
tests_unit_service_test_meta_backlog_SOURCES  = tests/unit/service/test_meta_backlog.c \
	service/sfs_meta_backlog.c
tests_unit_service_test_meta_backlog_CPPFLAGS = $(SFS_CPPFLAGS_SERVICE)
tests_unit_service_test_meta_backlog_CFLAGS   = $(SFS_UNIT_CFLAGS)
tests_unit_service_test_meta_backlog_LDADD    = libsfs_common.la $(SFS_UNIT_LDADD)
check_PROGRAMS += tests/unit/service/test_meta_pool
tests_unit_service_test_meta_pool_SOURCES  = tests/unit/service/test_meta_pool.c \
	service/sfs_meta_chooser.c service/sfs_meta_pool.c
tests_unit_service_test_meta_pool_CPPFLAGS = $(SFS_CPPFLAGS_SERVICE)
tests_unit_service_test_meta_pool_CFLAGS   = $(SFS_UNIT_CFLAGS)
tests_unit_service_test_meta_pool_LDADD    = libsfs_common.la $(SFS_UNIT_LDADD)
check_PROGRAMS += tests/unit/service/test_meta_writes
tests_unit_service_test_meta_writes_SOURCES  = tests/unit/service/test_meta_writes.c \
	service/sfs_ns_test.c service/sfs_ns_test.h
tests_unit_service_test_meta_writes_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/service
tests_unit_service_test_meta_writes_CFLAGS   = $(SFS_UNIT_CFLAGS)
tests_unit_service_test_meta_writes_LDADD    = libsfs_service.la $(SFS_CORE_LIBS) $(SFS_UNIT_LDADD)

check_PROGRAMS += tests/unit/service/test_meta_pool_set
tests_unit_service_test_meta_pool_set_SOURCES  = tests/unit/service/test_meta_pool_set.c
tests_unit_service_test_meta_pool_set_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/service
tests_unit_service_test_meta_pool_set_CFLAGS   = $(SFS_UNIT_CFLAGS)
tests_unit_service_test_meta_pool_set_LDADD    = libsfs_service.la $(SFS_CORE_LIBS) $(SFS_UNIT_LDADD)
check_PROGRAMS += tests/unit/service/test_mgmt
tests_unit_service_test_mgmt_SOURCES  = tests/unit/service/test_mgmt.c
tests_unit_service_test_mgmt_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/service
tests_unit_service_test_mgmt_CFLAGS   = $(SFS_UNIT_CFLAGS)
tests_unit_service_test_mgmt_LDADD    = libsfs_service.la $(SFS_CORE_LIBS) $(SFS_UNIT_LDADD)
check_PROGRAMS += tests/unit/common/test_proto_ops
tests_unit_common_test_proto_ops_SOURCES = tests/unit/common/test_proto_ops.c
tests_unit_common_test_proto_ops_CFLAGS  = $(SFS_UNIT_CFLAGS)
tests_unit_common_test_proto_ops_LDADD   = libsfs_common.la $(SFS_UNIT_LDADD)
check_PROGRAMS += tests/unit/common/test_proto_pool_set
tests_unit_common_test_proto_pool_set_SOURCES = tests/unit/common/test_proto_pool_set.c
tests_unit_common_test_proto_pool_set_CFLAGS  = $(SFS_UNIT_CFLAGS)
tests_unit_common_test_proto_pool_set_LDADD   = libsfs_common.la $(SFS_UNIT_LDADD)
check_PROGRAMS += tests/unit/common/test_proto_quota
tests_unit_common_test_proto_quota_SOURCES = tests/unit/common/test_proto_quota.c
tests_unit_common_test_proto_quota_CFLAGS  = $(SFS_UNIT_CFLAGS)
tests_unit_common_test_proto_quota_LDADD   = libsfs_common.la $(SFS_UNIT_LDADD)
check_PROGRAMS += tests/unit/common/test_proto_bound
tests_unit_common_test_proto_bound_SOURCES = tests/unit/common/test_proto_bound.c
tests_unit_common_test_proto_bound_CFLAGS  = $(SFS_UNIT_CFLAGS)
tests_unit_common_test_proto_bound_LDADD   = libsfs_common.la libsfs_layout.la $(SFS_UNIT_LDADD)
check_PROGRAMS += tests/unit/common/test_proto_address
tests_unit_common_test_proto_address_SOURCES = tests/unit/common/test_proto_address.c
tests_unit_common_test_proto_address_CFLAGS  = $(SFS_UNIT_CFLAGS)
tests_unit_common_test_proto_address_LDADD   = libsfs_common.la $(SFS_UNIT_LDADD)
endif

include tests/unit/config.mk
include tests/unit/client/local.mk
include tests/fuzz/local.mk
include tests/powercut/local.mk

# common/sfs_tunable.c, and the log, transport and storage tables
if HAVE_CMOCKA
# adio/ad_stripefs/ad_stripefs_name.c: the name rule (no ROMIO needed)
check_PROGRAMS += tests/unit/adio/test_ad_stripefs_name
tests_unit_adio_test_ad_stripefs_name_SOURCES  = tests/unit/adio/test_ad_stripefs_name.c \
	adio/ad_stripefs/ad_stripefs_name.c
tests_unit_adio_test_ad_stripefs_name_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/adio/ad_stripefs
tests_unit_adio_test_ad_stripefs_name_CFLAGS   = $(SFS_UNIT_CFLAGS)
tests_unit_adio_test_ad_stripefs_name_LDADD    = libsfs_common.la $(SFS_UNIT_LDADD) -lpthread
check_PROGRAMS += tests/unit/common/test_tunable
tests_unit_common_test_tunable_SOURCES  = tests/unit/common/test_tunable.c \
	ucx_transport/sfs_tp_tunables.c service/sfs_storage_tunables.c
tests_unit_common_test_tunable_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/service
tests_unit_common_test_tunable_CFLAGS   = $(SFS_UNIT_CFLAGS)
tests_unit_common_test_tunable_LDADD    = libsfs_common.la $(SFS_UNIT_LDADD)
endif

EXTRA_DIST += tests/run-suite.sh tests/lib tests/mpi tests/fuzz/corpus tests/cluster tests/faults \
	tests/style tests/progs tests/service tests/libsuites tests/benchmarks

# Test programs the integration tests drive (built by `make check`).
check_PROGRAMS += tests/progs/sfs_client_check
tests_progs_sfs_client_check_SOURCES = tests/progs/sfs_client_check.c
tests_progs_sfs_client_check_LDADD   = libsfs_client.la $(SFS_CORE_LIBS)

check_PROGRAMS += tests/progs/sfs_mirror_writers
tests_progs_sfs_mirror_writers_SOURCES = tests/progs/sfs_mirror_writers.c
tests_progs_sfs_mirror_writers_LDADD   = libsfs_client.la $(SFS_CORE_LIBS)
# The fencing test's writer (tests/faults/test_fault_mirror_fence.sh).
check_PROGRAMS += tests/progs/sfs_fence_writer
tests_progs_sfs_fence_writer_SOURCES = tests/progs/sfs_fence_writer.c
tests_progs_sfs_fence_writer_LDADD   = libsfs_client.la $(SFS_CORE_LIBS)
# The metadata fencing test's client (tests/cluster/test_cluster_meta_fence.sh).
check_PROGRAMS += tests/progs/sfs_meta_fence_client
tests_progs_sfs_meta_fence_client_SOURCES = tests/progs/sfs_meta_fence_client.c tests/progs/sfs_go_file.h
tests_progs_sfs_meta_fence_client_LDADD   = libsfs_client.la $(SFS_CORE_LIBS)
check_PROGRAMS += tests/progs/sfs_rolling_client
tests_progs_sfs_rolling_client_SOURCES = tests/progs/sfs_rolling_client.c
tests_progs_sfs_rolling_client_LDADD   = libsfs_client.la $(SFS_CORE_LIBS)
check_PROGRAMS += tests/progs/sfs_meta_loop_client
tests_progs_sfs_meta_loop_client_SOURCES = tests/progs/sfs_meta_loop_client.c tests/progs/sfs_go_file.h
tests_progs_sfs_meta_loop_client_LDADD   = libsfs_client.la $(SFS_CORE_LIBS)
check_PROGRAMS += tests/progs/sfs_meta_read_client
tests_progs_sfs_meta_read_client_SOURCES = tests/progs/sfs_meta_read_client.c tests/progs/sfs_go_file.h
tests_progs_sfs_meta_read_client_LDADD   = libsfs_client.la $(SFS_CORE_LIBS)

# Every public client call with bad arguments (tests/service/test_service_client_api.sh).
check_PROGRAMS += tests/progs/sfs_client_args
tests_progs_sfs_client_args_SOURCES = tests/progs/sfs_client_args.c
tests_progs_sfs_client_args_LDADD   = libsfs_client.la $(SFS_CORE_LIBS)

# Shared file pointers: no eviction, ESTALE after a restart (tests/service/test_service_counters.sh).
check_PROGRAMS += tests/progs/sfs_counter_check
tests_progs_sfs_counter_check_SOURCES = tests/progs/sfs_counter_check.c
tests_progs_sfs_counter_check_LDADD   = libsfs_client.la $(SFS_CORE_LIBS)

# The asynchronous cluster-map refresh against a slow fake management (tests/service/test_service_meta_map_async.sh).
check_PROGRAMS += tests/progs/sfs_map_async
tests_progs_sfs_map_async_SOURCES = tests/progs/sfs_map_async.c
tests_progs_sfs_map_async_CFLAGS  = $(AM_CFLAGS) $(UCX_CFLAGS)
tests_progs_sfs_map_async_LDADD   = $(SFS_CORE_LIBS) -lpthread

# A file kept open past its capability's lifetime (tests/service/test_service_caps.sh).
check_PROGRAMS += tests/progs/sfs_cap_renew
tests_progs_sfs_cap_renew_SOURCES = tests/progs/sfs_cap_renew.c
tests_progs_sfs_cap_renew_LDADD   = libsfs_client.la $(SFS_CORE_LIBS)

# Byte-range locks held and killed (tests/service/test_service_locks.sh).
check_PROGRAMS += tests/progs/sfs_lock_hold
tests_progs_sfs_lock_hold_SOURCES = tests/progs/sfs_lock_hold.c
tests_progs_sfs_lock_hold_LDADD   = libsfs_client.la $(SFS_CORE_LIBS)

# A writer holding a file open, killed or closing (tests/service/test_service_dynattr.sh).
check_PROGRAMS += tests/progs/sfs_migrate_reader
tests_progs_sfs_migrate_reader_SOURCES = tests/progs/sfs_migrate_reader.c
tests_progs_sfs_migrate_reader_LDADD   = libsfs_client.la $(SFS_CORE_LIBS)

# A client that writes past its write bound by hand (tests/service/test_service_quota_bound.sh).
check_PROGRAMS += tests/progs/sfs_quota_bypass
tests_progs_sfs_quota_bypass_SOURCES = tests/progs/sfs_quota_bypass.c
tests_progs_sfs_quota_bypass_CFLAGS  = $(AM_CFLAGS) $(UCX_CFLAGS)
tests_progs_sfs_quota_bypass_LDADD   = libsfs_client.la $(SFS_CORE_LIBS)

check_PROGRAMS += tests/progs/sfs_server_ops_refused
tests_progs_sfs_server_ops_refused_SOURCES = tests/progs/sfs_server_ops_refused.c
tests_progs_sfs_server_ops_refused_CFLAGS  = $(AM_CFLAGS) $(UCX_CFLAGS)
tests_progs_sfs_server_ops_refused_LDADD   = libsfs_client.la $(SFS_CORE_LIBS)

check_PROGRAMS += tests/progs/sfs_size_writer
tests_progs_sfs_size_writer_SOURCES = tests/progs/sfs_size_writer.c
tests_progs_sfs_size_writer_LDADD   = libsfs_client.la $(SFS_CORE_LIBS)

check_PROGRAMS += tests/progs/sfs_meta_corrupt
# (service/sfs_ns_test.c: the store's damage hooks, kept out of libsfs_service)
tests_progs_sfs_meta_corrupt_SOURCES  = tests/progs/sfs_meta_corrupt.c service/sfs_ns_test.c \
	service/sfs_ns_test.h
tests_progs_sfs_meta_corrupt_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/service
tests_progs_sfs_meta_corrupt_CFLAGS   = $(AM_CFLAGS) $(LMDB_CFLAGS)
tests_progs_sfs_meta_corrupt_LDADD    = libsfs_service.la $(SFS_CORE_LIBS)

check_PROGRAMS += tests/progs/sfs_wire_attack
tests_progs_sfs_wire_attack_SOURCES = tests/progs/sfs_wire_attack.c tests/progs/sfs_wire_attack.h \
	tests/progs/sfs_wire_attack_versions.c
tests_progs_sfs_wire_attack_CFLAGS  = $(AM_CFLAGS) $(UCX_CFLAGS)
tests_progs_sfs_wire_attack_LDADD   = $(SFS_CORE_LIBS)

check_PROGRAMS += tests/progs/sfs_munge_attack
tests_progs_sfs_munge_attack_SOURCES = tests/progs/sfs_munge_attack.c tests/progs/sfs_munge_attack.h \
	tests/progs/sfs_munge_attack_hand.c tests/progs/sfs_munge_attack_caps.c
tests_progs_sfs_munge_attack_CFLAGS  = $(AM_CFLAGS) $(UCX_CFLAGS) $(MUNGE_CFLAGS)
tests_progs_sfs_munge_attack_LDADD   = $(SFS_CORE_LIBS) $(MUNGE_LIBS)

# The permission matrix (plain libc: under LD_PRELOAD it exercises the preload).
check_PROGRAMS += tests/progs/sfs_perm_probe
tests_progs_sfs_perm_probe_SOURCES = tests/progs/sfs_perm_probe.c tests/progs/sfs_perm_probe.h \
	tests/progs/sfs_perm_probe_setup.c tests/progs/sfs_perm_probe_ops.c

# One MPI-IO open with a given amode, printing the MPI error class.
check_PROGRAMS += tests/progs/sfs_mpi_open
tests_progs_sfs_mpi_open_SOURCES = tests/progs/sfs_mpi_open.c
tests_progs_sfs_mpi_open_CFLAGS  = $(AM_CFLAGS) $(MPI_OMPI_CFLAGS)
tests_progs_sfs_mpi_open_LDADD   = $(MPI_OMPI_LIBS)

# Forks of a connected client, each child a client of its own.
check_PROGRAMS += tests/progs/sfs_fork_clients
tests_progs_sfs_fork_clients_SOURCES = tests/progs/sfs_fork_clients.c

# Exits with stripefs files and stdio streams open (test_preload_exit.sh).
check_PROGRAMS += tests/progs/sfs_exit_writer
tests_progs_sfs_exit_writer_SOURCES = tests/progs/sfs_exit_writer.c
