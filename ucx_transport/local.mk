# ucx_transport/: request/response RPC over UCX active messages.
noinst_LTLIBRARIES += libsfs_transport.la
libsfs_transport_la_SOURCES = \
	ucx_transport/sfs_tp.h ucx_transport/sfs_tp_internal.h \
	ucx_transport/sfs_tp_worker.c \
	ucx_transport/sfs_tp_context.c \
	ucx_transport/sfs_tp_progress.c \
	ucx_transport/sfs_tp_pool.c \
	ucx_transport/sfs_tp_am.c \
	ucx_transport/sfs_tp_ep.c ucx_transport/sfs_tp_listener.c \
	ucx_transport/sfs_tp_tunables.c \
	ucx_transport/sfs_tp_bootstrap.c ucx_transport/sfs_tp_bootstrap_async.c \
	ucx_transport/sfs_tp_conn.c \
	ucx_transport/sfs_tp_rpc.c \
	ucx_transport/sfs_tp_session.c \
	ucx_transport/sfs_tp_request.c \
	ucx_transport/sfs_tp_direct.c \
	ucx_transport/sfs_tp_fdpass.c \
	ucx_transport/sfs_tp_replay.h ucx_transport/sfs_tp_replay.c \
	ucx_transport/sfs_tp_iov.h ucx_transport/sfs_tp_iov.c
libsfs_transport_la_CPPFLAGS = $(SFS_CPPFLAGS_TRANSPORT)
libsfs_transport_la_CFLAGS  = $(AM_CFLAGS) $(UCX_CFLAGS) $(SODIUM_CFLAGS)
libsfs_transport_la_LIBADD  = $(UCX_LIBS) -lucp
