#!/usr/bin/env bash
# stat sizes stay exact under concurrent writers and truncates (issue 12's
# acceptance; docs/metadata.md "How the size is kept current"): 4 MPI ranks
# of an ordinary user (sfsalice) hold one file open; each round one rank
# truncates it to a random size, every rank writes 1 to 4 extents at random
# offsets at once (rank 0 stats between its writes: never less than what it
# knows is there), then every rank stats it by name and by descriptor, which
# must give exactly max(truncated size, every extent's end); every third
# round the ranks close it after writing (the size the metadata server keeps
# at close). tests/mpi/mpi_stat_exact.c, through libstripefs-posix.so under
# stripefs-run, and the same program with the same seed on a local
# directory (this host's ext4): the sizes, round by round, must be the same.
# With the stripe over 4 targets in 64 KiB chunks, every write crosses
# targets.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
run_tool="$SFS_BUILD/tools/stripefs-run"
[ -f "$SFS_BUILD/.libs/libstripefs-posix.so" ] || sfs_fail "libstripefs-posix.so is not built"
sfs_test_users
prog="$SFS_TEST_TMP/mpi_stat_exact"
mpicc.openmpi -O2 -o "$prog" "$SFS_SRC/tests/mpi/mpi_stat_exact.c" || sfs_fail "compile tests/mpi/mpi_stat_exact.c"
chmod 755 "$prog"
NP=4
ROUNDS=${SFS_STAT_EXACT_ROUNDS:-24}
SEED=$((RANDOM * 32768 + RANDOM))
echo "seed $SEED, $ROUNDS rounds, $NP ranks"

sfs_start_service 3 --targets 4
sfs_ctl mkdir /sizes && sfs_ctl chmod 1777 /sizes || sfs_fail "mkdir /sizes (1777)"
sfs_ctl setpattern --chunksize 64k --numtargets 4 /sizes || sfs_fail "setpattern /sizes"
mkdir -p "$SFS_TEST_TMP/local" && chmod 1777 "$SFS_TEST_TMP/local"
echo "local file system: $(stat -f -c %T "$SFS_TEST_TMP/local")"

run() { # path out
    sfs_as sfsalice "${SFS_MPIRUN[@]}" -np $NP -x STRIPEFS_CONFIG "$run_tool" "$prog" "$1" \
        "$ROUNDS" "$SEED" >"$2" 2>&1
}
run "$SFS_TEST_TMP/local/f" "$SFS_TEST_TMP/local.out"
rc=$?
grep -E '^(RESULT|MISMATCH)' "$SFS_TEST_TMP/local.out"
[ $rc -eq 0 ] || sfs_fail "the control on the local directory failed (exit $rc): $(tail -5 "$SFS_TEST_TMP/local.out")"
run /stripefs/sizes/f "$SFS_TEST_TMP/stripefs.out"
rc=$?
grep -E '^(RESULT|MISMATCH)' "$SFS_TEST_TMP/stripefs.out" | head -20
[ $rc -eq 0 ] || sfs_fail "sizes on stripefs (exit $rc): $(grep -v '^20..-' "$SFS_TEST_TMP/stripefs.out" | tail -5)"
sfs_expect_eq "$(grep -c '^round ' "$SFS_TEST_TMP/stripefs.out")" "$ROUNDS" "rounds checked on stripefs"
grep '^round ' "$SFS_TEST_TMP/local.out" >"$SFS_TEST_TMP/local.sizes"
grep '^round ' "$SFS_TEST_TMP/stripefs.out" >"$SFS_TEST_TMP/stripefs.sizes"
diff "$SFS_TEST_TMP/local.sizes" "$SFS_TEST_TMP/stripefs.sizes" ||
    sfs_fail "the sizes differ from the local file system's, round by round (above)"
echo "ok: $ROUNDS rounds of a random truncate and $NP writers at random offsets: every stat by name and by descriptor exact, while held open and after close, the same sizes as $(stat -f -c %T "$SFS_TEST_TMP/local")"
echo "ok: sizes: $(awk '{print $4}' "$SFS_TEST_TMP/stripefs.sizes" | tr '\n' ' ')"
# and a stat through stripefs-ctl, after everything: the last size
last=$(awk 'END {print $4}' "$SFS_TEST_TMP/stripefs.sizes")
sfs_expect_eq "$(sfs_ctl stat /sizes/f | sed -n 's/^  Size: \([0-9]*\)$/\1/p')" "$last" \
    "stripefs-ctl stat's size after the last close"
sfs_stop_service
