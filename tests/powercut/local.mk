# tests/powercut/: the power-cut harness. sfs_powercut_fs is a FUSE file
# system that drops what was not synced at a simulated power cut;
# sfs_powercut_load is the workload (through the preload) and its checker.
EXTRA_DIST += tests/powercut

if HAVE_FUSE3
check_PROGRAMS += tests/powercut/sfs_powercut_fs
tests_powercut_sfs_powercut_fs_SOURCES = tests/powercut/sfs_powercut_fs.c \
	tests/powercut/sfs_powercut_model.c tests/powercut/sfs_powercut_model.h
tests_powercut_sfs_powercut_fs_CFLAGS  = $(AM_CFLAGS) $(FUSE3_CFLAGS)
tests_powercut_sfs_powercut_fs_LDADD   = $(FUSE3_LIBS)
endif

check_PROGRAMS += tests/powercut/sfs_powercut_load
tests_powercut_sfs_powercut_load_SOURCES = tests/powercut/sfs_powercut_load.c
