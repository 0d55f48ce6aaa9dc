# adio/: the MPI-IO library, libstripefs-mpiio.so (Open MPI) and
# libstripefs-mpiio-mpich.so (MPICH): ROMIO built standalone and patched
# (adio/build-romio.sh, adio/romio-patches/), plus the stripefs ADIO driver
# (adio/ad_stripefs/), plus the launcher tools/stripefs-run. See docs/romio.md.
#
# ROMIO is built once per flavour into $(top_builddir)/_romio/<flavour>
# (about 3 minutes; its stamp makes a rebuild instant). The driver is compiled
# here against that configured tree, so editing it never rebuilds ROMIO. The
# rules are plain make (no libtool): the objects of one flavour are compiled
# together (the driver is small) and linked with libromio.a into the .so.

# The driver's sources and headers. A new driver file only needs adding here.
# (Not "ADIO_DRIVER_SOURCES"/"_HEADERS": automake reserves those suffixes and,
# with -Wall -Werror, rejects them when no program or directory has that name.)
ADIO_DRIVER_SRCS = \
	adio/ad_stripefs/ad_stripefs.c \
	adio/ad_stripefs/ad_stripefs_common.c \
	adio/ad_stripefs/ad_stripefs_open.c \
	adio/ad_stripefs/ad_stripefs_close.c \
	adio/ad_stripefs/ad_stripefs_io.c \
	adio/ad_stripefs/ad_stripefs_io_str.c \
	adio/ad_stripefs/ad_stripefs_hints.c \
	adio/ad_stripefs/ad_stripefs_fcntl.c \
	adio/ad_stripefs/ad_stripefs_delete.c \
	adio/ad_stripefs/ad_stripefs_name.c
ADIO_DRIVER_HDRS = \
	adio/ad_stripefs/ad_stripefs.h \
	adio/ad_stripefs/ad_stripefs_name.h

# The name rule (ad_stripefs_name.c) is common/sfs_name_prefix.c's, the
# one the POSIX preload applies too; only that file sees common/ (the rest
# of the driver uses the client's public header only).
ADIO_NAME_CPPFLAGS = -I$(top_srcdir)/common
ADIO_NAME_DEPS = $(top_srcdir)/common/sfs_name_prefix.h $(top_srcdir)/common/sfs_tunable.h

# Linker arguments of what the driver needs besides ROMIO and MPI: the stripefs
# client library (PIC archives, e.g. client/.libs/libsfs_client.a) and UCX and
# libsodium (e.g. $(UCX_LIBS) $(SODIUM_LIBS)). They are linked into the .so.
# ADIO_CLIENT_DEPS lists the files among them that should trigger a relink.
# (the PIC archives libtool keeps for the convenience libraries; same order
# as SFS_CORE_LIBS, top layer first)
ADIO_CLIENT_LIBS = .libs/libsfs_client.a .libs/libsfs_cluster.a .libs/libsfs_transport.a \
	.libs/libsfs_layout.a .libs/libsfs_common.a \
	$(UCX_LIBS) -lucp $(SODIUM_LIBS) $(MUNGE_LIBS) $(YAML_LIBS)
ADIO_CLIENT_DEPS = libsfs_client.la $(SFS_CORE_LIBS)

# ROMIO_BUILD is $(abs_top_builddir)/_romio unless configure was given
# --with-romio-build=DIR: build trees can share one ROMIO build (ci/run-tests.sh
# points the sanitizer build at the main build's).
ADIO_ROMIO_DIR = $(ROMIO_BUILD)
ADIO_ROMIO_DIR_OMPI  = $(ADIO_ROMIO_DIR)/openmpi
ADIO_ROMIO_DIR_MPICH = $(ADIO_ROMIO_DIR)/mpich
ADIO_OBJS_OMPI  = $(ADIO_DRIVER_SRCS:.c=.ompi.o)
ADIO_OBJS_MPICH = $(ADIO_DRIVER_SRCS:.c=.mpich.o)

# The driver is built with the project's warnings and, in a sanitizer build
# (--enable-sanitizers), with the sanitizers, like the client library linked
# into it; ROMIO itself is never instrumented. Such a library needs the
# AddressSanitizer runtime loaded first into the (uninstrumented) programs it
# is preloaded into: stripefs-run does that when the library depends on it.
ADIO_DRIVER_CFLAGS = $(SFS_CPPFLAGS_ADIO) $(CPPFLAGS) $(SFS_CFLAGS) $(CFLAGS) -fPIC
ADIO_LINK_FLAGS = -shared -Wl,--version-script=$(srcdir)/adio/exports.map \
	-Wl,--no-undefined -Wl,-z,now $(SFS_LDFLAGS) $(LDFLAGS)

# "echo" when silent (one line per flavour), "set -x" output when V=1
adio_v_quiet = $(adio_v_quiet_@AM_V@)
adio_v_quiet_ = $(adio_v_quiet_@AM_DEFAULT_V@)
adio_v_quiet_0 = echo "  CC       adio/ad_stripefs/*.c ($$flavour)"
adio_v_quiet_1 = set -x

# Always run build-romio.sh: its stamp (ROMIO tree, patches, script, flavour)
# decides whether anything is rebuilt; when nothing is, romio.stamp keeps its
# time and nothing downstream is relinked.
.PHONY: adio-romio-force
adio-romio-force:

$(ADIO_ROMIO_DIR_OMPI)/romio.stamp: adio-romio-force
	$(AM_V_at)MPICC_OMPI='$(MPICC_OMPI)' $(SHELL) $(srcdir)/adio/build-romio.sh \
	    openmpi '$(ROMIO_SRC)' '$(ADIO_ROMIO_DIR_OMPI)'

