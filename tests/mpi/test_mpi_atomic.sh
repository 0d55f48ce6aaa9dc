#!/usr/bin/env bash
# MPI atomic mode (MPI_File_set_atomicity) on stripefs, as an ordinary user:
# 4 ranks write overlapping strided regions at once, each its own byte
# (tests/mpi/mpi_atomic_check.c), and after every iteration the file must be
# what some serial order of the whole writes gives, for independent and for
# collective writes, with Open MPI (and independent ones with MPICH). The same
# without atomic mode shows what the locks prevent (interleaved writes) when it
# happens, and what they cost. A local directory (ROMIO's ufs driver, fcntl
# locks) is the control.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
run_tool="$SFS_BUILD/tools/stripefs-run"
[ -f "$SFS_BUILD/adio/libstripefs-mpiio.so" ] || sfs_fail "the MPI-IO library is not built"
sfs_test_users
prog="$SFS_TEST_TMP/mpi_atomic_check"
mpicc.openmpi -O2 -o "$prog" "$SFS_SRC/tests/mpi/mpi_atomic_check.c" || sfs_fail "compile"
chmod 755 "$prog"
NP=4
ITER=${SFS_ATOMIC_ITERATIONS:-8}
BLOCK=65536 # 32 blocks every 128 KiB: 4 MiB of file, over the 4 targets
NBLOCKS=32

sfs_start_service 3 --targets 4
sfs_ctl mkdir /atomic && sfs_ctl chmod 1777 /atomic || sfs_fail "mkdir /atomic (1777)"
mkdir -p "$SFS_TEST_TMP/local" && chmod 1777 "$SFS_TEST_TMP/local"

run() { # file mode path -> the RESULT line in $SFS_TEST_TMP/last.out
    sfs_as sfsalice "${SFS_MPIRUN[@]}" -np $NP -x STRIPEFS_CONFIG "$run_tool" "$prog" "$1" "$2" \
        "$3" "$ITER" $BLOCK $NBLOCKS >"$SFS_TEST_TMP/last.out" 2>&1
    local rc=$?
    grep -v '^\[' "$SFS_TEST_TMP/last.out" | tail -5
    return $rc
}
field() { # name: from the RESULT line
    sed -n "s/^RESULT.* $1=\([^ ]*\).*/\1/p" "$SFS_TEST_TMP/last.out"
}

# the control: the program's check holds on a local directory
run "$SFS_TEST_TMP/local/ufs" atomic indep || sfs_fail "atomic mode on a local directory (control)"
sfs_expect_eq "$(field not_serial)" 0 "iterations not a serial order, local directory, atomic"

for path in indep coll; do
    run stripefs:/atomic/$path atomic $path || sfs_fail "atomic mode, $path writes, on stripefs:"
    sfs_expect_eq "$(field not_serial)" 0 "iterations not a serial order, stripefs, atomic, $path"
    sfs_expect_eq "$(field iterations)" "$ITER" "iterations run ($path)"
    echo "ok: atomic mode, $path: every one of $ITER iterations of 4 overlapping strided writers is a serial order"
    eval "atomic_$path=$(field write_s_mean)"
done

# MPICH's ROMIO with the same driver (libstripefs-mpiio-mpich.so), where built
if command -v mpicc.mpich >/dev/null && [ -f "$SFS_BUILD/adio/libstripefs-mpiio-mpich.so" ]; then
    mpicc.mpich -O2 -o "$prog.mpich" "$SFS_SRC/tests/mpi/mpi_atomic_check.c" || sfs_fail "compile (MPICH)"
    chmod 755 "$prog.mpich"
    sfs_as sfsalice mpiexec.mpich -n $NP "$run_tool" "$prog.mpich" stripefs:/atomic/mpich atomic indep \
        "$ITER" $BLOCK $NBLOCKS >"$SFS_TEST_TMP/last.out" 2>&1 ||
        { tail -5 "$SFS_TEST_TMP/last.out"; sfs_fail "atomic mode with MPICH"; }
    grep '^RESULT' "$SFS_TEST_TMP/last.out"
    sfs_expect_eq "$(field not_serial)" 0 "iterations not a serial order, stripefs, atomic, MPICH"
else
    echo "note: MPICH or libstripefs-mpiio-mpich.so missing: atomic mode checked with Open MPI only"
fi

run stripefs:/atomic/nonatomic nonatomic indep || sfs_fail "non-atomic run on stripefs:"
nonatomic_bad=$(field not_serial)
nonatomic=$(field write_s_mean)
if [ "${nonatomic_bad:-0}" -gt 0 ]; then
    echo "ok: without atomic mode $nonatomic_bad of $ITER iterations interleaved (not a serial order): the locks are needed"
else
    echo "note: without atomic mode no iteration happened to interleave this time"
fi
echo "ok: cost: independent writes take ${atomic_indep}s with atomic mode, ${nonatomic}s without (mean of $ITER; collective atomic ${atomic_coll}s)"
sfs_ctl ls -l /atomic | grep -q "sfsalice.*indep" || sfs_fail "the files are not sfsalice's"
sfs_stop_service
