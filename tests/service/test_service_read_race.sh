#!/usr/bin/env bash
# Large reads are served from the chunk file's pages mapped into the storage
# server; a file shrinking meanwhile must neither crash the server (SIGBUS
# on the pages past the new end) nor give a reader bytes that were never
# written. One client reads 1 MiB ranges, 4 in flight, through the server
# (STRIPEFS_LOCAL_READ=0), while another shrinks and refills the same file,
# for a few seconds; a third reads the same way from the chunk file handed
# over to it (short-circuit reads), which must hold to the same rule.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
CHECK="$SFS_BUILD/tests/progs/sfs_client_check"

STRIPEFS_LOG_MASK=chunk=debug sfs_start_service 2 --targets 1
sfs_ctl mkdir /race || sfs_fail "mkdir"
"$CHECK" race-truncate /race/f 0.2 >/dev/null || sfs_fail "creating the file"

# One round: the three clients race for 4 s. Whether a shrink meets a mapped
# read is up to the scheduler (1 to 12 per round here, fewer under the
# sanitizers), so a round that met none is run again, up to 4 rounds.
race_round() {
    local round=$1 reader local_reader truncator truncator_rc reader_rc local_reader_rc
    STRIPEFS_LOCAL_READ=0 "$CHECK" race-read /race/f 4 >"$SFS_TEST_TMP/reader.out" 2>&1 &
    reader=$!
    STRIPEFS_LOG_MASK=client=debug "$CHECK" race-read /race/f 4 >"$SFS_TEST_TMP/local-reader.out" 2>&1 &
    local_reader=$!
    "$CHECK" race-truncate /race/f 4 >"$SFS_TEST_TMP/truncator.out" 2>&1 &
    truncator=$!
    # while the second reader holds the chunk file, `net` shows its session with +files
    for _ in $(seq 30); do
        sfs_ctl net >"$SFS_TEST_TMP/net.out" 2>&1 && grep -q "+files" "$SFS_TEST_TMP/net.out" && break
        sleep 0.1
    done
    wait $truncator
    truncator_rc=$?
    grep -q "+files" "$SFS_TEST_TMP/net.out" ||
        { cat "$SFS_TEST_TMP/net.out"; sfs_fail "stripefs-ctl net does not show a session with +files"; }
    echo "ok: round $round: stripefs-ctl net: $(grep -m1 "+files" "$SFS_TEST_TMP/net.out" | sed 's/^ *//')"
    wait $reader
    reader_rc=$?
    wait $local_reader
    local_reader_rc=$?
    cat "$SFS_TEST_TMP/reader.out" "$SFS_TEST_TMP/truncator.out"
    grep -v "^20..-" "$SFS_TEST_TMP/local-reader.out"
    [ $truncator_rc -eq 0 ] || sfs_fail "round $round: the truncating client failed"
    [ $reader_rc -eq 0 ] || sfs_fail "round $round: the reading client failed"
    [ $local_reader_rc -eq 0 ] || sfs_fail "round $round: the client reading the handed-over chunk file failed"
    grep -q "chunk file directly" "$SFS_TEST_TMP/local-reader.out" ||
        sfs_fail "round $round: the second reader was not handed the chunk file"
    echo "ok: round $round: a reader of the handed-over chunk file saw only written bytes and zeros"
}

# the reads must have gone through mapped chunk files: some shrink had to wait
waits=0
for round in 1 2 3 4; do
    race_round $round
    waits=$(grep -c "waits for [0-9]* mapped reads" "$SFS_SERVICE_LOG")
    echo "shrinks that waited for a mapped read after round $round: $waits"
    [ "$waits" -gt 0 ] && break
done
[ "$waits" -gt 0 ] || sfs_fail "no shrink met a mapped read in 4 rounds: the race was not exercised"

# the service is still whole and serves the file
sfs_ctl stat /race/f >/dev/null || sfs_fail "stat after the race"
sfs_stop_service
