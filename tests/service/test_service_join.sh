#!/usr/bin/env bash
# A drive added to a running service (issue 13, item 4): the administrator
# adds target 105 to the service's config, and `stripefs-server --join` on its
# host serves it as a new rank while the service runs. New files use it at
# once, files written before and after read back, the joined rank stops with
# the service, and a full restart with the edited config serves 105 from a
# rank of the job. Mistakes are refused before anything changes: a --join
# with no new target in the config, --join with --targets or --rejoin.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
sfs_test_users
alice=sfsalice
home=$(sfs_user_home $alice)

sfs_start_service 3 --targets 4
config="$SFS_STATE/stripefs.yaml"
sfs_ctl mkdir /alice && sfs_ctl chown $alice:$alice /alice || sfs_fail "mkdir /alice"
for i in 1 2 3; do
    head -c $((3000000 + i * 77777)) /dev/urandom >"$home/before$i"
done
chown $alice "$home"/before*
for i in 1 2 3; do
    sfs_as $alice "$SFS_CTL" put "$home/before$i" /alice/before$i || sfs_fail "put before$i as $alice"
done

join() { # log args...: a --join of its own, in the background (JOIN_PID)
    local log=$1
    shift
    "${SFS_MPIRUN[@]}" -np 1 "$SFS_SERVER" --one-host --state "$SFS_STATE" --join "$@" >"$log" 2>&1 &
    JOIN_PID=$!
}

# refused before anything changes: nothing new in the config
cp "$config" "$SFS_TEST_TMP/config.before"
join "$SFS_TEST_TMP/join-nothing.log"
wait $JOIN_PID && sfs_fail "--join with no new target in the config was not refused"
grep -q "names no target on host .* that the running service does not serve already" \
    "$SFS_TEST_TMP/join-nothing.log" || { cat "$SFS_TEST_TMP/join-nothing.log"; sfs_fail "--join's refusal does not say why"; }
echo "ok: --join with nothing new is refused: $(grep -o 'cannot join.*' "$SFS_TEST_TMP/join-nothing.log" | cut -c1-150)"
for bad in "--targets 2" "--rejoin 1"; do
    # shellcheck disable=SC2086
    out=$("${SFS_SERVER_ENV[@]}" "$SFS_SERVER" --one-host --state "$SFS_STATE" --join $bad 2>&1) &&
        sfs_fail "--join $bad was accepted"
    echo "ok: --join $bad refused: $(echo "$out" | head -n 1 | cut -c1-120)"
done
cmp -s "$config" "$SFS_TEST_TMP/config.before" || sfs_fail "a refused --join changed the config"
sfs_expect_eq "$("$SFS_CTL" listtargets | grep -c '^ *10[0-9]')" 4 "targets after the refusals"

# the administrator adds target 105 on this host to the config, then joins it
host=$(sed -n 's/^- {name: \([^,]*\),.*/\1/p' "$config" | head -n 1)
[ -n "$host" ] || sfs_fail "no host in $config"
sed -i "/^- {id: 104,/a - {id: 105, host: $host, dir: $SFS_STATE/targets/105}" "$config" ||
    sfs_fail "edit the config"
grep -q "id: 105" "$config" || sfs_fail "target 105 is not in the config"
# a new target whose directory holds chunk files already is refused,
# changing nothing there
mkdir -p "$SFS_STATE/targets/105/chunks/2a" &&
    echo stale >"$SFS_STATE/targets/105/chunks/2a/000000000000012a" || sfs_fail "make a stale chunk"
join "$SFS_TEST_TMP/join-stale.log"
wait $JOIN_PID && sfs_fail "--join of a target that holds chunk files was not refused"
grep -q "target 105 ($SFS_STATE/targets/105) holds chunk files .*--join takes new, empty targets only" \
    "$SFS_TEST_TMP/join-stale.log" || { cat "$SFS_TEST_TMP/join-stale.log"; sfs_fail "the stale target's refusal does not say why"; }
[ "$(find "$SFS_STATE/targets/105" | sort | tr '\n' ' ')" = "$SFS_STATE/targets/105 $SFS_STATE/targets/105/chunks $SFS_STATE/targets/105/chunks/2a $SFS_STATE/targets/105/chunks/2a/000000000000012a " ] ||
    sfs_fail "the refused --join changed target 105's directory: $(find "$SFS_STATE/targets/105")"
