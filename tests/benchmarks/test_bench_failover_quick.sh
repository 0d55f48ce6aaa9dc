#!/usr/bin/env bash
# benchmarks/failover.sh in its quick mode, one rep, on one host, completes:
# a mirrored write with both members up, one that loses the secondary's
# rank (-9) a quarter of the way in and one that loses the primary's, each
# written file read back and checked by the writer, each lost rank rejoined
# and resynced (a "resync ... done" line read for its figures), both
# members' chunk files byte-identical after each resync (the script checks
# and fails otherwise), a CSV row per case and the summary table. The
# figures are not judged here (benchmarks/README.md reports them).
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
out=$SFS_TEST_TMP/out
# the service's ranks run as the suite runs servers (a sanitizer build: no
# leak check of the MPI runtime's exit)
ASAN_OPTIONS=${SFS_SERVER_ASAN_OPTIONS:-${ASAN_OPTIONS:-}} bash "$SFS_SRC/benchmarks/failover.sh" --quick --reps 1 \
    --build "$SFS_BUILD" --out "$out" >"$SFS_TEST_TMP/failover.out" 2>&1
rc=$?
cat "$SFS_TEST_TMP/failover.out"
[ $rc = 0 ] || sfs_fail "failover.sh --quick exited with $rc"
csv=$out/failover.csv
sfs_expect_eq "$(awk -F, 'NR > 1 && $2 == "ref" && $5 + 0 > 0' "$csv" | wc -l)" 1 "the reference write in failover.csv"
sfs_expect_eq "$(awk -F, 'NR > 1 && ($2 == "secondary" || $2 == "primary") && $6 + 0 > 0 && $7 == 33554432 && $9 + 0 > 0' "$csv" | wc -l)" 2 \
    "losses with a pause and a resync of the whole 32 MiB chunk file in failover.csv"
grep -q "^resync rate / a client's mirrored write" "$out/failover-summary.txt" || sfs_fail "no summary line"
pgrep -f "stripefs-server -c .*sfs-bench-failover" && sfs_fail "failover.sh left server processes"
echo "ok: failover.sh --quick --reps 1: $(tr -s ' ' <"$out/failover-summary.txt" | sed -n '3,4p' | tr '\n' ';')"
