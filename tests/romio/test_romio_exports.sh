#!/bin/bash
# (f) The libraries export only MPI_*/PMPI_* (dynamic symbols) and have no
# undefined symbols (ldd -r).
. "$SFS_SRC/tests/romio/lib.sh"
[ -f "$LIB_OMPI" ] || skip "$LIB_OMPI not built (run make)"
libs=$LIB_OMPI
[ -f "$LIB_MPICH" ] && libs="$libs $LIB_MPICH"
for lib in $libs; do
    name=$(basename "$lib")
    nm -D --defined-only "$lib" | awk '{print $NF}' >"$SFS_TEST_TMP/$name.syms"
    bad=$(grep -Ev '^P?MPI_' "$SFS_TEST_TMP/$name.syms" || true)
    [ -z "$bad" ] || fail "$name exports symbols other than MPI_*/PMPI_*: $(echo $bad | head -c 300)"
    nfile=$(grep -c '^MPI_File_' "$SFS_TEST_TMP/$name.syms")
    npfile=$(grep -c '^PMPI_File_' "$SFS_TEST_TMP/$name.syms")
    others=$(grep -Ev '^P?MPI_File_' "$SFS_TEST_TMP/$name.syms" | tr '\n' ' ')
    [ "$nfile" -ge 80 ] && [ "$npfile" -ge 80 ] || fail "$name exports too few MPI_File_* ($nfile) / PMPI_File_* ($npfile)"
    ok "$name exports only MPI_*/PMPI_*: $nfile MPI_File_*, $npfile PMPI_File_*, and: $others"
    undef=$(ldd -r "$lib" 2>&1 | grep -i 'undefined symbol' || true)
    [ -z "$undef" ] || fail "$name: ldd -r reports: $undef"
    ok "$name: ldd -r reports no undefined symbols"
done