$(ADIO_ROMIO_DIR_MPICH)/romio.stamp: adio-romio-force
	$(AM_V_at)MPICC_MPICH='$(MPICC_MPICH)' $(SHELL) $(srcdir)/adio/build-romio.sh \
	    mpich '$(ROMIO_SRC)' '$(ADIO_ROMIO_DIR_MPICH)'

# Compile every driver file for one flavour: $$flavour, $$cc, $$romio, $$suffix.
adio_compile_driver = \
	cflags='$(ADIO_DRIVER_CFLAGS)'; \
	for src in $(ADIO_DRIVER_SRCS); do \
	    obj=`echo $$src | sed "s/\.c$$/.$$suffix.o/"`; \
	    $(MKDIR_P) `dirname $$obj` || exit 1; \
	    test -f $$src && s=$$src || s=$(srcdir)/$$src; \
	    case $$src in *_name.c) extra='$(ADIO_NAME_CPPFLAGS)';; *) extra=;; esac; \
	    $$cc $$cflags $$extra `cat $$romio/driver-cflags` -c $$s -o $$obj || exit 1; \
	done

adio/libstripefs-mpiio.so: $(ADIO_ROMIO_DIR_OMPI)/romio.stamp $(ADIO_DRIVER_SRCS) \
		$(ADIO_DRIVER_HDRS) $(ADIO_NAME_DEPS) adio/exports.map $(ADIO_CLIENT_DEPS)
	@flavour=openmpi cc='$(MPICC_OMPI)' romio='$(ADIO_ROMIO_DIR_OMPI)' suffix=ompi; \
	    $(adio_v_quiet); $(adio_compile_driver)
	$(AM_V_CCLD)$(MPICC_OMPI) -o $@ $(ADIO_OBJS_OMPI) \
	    -Wl,--whole-archive $(ADIO_ROMIO_DIR_OMPI)/libromio.a -Wl,--no-whole-archive \
	    $(ADIO_CLIENT_LIBS) -Wl,-soname,libstripefs-mpiio.so $(ADIO_LINK_FLAGS) -lpthread

adio/libstripefs-mpiio-mpich.so: $(ADIO_ROMIO_DIR_MPICH)/romio.stamp $(ADIO_DRIVER_SRCS) \
		$(ADIO_DRIVER_HDRS) $(ADIO_NAME_DEPS) adio/exports.map $(ADIO_CLIENT_DEPS)
	@flavour=mpich cc='$(MPICC_MPICH)' romio='$(ADIO_ROMIO_DIR_MPICH)' suffix=mpich; \
	    $(adio_v_quiet); $(adio_compile_driver)
	$(AM_V_CCLD)$(MPICC_MPICH) -o $@ $(ADIO_OBJS_MPICH) \
	    -Wl,--whole-archive $(ADIO_ROMIO_DIR_MPICH)/libromio.a -Wl,--no-whole-archive \
	    $(ADIO_CLIENT_LIBS) -Wl,-soname,libstripefs-mpiio-mpich.so $(ADIO_LINK_FLAGS) -lpthread

# Installed into $(libdir) under the names "-lstripefs-mpiio" and
# "-lstripefs-mpiio-mpich" find (see stripefs-run --print-ldflags).
adiolibdir = $(libdir)
nodist_adiolib_DATA = adio/libstripefs-mpiio.so
if BUILD_MPICH
nodist_adiolib_DATA += adio/libstripefs-mpiio-mpich.so
endif
CLEANFILES += adio/libstripefs-mpiio.so $(ADIO_OBJS_OMPI) \
	adio/libstripefs-mpiio-mpich.so $(ADIO_OBJS_MPICH)

# tools/stripefs-run: LD_PRELOAD launcher. One script for the build tree and the
# installation: it uses the build tree's adio/ when it runs from the build
# tree's tools/, else $(libdir).
bin_SCRIPTS += tools/stripefs-run
CLEANFILES += tools/stripefs-run
tools/stripefs-run: $(srcdir)/tools/stripefs-run.in Makefile
	$(AM_V_GEN)$(MKDIR_P) tools && rm -f $@ $@.tmp && \
	sed -e 's|@SFS_BUILD_TOOLSDIR@|$(abs_top_builddir)/tools|g' \
	    -e 's|@SFS_BUILD_LIBDIR@|$(abs_top_builddir)/adio|g' \
	    -e 's|@SFS_BUILD_TOPDIR@|$(abs_top_builddir)|g' \
	    -e 's|@SFS_LIBDIR@|$(libdir)|g' \
	    -e 's|@SFS_VERSION@|$(PACKAGE_VERSION)|g' \
	    $(srcdir)/tools/stripefs-run.in >$@.tmp && chmod +x $@.tmp && mv $@.tmp $@

# ROMIO's build trees are a cache keyed by their stamp: "make clean" keeps
# them (a rebuild costs minutes), "make distclean" removes them, unless they
# are another build tree's (configure --with-romio-build).
.PHONY: adio-distclean-local
distclean-local: adio-distclean-local
adio-distclean-local:
	-test '$(ADIO_ROMIO_DIR)' != '$(abs_top_builddir)/_romio' || \
	    rm -rf $(ADIO_ROMIO_DIR_OMPI) $(ADIO_ROMIO_DIR_MPICH)
	-test '$(ADIO_ROMIO_DIR)' != '$(abs_top_builddir)/_romio' || \
	    rmdir $(ADIO_ROMIO_DIR) 2>/dev/null || :

EXTRA_DIST += adio/build-romio.sh adio/exports.map adio/romio-patches \
	$(ADIO_DRIVER_SRCS) $(ADIO_DRIVER_HDRS) tools/stripefs-run.in tests/romio
