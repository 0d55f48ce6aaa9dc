# benchmarks/: the programs the benchmark scripts run (benchmarks/README.md).
# Neither `make` nor `make check` builds them: `make bench` does (the scripts
# run it), in a few seconds, once the rest of the build is there.
#
#   sfs_bench_io    IOR-style MPI-IO bandwidth (run under stripefs-run; plain
#                   paths go through ROMIO's ufs driver of the same library)
#   sfs_bench_md    mdtest's phases and shapes (POSIX; stripefs through the preload)
#   sfs_bench_read  one client's read bandwidth through the client library
#   sfs_bench_find  the find phase of the IO500 shapes (POSIX; parallel walk)
#   sfs_bench_lat   one process's latency of create, stat, unlink (POSIX)
#   sfs_bench_mirror  one client's mirrored writes: primary forwarding against
#                   the client writing both copies (mirror.sh)
SFS_BENCH_PROGS = benchmarks/sfs_bench_io benchmarks/sfs_bench_md benchmarks/sfs_bench_read \
	benchmarks/sfs_bench_find benchmarks/sfs_bench_lat benchmarks/sfs_bench_mirror

# -O2 whatever CFLAGS say; the MPI-IO driver never has the sanitizers' runtime
# (the library it runs with is preloaded), so neither has sfs_bench_io.
SFS_BENCH_CFLAGS = $(SFS_CFLAGS) $(CFLAGS) -O2
# sizes on the command line ("64K", "16MiB") are parsed as in configs
SFS_BENCH_UNITS = -I$(top_srcdir)/common $(top_srcdir)/common/sfs_units.c $(top_srcdir)/common/sfs_errno.c
SFS_BENCH_CLIENT = -I$(top_srcdir)/client/include -L$(top_builddir)/.libs -lstripefs \
	-Wl,-rpath,$(abs_top_builddir)/.libs $(SFS_LDFLAGS)

.PHONY: bench
bench: $(SFS_BENCH_PROGS)

benchmarks/sfs_bench_io: benchmarks/sfs_bench_io.c common/sfs_units.c
	@$(MKDIR_P) benchmarks
	$(AM_V_CCLD)cflags=`echo '$(SFS_BENCH_CFLAGS)' | \
	    sed 's/-fsanitize=[^ ]*//g; s/-fno-sanitize-recover=[^ ]*//g'`; \
	$(MPICC_OMPI) $$cflags -o $@ $(srcdir)/benchmarks/sfs_bench_io.c $(SFS_BENCH_UNITS)

# sfs_bench_md neither: on stripefs it runs under stripefs-run, which preloads
# the runtime for the libraries when they have it.
benchmarks/sfs_bench_md: benchmarks/sfs_bench_md.c
	@$(MKDIR_P) benchmarks
	$(AM_V_CCLD)cflags=`echo '$(SFS_BENCH_CFLAGS)' | \
	    sed 's/-fsanitize=[^ ]*//g; s/-fno-sanitize-recover=[^ ]*//g'`; \
	$(MPICC_OMPI) $$cflags -o $@ $(srcdir)/benchmarks/sfs_bench_md.c

# sfs_bench_find: like sfs_bench_md (POSIX, stripefs through stripefs-run)
benchmarks/sfs_bench_find: benchmarks/sfs_bench_find.c
	@$(MKDIR_P) benchmarks
	$(AM_V_CCLD)cflags=`echo '$(SFS_BENCH_CFLAGS)' | \
	    sed 's/-fsanitize=[^ ]*//g; s/-fno-sanitize-recover=[^ ]*//g'`; \
	$(MPICC_OMPI) $$cflags -o $@ $(srcdir)/benchmarks/sfs_bench_find.c

# sfs_bench_lat: plain POSIX, no MPI (stripefs through the preload)
benchmarks/sfs_bench_lat: benchmarks/sfs_bench_lat.c
	@$(MKDIR_P) benchmarks
	$(AM_V_CCLD)cflags=`echo '$(SFS_BENCH_CFLAGS)' | \
	    sed 's/-fsanitize=[^ ]*//g; s/-fno-sanitize-recover=[^ ]*//g'`; \
	$(CC) $$cflags -o $@ $(srcdir)/benchmarks/sfs_bench_lat.c

benchmarks/sfs_bench_read: benchmarks/sfs_bench_read.c common/sfs_units.c libstripefs.la
	@$(MKDIR_P) benchmarks
	$(AM_V_CCLD)$(CC) $(SFS_BENCH_CFLAGS) -o $@ $(srcdir)/benchmarks/sfs_bench_read.c \
	    $(SFS_BENCH_UNITS) $(SFS_BENCH_CLIENT)

benchmarks/sfs_bench_mirror: benchmarks/sfs_bench_mirror.c common/sfs_units.c libstripefs.la
	@$(MKDIR_P) benchmarks
	$(AM_V_CCLD)$(CC) $(SFS_BENCH_CFLAGS) -o $@ $(srcdir)/benchmarks/sfs_bench_mirror.c \
	    $(SFS_BENCH_UNITS) $(SFS_BENCH_CLIENT)

CLEANFILES += $(SFS_BENCH_PROGS)
EXTRA_DIST += benchmarks/README.md benchmarks/sfs_bench_io.c benchmarks/sfs_bench_md.c \
	benchmarks/sfs_bench_read.c benchmarks/sfs_bench_lat.c benchmarks/create_latency.sh benchmarks/lib.sh benchmarks/bw.sh benchmarks/ucx.sh benchmarks/ucx_cluster.sh benchmarks/ucx_summary.py benchmarks/bw_summary.py benchmarks/users.sh \
	benchmarks/md.sh benchmarks/scaling.sh benchmarks/plot.sh benchmarks/run-all.sh benchmarks/atomic.sh \
	benchmarks/sfs_bench_find.c benchmarks/io500.sh \
	benchmarks/sfs_bench_mirror.c benchmarks/mirror.sh benchmarks/failover.sh
