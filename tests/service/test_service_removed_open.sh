#!/usr/bin/env bash
# A file removed while another process holds it open for writing
# (docs/metadata.md, "Removed while open"): as on this host's local file
# system (ext4 here), the writes after the removal succeed and the name is
# gone at once; the chunk files stay while the writer's registration lives
# (the metadata server's deletion waits for it) and go after its close, on
# every target and on both members of a mirror group, and none comes back:
# stripefs-fsck finds nothing. Before 2026-12-06 the deletion ran at once,
# and the writes after it made the chunk files again, which nothing but
# stripefs-fsck --repair removed. As sfsalice, a plain and a mirrored
# directory.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
W="$SFS_BUILD/tests/progs/sfs_size_writer"
[ -x "$W" ] || sfs_skip "make check TESTS= builds tests/progs/sfs_size_writer"
sfs_test_users

sfs_start_service 3 --targets 4
sfs_stop_service
cat >>"$SFS_STATE/stripefs.yaml" <<YAML
mirror:
  groups:
    - {primary: 101, secondary: 102}
    - {primary: 104, secondary: 103}
  same_host: true
YAML
sfs_start_service 3
user=sfsalice
sfs_ctl mkdir -m 0777 /r || sfs_fail "mkdir /r"
sfs_as $user "$SFS_CTL" mkdir /r/plain /r/mirrored || sfs_fail "mkdir as $user"
sfs_as $user "$SFS_CTL" setpattern --chunksize 64k --numtargets 4 /r/plain >/dev/null ||
    sfs_fail "setpattern /r/plain"
sfs_as $user "$SFS_CTL" setpattern --mirror --chunksize 64k /r/mirrored >/dev/null ||
    sfs_fail "setpattern --mirror /r/mirrored"

# --- the same on the local disk: write, remove by another process, write, close
home=$(sfs_user_home $user)
local_rc=0
sfs_as $user bash -c 'exec 3>"$1" && printf a >&3 && rm "$1" && printf b >&3 && exec 3>&-' \
    _ "$home/removed-open" || local_rc=$?
echo "local file system: $(stat -f -c %T "$home"): write after rm of an open file: exit $local_rc"
[ ! -e "$home/removed-open" ] || sfs_fail "the local file is still there"

# chunk files of entry $1 on all targets
chunks() { find "$SFS_STATE"/targets/*/chunks -name "$1" 2>/dev/null | wc -l; }

FIFO=$SFS_TEST_TMP/hold.fifo
OUT=$SFS_TEST_TMP/writer.out
for dir in plain mirrored; do
    f=/r/$dir/f
    rm -f "$FIFO" "$OUT"
    mkfifo -m 0666 "$FIFO" || sfs_fail "mkfifo"
    # 256 KiB, hold the file open, then 256 KiB more and close
    sfs_as $user "$W" $f write:0:262144 hold write:262144:262144 <"$FIFO" >"$OUT" 2>&1 &
    writer=$!
    exec 9>"$FIFO"
    for _ in $(seq 300); do
        grep -q holding "$OUT" 2>/dev/null && break
        sleep 0.1
    done
    grep -q holding "$OUT" || sfs_fail "$dir: the writer did not start: $(cat "$OUT")"
    id=$(sfs_ctl getentryinfo $f | awk '/EntryID/ {print $2}')
    [ -n "$id" ] || sfs_fail "$dir: no entry id"
    before=$(chunks "$id")
    [ "$before" -gt 0 ] || sfs_fail "$dir: no chunk file of $id after the first write"
    sfs_as $user "$SFS_CTL" rm $f || sfs_fail "$dir: rm while open"
    sfs_expect_fail "no such" sfs_as $user "$SFS_CTL" stat $f
    # a deletion round runs every second at most: three of them
    sleep 3
    sfs_expect_eq "$(chunks "$id")" "$before" \
        "$dir: chunk files of the removed file while its writer holds it (the deletion waits)"
    exec 9>&- # the writer goes on: 256 KiB more, then its close
    rc=0
    wait $writer || rc=$?
    cat "$OUT"
    sfs_expect_eq "$rc" "$local_rc" "$dir: writer's exit after writing to the removed file (as local)"
    grep -q "written 262144" "$OUT" || sfs_fail "$dir: the second write did not report its bytes"
    for _ in $(seq 100); do
        [ "$(chunks "$id")" = 0 ] && break
        sleep 0.1
    done
    sfs_expect_eq "$(chunks "$id")" 0 "$dir: chunk files of $id left after the writer's close"
    sleep 2 # nothing brings one back
    sfs_expect_eq "$(chunks "$id")" 0 "$dir: chunk files of $id 2 s later"
    echo "ok: $dir: written after its removal, its $before chunk files deleted after the close"
done

# --- an open that had not written before the removal: its first write asks
# to register, and a removed file takes no new writer (its writes would
# bypass a space quota: the removed file is charged to no one), so it fails
# naming the removal, where the local disk's succeeds (exit $local_rc)
sfs_as $user "$W" /r/plain/g write:0:1000 >/dev/null || sfs_fail "write /r/plain/g"
rm -f "$FIFO" "$OUT"
mkfifo -m 0666 "$FIFO" || sfs_fail "mkfifo"
sfs_as $user "$W" /r/plain/g hold write:0:1000 <"$FIFO" >"$OUT" 2>&1 &
writer=$!
exec 9>"$FIFO"
for _ in $(seq 300); do
    grep -q holding "$OUT" 2>/dev/null && break
    sleep 0.1
done
grep -q holding "$OUT" || sfs_fail "the writer did not start: $(cat "$OUT")"
sfs_as $user "$SFS_CTL" rm /r/plain/g || sfs_fail "rm /r/plain/g while open"
exec 9>&-
rc=0
wait $writer || rc=$?
cat "$OUT"
sfs_expect_eq "$rc" 1 "first write after the removal of a file opened for writing: writer's exit"
grep -q "FAILED: write:0:1000: .*was removed" "$OUT" || sfs_fail "the failed write does not say the file was removed"

"$SFS_BUILD/stripefs-fsck" >"$SFS_TEST_TMP/fsck.txt" 2>&1 ||
    { cat "$SFS_TEST_TMP/fsck.txt"; sfs_fail "stripefs-fsck found problems"; }
echo "ok: stripefs-fsck finds no orphan chunk file"
sfs_stop_service
