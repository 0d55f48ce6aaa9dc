#!/usr/bin/env bash
# Unmodified coreutils on /stripefs paths through libstripefs-posix.so:
# mkdir, cp both ways with cmp, ls -l, stat, mv, cat, dd at offsets,
# truncate, touch, chmod, df, find, du, rm -r, and their error messages.
# The service's own tool (stripefs-ctl) checks that the data really is there.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/preload/preload_lib.sh"

sfs_start_service 3 --targets 4
T=/stripefs/cu
blob="$SFS_TEST_TMP/blob"
head -c 5000000 /dev/urandom >"$blob"

# --- the library itself: exports only libc names, loads UCX only on use
nm -D --defined-only "$SFS_PRELOAD_LIB" | awk '{print $3}' | sort >"$SFS_TEST_TMP/exported"
sort "$SFS_SRC/preload/libstripefs-posix.sym" | diff - "$SFS_TEST_TMP/exported" ||
    sfs_fail "the exported symbols differ from preload/libstripefs-posix.sym"
echo "ok: $(wc -l <"$SFS_TEST_TMP/exported") exported symbols, as preload/libstripefs-posix.sym"
sfs_expect_eq "$(sfs_pl grep -c libucp /proc/self/maps)" 0 \
    "UCX mappings in a process that never touches stripefs"
# (the '&& true' keeps bash from exec'ing grep in its own place)
sfs_pl bash -c 'test -d /stripefs/ && grep -q libucp /proc/$$/maps && true' ||
    sfs_fail "UCX was not loaded on the first stripefs path"
echo "ok: UCX is loaded on the first stripefs path only"

# --- mkdir, cp in and out, cmp both ways
sfs_pl mkdir $T || sfs_fail "mkdir $T"
sfs_pl mkdir -p $T/a/b/c || sfs_fail "mkdir -p"
sfs_pl cp "$blob" $T/a/blob || sfs_fail "cp into stripefs"
sfs_pl cmp "$blob" $T/a/blob || sfs_fail "cmp local stripefs"
sfs_pl cmp $T/a/blob "$blob" || sfs_fail "cmp stripefs local"
sfs_pl cp $T/a/blob "$SFS_TEST_TMP/blob.back" || sfs_fail "cp out of stripefs"
cmp "$blob" "$SFS_TEST_TMP/blob.back" || sfs_fail "the copy out differs"
sfs_ctl get /cu/a/blob "$SFS_TEST_TMP/blob.ctl" || sfs_fail "stripefs-ctl get"
cmp "$blob" "$SFS_TEST_TMP/blob.ctl" || sfs_fail "stripefs-ctl reads other bytes than cp wrote"
echo "ok: 5 MB copied in and out, identical (cmp both ways, and through stripefs-ctl)"

# --- stat, ls -l, mv, cat, md5sum
sfs_expect_eq "$(sfs_pl stat -c '%s %F %a' $T/a/blob)" "5000000 regular file 644" "stat"
sfs_expect_eq "$(sfs_ctl stat /cu/a/blob | awk '/Size:/ {print $2}')" 5000000 \
    "size per stripefs-ctl"
sfs_expect_eq "$(sfs_pl stat -c %F $T/a/b)" "directory" "stat of a directory"
sfs_expect_eq "$(sfs_pl ls $T/a | tr '\n' ' ')" "b blob " "ls"
sfs_pl ls -l $T/a | grep -Eq '^-rw-r--r-- +1 .* 5000000 .* blob$' ||
    sfs_fail "ls -l: $(sfs_pl ls -l $T/a)"
sfs_pl ls -la $T/a | grep -Eq '^d.* \.$' || sfs_fail "ls -la lists '.'"
echo "ok: ls -l"
sfs_pl mv $T/a/blob $T/a/b/moved || sfs_fail "mv"
sfs_expect_fail "no such file" sfs_pl stat $T/a/blob
sfs_pl cat $T/a/b/moved | cmp - "$blob" || sfs_fail "cat of the moved file"
sfs_expect_eq "$(sfs_pl md5sum $T/a/b/moved | cut -d' ' -f1)" \
    "$(md5sum <"$blob" | cut -d' ' -f1)" "md5sum (stdio fopen)"
echo "ok: mv, cat, md5sum"

# --- dd at offsets: a hole before, the data after, a byte-offset overwrite
sfs_pl dd if="$blob" of=$T/dd bs=64k seek=3 count=4 status=none || sfs_fail "dd seek=3"
sfs_expect_eq "$(sfs_pl stat -c %s $T/dd)" $((7 * 65536)) "size after dd seek=3 count=4"
sfs_pl dd if=$T/dd bs=64k skip=3 count=4 status=none | cmp - <(head -c 262144 "$blob") ||
    sfs_fail "dd read back at 192 KiB"
