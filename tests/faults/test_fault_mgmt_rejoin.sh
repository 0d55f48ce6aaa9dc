#!/usr/bin/env bash
# kill -9 of the rank that runs management and the metadata server (rank 0
# of a one-host service of 3 ranks; heartbeat 500 ms, offline after 3 s),
# then `--rejoin 0`, without restarting the service:
# - meanwhile the storage ranks live on and serve (mirrored: on the
#   buddies' word, once the leases from management ran out), and a tool fails with a clear error
#   naming management's address; while management's port accepts but never
#   answers (as an unreachable host would hold it), the storage ranks go on
#   serving the writers (they ask it in the background);
# - the rejoined rank takes its roles from the config; the storage ranks
#   find management again through its bootstrap port and register again
#   (it says when all 4 targets are back), and every target is online;
# - sfsalice's files written before the kill read back identical, and she
#   writes, reads and removes new ones; her MPI job that writes through the
#   whole outage ends with exit 0, its files holding only its bytes;
# - a --rejoin of the wrong rank while management is away, and a second
#   --rejoin 0 while it runs, are refused, naming why;
# - the rejoined rank holds the state dir (a second service is refused) and
#   the service's own munged;
# - `stripefs-ctl shutdown` then stops the rejoined rank, the original job's
#   survivors and the munged.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"

sfs_test_users
# MGMT_REJOIN_MIRROR=1 (test_fault_mgmt_rejoin_mirror.sh): the same with
# mirror groups 101+102 and 103+104 and sfsalice's directory mirrored
if [ "${MGMT_REJOIN_MIRROR:-0}" = 1 ]; then
    source "$SFS_SRC/tests/faults/mirror_lib.sh"
    mirror_service_start 3
    pattern="--mirror --chunksize 64k --numtargets 2"
else
    SFS_SERVICE_MPI_ARGS="--mca orte_enable_recovery 1"
    sfs_start_service 3 --targets 4
    sfs_stop_service
    sfs_short_timeouts 3
    sfs_start_service 3
    pattern="--chunksize 64k --numtargets 4"
fi

as_alice() { sfs_as sfsalice "$SFS_CTL" "$@"; }
sfs_ctl mkdir /d && sfs_ctl chmod 1777 /d || sfs_fail "mkdir /d (1777)"
as_alice mkdir /d/a && as_alice setpattern $pattern /d/a >/dev/null ||
    sfs_fail "mkdir, setpattern $pattern /d/a as sfsalice"
src=$SFS_TEST_TMP/src
head -c $((1024 * 1024)) /dev/urandom >"$src" && chmod 0644 "$src" || sfs_fail "make $src"
for i in 1 2 3; do
    as_alice put "$src" "/d/a/f$i" || sfs_fail "put /d/a/f$i as sfsalice"
done
back=$SFS_TEST_TMP/alice
mkdir "$back" && chown sfsalice: "$back" || sfs_fail "mkdir $back"

# an MPI job of sfsalice's that has its files open and writes them (1 MiB
# per call) through the whole outage, closing them after the rejoin
run_tool="$SFS_BUILD/tools/stripefs-run"
mpicc.openmpi -O2 -o "$SFS_TEST_TMP/writer" "$SFS_SRC/tests/mpi/mpi_fault_writer.c" || sfs_fail "compile"
chmod 0755 "$SFS_TEST_TMP" "$SFS_TEST_TMP/writer"
as_alice mkdir /d/a/stream || sfs_fail "mkdir /d/a/stream"
writer_seconds=14
[ "${MGMT_REJOIN_MIRROR:-0}" = 1 ] || writer_seconds=21 # 7 s more: the silent port's windows
sfs_as sfsalice "${SFS_MPIRUN[@]}" -np 2 -x STRIPEFS_CONFIG "$run_tool" "$SFS_TEST_TMP/writer" \
    stripefs:/d/a/stream "$writer_seconds" >"$SFS_TEST_TMP/writers.out" 2>&1 &
writers=$!
for _ in $(seq 100); do
    [ "$(grep -c writing "$SFS_TEST_TMP/writers.out")" -ge 2 ] && break
    sleep 0.1
done
[ "$(grep -c writing "$SFS_TEST_TMP/writers.out")" -ge 2 ] ||
    sfs_fail "the writers did not start: $(cat "$SFS_TEST_TMP/writers.out")"
