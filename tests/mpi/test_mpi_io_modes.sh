#!/usr/bin/env bash
# Permission bits of files created through MPI-IO (tests/mpi/mpi_mode_check.c),
# with Open MPI and MPICH, under umask 022 and 027: on stripefs they must be
# 0666 & ~umask, what the same program gets on a local directory through
# ROMIO's ufs driver (there the kernel decides), and MPI_MODE_CREATE on an
# existing file must leave its mode alone. (Before the fix every file came out
# 07777, -rwsrwsrwt: the driver passed ROMIO's "no permission given", -1.)
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
run_tool="$SFS_BUILD/tools/stripefs-run"
[ -f "$SFS_BUILD/adio/libstripefs-mpiio.so" ] || sfs_fail "the MPI-IO library is not built"

mpicc.openmpi -O2 -o "$SFS_TEST_TMP/modes_ompi" "$SFS_SRC/tests/mpi/mpi_mode_check.c" ||
    sfs_fail "compile (Open MPI)"
have_mpich=0
if command -v mpicc.mpich >/dev/null && [ -f "$SFS_BUILD/adio/libstripefs-mpiio-mpich.so" ]; then
    mpicc.mpich -O2 -o "$SFS_TEST_TMP/modes_mpich" "$SFS_SRC/tests/mpi/mpi_mode_check.c" ||
        sfs_fail "compile (MPICH)"
    have_mpich=1
fi

sfs_start_service 2 --targets 2

# the permission bits of a stripefs file, as stripefs-ctl stat shows them
sfs_mode() {
    sfs_ctl stat "$1" | sed -n 's/.*Mode: (\([0-7]*\)\/.*/\1/p'
}

# run_modes FLAVOUR NP UMASK: the program on stripefs and on a local
# directory under UMASK, then every file's mode compared
run_modes() {
    local flavour=$1 np=$2 mask=$3 name=$1-$3 launcher
    local local_dir="$SFS_TEST_TMP/local/$name" want
    want=$(printf '%04o' $((0666 & ~0$mask)))
    mkdir -p "$local_dir"
    sfs_ctl mkdir "/$name" || sfs_fail "mkdir /$name"
    if [ "$flavour" = ompi ]; then
        launcher=(mpirun.openmpi --oversubscribe -x STRIPEFS_CONFIG -np "$np")
    else
        launcher=(mpiexec.mpich -n "$np")
    fi
    for target in "stripefs:/$name" "$local_dir"; do
        (umask "$mask" && timeout 300 "${launcher[@]}" "$run_tool" "$SFS_TEST_TMP/modes_$flavour" \
            "$target") >"$SFS_TEST_TMP/$name.out" 2>&1
        rc=$?
        cat "$SFS_TEST_TMP/$name.out"
        [ $rc = 0 ] || sfs_fail "mpi_mode_check $target with $flavour under umask $mask (exit $rc)"
    done
    files="coll kept"
    for r in $(seq 0 $((np - 1))); do
        files="$files indep_$r"
    done
    for f in $files; do
        local expected=$want got kernel
        [ "$f" = kept ] && expected=0604
        got=$(sfs_mode "/$name/$f")
        kernel=$(stat -c %04a "$local_dir/$f")
        sfs_expect_eq "$kernel" "$expected" "mode of the local (ufs) $f with $flavour, umask $mask"
        sfs_expect_eq "$got" "$kernel" "mode of stripefs:/$name/$f with $flavour, umask $mask"
    done
    echo "ok: $flavour, umask $mask: $(echo $files | wc -w) files created through MPI-IO have" \
        "mode $want (0604 kept by MPI_MODE_CREATE of an existing file), as on a local directory"
}

run_modes ompi 3 022
run_modes ompi 3 027
if [ $have_mpich = 1 ]; then
    run_modes mpich 2 022
    run_modes mpich 2 027
else
    echo "note: MPICH or libstripefs-mpiio-mpich.so missing: only Open MPI checked"
fi
sfs_ctl ls -l /ompi-027
sfs_stop_service
