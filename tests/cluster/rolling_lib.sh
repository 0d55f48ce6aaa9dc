#!/usr/bin/env bash
# What the tests that take every host down in turn share
# (test_cluster_rolling_all.sh: kill -9 and --rejoin; test_cluster_cut_all.sh:
# a network cut that heals): the layout (mirror groups 101+201 and 301+401,
# the metadata server on imaging-01 with its mirror on imaging-02, management
# on imaging-03; heartbeat 500 ms, offline 3 s, RPC 6 s), sfsalice's
# connected job on imaging-04 (tests/progs/sfs_rolling_client), the waits
# for good copies, and the checks at the end. Sourced after cluster_lib.sh,
# once cluster_begin ran.

# rolling_fail MESSAGE: the test fails, after the hook ROLLING_ON_FAIL (a
# command, if set) had its say
rolling_fail() {
    [ -n "${ROLLING_ON_FAIL:-}" ] && "$ROLLING_ON_FAIL"
    sfs_fail "$@"
}

# rolling_start: the config, the service, a mirrored /m/job, and the job,
# which has made 3 rounds on return; sets ROLLING_CFG, ROLLING_LOG, job
rolling_start() {
    local prog="$SFS_BUILD/tests/progs/sfs_rolling_client"
    [ -x "$prog" ] || sfs_fail "missing $prog (make check builds it)"
    ROLLING_CFG="$SFS_TEST_TMP/imaging.yaml"
    cluster_meta_mirror_config "$ROLLING_CFG"
    cluster_mirror_groups "$ROLLING_CFG" 101:201 301:401
    cluster_start_service
    rolling_meta_good || sfs_fail "the metadata mirror is not good: '$CLUSTER_MIRROR_LINE'"
    ctl_on imaging-04 mkdir -m 0777 /m || sfs_fail "mkdir /m"
    cluster_as_alice imaging-04 "$SFS_CTL" mkdir /m/job || sfs_fail "sfsalice's mkdir"
    cluster_as_alice imaging-04 "$SFS_CTL" setpattern --mirror --numtargets 2 --chunksize 64k /m/job \
        >/dev/null || sfs_fail "setpattern --mirror"
    ROLLING_LOG="$SFS_TEST_TMP/job.log"
    cluster_as_alice imaging-04 "$prog" /m/job "$SFS_TEST_TMP/stop" >"$ROLLING_LOG" 2>"$SFS_TEST_TMP/job.err" &
    job=$!
    cluster_wait_line "$ROLLING_LOG" "round 3 " 60 >/dev/null ||
        sfs_fail "the job did not start: $(cat "$ROLLING_LOG" "$SFS_TEST_TMP/job.err")"
}

# the metadata mirror's line says good, with its rank online (60 s)
rolling_meta_good() { cluster_wait_meta_mirror "[online], good since batch "; }

# both mirror groups: both members good
rolling_groups_good() {
    [ "$(ctl_on imaging-04 mirror list 2>/dev/null | grep -cE "good +[0-9]+ @.* good$")" -eq 2 ]
}

# rolling_rounds: the job's rounds so far
rolling_rounds() { grep -c '^round' "$ROLLING_LOG"; }

# rolling_settled WHAT: wait until both groups and the metadata mirror are
# good and the job made two more rounds; WHAT names the event for messages
rolling_settled() {
    local i rounds
    for i in $(seq 600); do rolling_groups_good && break; sleep 0.1; done
    rolling_groups_good || rolling_fail "after $1, the groups are not good: $(ctl_on imaging-04 mirror list)"
    rolling_meta_good || rolling_fail "after $1, the metadata mirror is not good: '$CLUSTER_MIRROR_LINE'"
    rounds=$(rolling_rounds)
    cluster_wait_line "$ROLLING_LOG" "round $((rounds + 2)) " 120 >/dev/null ||
        rolling_fail "the job made no progress after $1: $(tail -n 3 "$ROLLING_LOG")"
    echo "ok: $1: groups and metadata mirror good: $(ctl_on imaging-04 mirror list | grep -E '^[0-9]' | tr -s ' ' | tr '\n' ';')"
}