sleep 1

pid_of() { sfs_ctl listnodes | awk -v r="$1" '$1 == r {print $5}'; }
rank0=$(pid_of 0) rank1=$(pid_of 1) rank2=$(pid_of 2)
[ -n "$rank0" ] && [ -n "$rank1" ] && [ -n "$rank2" ] || sfs_fail "no pids in listnodes: $(sfs_ctl listnodes)"
kill -9 "$rank0"
sfs_log "injected: SIGKILL to rank 0 (pid $rank0): management and the metadata server"
for _ in $(seq 100); do kill -0 "$rank0" 2>/dev/null || break; sleep 0.1; done
sleep 2 # two heartbeats of the storage ranks into the void
kill -0 "$rank1" && kill -0 "$rank2" || sfs_fail "a storage rank died with management"
echo "ok: storage ranks $rank1 and $rank2 live on without management"
touch "$SFS_TEST_TMP/outage-mark"
sleep 1
written=$(find "$SFS_STATE/targets" -path '*/chunks/*' -type f -newer "$SFS_TEST_TMP/outage-mark" | wc -l)
if [ "${MGMT_REJOIN_MIRROR:-0}" = 1 ]; then
    # fencing without management: the primaries' leases ran out (1.5 s), and
    # they go on on their buddies' word (docs/mirroring.md, "The buddy's
    # word"): each change taken by the secondary first. Before 2026-12-07
    # mirrored writes paused until management was back.
    [ "$written" -gt 0 ] || sfs_fail "no chunk file was written 3 s after management was lost: mirrored writes paused"
    grep -qE "fencing: target 10[13] goes on as its mirror group's primary on its buddy 10[24]'s word" "$SFS_SERVICE_LOG" ||
        sfs_fail "no primary says that it goes on on its buddy's word"
    grep -q "acknowledges no mirrored change from now on" "$SFS_SERVICE_LOG" &&
        sfs_fail "a primary stopped while its buddy could be asked: $(grep -m1 "acknowledges no mirrored change from now on" "$SFS_SERVICE_LOG")"
    echo "ok: mirrored writes go on while management is away, on the buddies' word ($written chunk files written in 1 s, 3 s after the loss)"
else
    [ "$written" -gt 0 ] || sfs_fail "no chunk file was written while management was away (the writers stalled)"
    echo "ok: the writers' data goes on to the storage ranks while management is away ($written chunk files written in 1 s)"
    # management's host not answering rather than refusing: a listener on
    # its bootstrap port that never answers holds each question for the
    # connect timeout (2 s). The storage ranks ask it in the background
    # (SFS_CLUSTER_PARAM_BACKGROUND_RECONNECT), so their loops go on
    # serving: the bytes they store in 2.5 s while it hangs are compared with
    # those in 2.5 s while the port refuses. (Asked on the progress
    # thread, as before, each heartbeat held a loop for 2 s.)
    # (bytes the two storage ranks wrote: the writers' files wrap at 256 MiB)
    stored() { cat "/proc/$rank1/io" "/proc/$rank2/io" | awk '$1 == "wchar:" {s += $2} END {printf "%.0f\n", s}'; }
    window() { local a; a=$(stored); sleep 2.5; echo $(($(stored) - a)); }
    refusing=$(window)
    python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
s.bind(("::", int(sys.argv[1])))
s.listen(64)
print("listening", flush=True)
time.sleep(600)' "$SFS_PORT" >"$SFS_TEST_TMP/silent.out" 2>&1 &
    silent=$!
    for _ in $(seq 50); do grep -q listening "$SFS_TEST_TMP/silent.out" && break; sleep 0.1; done
    grep -q listening "$SFS_TEST_TMP/silent.out" || sfs_fail "no silent listener on port $SFS_PORT: $(cat "$SFS_TEST_TMP/silent.out")"
    sleep 1 # the storage ranks' next questions go to it
    hanging=$(window)
    kill "$silent"
    wait "$silent" 2>/dev/null
    [ "$hanging" -gt 0 ] && [ $((hanging * 4)) -ge "$refusing" ] ||
        sfs_fail "the writers stalled while management's port did not answer: $hanging bytes stored in 2.5 s, against $refusing while it refused (a storage rank's loop waits for the bootstrap answer)"
    echo "ok: storage ranks go on serving while management's port does not answer: $((hanging >> 20)) MiB stored in 2.5 s, against $((refusing >> 20)) MiB while it refused"
