#!/usr/bin/env bash
# What the tests that take every host down in turn share
# (test_cluster_rolling_all.sh: kill -9 and --rejoin; test_cluster_cut_all.sh:
# a network cut that heals; test_cluster_rolling_mpi.sh: kill -9 under an
# MPI job): the layout (mirror groups 101+201 and 301+401, the metadata
# server on imaging-01 with its mirror on imaging-02, management on
# imaging-03; heartbeat 500 ms, offline 3 s, RPC 6 s), sfsalice's job on
# imaging-04, the waits for good copies, and the checks at the end. The job
# is one connected client (tests/progs/sfs_rolling_client), or with
# ROLLING_MPI=1 an IOR- and mdtest-style MPI-IO job of ROLLING_NP ranks
# (tests/mpi/mpi_migrate_job.c, mode roll). Sourced after cluster_lib.sh,
# once cluster_begin ran.

# rolling_begin: the test users and the cluster; at exit the job (and an
# MPI job's ranks: they hold the cluster lock's descriptor) goes, then the
# cluster. A test with more to undo traps its own cleanup, which ends with
# rolling_cleanup.
rolling_begin() {
    sfs_test_users
    cluster_begin
    job=""
    trap rolling_cleanup EXIT
}
rolling_cleanup() {
    [ -n "${job:-}" ] && kill "$job" 2>/dev/null
    pkill -9 -f -- "$SFS_TEST_TMP/mpi_migrate_job stripefs:" 2>/dev/null
    cluster_cleanup
}

# rolling_ucx_crash: a hook for ROLLING_ON_FAIL in the tests that cut links:
# a rank dead of UCX 1.13.1's crash after a heal (a NULL buffer freed in
# uct_tcp_ep_progress_am_rx, at libuct.so.0+0x21650 in Debian 12's build;
# docs/faults.md) is reported as that known bug where peers connect by worker
# address (STRIPEFS_UCX_LISTENER=0), and fails the test otherwise: a SIGSEGV whose backtrace
# (UCX's, in the service log) or AddressSanitizer report (an abort, signal 6,
# in a sanitizer build) starts there
rolling_ucx_crash() {
    local died where
    # a check that failed because a rank died that moment (ECONNREFUSED from
    # management's) runs before mpirun's word of it reaches the log: wait
    # for it a little (the cut matrix failed so once, 2026-12-06 10:33)
    dying() { # a rank's crash report has begun (UCX's or the sanitizer's)
        grep -qE "Caught signal (11|6)|ERROR: AddressSanitizer" "$SFS_SERVICE_LOG" ||
            [ -n "$(find "$SFS_TEST_TMP" -name 'asan-report.*' 2>/dev/null | head -n 1)" ]
    }
    for _ in $(seq 10); do
        { dying || grep -q "exited on signal" "$SFS_SERVICE_LOG"; } && break
        sleep 0.2
    done
    for _ in $(seq 50); do
        grep -qE "exited on signal (11|6)" "$SFS_SERVICE_LOG" && break
        dying || break
        sleep 0.2
    done
    died=$(grep -m1 -E "exited on signal (11|6)" "$SFS_SERVICE_LOG") || return 0
    where=$(grep -lE 'libuct\.so\.0(\+|\(\+)0x21650' "$SFS_SERVICE_LOG" \
        $(find "$SFS_TEST_TMP" -name 'asan-report.*' 2>/dev/null) 2>/dev/null | head -n 1)
    [ -n "$where" ] || return 0
    # since 2026-12-06 ranks on different hosts connect through UCX listeners,
    # where UCX's TCP connects endpoint to endpoint and never takes this path
    # (docs/protocol.md, "Connections"): only by worker address is it known
    [ "${STRIPEFS_UCX_LISTENER:-1}" = 0 ] ||
        sfs_fail "a server rank died of the SIGSEGV in UCX 1.13.1's TCP transport (libuct.so.0+0x21650, in $(basename "$where")) although ranks connect through UCX listeners, which should never reach it: $died"
    sfs_known_bug "with STRIPEFS_UCX_LISTENER=0, a server rank died of a SIGSEGV in UCX 1.13.1's TCP transport after a link came back (uct_tcp_ep_progress_am_rx, libuct.so.0+0x21650, in $(basename "$where"); docs/faults.md): $died"
}

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
    local mpi_job="$SFS_TEST_TMP/mpi_migrate_job"
    if [ "${ROLLING_MPI:-0}" = 1 ]; then
        [ -f "$SFS_BUILD/adio/libstripefs-mpiio.so" ] || sfs_fail "the MPI-IO library is not built"
        mpicc.openmpi -O2 -o "$mpi_job" "$SFS_SRC/tests/mpi/mpi_migrate_job.c" ||
            sfs_fail "compile tests/mpi/mpi_migrate_job.c with mpicc.openmpi"
        chmod 0755 "$mpi_job"
    else
        [ -x "$prog" ] || sfs_fail "missing $prog (make check builds it)"
    fi
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
    if [ "${ROLLING_MPI:-0}" = 1 ]; then
        # one host's ranks, launched there as sfsalice (no remote shell)
        CLUSTER_ON_TIMEOUT=1200 cluster_as_alice imaging-04 mpirun.openmpi --oversubscribe \
            -np "${ROLLING_NP:-2}" -x STRIPEFS_CONFIG "$SFS_BUILD/tools/stripefs-run" "$mpi_job" \
            stripefs:/m/job roll "$SFS_TEST_TMP/stop" >"$ROLLING_LOG" 2>"$SFS_TEST_TMP/job.err" &
    else
        cluster_as_alice imaging-04 "$prog" /m/job "$SFS_TEST_TMP/stop" >"$ROLLING_LOG" 2>"$SFS_TEST_TMP/job.err" &
    fi
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
# good, and still are 2 s (four heartbeats) later, and the job made two
# more rounds; WHAT names the event for messages. (Good once is not
# settled: after management's own host came back from a cut, the ranks it
# has not heard again yet are offline in its map for up to a heartbeat,
# and a metadata server that reads that map drops its mirror, good a
# moment before, and copies it again: a cut meanwhile found no mirror to
# promote; docs/faults.md.)
rolling_settled() {
    local i rounds
    for _ in 1 2 3 4 5; do
        for i in $(seq 600); do rolling_groups_good && break; sleep 0.1; done
        rolling_groups_good || rolling_fail "after $1, the groups are not good: $(ctl_on imaging-04 mirror list)"
        rolling_meta_good || rolling_fail "after $1, the metadata mirror is not good: '$CLUSTER_MIRROR_LINE'"
        sleep 2
        rolling_groups_good && rolling_meta_good && break
    done
    rounds=$(rolling_rounds)
    cluster_wait_line "$ROLLING_LOG" "round $((rounds + 2)) " 120 >/dev/null ||
        rolling_fail "the job made no progress after $1: $(tail -n 3 "$ROLLING_LOG")"
    # a TCP connection the cut stalled resumes only at its next
    # retransmission, which backed off while the link was down: up to 6.5 s
    # after an 8 s cut (ss: backoff 4-5, rto 3.3-6.5 s; 2026-12-06). A
    # metadata batch or its reply queued behind one times out seconds after
    # all looked good (docs/faults.md): settled means none is left
    for i in $(seq 150); do rolling_tcp_stalled >/dev/null || break; sleep 0.1; done
    if rolling_tcp_stalled >/dev/null; then
        sfs_log "after $1: TCP connections still backing off 15 s later: $(rolling_tcp_stalled | head -n 2 | tr '\n' ';')"
    elif [ "$i" -gt 1 ]; then
        sfs_log "after $1: the last TCP connection stalled by the cut resumed $(((i - 1) / 10)).$(((i - 1) % 10)) s after all was good"
    fi
    echo "ok: $1: groups and metadata mirror good: $(ctl_on imaging-04 mirror list | grep -E '^[0-9]' | tr -s ' ' | tr '\n' ';')"
    ROLLING_SETTLED_AT=$(date +%s.%N)
}

# rolling_tcp_stalled: the hosts' TCP connections in retransmission backoff
# (one line each: host, addresses, backoff, rto); true if there are any
rolling_tcp_stalled() {
    local host
    for host in imaging-01 imaging-02 imaging-03 imaging-04; do
        ip netns exec "$host" ss -tin 2>/dev/null | awk -v h="$host" \
            '/^ESTAB/ {c = $4 " " $5; next} /backoff:/ {match($0, /backoff:[0-9]+/); b = substr($0, RSTART, RLENGTH); match($0, / rto:[0-9.]+/); print h, c, b, substr($0, RSTART + 1, RLENGTH - 1)}'
    done | grep .
}

