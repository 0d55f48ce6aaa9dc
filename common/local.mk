# common/: error codes, logging, wire codec, protocol, auth, config, paths.
noinst_LTLIBRARIES += libsfs_common.la
libsfs_common_la_SOURCES = \
	common/sfs_errno.c common/sfs_errno.h \
	common/sfs_log.c common/sfs_log.h \
	common/sfs_alloc.h \
	common/sfs_config.c common/sfs_config.h common/sfs_config_internal.h \
	common/sfs_config_yaml.c common/sfs_config_check.c common/sfs_config_write.c \
	common/sfs_config_generate.c common/sfs_config_mirror.c common/sfs_config_pool.c \
	common/sfs_units.c \
	common/sfs_tunable.c common/sfs_tunable.h common/sfs_name_prefix.c common/sfs_name_prefix.h \
	common/sfs_dirsync.c common/sfs_dirsync.h
libsfs_common_la_CPPFLAGS = $(SFS_CPPFLAGS_COMMON)
libsfs_common_la_CFLAGS  = $(AM_CFLAGS) $(YAML_CFLAGS)
libsfs_common_la_LIBADD  = $(YAML_LIBS)

# Wire codec, protocol, authentication and path rules.
libsfs_common_la_SOURCES += \
	common/sfs_buf.h \
	common/sfs_proto.c common/sfs_proto.h common/sfs_proto_ops.c common/sfs_proto_replies.c \
	common/sfs_proto_local.c common/sfs_proto_lock.c common/sfs_proto_lock.h common/sfs_proto_mirror.h common/sfs_proto_mirror.c \
	common/sfs_proto_quota.c common/sfs_proto_quota.h \
	common/sfs_proto_pool.c common/sfs_proto_pool.h common/sfs_proto_features.h common/sfs_proto_meta_stats.h \
	common/sfs_proto_migrate.c common/sfs_proto_migrate.h \
	common/sfs_proto_bound.c common/sfs_proto_bound.h \
	common/sfs_proto_address.c common/sfs_proto_address.h \
	common/sfs_auth.c common/sfs_auth.h \
	common/sfs_cap.c common/sfs_cap.h common/sfs_cred.h \
	common/sfs_munge.c common/sfs_munge.h \
	common/sfs_path.c common/sfs_path.h \
	common/sfs_map.c common/sfs_map.h \
	common/sfs_list.h common/sfs_hash.h common/sfs_time.h
libsfs_common_la_CFLAGS  += $(SODIUM_CFLAGS)
libsfs_common_la_LIBADD += $(SODIUM_LIBS) $(MUNGE_LIBS) -lpthread
