#!/usr/bin/env bash
# HDF5's parallel tests (testpar/ of Debian's hdf5 1.10.8 source, `apt-get
# source` at test time) on stripefs, against Debian's installed
# libhdf5-openmpi: every program of testpar's TEST_PROG_PARA and testpflush.sh
# (t_pflush1 then t_pflush2), each run as testpar's `make check` runs it
# (mpiexec -n N ./prog, a pass is exit status 0) through stripefs-run, with
# HDF5_PARAPREFIX (and HDF5_PREFIX, which t_cache_image's serial half uses)
# on stripefs (stripefs:/stripefs/libsuites/hdf5/prefixed, and in the full pass also
# the plain /stripefs/libsuites/hdf5/plain) and on a local directory as the
# control, as the unprivileged user sfsalice. The order is testpar's:
# t_prestart reads the file t_pshutdown leaves.
#
# Only the tests are built, without configuring HDF5 (tests/libsuites/
# hdf5_testpar.mk: the installed H5pubconf.h is the library's configuration).
# The quick pass (the default) runs a subset with 4 processes, the full pass
# (SFS_LIBSUITES=full) every program with 4 and with 6; see
# tests/libsuites/lib.sh for the switches and the verdicts.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/libsuites/lib.sh"

ls_need_packages libhdf5-openmpi-dev libopenmpi-dev openmpi-bin zlib1g-dev
[ -x "$LS_RUN_TOOL" ] || sfs_skip "$LS_RUN_TOOL is not built (make)"
h5inc=$(dirname "$(dpkg -L libhdf5-openmpi-dev | grep '/openmpi/H5pubconf.h$' | head -n 1)")
h5lib=$(dirname "$(dpkg -L libhdf5-openmpi-dev | grep '/openmpi/libhdf5.so$' | head -n 1)")
[ -f "$h5inc/H5pubconf.h" ] && [ -d "$h5lib" ] ||
    sfs_fail "the installed parallel HDF5's H5pubconf.h or libhdf5.so not found (dpkg -L libhdf5-openmpi-dev)"

# The programs, in testpar's order (testpflush: t_pflush1, then t_pflush2
# checks what it left). testphdf5 stops at its first failed check, so the
# parts that fail on stripefs today also run alone (-o, testframe's "only"),
# each showing its own cause: fltread and cmpdsetr (a file HDF5 writes
# serially, through POSIX, then reads through MPI-IO), atomicity. The quick
# pass runs testphdf5 with a few plain parts only, and those three.
if [ "$LS_MODE" = full ]; then
    programs="t_mpi t_bigio testphdf5 testphdf5[fltread] testphdf5[cmpdsetr] testphdf5[atomicity]
        t_cache t_cache_image t_pread t_pshutdown t_prestart t_init_term t_shapesame
        t_filters_parallel testpflush"
    nps="4 6"
    limit=1800
    phdf5_plain=()
else
    programs="t_mpi testphdf5[plain] testphdf5[fltread] testphdf5[cmpdsetr] testphdf5[atomicity]
        t_pread t_pshutdown t_prestart t_init_term t_filters_parallel testpflush"
    nps="4"
    limit=300
    phdf5_plain=(-o mpiodup -o split -o idsetw -o idsetr -o cdsetw -o cdsetr -o ndsetw -o ngrpw -o ngrpr)
fi

# --- fetch and build (root, in the cache) -------------------------------
ls_lock
ls_fetch hdf5 hdf5
src=$LS_SRC
build="$LS_CACHE/hdf5-build"
mkdir -p "$build" || sfs_fail "mkdir $build"
targets=$(echo "$programs" | sed -e 's/testpflush/t_pflush1 t_pflush2/' -e 's/\[[a-z]*\]//g' | tr ' ' '\n' |
    sort -u | tr '\n' ' ')
ls_log "building testpar's programs ($LS_MODE pass) in $build"
start=$(date +%s)
make -C "$build" -f "$SFS_SRC/tests/libsuites/hdf5_testpar.mk" -j2 HDF5_SRC="$src" HDF5_INC="$h5inc" \
    HDF5_LIB="$h5lib" $targets >"$LS_CACHE/hdf5-make.log" 2>&1 ||
    { tail -n 30 "$LS_CACHE/hdf5-make.log"; sfs_fail "building HDF5's testpar programs failed"; }
linked=$(ldd "$build/t_mpi" | awk '/libhdf5/ {print $3}')
ls_log "test programs ready ($(($(date +%s) - start)) s); linked with $linked"
[ "$(readlink -f "$linked")" = "$(readlink -f "$h5lib/libhdf5.so")" ] ||
    sfs_fail "the test programs are not linked with the installed parallel HDF5 (ldd: '$linked')"
exec 8>&-

# --- run ------------------------------------------------------------------
ls_prepare_service hdf5
home=$(sfs_user_home "$LS_USER")
run="$home/hdf5-run"
mkdir -p "$run/bin" || sfs_fail "mkdir $run"
for p in $targets; do
    cp "$build/$p" "$run/bin/" || sfs_fail "copy $p"
done
chown -R "$LS_USER:$(id -g "$LS_USER")" "$run" || sfs_fail "chown $run"

mpirun_args=(mpirun.openmpi --oversubscribe -x STRIPEFS_CONFIG -x HDF5_PARAPREFIX -x HDF5_PREFIX)
set -f # (the names hold [...]: no globbing of the list)
plist=($programs)
set +f
for np in $nps; do
    for p in "${plist[@]}"; do
        name="np$np/$p"
        args=()
        case $p in
        'testphdf5[plain]') args=("${phdf5_plain[@]}") ;;
        testphdf5\[*) args=(-o "$(echo "$p" | sed 's/.*\[\(.*\)\]/\1/')") ;;
        esac
        p=${p%%\[*}
        ls_selected "$name" || continue
        for side in local $LS_SIDES; do
            dir=$(ls_dir_of "$side")
            # each side in a working directory of its own (a test that
            # ignores the prefix writes there), with the programs in it, as
            # in testpar (t_cache_image execs "t_cache_image" from there)
            if [ ! -d "$run/cwd-$side" ]; then
                mkdir -p "$run/cwd-$side" && chown "$LS_USER" "$run/cwd-$side" || sfs_fail "mkdir $run/cwd-$side"
                for t in $targets; do
                    ln -s "$run/bin/$t" "$run/cwd-$side/$t" || sfs_fail "ln -s $t"
                done
            fi
            if [ "$p" = testpflush ]; then
                # testpflush.sh: t_pflush1 exits without closing its file
                # (on purpose: mpirun's complaints are expected); the
                # result is t_pflush2's
                ls_run hdf5 "$name" "$side" "$limit" env --chdir="$run/cwd-$side" HDF5_PARAPREFIX="$dir" \
                    HDF5_PREFIX="$dir" sh -c '"$@" -np '"$np"' '"$LS_RUN_TOOL"' ./t_pflush1;
                        "$@" -np '"$np"' '"$LS_RUN_TOOL"' ./t_pflush2' sh "${mpirun_args[@]}"
            else
                ls_run hdf5 "$name" "$side" "$limit" env --chdir="$run/cwd-$side" HDF5_PARAPREFIX="$dir" \
                    HDF5_PREFIX="$dir" "${mpirun_args[@]}" -np "$np" "$LS_RUN_TOOL" "./$p" "${args[@]}"
            fi
        done
    done
done
sfs_stop_service
ls_report hdf5
