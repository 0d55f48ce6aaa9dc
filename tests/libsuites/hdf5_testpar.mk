# Builds HDF5's parallel test programs (testpar/) and the small test library
# they need (test/h5test.c and friends, as test/Makefile.am's libh5test)
# against the installed parallel HDF5, without configuring HDF5: the
# installed H5pubconf.h (HDF5_INC) is the configuration the library was
# built with, and H5srcdir_str.h, the one file configure would generate
# for the tests, is written here.
#   make -f hdf5_testpar.mk -C BUILD_DIR HDF5_SRC=... HDF5_INC=... HDF5_LIB=... [PROGRAMS...]
HDF5_SRC ?= $(error HDF5_SRC: the unpacked hdf5 source)
# (Open MPI's; MPICH's: HDF5_INC=/usr/include/hdf5/mpich
# HDF5_LIB=/usr/lib/x86_64-linux-gnu/hdf5/mpich MPICC=mpicc.mpich)
HDF5_INC ?= /usr/include/hdf5/openmpi
HDF5_LIB ?= /usr/lib/x86_64-linux-gnu/hdf5/openmpi
MPICC    ?= mpicc.openmpi
CFLAGS   ?= -O1 -g -w
# The library's own preprocessor flags (libhdf5.settings, H5_CPPFLAGS): the
# tests include private headers (H5Cpkg.h...) whose structures change with
# NDEBUG (H5C_DO_SANITY_CHECKS, H5C_COLLECT_CACHE_STATS); built without it,
# t_cache_image reads the wrong fields of the library's H5C_t
# ("mdci sb extension message not present?") and t_cache does not finish.
H5_CPPFLAGS ?= $(shell sed -n 's/^ *H5_CPPFLAGS: *//p' $(HDF5_LIB)/libhdf5.settings)

CPPFLAGS = -I. -I$(HDF5_SRC)/src -I$(HDF5_SRC)/test -I$(HDF5_SRC)/testpar -I$(HDF5_INC) $(H5_CPPFLAGS)
LIBS     = libh5test.a -L$(HDF5_LIB) -Wl,-rpath,$(HDF5_LIB) -lhdf5 -lz -lm

# testpar/Makefile.am: TEST_PROG_PARA, and t_pflush1/2 of testpflush.sh
PROGRAMS = t_mpi t_bigio testphdf5 t_cache t_cache_image t_pread t_pshutdown t_prestart \
	t_init_term t_shapesame t_filters_parallel t_pflush1 t_pflush2
H5TEST   = h5test testframe cache_common swmr_common external_common
TESTPHDF5 = testphdf5 t_dset t_file t_file_image t_mdset t_ph5basic t_coll_chunk t_span_tree \
	t_chunk_alloc t_filter_read t_prop t_coll_md_read

all: $(PROGRAMS)

# the objects are rebuilt when the compiler or its flags change (a cache
# built before H5_CPPFLAGS was added, or another MPI's build)
FLAGS_NOW := $(MPICC) $(CPPFLAGS) $(CFLAGS)
build-flags: FORCE
	@echo '$(FLAGS_NOW)' | cmp -s - $@ || echo '$(FLAGS_NOW)' >$@

H5srcdir_str.h:
	echo 'static const char *config_srcdir = "$(HDF5_SRC)/testpar";' >$@

%.o: $(HDF5_SRC)/test/%.c H5srcdir_str.h build-flags
	$(MPICC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<
%.o: $(HDF5_SRC)/testpar/%.c H5srcdir_str.h build-flags
	$(MPICC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

libh5test.a: $(H5TEST:=.o)
	rm -f $@ && ar rcs $@ $^

testphdf5: $(TESTPHDF5:=.o) libh5test.a
	$(MPICC) $(CFLAGS) -o $@ $(TESTPHDF5:=.o) $(LIBS)
$(filter-out testphdf5,$(PROGRAMS)): %: %.o libh5test.a
	$(MPICC) $(CFLAGS) -o $@ $< $(LIBS)

.PHONY: all FORCE
FORCE:
