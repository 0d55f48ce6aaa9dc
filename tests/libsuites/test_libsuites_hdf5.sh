#!/usr/bin/env bash
# HDF5's parallel tests (testpar/ of Debian's hdf5 1.10.8 source, `apt-get
# source` at test time) on stripefs, against Debian's installed parallel
# HDF5 of each MPI Debian builds it for: libhdf5-openmpi (mpirun.openmpi)
# and libhdf5-mpich (mpiexec.mpich; tests named mpich/...): every program of
# testpar's TEST_PROG_PARA and testpflush.sh (t_pflush1 then t_pflush2),
# each run as testpar's `make check` runs it (mpiexec -n N ./prog, a pass is
# exit status 0) through stripefs-run, with HDF5_PARAPREFIX (and
# HDF5_PREFIX, which t_cache_image's serial half uses) on stripefs
# (stripefs:/stripefs/libsuites/hdf5/prefixed, and in the full pass also the
# plain /stripefs/libsuites/hdf5/plain) and on a local directory as the
# control, as the unprivileged user sfsalice. The order is testpar's:
# t_prestart reads the file t_pshutdown leaves.
#
# Only the tests are built, without configuring HDF5 (tests/libsuites/
# hdf5_testpar.mk: the installed H5pubconf.h and libhdf5.settings's
# H5_CPPFLAGS are the library's configuration). The quick pass (the
# default) runs a subset with 4 processes (MPICH: a smaller one), the full
# pass (SFS_LIBSUITES=full) every program with 4 and with 6, with both MPIs;
# see tests/libsuites/lib.sh for the switches and the verdicts.
#
# Settings the runs use (as testpar's own `make check` would, on a
# machine with fewer cores than processes): Open MPI with
# --oversubscribe and mpi_yield_when_idle=1 (a waiting rank yields its core
# instead of spinning for its whole time slice); HDF5TestExpress is left
# unset (testframe's default, 1, as testpar's make check: t_cache's express
# test with a tenth of its entries, t_bigio without its coll_chunk tests,
# t_shapesame running one in five of its checks).
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/libsuites/lib.sh"

ls_need_packages libhdf5-openmpi-dev libopenmpi-dev openmpi-bin libhdf5-mpich-dev libmpich-dev mpich zlib1g-dev
[ -x "$LS_RUN_TOOL" ] || sfs_skip "$LS_RUN_TOOL is not built (make)"
flavours=openmpi
if [ -f "$SFS_BUILD/adio/libstripefs-mpiio-mpich.so" ]; then
    flavours="openmpi mpich"
else
    echo "note: no MPICH build of the MPI-IO library (libstripefs-mpiio-mpich.so): Open MPI only"
fi
declare -A h5inc=() h5lib=()
for fl in $flavours; do
    h5inc[$fl]=$(dirname "$(dpkg -L "libhdf5-$fl-dev" | grep "/$fl/H5pubconf.h\$" | head -n 1)")
    h5lib[$fl]=$(dirname "$(dpkg -L "libhdf5-$fl-dev" | grep "/$fl/libhdf5.so\$" | head -n 1)")
    [ -f "${h5inc[$fl]}/H5pubconf.h" ] && [ -f "${h5lib[$fl]}/libhdf5.settings" ] ||
        sfs_fail "the installed parallel HDF5's H5pubconf.h or libhdf5.settings not found (dpkg -L libhdf5-$fl-dev)"
done

# The programs, in testpar's order (testpflush: t_pflush1, then t_pflush2
# checks what it left). testphdf5 stops at its first failed check, so the
# parts that failed on stripefs before issue 16 also run alone (-o,
# testframe's "only"), each showing its own cause: fltread and cmpdsetr (a
# file HDF5 writes serially, through POSIX, then reads through MPI-IO),
# atomicity. The quick pass runs testphdf5 with a few plain parts only, and
# those three; with MPICH, only t_mpi (MPI-IO through MPICH's build of the
# driver) and t_pshutdown/t_prestart (a file still open at MPICH's
# MPI_Finalize), which need neither testphdf5's long build nor a long run.
if [ "$LS_MODE" = full ]; then
    programs="t_mpi t_bigio testphdf5 testphdf5[fltread] testphdf5[cmpdsetr] testphdf5[atomicity]
        t_cache t_cache_image t_pread t_pshutdown t_prestart t_init_term t_shapesame
        t_filters_parallel testpflush"
    programs_mpich=$programs
    nps="4 6"
    limit=3600 # (t_cache_image: 15 to 30 minutes a side on 2 loaded cores)
    phdf5_plain=()
else
    programs="t_mpi testphdf5[plain] testphdf5[fltread] testphdf5[cmpdsetr] testphdf5[atomicity]
        t_pread t_pshutdown t_prestart t_init_term t_filters_parallel testpflush"
    programs_mpich="t_mpi t_pshutdown t_prestart"
    nps="4"
    limit=300
    phdf5_plain=(-o mpiodup -o split -o idsetw -o idsetr -o cdsetw -o cdsetr -o ndsetw -o ngrpw -o ngrpr)
fi
# the program names make must build for a list
targets_of() { echo "$1" | sed -e 's/testpflush/t_pflush1 t_pflush2/' -e 's/\[[a-z]*\]//g' | tr ' ' '\n' | sort -u | tr '\n' ' '; }

# --- fetch and build (root, in the cache) -------------------------------
ls_lock
ls_fetch hdf5 hdf5
src=$LS_SRC
declare -A build=([openmpi]="$LS_CACHE/hdf5-build" [mpich]="$LS_CACHE/hdf5-build-mpich")
for fl in $flavours; do
    list=$programs
    [ "$fl" = mpich ] && list=$programs_mpich
    targets=$(targets_of "$list")
    mkdir -p "${build[$fl]}" || sfs_fail "mkdir ${build[$fl]}"
    ls_log "building testpar's programs for $fl ($LS_MODE pass) in ${build[$fl]}"
    start=$(date +%s)
    make -C "${build[$fl]}" -f "$SFS_SRC/tests/libsuites/hdf5_testpar.mk" -j2 HDF5_SRC="$src" \
        HDF5_INC="${h5inc[$fl]}" HDF5_LIB="${h5lib[$fl]}" MPICC="mpicc.$fl" $targets \
        >"$LS_CACHE/hdf5-make-$fl.log" 2>&1 ||
        { tail -n 30 "$LS_CACHE/hdf5-make-$fl.log"; sfs_fail "building HDF5's testpar programs ($fl) failed"; }
    linked=$(ldd "${build[$fl]}/t_mpi" | awk '/libhdf5/ {print $3}')
    ls_log "$fl test programs ready ($(($(date +%s) - start)) s); linked with $linked"
    [ "$(readlink -f "$linked")" = "$(readlink -f "${h5lib[$fl]}/libhdf5.so")" ] ||
        sfs_fail "the $fl test programs are not linked with the installed parallel HDF5 (ldd: '$linked')"
done
exec 8>&-

# --- run ------------------------------------------------------------------
ls_prepare_service hdf5
home=$(sfs_user_home "$LS_USER")
run="$home/hdf5-run"
for fl in $flavours; do
    list=$programs
    [ "$fl" = mpich ] && list=$programs_mpich
    mkdir -p "$run/bin-$fl" || sfs_fail "mkdir $run/bin-$fl"
    for p in $(targets_of "$list"); do
        cp "${build[$fl]}/$p" "$run/bin-$fl/" || sfs_fail "copy $fl's $p"
    done
done
chown -R "$LS_USER:$(id -g "$LS_USER")" "$run" || sfs_fail "chown $run"

declare -A launcher=(
    [openmpi]="mpirun.openmpi --oversubscribe --mca mpi_yield_when_idle 1 -x STRIPEFS_CONFIG -x HDF5_PARAPREFIX -x HDF5_PREFIX -np"
    [mpich]="mpiexec.mpich -n")
for fl in $flavours; do
    list=$programs
    [ "$fl" = mpich ] && list=$programs_mpich
    # shellcheck disable=SC2206
    mpirun_args=(${launcher[$fl]})
    set -f # (the names hold [...]: no globbing of the list)
    # shellcheck disable=SC2206
    plist=($list)
    set +f
    for np in $nps; do
        for p in "${plist[@]}"; do
            name="np$np/$p"
            [ "$fl" = mpich ] && name="mpich/$name"
            args=()
            case $p in
            'testphdf5[plain]') args=("${phdf5_plain[@]}") ;;
            testphdf5\[*) args=(-o "$(echo "$p" | sed 's/.*\[\(.*\)\]/\1/')") ;;
            esac
            p=${p%%\[*}
            ls_selected "$name" || continue
            for side in local $LS_SIDES; do
                dir=$(ls_dir_of "$side")
                # each side and MPI in a working directory of its own (a
                # test that ignores the prefix writes there), with the
                # programs in it, as in testpar: t_cache_image's rank 0 forks
                # and execs "t_cache_image" from there (its serial setup)
                cwd="$run/cwd-$fl-$side"
                if [ ! -d "$cwd" ]; then
                    mkdir -p "$cwd" && chown "$LS_USER" "$cwd" || sfs_fail "mkdir $cwd"
                    for t in "$run/bin-$fl"/*; do
                        ln -s "$t" "$cwd/" || sfs_fail "ln -s $t"
                    done
                fi
                if [ "$p" = testpflush ]; then
                    # testpflush.sh: t_pflush1 exits without closing its file
                    # (on purpose: mpirun's complaints are expected); the
                    # result is t_pflush2's
                    ls_run hdf5 "$name" "$side" "$limit" env --chdir="$cwd" HDF5_PARAPREFIX="$dir" \
                        HDF5_PREFIX="$dir" sh -c '"$@" '"$np"' '"$LS_RUN_TOOL"' ./t_pflush1;
                            "$@" '"$np"' '"$LS_RUN_TOOL"' ./t_pflush2' sh "${mpirun_args[@]}"
                else
                    ls_run hdf5 "$name" "$side" "$limit" env --chdir="$cwd" HDF5_PARAPREFIX="$dir" \
                        HDF5_PREFIX="$dir" "${mpirun_args[@]}" "$np" "$LS_RUN_TOOL" "./$p" "${args[@]}"
                fi
            done
        done
    done
done
sfs_stop_service
ls_report hdf5
