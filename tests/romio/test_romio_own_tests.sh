#!/usr/bin/env bash
# ROMIO's own test programs (src/mpi/romio/test of the ROMIO source the build
# used) on stripefs: paths against a real service. Those that use MPI-1 names
# Open MPI no longer declares (MPI_LB/MPI_UB) run with MPICH. atomicity
# passes through the metadata server's byte-range locks (docs/atomic-mode.md).
# The one below behaves differently on stripefs by design, and the test checks
# that it does so in the documented way:
#   file_info          stripefs reports a file's real striping_factor, not the
#                      hint given when opening an existing file
# Every program compiled here is run, and each one either passes or differs
# in its documented way (the counts at the end are counted, not assumed).
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
romio_src=$(sed -n 's/^ROMIO_SRC = //p' "$SFS_BUILD/Makefile")
tests_dir="$romio_src/test"
[ -f "$tests_dir/simple.c" ] || sfs_fail "ROMIO's tests not found in '$tests_dir' (ROMIO_SRC of the build)"
run_tool="$SFS_BUILD/tools/stripefs-run"
bin="$SFS_TEST_TMP/bin"
mkdir -p "$bin"

ompi_tests="simple async async-multiple coll_test excl split_coll psimple error status creat_excl
    aggregation1 aggregation2 hindexed big_extents atomicity shared_fp ordered_fp darray_read
    file_info"
mpich_tests="noncontig noncontig_coll noncontig_coll2 i_noncontig types_with_zeros"
for t in $ompi_tests; do
    mpicc.openmpi -O1 -w -o "$bin/$t.ompi" "$tests_dir/$t.c" || sfs_fail "compile $t"
done
for t in $mpich_tests; do
    mpicc.mpich -O1 -w -o "$bin/$t.mpich" "$tests_dir/$t.c" || sfs_fail "compile $t (MPICH)"
done

sfs_start_service 3 --targets 4
sfs_ctl mkdir /romio || sfs_fail "mkdir"
passed=0
differ=()
ran=()
run_one() { # name flavour np args...
    local name=$1 flavour=$2 np=$3 out="$SFS_TEST_TMP/$1.out"
    shift 3
    ran+=("$name")
    if [ "$flavour" = ompi ]; then
        timeout 300 "${SFS_MPIRUN[@]}" -x STRIPEFS_CONFIG -np "$np" "$run_tool" "$bin/$name.ompi" "$@" >"$out" 2>&1
    else
        timeout 300 mpiexec.mpich -n "$np" "$run_tool" "$bin/$name.mpich" "$@" >"$out" 2>&1
    fi
}
expect_pass() { # name flavour np args...
    local name=$1
    run_one "$@"
    if grep -qi "No Errors" "$SFS_TEST_TMP/$name.out"; then
        passed=$((passed + 1))
        echo "ok: $name passes on stripefs: ($2)"
    else
        cat "$SFS_TEST_TMP/$name.out" | grep -v '^\[' | head -20
        sfs_fail "ROMIO test $name failed on stripefs:"
    fi
}
for t in simple async async-multiple coll_test excl split_coll psimple error status creat_excl; do
    expect_pass "$t" ompi 4 -fname "stripefs:/romio/$t"
done
expect_pass aggregation1 ompi 4 -h -f stripefs:/romio/aggregation1
expect_pass aggregation2 ompi 4 stripefs:/romio/aggregation2
expect_pass hindexed ompi 4 stripefs:/romio/hindexed
expect_pass big_extents ompi 2 stripefs:/romio/big_extents
for t in noncontig noncontig_coll i_noncontig types_with_zeros; do
    expect_pass "$t" mpich 2 -fname "stripefs:/romio/$t"
done
expect_pass noncontig_coll2 mpich 4 -fname stripefs:/romio/noncontig_coll2

expect_pass atomicity ompi 4 -fname stripefs:/romio/atomicity
expect_pass shared_fp ompi 4 -fname stripefs:/romio/shared_fp
expect_pass ordered_fp ompi 4 -fname stripefs:/romio/ordered_fp
expect_pass darray_read ompi 4 -fname stripefs:/romio/darray_read
run_one file_info ompi 4 -v -fname stripefs:/romio/file_info
grep -q "striping_factor is 4; should be" "$SFS_TEST_TMP/file_info.out" \
    || { cat "$SFS_TEST_TMP/file_info.out"; sfs_fail "file_info differs in an undocumented way"; }
[ "$(grep "should be" "$SFS_TEST_TMP/file_info.out" | grep -vc "striping_factor is 4")" = 0 ] \
    || { cat "$SFS_TEST_TMP/file_info.out"; sfs_fail "file_info finds more than the striping_factor difference"; }
differ+=(file_info)
echo "ok: file_info: only difference: the real striping_factor (4) is reported"

# every program compiled was run once, and passed or differed as documented
all=$(echo $ompi_tests $mpich_tests | tr ' ' '\n' | sort | tr '\n' ' ')
sfs_expect_eq "$(printf '%s\n' "${ran[@]}" | sort | tr '\n' ' ')" "$all" "ROMIO test programs run"
sfs_expect_eq "$(printf '%s\n' "${differ[@]}" | sort | tr '\n' ' ')" "file_info " "programs that differ as documented"
sfs_expect_eq "$((passed + ${#differ[@]}))" "${#ran[@]}" "programs that passed or differ as documented"
echo "ok: $passed of ROMIO's ${#ran[@]} test programs pass on stripefs:, ${#differ[@]} differ as documented (${differ[*]})"
sfs_stop_service