sfs_pl dd if=$T/dd bs=64k count=3 status=none | cmp - <(head -c 196608 /dev/zero) ||
    sfs_fail "the hole does not read as zeros"
sfs_pl dd if="$blob" of=$T/dd bs=64k seek=1000 count=1000 oflag=seek_bytes iflag=count_bytes \
    conv=notrunc status=none || sfs_fail "dd conv=notrunc at byte 1000"
sfs_pl dd if=$T/dd bs=64k skip=1000 count=1000 iflag=skip_bytes,count_bytes status=none |
    cmp - <(head -c 1000 "$blob") || sfs_fail "dd overwrite at byte 1000"
sfs_expect_eq "$(sfs_pl stat -c %s $T/dd)" $((7 * 65536)) "notrunc kept the size"
echo "ok: dd with offsets"

# --- truncate, touch, chmod, df, find, du
sfs_pl truncate -s 1000 $T/dd || sfs_fail "truncate"
sfs_expect_eq "$(sfs_pl stat -c %s $T/dd)" 1000 "size after truncate"
sfs_pl touch -d '2001-02-03 04:05:06 UTC' $T/touched || sfs_fail "touch -d"
sfs_expect_eq "$(sfs_pl stat -c %Y $T/touched)" "$(date -d '2001-02-03 04:05:06 UTC' +%s)" \
    "mtime from touch"
sfs_pl chmod 640 $T/touched || sfs_fail "chmod"
sfs_expect_eq "$(sfs_pl stat -c %a $T/touched)" 640 "mode after chmod"
sfs_expect_eq "$(sfs_pl stat -f -c %t $T)" 53465321 "statfs type"
sfs_pl df -P $T | awk 'NR == 2 && $2 > 0 && $6 == "/stripefs" {ok = 1} END {exit !ok}' ||
    sfs_fail "df: $(sfs_pl df -P $T 2>&1)"
echo "ok: df $(sfs_pl df -h $T | tail -n 1)"
sfs_expect_eq "$(sfs_pl find $T -type f | sort | tr '\n' ' ')" \
    "$T/a/b/moved $T/dd $T/touched " "find -type f"
sfs_expect_eq "$(sfs_pl du -sk $T/a | cut -f1)" $(((5000000 + 1023) / 1024)) "du -sk"

# --- the "stripefs:" form and another prefix
sfs_pl ls stripefs:/ | grep -qx cu || sfs_fail "ls stripefs:/"
sfs_expect_eq "$(STRIPEFS_PREFIX=/mnt/sfs-test sfs_pl stat -c %s /mnt/sfs-test/cu/dd)" 1000 \
    "STRIPEFS_PREFIX=/mnt/sfs-test"

# --- errors as coreutils print them
sfs_expect_fail "not empty" sfs_pl rmdir $T/a
sfs_expect_fail "is a directory" sfs_pl rm $T/a
sfs_expect_fail "is a directory" sfs_pl cat $T/a
sfs_expect_fail "no such file" sfs_pl ls $T/missing
sfs_expect_fail "file exists" sfs_pl mkdir $T/a
sfs_expect_fail "not a directory" sfs_pl ls $T/dd/x
nowhere="$SFS_TEST_TMP/none.yaml"
sfs_expect_fail "cannot connect to the stripefs service" \
    env STRIPEFS_CONFIG="$nowhere" LD_PRELOAD="$SFS_PRELOAD" ls $T
reports=$(STRIPEFS_CONFIG="$nowhere" sfs_pl ls $T $T/a $T/dd 2>&1 | grep -c "cannot connect")
sfs_expect_eq "$reports" 1 "connect failures reported per process"
STRIPEFS_CONFIG="$nowhere" sfs_pl ls $T 2>&1 | grep -q "Transport endpoint is not connected" ||
    sfs_fail "a failed connect is not ENOTCONN"

# --- rm, rmdir, rm -r
sfs_pl rm $T/touched || sfs_fail "rm"
sfs_pl rmdir $T/a/b/c || sfs_fail "rmdir"
sfs_pl rm -r $T || sfs_fail "rm -r"
sfs_ctl ls / | grep -q '^cu' && sfs_fail "$T is still there after rm -r"
echo "ok: rm, rmdir, rm -r"
sfs_stop_service
