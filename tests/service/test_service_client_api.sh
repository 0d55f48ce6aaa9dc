#!/usr/bin/env bash
# The client API and stripefs-ctl against the real one-host service (3 ranks,
# 4 targets): bad arguments of every public call are -EINVAL, never a crash;
# O_SYNC/O_DSYNC writes are made durable by the targets (fdatasync) before
# they return; rm refuses the root before touching anything; ls lists every
# operand; verbs refuse operands they do not take; df counts the one disk
# of a one-host service once.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
CHECK="$SFS_BUILD/tests/progs/sfs_client_check"
ARGS="$SFS_BUILD/tests/progs/sfs_client_args"

sfs_start_service 3 --targets 4

# --- bad arguments (sfs_file_open(client, NULL, ...) used to crash)
sfs_ctl mkdir /args || sfs_fail "mkdir /args"
"$ARGS" /args || sfs_fail "a public call took a bad argument without -EINVAL (or crashed)"

# --- O_SYNC / O_DSYNC: count the fdatasync calls of the storage ranks
command -v strace >/dev/null || sfs_skip "strace is not installed (it counts the targets' fdatasync calls)"
# the storage ranks' pids (listnodes' PID column): the metadata server
# fdatasyncs its own commits
storage_pids=$(sfs_ctl listnodes --nodetype storage | awk 'NR > 1 {print $5}')
[ "$(echo $storage_pids | wc -w)" = 2 ] || sfs_fail "no 2 storage pids in listnodes: $storage_pids"
count_syncs() { # mode -> prints the fdatasync calls the targets made for 16 writes
    local log="$SFS_TEST_TMP/strace.$1" args=() pid st
    for pid in $storage_pids; do args+=(-p "$pid"); done
    strace -f -qq -e trace=fdatasync -o "$log" "${args[@]}" 2>"$log.err" &
    st=$!
    # attached once every thread of every rank is stopped once: give it a moment
    sleep 2
    "$CHECK" sync "/sync.$1" 16 "$1" >"$SFS_TEST_TMP/sync.$1.out" 2>&1 ||
        { cat "$SFS_TEST_TMP/sync.$1.out"; kill -INT $st; sfs_fail "sync $1 writes failed"; }
    kill -INT $st
    wait $st 2>/dev/null
    grep -c 'fdatasync(' "$log" || true
}
plain=$(count_syncs plain)
dsync=$(count_syncs dsync)
sync=$(count_syncs sync)
echo "fdatasync calls of the targets for 16 writes: plain $plain, O_DSYNC $dsync, O_SYNC $sync"
[ "$plain" -lt 16 ] || sfs_fail "plain writes made $plain fdatasync calls: the count cannot tell sync from not"
[ "$dsync" -ge 16 ] || sfs_fail "16 O_DSYNC writes made only $dsync fdatasync calls on the targets"
[ "$sync" -ge 16 ] || sfs_fail "16 O_SYNC writes made only $sync fdatasync calls on the targets"
echo "ok: every O_SYNC/O_DSYNC write was made durable on its target before it returned"

# --- rm never touches the root (it used to delete everything, then refuse)
sfs_ctl mkdir -p /keep/a/b || sfs_fail "mkdir -p"
echo data | sfs_ctl put - /keep/a/b/file || sfs_fail "put"
echo data | sfs_ctl put - /top || sfs_fail "put"
for spelling in / /. // /keep/.. stripefs:/ /keep/a/../..; do
    sfs_expect_fail "root directory|'\.' or '\.\.'" sfs_ctl rm -r "$spelling"
done
sfs_expect_fail "root directory.*|nothing removed" sfs_ctl rm -r /top /
sfs_expect_fail "not offered" sfs_ctl rm -r --no-preserve-root /
sfs_expect_eq "$(sfs_ctl get /keep/a/b/file -)" data "/keep/a/b/file after the refused rm -r"
sfs_expect_eq "$(sfs_ctl get /top -)" data "/top (named with / in one rm) after the refused rm -r"
sfs_ctl rm -r --preserve-root /keep/a || sfs_fail "rm -r --preserve-root /keep/a"
sfs_expect_fail "no such" sfs_ctl ls /keep/a

# --- ls lists each operand (it used to ignore all but the first)
sfs_ctl mkdir /ls1 /ls2 || sfs_fail "mkdir"
echo x | sfs_ctl put - /ls1/one || sfs_fail "put"
echo x | sfs_ctl put - /ls2/two || sfs_fail "put"
out=$(sfs_ctl ls /ls1 /ls2) || sfs_fail "ls /ls1 /ls2: $out"
sfs_expect_eq "$(echo "$out" | tr '\n' '|')" "/ls1:|one||/ls2:|two|" "ls /ls1 /ls2"
out=$(sfs_ctl ls /ls2 /top) || sfs_fail "ls /ls2 /top"
sfs_expect_eq "$(echo "$out" | tr '\n' '|')" "/top||/ls2:|two|" "ls of a directory and a file"
sfs_expect_eq "$(sfs_ctl ls /ls1 | tr '\n' '|')" "one|" "ls of one directory (no header)"
out=$(sfs_ctl ls /ls1 /missing /ls2 2>"$SFS_TEST_TMP/ls.err") && sfs_fail "ls of a missing path exits 0"
grep -q "/missing" "$SFS_TEST_TMP/ls.err" || sfs_fail "the ls error does not name /missing: $(cat "$SFS_TEST_TMP/ls.err")"
echo "$out" | grep -q "^two$" || sfs_fail "ls stopped at the missing operand: $out"
echo "ok: ls of a missing operand says so and lists the others"

# --- verbs refuse operands they do not take (shutdown x used to shut down)
for verb in listtargets df net check-servers shutdown info; do
    out=$(sfs_ctl "$verb" extra 2>&1)
    rc=$?
    [ $rc -eq 2 ] || sfs_fail "stripefs-ctl $verb extra: exit $rc, not 2 (usage): $out"
    echo "$out" | grep -q "unexpected operand 'extra'" || sfs_fail "$verb extra: $out"
    echo "ok: stripefs-ctl $verb extra: usage error"
done
sfs_expect_fail "usage" sfs_ctl mv /a /b /c
sfs_expect_fail "usage" sfs_ctl getentryinfo /a /b
sfs_ctl check-servers >/dev/null || sfs_fail "the service is not up after 'shutdown extra'"

# --- df: the 4 targets of a one-host service are one disk, counted once
out=$(sfs_ctl df) || sfs_fail "df: $out"
echo "$out"
one=$(echo "$out" | awk '$1 == "101" {print $5}')
total=$(echo "$out" | sed -n 's/^TOTAL: \([^ ]*\) capacity.*/\1/p')
[ -n "$one" ] && [ -n "$total" ] || sfs_fail "df shows no capacity for target 101 or in total"
sfs_expect_eq "$total" "$one" "df total capacity (4 targets in one state directory)"
echo "$out" | grep -q "4 of 4 targets online, on 1 file system" || sfs_fail "df does not say 1 file system"
# (listed in the map's order, which is the order the ranks registered in)
shared=$(echo "$out" | sed -n 's/^NOTE: 4 targets share one file system.*counts it once: //p' | tr ' ' '\n' | sort | tr '\n' ' ')
[ "$shared" = "101 102 103 104 " ] ||
    sfs_fail "df does not say which targets share the file system (listed: '$shared')"

sfs_stop_service
