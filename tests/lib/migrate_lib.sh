# Helpers of the migration tests (tests/service/test_service_migrate*.sh,
# tests/mpi/test_mpi_migrate_job.sh); sourced after sfs_test_lib.sh.

# sfs_chunks_on TARGET: how many chunk files the target holds on disk
sfs_chunks_on() {
    find "$SFS_STATE/targets/$1/chunks" -type f | wc -l
}

# sfs_fsck_after_move WHAT [RECHECK...]: stripefs-fsck must be clean; after a
# killed move it may find only the orphan copy the kill left on its new
# target ("is on a target that is not in its pattern"), which --repair
# removes; then fsck must be clean and RECHECK (a command, e.g. a function
# that compares every file) must pass again.
sfs_fsck_after_move() {
    local what=$1 out="$SFS_TEST_TMP/fsck.$RANDOM.txt"
    shift
    if ! "$SFS_BUILD/stripefs-fsck" >"$out" 2>&1; then
        cat "$out"
        grep "^  target" "$out" | grep -v "is on a target that is not in its pattern" &&
            sfs_fail "stripefs-fsck $what found more than orphan copies"
        "$SFS_BUILD/stripefs-fsck" --repair >/dev/null 2>&1 || sfs_fail "stripefs-fsck --repair $what"
        "$SFS_BUILD/stripefs-fsck" >"$out" 2>&1 || sfs_fail "stripefs-fsck $what, after --repair: $(cat "$out")"
        [ $# -gt 0 ] && { "$@" || sfs_fail "$what: the check after fsck --repair failed"; }
    fi
    echo "ok: stripefs-fsck $what: $(tail -n 1 "$out")"
}

# sfs_wait_line FILE ERE PID SECONDS: wait until FILE (a background run's
# output) has a line matching ERE, while PID lives, for up to SECONDS;
# status 0 when it has one (the caller says what failed otherwise)
sfs_wait_line() {
    local end=$((SECONDS + $4))
    while [ $SECONDS -lt $end ]; do
        grep -Eq -- "$2" "$1" && return 0
        kill -0 "$3" 2>/dev/null || break
        sleep 0.05
    done
    grep -Eq -- "$2" "$1"
}