fi
sfs_expect_fail "cannot reach the stripefs management service at [^ ]*:$SFS_PORT" \
    env STRIPEFS_TIMEOUT=5 "$SFS_CTL" listtargets

rejoin() { # rank log
    "${SFS_MPIRUN[@]}" -np 1 "$SFS_SERVER" --one-host --state "$SFS_STATE" --rejoin "$1" \
        --ready-file "$SFS_TEST_TMP/rejoined$1" >"$2" 2>&1
}
out=$SFS_TEST_TMP/rejoin-wrong.log
rejoin 1 "$out" && sfs_fail "--rejoin 1 while management is away was accepted: $(cat "$out")"
grep -q "but rank 1 did not run it: management is the first rank of host .*--rejoin 0 first" "$out" ||
    sfs_fail "--rejoin 1's refusal does not say why: $(cat "$out")"
echo "ok: --rejoin 1 while management is away is refused: $(grep -o 'rank 1 did not run it[^(]*' "$out")"

rejoin 0 "$SFS_TEST_TMP/rejoin0.log" &
rejoined=$!
started=$(date +%s.%N)
for _ in $(seq 300); do
    [ -f "$SFS_TEST_TMP/rejoined0" ] && break
    kill -0 $rejoined 2>/dev/null || break
    sleep 0.1