# rolling_finish WHAT: stop the job; every round succeeded; no removal
# pending; both members of each group hold byte-identical chunk files
rolling_finish() {
    local rc total failed
    touch "$SFS_TEST_TMP/stop"
    wait "$job"
    rc=$?
    job=""
    total=$(rolling_rounds)
    failed=$(grep '^round' "$ROLLING_LOG" | grep -vc ' rc=0 ')
    [ "$rc" = 0 ] && [ "$failed" = 0 ] && [ "$total" -ge 10 ] ||
        rolling_fail "the job exited $rc with $failed of $total rounds failed: $(grep '^round' "$ROLLING_LOG" | grep -v ' rc=0 ' | head -n 5); $(tail -n 5 "$SFS_TEST_TMP/job.err")"
    echo "ok: the job ran $total rounds across $1, none failed; longest round $(awk '{sub("seconds=", "", $4); if ($4 > m) m = $4} END {print m}' "$ROLLING_LOG") s"
    # the removed files' chunk files go in the background (a member that was
    # away gets its removals when back, retried every 5 s)
    for _ in $(seq 600); do
        ctl_on imaging-04 df 2>/dev/null | grep -q " 0 removed files awaiting chunk deletion" && break
        sleep 0.1
    done
    ctl_on imaging-04 df | grep -q " 0 removed files awaiting chunk deletion" ||
        rolling_fail "chunk deletions still pending after 60 s: $(ctl_on imaging-04 df | tail -n 1)"
    rolling_copies_identical 101:201 301:401
}

# rolling_copies_identical PRIMARY:SECONDARY...: both members of each group
# hold byte-identical chunk files
rolling_copies_identical() {
    local pair a b
    for pair in "$@"; do
        a=$(ctl_on imaging-04 listtargets | awk -v t="${pair%%:*}" '$1 == t {print $NF}')
        b=$(ctl_on imaging-04 listtargets | awk -v t="${pair##*:}" '$1 == t {print $NF}')
        [ -d "$a/chunks" ] && [ -d "$b/chunks" ] || rolling_fail "no chunk directories for $pair: '$a' '$b'"
        if ! diff -r "$a/chunks" "$b/chunks" >"$SFS_TEST_TMP/diff" 2>&1; then
            # nothing but chunk files on one member only, none of a file that
            # is left: removed files' chunk files left behind (garbage, no
            # data lost)
            if ! grep -qv '^Only in ' "$SFS_TEST_TMP/diff" && rolling_only_orphans "$SFS_TEST_TMP/diff"; then
                sfs_known_bug "after the rolls, $(wc -l <"$SFS_TEST_TMP/diff") chunk files of removed files are left on one member of ${pair%%:*}+${pair##*:} (a resync that overlapped the removals; every live file's chunk files are identical): $(head -n 2 "$SFS_TEST_TMP/diff" | tr '\n' ' ')"
            fi
            rolling_fail "the chunk files of ${pair%%:*} and ${pair##*:} differ: $(head -n 5 "$SFS_TEST_TMP/diff")"
        fi
        echo "ok: ${pair%%:*} and ${pair##*:} hold byte-identical chunk files ($(find "$a/chunks" -type f | wc -l) each)"
    done
}

# rolling_only_orphans DIFF: every chunk file that `diff -r` found on one
# member only belongs to no file left in /m/job: the job keeps the files of
# its last two rounds (their entry ids from getentryinfo); 1 without the job
rolling_only_orphans() {
    local total live name n
    [ -n "${ROLLING_LOG:-}" ] || return 1
    total=$(rolling_rounds)
    live=$(for n in $((total - 1)) "$total"; do
        ctl_on imaging-04 getentryinfo "/m/job/f$n" 2>/dev/null | awk '$1 == "EntryID:" {print $2}'
    done)
    [ -n "$live" ] || return 1
    while read -r name; do
        printf '%s\n' "$live" | grep -qix "$name" && return 1
    done < <(awk '/^Only in/ {print $4}' "$1")
    return 0
}

# rolling_stop_all PID...: stripefs-ctl shutdown; the service job and the
# jobs PID (rejoined ranks) exit 0 within 90 s
rolling_stop_all() {
    local p alive
    ctl_on imaging-04 shutdown >/dev/null || sfs_fail "stripefs-ctl shutdown"
    for _ in $(seq 900); do
        alive=0
        for p in "$CLUSTER_JOB" "$@"; do kill -0 "$p" 2>/dev/null && alive=1; done
        [ $alive = 0 ] && break
        sleep 0.1
    done
    for p in "$@"; do
        kill -0 "$p" 2>/dev/null && sfs_fail "a rejoined rank did not stop in 90 s"
        wait "$p" || sfs_fail "a rejoined rank exited with $?"
    done
    kill -0 "$CLUSTER_JOB" 2>/dev/null && sfs_fail "the service did not stop in 90 s"
    wait "$CLUSTER_JOB" || sfs_fail "the service job exited with $?"
    CLUSTER_JOB=""
    echo "ok: stripefs-ctl shutdown: every rank exited 0"
}
