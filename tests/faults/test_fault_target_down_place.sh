#!/usr/bin/env bash
# Placement with a storage rank just killed: no file created later than one
# heartbeat interval and a margin after the kill is placed on the dead rank's
# targets, and each of those files is written without an error. (The dead
# rank's targets used to be chosen for about 10 s: management called a
# silent rank probably-offline only at half the offline timeout.) Files that
# got fewer targets than the pattern asks are not silent: the metadata
# server warns, naming the file and the counts.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"

heartbeat_s=2.0 # the config's default heartbeat interval
margin_s=1.5    # management: 0.75 s of slack, 0.1 s between looks; the map refresh; a loaded machine
SFS_SERVICE_MPI_ARGS="--mca orte_enable_recovery 1"
sfs_start_service 3 --targets 4
sfs_ctl mkdir /storm || sfs_fail "mkdir"
head -c 1200000 /dev/urandom >"$SFS_TEST_TMP/f.dat"
sfs_ctl put "$SFS_TEST_TMP/f.dat" /storm/warmup || sfs_fail "put before the fault"

victim=$(sfs_ctl listnodes | awk '$1 == 2 {print $5}')
[ -n "$victim" ] || sfs_fail "no pid for rank 2 in listnodes"
killed_at=$(date +%s.%N)
kill -9 "$victim"
sfs_log "injected: SIGKILL to storage rank 2 (pid $victim), which serves targets 102 and 104"

# create and write files for ~4 s; each line: index, start time, put's exit
: >"$SFS_TEST_TMP/puts"
i=0
end=$(awk -v k="$killed_at" 'BEGIN {printf "%.3f", k + 4.5}')
while awk -v n="$(date +%s.%N)" -v e="$end" 'BEGIN {exit !(n < e)}'; do
    started=$(date +%s.%N)
    STRIPEFS_TIMEOUT=8 "$SFS_CTL" put "$SFS_TEST_TMP/f.dat" "/storm/f$i" >/dev/null 2>"$SFS_TEST_TMP/put$i.err"
    echo "$i $started $?" >>"$SFS_TEST_TMP/puts"
    i=$((i + 1))
done
[ "$i" -ge 4 ] || sfs_fail "only $i files created in 4.5 s (too slow to measure)"

threshold=$(awk -v k="$killed_at" -v h="$heartbeat_s" -v m="$margin_s" 'BEGIN {printf "%.3f", k + h + m}')
last_dead="" first_clean="" late=0 bad=0
while read -r n started rc; do
    since=$(awk -v s="$started" -v k="$killed_at" 'BEGIN {printf "%.2f", s - k}')
    STRIPEFS_TIMEOUT=8 "$SFS_CTL" getentryinfo "/storm/f$n" >"$SFS_TEST_TMP/info$n" 2>&1 ||
        sfs_fail "getentryinfo /storm/f$n: $(cat "$SFS_TEST_TMP/info$n")"
    targets=$(awk '/^  \+ [0-9]+ @/ {printf "%s ", $2}' "$SFS_TEST_TMP/info$n")
    echo "f$n: created $since s after the kill, targets $targets put exit $rc" >>"$SFS_TEST_TMP/placed"
    if echo "$targets" | grep -qE '(^| )10[24] '; then
        last_dead=$since
    elif [ -z "$first_clean" ]; then
        first_clean=$since
    fi
    if awk -v s="$started" -v t="$threshold" 'BEGIN {exit !(s > t)}'; then
        late=$((late + 1))
        if echo "$targets" | grep -qE '(^| )10[24] '; then
            echo "  ^ placed on a dead target $since s after the kill" >&2
            bad=1
        fi
        if [ "$rc" != 0 ]; then
            echo "  ^ its write failed: $(head -c 300 "$SFS_TEST_TMP/put$n.err")" >&2
            bad=1
        fi
    fi
done <"$SFS_TEST_TMP/puts"
# the files around the change of placement
grep -B2 -A2 -m1 "put exit 0$" "$SFS_TEST_TMP/placed"
echo "measured: the last file placed on a dead target was created ${last_dead:-never} s after" \
    "the kill; the first without one ${first_clean:-never} s after (bound: $heartbeat_s s heartbeat + $margin_s s)"
[ "$late" -ge 2 ] || sfs_fail "only $late files created after the bound: nothing measured"
[ "$bad" = 0 ] || sfs_fail "files created more than $heartbeat_s + $margin_s s after the kill went to a dead target or failed"
echo "ok: the $late files created more than $heartbeat_s + $margin_s s after the kill avoid targets 102/104 and were written"

# the fewer targets are not silent
grep -qE "'/storm/f[0-9]+': created with 2 storage targets, its pattern asks 4: only 2 of the cluster's 4 targets" \
    "$SFS_SERVICE_LOG" || sfs_fail "no warning in the service log about a file with fewer targets"
echo "ok: the metadata server warned: $(grep -m1 -o "'/storm/f[0-9]*': created with.*" "$SFS_SERVICE_LOG")"
last=$(tail -n 1 "$SFS_TEST_TMP/puts" | awk '{print $1}')
grep -q "^+ Number of storage targets: 2 (its directory's pattern asks 4; fewer targets were online at create" \
    "$SFS_TEST_TMP/info$last" || sfs_fail "getentryinfo /storm/f$last does not say it got fewer targets: $(cat "$SFS_TEST_TMP/info$last")"
echo "ok: getentryinfo /storm/f$last: $(grep '^+ Number of storage targets' "$SFS_TEST_TMP/info$last")"
grep -q "^+ Number of storage targets: 4$" "$SFS_TEST_TMP/info0" ||
    sfs_fail "getentryinfo /storm/f0 (4 targets, as asked) has a note: $(cat "$SFS_TEST_TMP/info0")"
sfs_kill9_service
