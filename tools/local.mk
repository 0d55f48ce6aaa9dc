# tools/: stripefs-ctl (administration) and friends.
bin_PROGRAMS += stripefs-ctl
stripefs_ctl_SOURCES = tools/stripefs_ctl.c
stripefs_ctl_LDADD   = libsfs_client.la $(SFS_CORE_LIBS)