done
[ -f "$SFS_TEST_TMP/rejoined0" ] || { cat "$SFS_TEST_TMP/rejoin0.log"; sfs_fail "rank 0 did not rejoin"; }
took=$(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
grep -q "management restarted: all 4 targets registered again" "$SFS_TEST_TMP/rejoin0.log" ||
    { cat "$SFS_TEST_TMP/rejoin0.log"; sfs_fail "the rejoined management does not say that the targets are back"; }
echo "ok: rank 0 rejoined in $took s: $(grep -o 'management restarted: all 4 targets.*' "$SFS_TEST_TMP/rejoin0.log")"
for t in 101 102 103 104; do
    sfs_expect_eq "$(sfs_ctl listtargets | awk -v t=$t '$1 == t {print $4}')" online "target $t's state"
done

for i in 1 2 3; do
    as_alice get "/d/a/f$i" "$back/f$i" && cmp -s "$src" "$back/f$i" ||
        sfs_fail "sfsalice's /d/a/f$i does not read back identical after management rejoined"
done
echo "ok: sfsalice's 3 files read back identical"
head -c $((3 * 1024 * 1024 + 17)) /dev/urandom >"$SFS_TEST_TMP/new" && chmod 0644 "$SFS_TEST_TMP/new"
as_alice put "$SFS_TEST_TMP/new" /d/a/new && as_alice get /d/a/new "$back/new" &&
    cmp -s "$SFS_TEST_TMP/new" "$back/new" || sfs_fail "sfsalice's new file after the rejoin"
sfs_expect_eq "$(as_alice stat /d/a/new 2>&1 | grep -oE 'Size: [0-9]+|size[=: ]+[0-9]+' | grep -oE '[0-9]+' | head -n 1)" \
    $((3 * 1024 * 1024 + 17)) "the new file's size"
chunks_now() { find "$SFS_STATE/targets" -path '*/chunks/*' -type f | wc -l; }
before_rm=$(chunks_now)
as_alice rm /d/a/f1 || sfs_fail "sfsalice's rm after the rejoin"
for _ in $(seq 150); do [ "$(chunks_now)" -le $((before_rm - 4)) ] && break; sleep 0.1; done
[ "$(chunks_now)" -le $((before_rm - 4)) ] ||
    sfs_fail "f1's 4 chunk files were not deleted within 15 s of the rm ($before_rm before, $(chunks_now) now)"
sfs_expect_fail "No such file" as_alice get /d/a/f1 "$back/gone"
echo "ok: sfsalice writes, reads and removes files after management rejoined (the removed file's chunk files deleted)"

wait $writers || sfs_fail "sfsalice's writers failed across the outage (exit $?): $(cat "$SFS_TEST_TMP/writers.out")"
for r in 0 1; do
    as_alice get "/d/a/stream/f$r" "$back/stream$r" || sfs_fail "read back the writer's f$r"
    size=$(stat -c %s "$back/stream$r")
    [ "$size" -ge $((1 << 20)) ] && [ $((size % (1 << 20))) = 0 ] ||
        sfs_fail "the writer's f$r is $size bytes, not whole MiB"
    other=$(tr -d "$(printf "\\$(printf %o $((97 + r)))")" <"$back/stream$r" | wc -c)
    [ "$other" = 0 ] || sfs_fail "the writer's f$r holds $other bytes that it did not write"
done
echo "ok: sfsalice's MPI job kept writing its open files across the outage and closed them after the rejoin: exit 0, both files hold only its bytes"

out=$SFS_TEST_TMP/rejoin-again.log
rejoin 0 "$out" && sfs_fail "a second --rejoin 0 was accepted: $(cat "$out")"
grep -q "rank 0 runs management, which answers (pid [0-9]* on [^)]*): nothing to rejoin" "$out" ||
    sfs_fail "the second --rejoin 0's refusal does not say why: $(cat "$out")"
echo "ok: a second --rejoin 0 is refused: $(grep -o 'rank 0 runs management.*' "$out")"

# the rejoined rank holds what the lost one held for the whole service
port=$(sfs_free_port) || sfs_fail "no free port"
sfs_expect_fail "state dir $SFS_STATE is in use by pid $(cat "$SFS_TEST_TMP/rejoined0" | sed -n 's/^pid=//p') " \
    timeout 60 "${SFS_MPIRUN[@]}" -np 2 "$SFS_SERVER" --one-host --state "$SFS_STATE" --port "$port"
munged_socket=$(sed -n 's/^ *munge_socket: *//p' "$SFS_STATE/stripefs.yaml" | head -n 1)
if [ -n "$munged_socket" ]; then
    grep -q "took over the service's munged (pid [0-9]*)" "$SFS_TEST_TMP/rejoin0.log" ||
        sfs_fail "the rejoined rank did not take over the service's munged: $(grep -i munge "$SFS_TEST_TMP/rejoin0.log")"
fi

sfs_ctl shutdown >/dev/null || sfs_fail "shutdown through the rejoined management"
for _ in $(seq 600); do kill -0 $rejoined 2>/dev/null || break; sleep 0.1; done
wait $rejoined || { cat "$SFS_TEST_TMP/rejoin0.log"; sfs_fail "the rejoined rank did not stop cleanly"; }
for _ in $(seq 600); do kill -0 "$SFS_SERVICE_PID" 2>/dev/null || break; sleep 0.1; done
kill -0 "$SFS_SERVICE_PID" 2>/dev/null && sfs_fail "the original job's survivors did not stop"
kill -0 "$rank1" 2>/dev/null || kill -0 "$rank2" 2>/dev/null && sfs_fail "a storage rank still runs"
wait "$SFS_SERVICE_PID"
echo "ok: shutdown stopped the rejoined rank (exit 0) and the original job (exit $?)"
if [ "${MGMT_REJOIN_MIRROR:-0}" = 1 ]; then
    compared=0
    for pair in "101 102" "103 104"; do
        set -- $pair
        a=$SFS_STATE/targets/$1/chunks b=$SFS_STATE/targets/$2/chunks
        [ "$( (cd "$a" && find . -type f) | sort)" = "$( (cd "$b" && find . -type f) | sort)" ] ||
            sfs_fail "targets $1 and $2 do not hold the same chunk files"
        for f in $(cd "$a" && find . -type f); do
            cmp -s "$a/$f" "$b/$f" || sfs_fail "the copies of $f on $1 and $2 differ"
            compared=$((compared + 1))
        done
    done
    [ $compared -ge 8 ] || sfs_fail "only $compared mirrored chunk files to compare"
    echo "ok: both copies of every mirrored chunk file are byte-identical ($compared pairs)"
fi
if [ -n "$munged_socket" ]; then
    for _ in $(seq 50); do pgrep -f -- "munged --foreground --socket=$munged_socket" >/dev/null || break; sleep 0.1; done
    pgrep -f -- "munged --foreground --socket=$munged_socket" >/dev/null &&
        sfs_fail "the service's munged still runs after the shutdown"
    echo "ok: the service's munged, taken over by the rejoined rank, stopped with it"
fi
SFS_SERVICE_PID=""