# rolling_promoted RANK HOST SINCE WHAT: the log says that rank RANK on HOST
# became the metadata server (WHAT: during which fault). If not, and the
# metadata server dropped its mirror after SINCE (when all was last good:
# ROLLING_SETTLED_AT, a date +%s.%N), there was no mirror to promote: a known
# bug (docs/faults.md, "a mirror dropped just before"); else the test fails.
rolling_promoted() {
    local line t
    grep -q "this rank ($1 on $2) is the metadata server now" "$SFS_SERVICE_LOG" && return 0
    while IFS= read -r line; do
        t=$(date -d "$(echo "$line" | cut -c1-26 | tr T ' ')" +%s.%N 2>/dev/null) || continue
        awk -v t="$t" -v s="$3" 'BEGIN {exit !(t >= s)}' || continue
        # a batch to a mirror in step is sent while management only
        # suspects it (sfs_meta_mirror_link_post): a drop for that is a
        # regression, not the known bug
        case $line in *"is probably-offline. The metadata server goes on alone"*) rolling_fail "the metadata server dropped its mirror in step because the map named it probably-offline, which must not happen any more: ${line#*error }" ;; esac
        sfs_known_bug "the metadata server dropped its mirror after all was last good and before $4, so there was no mirror to promote (docs/faults.md): ${line#*error }"
    done < <(grep "error metadata mirror dropped" "$SFS_SERVICE_LOG")
    rolling_fail "rank $1 on $2 was not promoted to metadata server $4: $(grep -E 'metadata mirror|metadata failover' "$SFS_SERVICE_LOG" | tail -n 6)"
}

ROLLING_REJOINED=()
# rolling_progress: how far the job is, for the log (a test with another
# job redefines it)
rolling_progress() { echo "$(rolling_rounds) rounds"; }

# rolling_kill HOST RANK WANT: kill -9 HOST's rank; wait (30 s) until
# `mirror list` matches WANT (-E; "-": management's own rank, nothing
# answers: 2 s, in which every lease ends)
rolling_kill() {
    local host=$1 rank=$2 want=$3 pid
    pid=$(ctl_on imaging-04 listnodes | awk -v h="$host" '$2 == h {print $5; exit}')
    [ -n "$pid" ] || sfs_fail "no pid of $host's rank in listnodes"
    kill -9 "$pid" || sfs_fail "cannot kill $host's rank ($pid)"
    sfs_log "injected: SIGKILL to $host's rank $rank (pid $pid), $(rolling_progress) so far"
    if [ "$want" = - ]; then
        sleep 2
        return
    fi
    for _ in $(seq 300); do ctl_on imaging-04 mirror list 2>/dev/null | grep -qE "$want" && break; sleep 0.1; done
    ctl_on imaging-04 mirror list | grep -qE "$want" ||
        sfs_fail "after the kill of $host, mirror list does not show '$want': $(ctl_on imaging-04 mirror list)"
    echo "ok: $host lost: $(ctl_on imaging-04 mirror list | grep -E "$want")"
}

# rolling_rejoin HOST RANK: the rank starts again on HOST (--rejoin, the
# config ROLLING_CFG) and is ready (60 s); its job joins ROLLING_REJOINED
rolling_rejoin() {
    local host=$1 rank=$2
    timeout --kill-after=20 900 "${SFS_SERVER_ENV[@]}" "$CLUSTER" mpirun -np 1 --host "$host" \
        "$SFS_SERVER" -c "$ROLLING_CFG" --rejoin "$rank" --ready-file "$SFS_TEST_TMP/rejoined$rank" \
        >>"$SFS_TEST_TMP/rejoin$rank.log" 2>&1 &
    ROLLING_REJOINED+=($!)
    for _ in $(seq 600); do [ -f "$SFS_TEST_TMP/rejoined$rank" ] && break; sleep 0.1; done
    [ -f "$SFS_TEST_TMP/rejoined$rank" ] ||
        sfs_fail "$host's rank did not rejoin: $(tail -n 20 "$SFS_TEST_TMP/rejoin$rank.log")"
    rm -f "$SFS_TEST_TMP/rejoined$rank"
}

