# tools/: stripefs-ctl (administration) and friends.
bin_PROGRAMS += stripefs-ctl
stripefs_ctl_SOURCES = tools/stripefs_ctl.c tools/stripefs_ctl.h \
	tools/stripefs_ctl_cluster.c tools/stripefs_ctl_ns.c tools/stripefs_ctl_ls.c \
	tools/stripefs_ctl_files.c tools/stripefs_ctl_info.c tools/stripefs_ctl_mirror.c tools/stripefs_ctl_quota.c \
	tools/stripefs_ctl_pool.c tools/stripefs_ctl_stats.c tools/stripefs_ctl_migrate.c \
	tools/stripefs_ctl_move.c tools/stripefs_ctl_move.h tools/stripefs_ctl_rebalance.c \
	service/sfs_storage_tunables.c # the servers' table, for info (not the service library)
stripefs_ctl_CPPFLAGS = $(SFS_CPPFLAGS_TOOLS)
stripefs_ctl_LDADD   = libsfs_client.la $(SFS_CORE_LIBS)

# stripefs-service: the launcher (mpirun with the right options, clean stop).
bin_SCRIPTS += stripefs-service
CLEANFILES  += stripefs-service
EXTRA_DIST  += tools/stripefs-service.in
stripefs-service: $(srcdir)/tools/stripefs-service.in Makefile
	$(AM_V_GEN)sed -e 's|%MPIRUN_OMPI%|$(MPIRUN_OMPI)|g' $(srcdir)/tools/stripefs-service.in >$@.tmp && \
	chmod +x $@.tmp && mv $@.tmp $@

bin_PROGRAMS += stripefs-fsck
stripefs_fsck_SOURCES = tools/stripefs_fsck.c
stripefs_fsck_CPPFLAGS = $(SFS_CPPFLAGS_TOOLS)
stripefs_fsck_LDADD   = libsfs_client.la $(SFS_CORE_LIBS)
