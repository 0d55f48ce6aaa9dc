# preload/: libstripefs-posix.so, the LD_PRELOAD library that serves POSIX
# calls on stripefs paths ("stripefs:/a", "$STRIPEFS_PREFIX/a") through the
# client library (see preload/README.md, docs/posix-preload.md).
#
# It does not link the client library: it dlopens libstripefs.so (built
# next to it) on the first stripefs path, so that UCX is loaded only into
# processes that use stripefs (see sfs_preload.h).
# In a sanitizer build it is instrumented too, and the programs it is
# preloaded into need the AddressSanitizer runtime preloaded before it
# (tests/preload/preload_lib.sh, tools/stripefs-run).
lib_LTLIBRARIES += libstripefs-posix.la
libstripefs_posix_la_SOURCES = \
	preload/sfs_preload.h \
	preload/sfs_preload.c \
	preload/sfs_preload_open.c \
	preload/sfs_preload_io.c \
	preload/sfs_preload_stdio.c \
	preload/sfs_preload_temp.c \
	preload/sfs_preload_refuse.c \
	preload/sfs_preload_stat.c preload/sfs_preload_realpath.c \
	preload/sfs_preload_ns.c \
	preload/sfs_preload_dir.c \
	preload/sfs_preload_listed.c \
	preload/sfs_preload_tunables.h
# The environment is read through the tunable tables (sfs_preload_tunables.h,
# and common/sfs_name_prefix.h's STRIPEFS_PREFIX, shared with the MPI-IO
# driver); the four common files it needs are compiled in rather than linking
# libsfs_common, whose YAML, sodium and MUNGE would then load into every
# program the library is preloaded into.
libstripefs_posix_la_SOURCES += \
	common/sfs_tunable.c common/sfs_units.c common/sfs_errno.c common/sfs_name_prefix.c
libstripefs_posix_la_CPPFLAGS = $(SFS_CPPFLAGS_PRELOAD)
libstripefs_posix_la_CFLAGS  = $(AM_CFLAGS) -fvisibility=hidden
libstripefs_posix_la_LIBADD  = -ldl -lpthread
# Only the interposed libc names leave the library.
libstripefs_posix_la_LDFLAGS = $(AM_LDFLAGS) -module -avoid-version -shared \
	-export-symbols $(srcdir)/preload/libstripefs-posix.sym
EXTRA_libstripefs_posix_la_DEPENDENCIES = $(srcdir)/preload/libstripefs-posix.sym libstripefs.la
EXTRA_DIST += preload/README.md preload/libstripefs-posix.sym tests/preload

# Programs the preload tests run under LD_PRELOAD (they do not link it).
check_PROGRAMS += tests/preload/sfs_posix_check
tests_preload_sfs_posix_check_SOURCES = tests/preload/sfs_posix_check.c \
	tests/preload/sfs_posix_check.h tests/preload/sfs_posix_check_modes.c \
	tests/preload/sfs_posix_check_libc.c

check_PROGRAMS += tests/preload/sfs_mdtest_lite
tests_preload_sfs_mdtest_lite_SOURCES = tests/preload/sfs_mdtest_lite.c
tests_preload_sfs_mdtest_lite_CFLAGS  = $(AM_CFLAGS) $(MPI_OMPI_CFLAGS)
tests_preload_sfs_mdtest_lite_LDADD   = $(MPI_OMPI_LIBS)