# rolling_roll HOST RANK WANT: rolling_kill, rolling_rejoin, and wait until
# all is good again and the job goes on (rolling_settled)
rolling_roll() {
    rolling_kill "$@"
    rolling_rejoin "$1" "$2"
    rolling_settled "$1's rank rejoined"
}

# rolling_kill_each_rank: kill -9 and rejoin each host's rank in turn:
# imaging-04 (the secondary 401), imaging-03 (management and the primary
# 301), imaging-01 (the metadata server and 101: the metadata mirror and 201
# are promoted), imaging-02 (the promoted metadata server and 201: rank 0
# and 101 are promoted back)
rolling_kill_each_rank() {
    rolling_roll imaging-04 3 "^2 +301 @.* good .*401 @.*needs-resync"
    rolling_roll imaging-03 2 -
    rolling_roll imaging-01 0 "^1 +201 @.* good .*101 @.*needs-resync"
    # (management's log: the rejoined rank 2's since imaging-03's roll)
    grep -q "metadata failover: rank 1 on imaging-02 is the metadata server now" "$SFS_TEST_TMP/rejoin2.log" ||
        sfs_fail "the metadata mirror was not promoted when imaging-01 was lost"
    rolling_roll imaging-02 1 "^1 +101 @.* good .*201 @.*needs-resync"
    grep -q "metadata failover: rank 0 on imaging-01 is the metadata server now" "$SFS_TEST_TMP/rejoin2.log" ||
        sfs_fail "rank 0 was not promoted back when imaging-02 was lost"
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
        rolling_fail "the job exited $rc with $failed of $total rounds failed: $(grep '^round' "$ROLLING_LOG" | grep -v ' rc=0 ' | head -n 5); $(grep -m 6 -E '^(rank [0-9]+:|round )' "$SFS_TEST_TMP/job.err" "$ROLLING_LOG" || tail -n 5 "$SFS_TEST_TMP/job.err")"
    echo "ok: the job ran $total rounds across $1, none failed; longest round $(awk '/^round/ {sub("seconds=", "", $4); if ($4 > m) m = $4} END {print m}' "$ROLLING_LOG") s"
    # the removed files' chunk files go in the background (a member that was
    # away gets its removals when back, retried every 5 s)
    for _ in $(seq 600); do
        ctl_on imaging-04 df 2>/dev/null | grep -q " 0 removed files awaiting chunk deletion" && break
        sleep 0.1
    done
    ctl_on imaging-04 df | grep -q " 0 removed files awaiting chunk deletion" ||
        rolling_fail "chunk deletions still pending after 60 s: $(ctl_on imaging-04 df | tail -n 1)"
    # a member lost again after the last settle (a forward that failed late,
    # seen after a cut's heal) is resynced before the copies can agree
    for _ in $(seq 600); do rolling_groups_good && break; sleep 0.1; done
    rolling_groups_good ||
        rolling_fail "after the job, the groups are not good: $(ctl_on imaging-04 mirror list)"
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

# rolling_live_files: the paths of the files the job left in /m/job: the
# files of its last two rounds (and the MPI job's round 0)
rolling_live_files() {
    local total n k
    total=$(rolling_rounds)
    if [ "${ROLLING_MPI:-0}" != 1 ]; then
        echo "/m/job/f$((total - 1)) /m/job/f$total"
        return
    fi
    for n in 0 $((total - 1)) "$total"; do
        echo "/m/job/shared.$n"
        for ((k = 0; k < ${ROLLING_NP:-2}; k++)); do echo "/m/job/fpp.$n.$k"; done
    done
}

# rolling_only_orphans DIFF: every chunk file that `diff -r` found on one
# member only belongs to no file left in /m/job (the live files' entry ids
# from getentryinfo); 1 without the job
rolling_only_orphans() {
    local live name path
    [ -n "${ROLLING_LOG:-}" ] || return 1
    live=$(for path in $(rolling_live_files); do
        ctl_on imaging-04 getentryinfo "$path" 2>/dev/null | awk '$1 == "EntryID:" {print $2}'
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
    ctl_on imaging-04 shutdown >/dev/null || rolling_fail "stripefs-ctl shutdown"
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
    wait "$CLUSTER_JOB" || rolling_fail "the service job exited with $?"
    CLUSTER_JOB=""
    echo "ok: stripefs-ctl shutdown: every rank exited 0"
}