echo "ok: a --join of a target that holds chunk files is refused, nothing changed there"
rm -r "$SFS_STATE/targets/105" || sfs_fail "rm the stale target"
rm -f "$SFS_TEST_TMP/joined"
join "$SFS_TEST_TMP/join.log" --ready-file "$SFS_TEST_TMP/joined"
joined=$JOIN_PID
for _ in $(seq 600); do
    [ -f "$SFS_TEST_TMP/joined" ] && break
    kill -0 $joined 2>/dev/null || break
    sleep 0.1
done
[ -f "$SFS_TEST_TMP/joined" ] || { cat "$SFS_TEST_TMP/join.log"; sfs_fail "target 105 did not join"; }
grep -o "new target 105 joined as rank [0-9]*" "$SFS_TEST_TMP/join.log" >/dev/null ||
    { cat "$SFS_TEST_TMP/join.log"; sfs_fail "the joined rank does not say what it serves"; }
echo "ok: $(grep -o 'new target 105 joined as rank [0-9]*' "$SFS_TEST_TMP/join.log")"
listing=$("$SFS_CTL" listtargets) || sfs_fail "listtargets"
echo "$listing" | grep -E '^ *105 ' | grep -q online || { echo "$listing"; sfs_fail "105 is not online in listtargets"; }
echo "ok: listtargets shows 105 online"

# a second --join of the same target: it is served already
join "$SFS_TEST_TMP/join-again.log"
wait $JOIN_PID && sfs_fail "a second --join of target 105 was not refused"
grep -q "names no target" "$SFS_TEST_TMP/join-again.log" ||
    { cat "$SFS_TEST_TMP/join-again.log"; sfs_fail "the second --join's refusal does not say why"; }
echo "ok: a second --join of 105 is refused"

# new files over all five targets use 105, once the metadata server's
# chooser has the new map (its next refresh: a heartbeat interval): empty
# probe files until one is placed there
sfs_as $alice "$SFS_CTL" setpattern --numtargets 5 /alice || sfs_fail "setpattern --numtargets 5 as $alice"
: >"$home/empty" && chown $alice "$home/empty"
placed=0
for i in $(seq 60); do
    sfs_as $alice "$SFS_CTL" put "$home/empty" /alice/probe$i || sfs_fail "put probe$i as $alice"
    if "$SFS_CTL" getentryinfo /alice/probe$i | grep -qw 105; then
        placed=$i
        break
    fi
    sleep 0.5
done
[ $placed != 0 ] || sfs_fail "no new file placed on 105 within 30 s of the join"
echo "ok: the chooser places new files on 105 (probe $placed)"
for i in 1 2 3; do
    head -c $((3000000 + i * 55555)) /dev/urandom >"$home/after$i"
done
chown $alice "$home"/after*
for i in 1 2 3; do
    sfs_as $alice "$SFS_CTL" put "$home/after$i" /alice/after$i || sfs_fail "put after$i as $alice"
done
"$SFS_CTL" getentryinfo /alice/after1 | grep -q "105" || { "$SFS_CTL" getentryinfo /alice/after1; sfs_fail "after1 does not use target 105"; }
n105=$(find "$SFS_STATE/targets/105" -type f -size +0 | wc -l)
[ "$n105" -ge 3 ] || sfs_fail "target 105 holds $n105 chunk files, expected one per new file"
echo "ok: the three new files use 105 ($n105 chunk files there)"
check_all() { # when
    for f in before1 before2 before3 after1 after2 after3; do
        rm -f "$home/back"
        sfs_as $alice "$SFS_CTL" get /alice/$f "$home/back" || sfs_fail "get $f as $alice ($1)"
        cmp -s "$home/$f" "$home/back" || sfs_fail "$f differs ($1)"
    done
    echo "ok: all six files read back identical ($1)"
}
check_all "with 105 joined"

# the joined rank stops with the service
sfs_ctl shutdown >/dev/null || sfs_fail "shutdown"
for _ in $(seq 600); do kill -0 $joined 2>/dev/null || break; sleep 0.1; done
wait $joined || { cat "$SFS_TEST_TMP/join.log"; sfs_fail "the joined rank did not stop cleanly"; }
sfs_wait_service_exit
echo "ok: the joined rank and the service stopped cleanly"

# a full restart with the edited config: 105 is one of the job's targets
sfs_start_service 3
listing=$("$SFS_CTL" listtargets) || sfs_fail "listtargets after the restart"
echo "$listing" | grep -E '^ *105 ' | grep -q online || { echo "$listing"; sfs_fail "105 is not served after the restart"; }
check_all "after a full restart"
sfs_stop_service
