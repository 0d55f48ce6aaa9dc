# service/: the stripefs-server MPI program (management, metadata, storage).
noinst_LTLIBRARIES += libsfs_service.la
libsfs_service_la_SOURCES = \
	service/sfs_service.c service/sfs_service.h service/sfs_handlers.h \
	service/sfs_service_handlers.c \
	service/sfs_roles.c service/sfs_roles.h \
	service/sfs_workq.c service/sfs_workq.h \
	service/sfs_mgmt.c service/sfs_mgmt_internal.h service/sfs_mgmt_handlers.c \
	service/sfs_meta.c service/sfs_meta_internal.h \
	service/sfs_meta_handlers.c service/sfs_meta_commit.c service/sfs_meta_run.c \
	service/sfs_meta_reply.c service/sfs_meta_read_now.c service/sfs_meta_counter.c \
	service/sfs_meta_delete.c \
	service/sfs_meta_stats.c service/sfs_meta_stats.h \
	service/sfs_meta_chooser.c service/sfs_meta_chooser.h \
	service/sfs_meta_pool.c service/sfs_meta_pool.h service/sfs_mgmt_pool.c \
	service/sfs_meta_pool_set.c service/sfs_meta_pool_rpc.c \
	service/sfs_meta_migrate.c service/sfs_meta_migrate.h \
	service/sfs_meta_drain.c service/sfs_meta_drain.h \
	service/sfs_meta_lease.c service/sfs_meta_lease.h \
	service/sfs_chunk_tombstone.c service/sfs_chunk_tombstone.h \
	service/sfs_chunk_removed.c service/sfs_chunk_removed.h \
	service/sfs_meta_lock.c service/sfs_meta_lock.h service/sfs_meta_lock_rpc.c \
	service/sfs_meta_lock_client.c service/sfs_meta_lock_client.h \
	service/sfs_meta_store.c service/sfs_meta_store.h service/sfs_meta_store_internal.h \
	service/sfs_meta_store_record.c service/sfs_meta_store_writes.c \
	service/sfs_meta_writes.c service/sfs_meta_writes.h \
	service/sfs_meta_reply_record.c service/sfs_meta_reply_record.h service/sfs_meta_key.h \
	service/sfs_meta_reply_table.c service/sfs_meta_reply_table.h service/sfs_meta_replies.c \
	service/sfs_meta_mirror.c service/sfs_meta_mirror_link.c service/sfs_meta_mirror.h \
	service/sfs_meta_mirror_report.c service/sfs_meta_promote.c \
	service/sfs_meta_backlog.c service/sfs_meta_backlog.h \
	service/sfs_ns_path.c service/sfs_ns_file.c service/sfs_ns_size.c service/sfs_ns_dir.c service/sfs_ns_check.c \
	service/sfs_ns_pattern.c service/sfs_ns_pattern.h \
	service/sfs_storage.c service/sfs_storage_internal.h service/sfs_storage_handlers.c \
	service/sfs_storage_mirror.c service/sfs_mgmt_mirror.c service/sfs_mgmt_mirror_store.c \
	service/sfs_mgmt_meta_mirror.c service/sfs_mgmt_meta_promote.c service/sfs_mgmt_state.c service/sfs_mgmt_state.h \
	service/sfs_storage_mirror_state.c service/sfs_mirror_log.c service/sfs_mirror_log.h \
	service/sfs_mirror_resync.c service/sfs_mirror_resync.h \
	service/sfs_lease.c service/sfs_lease.h service/sfs_buddy_word.c service/sfs_buddy_word.h \
	service/sfs_meta_fence.c service/sfs_meta_fence.h \
	service/sfs_mirror_resync_internal.h service/sfs_mirror_rebuild.c \
	service/sfs_chunk_store.c service/sfs_chunk_store.h service/sfs_chunk_backend.h \
	service/sfs_chunk_store_internal.h service/sfs_chunk_cache.c service/sfs_chunk_map.c \
	service/sfs_chunk_posix.c \
	service/sfs_dirlock.c service/sfs_dirlock.h \
	service/sfs_identity.c service/sfs_identity.h \
	service/sfs_munged.c service/sfs_munged.h \
	service/sfs_perm.c service/sfs_perm.h
libsfs_service_la_CPPFLAGS = $(SFS_CPPFLAGS_SERVICE)
libsfs_service_la_CFLAGS   = $(AM_CFLAGS) $(UCX_CFLAGS) $(LMDB_CFLAGS) $(SODIUM_CFLAGS) \
	$(RAFT_CFLAGS) $(UV_CFLAGS)
libsfs_service_la_LIBADD   = $(LMDB_LIBS) $(RAFT_LIBS) $(UV_LIBS) $(LZ4_LIBS)
# management's replicated state (docs/management-raft.md): the replica and its commands
libsfs_service_la_SOURCES += service/sfs_mgmt_raft.c service/sfs_mgmt_raft.h \
	service/sfs_mgmt_raft_cmd.c service/sfs_mgmt_raft_cmd.h service/sfs_mgmt_state_apply.c
# the storage service's environment knobs (sfs_storage_tunables.h)
libsfs_service_la_SOURCES += service/sfs_storage_tunables.c service/sfs_storage_tunables.h

# The server is an MPI program: compiled with Open MPI's flags.
bin_PROGRAMS += stripefs-server
stripefs_server_SOURCES  = service/sfs_server_main.c service/sfs_server.h service/sfs_server_args.c \
	service/sfs_server_one_host.c service/sfs_server_bcast.c service/sfs_server_rejoin.c \
	service/sfs_server_join.c service/sfs_server_identity.c
stripefs_server_CPPFLAGS = $(SFS_CPPFLAGS_SERVICE)
stripefs_server_CFLAGS   = $(AM_CFLAGS) $(MPI_OMPI_CFLAGS)
stripefs_server_LDADD    = libsfs_service.la $(SFS_CORE_LIBS) $(MPI_OMPI_LIBS)
# quotas (docs/quotas.md): usage and limits in the store, and their requests
libsfs_service_la_SOURCES += service/sfs_meta_quota.c service/sfs_meta_quota.h \
	service/sfs_meta_quota_check.c service/sfs_meta_quota_rpc.c
