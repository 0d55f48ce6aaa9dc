#!/usr/bin/env bash
# kill -9 of the storage rank that holds the secondaries of both mirror
# groups (docs/mirroring.md, "Failover: a secondary lost"): the primaries
# serve alone. A mirrored write goes on (the job sees a pause, printed,
# never an error), the secondaries are marked needs-resync (mirror list,
# listtargets), each primary's change log lists the chunk file written
# meanwhile and not the one written before, later writes pay no pause,
# and every mirrored file reads back. An unmirrored file on the lost
# targets still fails fast, naming the target.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/faults/mirror_lib.sh"
sfs_test_users
user=sfsalice
mirror_service_start 4
home=$(sfs_user_home "$user")
head -c 4000000 /dev/urandom >"$home/blob" && chown "$user" "$home/blob"
head -c 3000000 /dev/urandom >"$home/blob2" && chown "$user" "$home/blob2"
sfs_ctl mkdir -m 0777 /m /u || sfs_fail "mkdir"
sfs_ctl setpattern --no-mirror --numtargets 4 /u >/dev/null || sfs_fail "setpattern /u"
sfs_as "$user" "$SFS_CTL" mkdir /m/mine || sfs_fail "mkdir as $user"
sfs_as "$user" "$SFS_CTL" setpattern --mirror --numtargets 2 --chunksize 64k /m/mine >/dev/null ||
    sfs_fail "setpattern"
sfs_as "$user" "$SFS_CTL" put "$home/blob" /m/mine/before || sfs_fail "put before the fault"
sfs_as "$user" "$SFS_CTL" put "$home/blob" /u/plain || sfs_fail "unmirrored put before the fault"
sfs_ctl mirror list | grep -q "needs-resync" && sfs_fail "a member needs a resync before the fault: $(sfs_ctl mirror list)"

victim=$(sfs_ctl listnodes | awk '$1 == 2 {print $5}')
[ -n "$victim" ] || sfs_fail "no pid for rank 2 in listnodes"
start=$(date +%s.%N)
kill -9 "$victim"
sfs_log "injected: SIGKILL to storage rank 2 (pid $victim): the secondaries 102 and 104"

out=$(sfs_as "$user" "$SFS_CTL" put "$home/blob" /m/mine/after 2>&1)
rc=$?
took=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
echo "mirrored write with the secondaries down: exit $rc, the pause: $took s (offline timeout 4 s, forward deadline 3 s) $out"
[ $rc -eq 0 ] || sfs_fail "the mirrored write failed with the secondaries down: $out"
awk -v t="$took" 'BEGIN {exit !(t < 12)}' || sfs_fail "the mirrored write took $took s"

t0=$(date +%s.%N)
sfs_as "$user" "$SFS_CTL" put "$home/blob2" /m/mine/later || sfs_fail "a later mirrored write failed"
later=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
echo "a later mirrored write, the buddy known lost: $later s"
awk -v t="$later" 'BEGIN {exit !(t < 2.5)}' || sfs_fail "a later mirrored write still waits for the lost buddy ($later s)"

for f in before:blob after:blob later:blob2; do
    sfs_as "$user" "$SFS_CTL" get "/m/mine/${f%%:*}" - | cmp - "$home/${f##*:}" ||
        sfs_fail "mirrored file ${f%%:*} does not read back from its primaries"
done
echo "ok: every mirrored file reads back from its primaries"

# management learns the states from the primaries
for _ in $(seq 50); do
    [ "$(sfs_ctl mirror list | grep -c needs-resync)" -eq 2 ] && break
    sleep 0.1
done
sfs_ctl mirror list
sfs_ctl mirror list | grep -E "^1 .*101 @.* good .*102 @.*needs-resync" >/dev/null ||
    sfs_fail "mirror list does not show 102 needs-resync"
sfs_ctl mirror list | grep -E "^2 .*103 @.* good .*104 @.*needs-resync" >/dev/null ||
    sfs_fail "mirror list does not show 104 needs-resync"
targets=$(sfs_ctl listtargets)
echo "$targets"
for t in 102 104; do
    echo "$targets" | grep -qE "^$t .*secondary needs-resync" || sfs_fail "listtargets: $t is not needs-resync"
done
for t in 101 103; do
    echo "$targets" | grep -qE "^$t .*primary good" || sfs_fail "listtargets: $t is not a good primary"
done

# the change logs: the file written while the buddy was away, not the other
id_of() { printf "%d" "0x$(sfs_ctl getentryinfo "$1" | awk '/^EntryID:/ {print $2}')"; }
before_id=$(id_of /m/mine/before)
after_id=$(id_of /m/mine/after)
for t in 101 103; do
    dir=$(echo "$targets" | awk -v t=$t '$1 == t {print $NF}')
    log="$dir/mirror-changes"
    [ -f "$log" ] || sfs_fail "no change log $log"
    head -n 1 "$log" | grep -qx "stripefs mirror changes: target $t buddy $((t + 1))" ||
        sfs_fail "$log: bad header: $(head -n 1 "$log")"
    grep -qx "$after_id" "$log" || sfs_fail "$log does not list /m/mine/after ($after_id): $(cat "$log")"
    grep -qx "$before_id" "$log" && sfs_fail "$log lists /m/mine/before, written before the fault"
    echo "ok: $log lists $(($(wc -l <"$log") - 1)) chunk files"
done

# unmirrored files keep failing fast, naming the lost target (a file with
# chunks on 102 and 104, written again)
t0=$(date +%s.%N)
out=$(sfs_as "$user" "$SFS_CTL" put "$home/blob" /u/plain 2>&1) &&
    sfs_fail "an unmirrored write to the lost targets succeeded"
took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
echo "$out" | grep -qE "target 10[24]" || sfs_fail "the unmirrored failure does not name 102/104: $out"
awk -v t="$took" 'BEGIN {exit !(t < 15)}' || sfs_fail "the unmirrored write failed only after $took s"
echo "ok: an unmirrored write fails in $took s naming the target: $out"
