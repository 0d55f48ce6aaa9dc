# layout/: stripe pattern math (no I/O, no UCX).
noinst_LTLIBRARIES += libsfs_layout.la
libsfs_layout_la_SOURCES = layout/sfs_layout.c layout/sfs_layout.h
libsfs_layout_la_CPPFLAGS = $(SFS_CPPFLAGS_LAYOUT)
