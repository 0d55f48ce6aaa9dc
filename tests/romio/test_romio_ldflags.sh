#!/bin/bash
# (e) stripefs-run --print-ldflags: a program linked with the library before
# libmpi uses ROMIO without LD_PRELOAD.
. "$SFS_SRC/tests/romio/lib.sh"
need_ompi
unset STRIPEFS_CONFIG STRIPEFS_MGMT STRIPEFS_CONNAUTH
cd "$SFS_TEST_TMP"
flags=$("$RUN_TOOL" --print-ldflags --mpi=openmpi) || fail "stripefs-run --print-ldflags failed"
echo "ldflags (openmpi): $flags"
prog=$(build_prog openmpi romio_probe $flags)
readelf -d "$prog" | grep -q 'NEEDED.*libstripefs-mpiio.so' || fail "the program does not need libstripefs-mpiio.so"
ok "the program is linked with libstripefs-mpiio.so"
env -u LD_PRELOAD timeout "$MPI_TIMEOUT" mpirun.openmpi --allow-run-as-root --oversubscribe -np 2 \
    "$prog" plain stripefs:/x >out 2>&1 || { cat out; fail "linked program failed"; }
cat out
expect_line out '^romio_filesystem_type: UFS' "without LD_PRELOAD, the linked program's MPI-IO is ROMIO"
expect_line out "^error string: stripefs:/x: no stripefs service configured" "and it knows stripefs: paths"

if [ -f "$LIB_MPICH" ] && command -v mpicc.mpich >/dev/null 2>&1; then
    flags=$("$RUN_TOOL" --print-ldflags --mpi=mpich) || fail "stripefs-run --print-ldflags --mpi=mpich failed"
    echo "ldflags (mpich): $flags"
    progm=$(build_prog mpich romio_collrw $flags)
    env -u LD_PRELOAD timeout "$MPI_TIMEOUT" mpiexec.mpich -n 2 "$progm" f 512 4 >outm 2>&1 ||
        { cat outm; fail "linked MPICH program failed"; }
    cat outm
    expect_line outm '^romio_standalone: true$' "MPICH: without LD_PRELOAD, the linked program's MPI-IO is the library's ROMIO"
fi
