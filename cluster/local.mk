# cluster/: the connection to the servers (map, sessions to each role),
# shared by the client library and the servers.
noinst_LTLIBRARIES += libsfs_cluster.la
libsfs_cluster_la_SOURCES  = cluster/sfs_cluster.c cluster/sfs_cluster.h
libsfs_cluster_la_CPPFLAGS = $(SFS_CPPFLAGS_CLUSTER)
libsfs_cluster_la_CFLAGS   = $(AM_CFLAGS) $(UCX_CFLAGS)
