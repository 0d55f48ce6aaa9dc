#!/usr/bin/env bash
# A storage rank away (stopped, or its host cut off), one-host service of 3
# ranks (rank 1: targets 101 and 103; rank 2: 102 and 104), heartbeat
# 500 ms, offline after 3 s, files of sfsalice striped over the 4 targets;
# rank 1 stopped with SIGSTOP (its process and chunk files stay), then
# continued:
# - removals: the metadata server's background deletion sends no
#   CHUNK_UNLINK to a target the map shows not online (a connect or request
#   to such a rank would hold its progress thread, which answers every
#   metadata request, for the timeout); the chunk files on online targets
#   go at once, the rest stay pending (logged once) and go when it is back;
# - clients: once management has declared the rank offline, a client that
#   needs a new connection to it is told so at once ("... is offline"),
#   instead of waiting the connect timeout twice per call; after it is
#   back, the same file reads back identical.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/lib/migrate_lib.sh"

sfs_test_users
sfs_start_service 3 --targets 4
sfs_stop_service
sfs_short_timeouts 3
sfs_start_service 3

rank1_pid=$(sfs_ctl listnodes | awk '$1 == 1 && $3 ~ /storage/ {print $5}')
[ -n "$rank1_pid" ] || sfs_fail "no pid of storage rank 1 in listnodes: $(sfs_ctl listnodes)"
trap 'kill -CONT $rank1_pid 2>/dev/null; sfs_cleanup' EXIT
state_of() { sfs_ctl listtargets | awk -v t="$1" '$1 == t {print $4}'; }
wait_state() { # target ERE seconds
    local end=$((SECONDS + $3))
    while [ $SECONDS -lt $end ]; do
        [[ $(state_of "$1") =~ $2 ]] && return 0
        sleep 0.2
    done
    sfs_fail "target $1 not in state '$2' after $3 s: $(sfs_ctl listtargets)"
}
wait_chunks() { # target count seconds
    local end=$((SECONDS + $3))
    while [ $SECONDS -lt $end ]; do
        [ "$(sfs_chunks_on "$1")" = "$2" ] && return 0
        sleep 0.2
    done
    sfs_fail "target $1 holds $(sfs_chunks_on "$1") chunk files after $3 s, not $2"
}
for t in 101 102 103 104; do wait_state $t '^online' 30; done

as_alice() { sfs_as sfsalice "$SFS_CTL" "$@"; }
sfs_ctl mkdir /d && sfs_ctl chmod 1777 /d || sfs_fail "mkdir /d (1777)"
as_alice mkdir /d/a && as_alice setpattern --chunksize 64k --numtargets 4 /d/a >/dev/null ||
    sfs_fail "mkdir, setpattern /d/a as sfsalice"
src=$SFS_TEST_TMP/src
head -c $((1024 * 1024)) /dev/urandom >"$src" && chmod 0644 "$src" || sfs_fail "make $src"
for i in 1 2 3; do
    as_alice put "$src" "/d/a/f$i" || sfs_fail "put /d/a/f$i as sfsalice"
done
for t in 101 102 103 104; do
    n=$(sfs_chunks_on $t)
    [ "$n" -ge 3 ] || sfs_fail "target $t holds $n chunk files; the 3 files should be on every target"
done
# keep[T]: chunk files of /d/a/keep (which stays) on target T
declare -A keep
for t in 101 102 103 104; do keep[$t]=$(sfs_chunks_on $t); done
as_alice put "$src" /d/a/keep || sfs_fail "put /d/a/keep as sfsalice"
for t in 101 102 103 104; do
    keep[$t]=$(($(sfs_chunks_on $t) - keep[$t]))
    [ "${keep[$t]}" -ge 1 ] || sfs_fail "/d/a/keep has no chunk file on $t"
done
on101=$(sfs_chunks_on 101)
on103=$(sfs_chunks_on 103)

kill -STOP "$rank1_pid" || sfs_fail "kill -STOP rank 1 ($rank1_pid)"
wait_state 101 'offline' 30
wait_state 103 'offline' 30
sfs_log "rank 1 stopped; 101 and 103: $(state_of 101), $(state_of 103)"
mark=$(wc -l <"$SFS_SERVICE_LOG")
for i in 1 2 3; do
    as_alice rm "/d/a/f$i" || sfs_fail "rm /d/a/f$i as sfsalice while rank 1 is stopped"
done
wait_chunks 102 "${keep[102]}" 30
wait_chunks 104 "${keep[104]}" 30
echo "ok: the chunk files on 102 and 104 (online) are deleted while rank 1 is stopped"
# (no removal waited before the stop: the line can only come from these)
sfs_wait_line "$SFS_SERVICE_LOG" "wait for targets that are not online" "$SFS_SERVICE_PID" 30 ||
    sfs_fail "no 'wait for targets that are not online' in the service log in 30 s"
# two more rounds (5 s apart) while 101 and 103 stay away
sleep 11
[ "$(sfs_chunks_on 101)" = "$on101" ] && [ "$(sfs_chunks_on 103)" = "$on103" ] ||
    sfs_fail "the stopped rank's chunk files changed ($(sfs_chunks_on 101), $(sfs_chunks_on 103))"
away_lines=$(tail -n +"$mark" "$SFS_SERVICE_LOG" | grep -c "wait for targets that are not online")
[ "$away_lines" = 1 ] || sfs_fail "'wait for targets that are not online' logged $away_lines times, not once"
if tail -n +"$mark" "$SFS_SERVICE_LOG" | grep -E "chunk deletion: .*failed|unreachable"; then
    sfs_fail "a deletion request went to the stopped rank (above)"
fi
echo "ok: no deletion request went to rank 1's offline targets (one log line, no failure)"
as_alice ls /d/a >/dev/null || sfs_fail "ls /d/a as sfsalice while rank 1 is stopped"
wait_state 101 '^offline' 30
out=$(STRIPEFS_TIMEOUT=20 as_alice get /d/a/keep - 2>&1 >/dev/null) &&
    sfs_fail "reading /d/a/keep with rank 1 stopped succeeded"
echo "$out" | grep -qE "target 10[13] unreachable: .*rank 1 .* is offline: management has not heard from it" ||
    sfs_fail "reading /d/a/keep with rank 1 offline did not say at once that it is offline: $out"
echo "ok: a new client is told at once that rank 1 is offline: $(echo "$out" | head -n 1)"

kill -CONT "$rank1_pid" || sfs_fail "kill -CONT rank 1"
wait_state 101 '^online' 30
wait_state 103 '^online' 30
wait_chunks 101 "${keep[101]}" 30
wait_chunks 103 "${keep[103]}" 30
echo "ok: after rank 1 is back, its chunk files of the removed files are deleted"
as_alice get /d/a/keep - >"$SFS_TEST_TMP/keep.back" || sfs_fail "get /d/a/keep after rank 1 is back"
cmp -s "$SFS_TEST_TMP/keep.back" "$src" || sfs_fail "/d/a/keep differs from its source after rank 1 is back"
echo "ok: /d/a/keep reads back identical after rank 1 is back"
sfs_stop_service
