# client/: the client library libstripefs.

# The client library (public header: client/include/sfs/sfs_client.h), as a
# convenience library for the project's own tools and as libstripefs.so.
noinst_LTLIBRARIES += libsfs_client.la
libsfs_client_la_SOURCES = \
	client/sfs_client.c client/sfs_client_internal.h \
	client/sfs_client_tunables.c client/sfs_client_tunables.h \
	client/sfs_namespace.c \
	client/sfs_statfs.c \
	client/sfs_client_names.c \
	client/sfs_file.c \
	client/sfs_client_lock.c client/sfs_client_detached.c \
	client/sfs_file_size.c \
	client/sfs_dir_stat.c \
	client/sfs_file_io.c client/sfs_file_async.c \
	client/sfs_file_local.c \
	client/sfs_client_mirror.c \
	client/sfs_client_meta_failover.c \
	client/sfs_admin.c client/sfs_admin.h client/sfs_admin_stats.c client/sfs_admin_stats.h \
	client/sfs_quota.c client/sfs_quota.h \
	client/sfs_pool.c client/sfs_admin_migrate.c client/sfs_admin_migrate.h \
	client/sfs_file_moved.c
libsfs_client_la_CPPFLAGS = $(SFS_CPPFLAGS_CLIENT)
libsfs_client_la_CFLAGS  = $(AM_CFLAGS) $(UCX_CFLAGS)

lib_LTLIBRARIES += libstripefs.la
libstripefs_la_SOURCES =
libstripefs_la_LIBADD  = libsfs_client.la $(SFS_CORE_LIBS)
libstripefs_la_LDFLAGS = $(AM_LDFLAGS) -version-info 0:0:0 \
	-export-symbols-regex '^sfs_(client_(connect|disconnect|error)|stat|statfs|lookup|access|mkdir|rmdir|unlink|rename|chmod|chown|utimens|setpattern|readdir|readdir_stat|readdir_attrs|file_[a-z0-9_]+|request_[a-z]+|path_canonical)$$'
sfsincludedir = $(includedir)/sfs
sfsinclude_HEADERS = client/include/sfs/sfs_client.h
