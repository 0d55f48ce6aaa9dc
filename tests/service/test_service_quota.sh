#!/usr/bin/env bash
# Quotas per user and per group (docs/quotas.md), as the unprivileged users
# sfsalice and sfsbob: only root (an administrator) sets limits, a user
# reads their own; a user over the space limit gets EDQUOT from dd through
# the preload, from cp under stripefs-run and MPI_ERR_QUOTA from MPI-IO,
# with a message naming the quota, and the file holds exactly what the
# limit allowed; another user is unaffected; a group's file limit refuses
# the create past it; after kill -9 of the service during a stream of
# writes and removals, fsck finds the usage records equal to the inodes
# and, once the crashed writers' registrations ran out, the usage equals a
# du-style count (find -printf %s) of each user's files.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/preload/preload_lib.sh"
RUN="$SFS_BUILD/tools/stripefs-run"
sfs_test_users
mpicc.openmpi -O2 -o "$SFS_TEST_TMP/mpi_quota_check" "$SFS_SRC/tests/mpi/mpi_quota_check.c" ||
    sfs_fail "compile tests/mpi/mpi_quota_check.c"
MIB=1048576

sfs_start_service 3 --targets 2
sfs_ctl mkdir /q && sfs_ctl chmod 1777 /q || sfs_fail "mkdir /q (1777)"
sfs_stop_service
# the shortest capability (10 s): a crashed writer's registration lasts 20 s
sed -i 's/capability_lifetime: 1h/capability_lifetime: 10s/' "$SFS_STATE/stripefs.yaml"
sfs_start_service 3 --targets 2
T=/stripefs/q

# "files=N space=B files_limit=N space_limit=B" of a user or group
usage() { # --user|--group NAME
    sfs_ctl quota show "$1" "$2" --raw | sed -n 's/^[a-z]* [^ ]* [0-9]* //p'
}
# what find says of NAME's files under /q: "files=N space=B"
du_count() { # -user|-group NAME
    sfs_pl find $T -type f "$1" "$2" -printf '%s\n' |
        awk '{n++; s += $1} END {printf "files=%d space=%d\n", n, s}'
}

# --- who may set and read
sfs_expect_fail "for administrators only \[EPERM " sfs_as sfsalice "$SFS_CTL" quota set --user sfsalice --space 1g
sfs_expect_fail "for administrators only \[EPERM " sfs_as sfsbob "$SFS_CTL" quota set --group sfsteam --files 1
sfs_expect_fail "for administrators only.*\[EPERM " sfs_as sfsalice "$SFS_CTL" quota list
sfs_expect_fail "for administrators only.*\[EPERM " sfs_as sfsalice "$SFS_CTL" quota show --user sfsbob
sfs_as sfsalice "$SFS_CTL" quota show >"$SFS_TEST_TMP/own.txt" || sfs_fail "sfsalice reads her own quota"
grep -q "^user *sfsalice" "$SFS_TEST_TMP/own.txt" || sfs_fail "own quota: $(cat "$SFS_TEST_TMP/own.txt")"
echo "ok: sfsalice may read her own record, not set one, list, or read sfsbob's"

sfs_ctl quota set --user sfsalice --space 10m || sfs_fail "quota set --user sfsalice --space 10m"
sfs_ctl quota set --group sfsbob --files 3 || sfs_fail "quota set --group sfsbob --files 3"
sfs_expect_eq "$(usage --user sfsalice)" "files=0 space=0 files_limit=0 space_limit=$((10 * MIB))" \
    "sfsalice's record after set"

# --- space: dd through the preload stops at the limit, exactly
sfs_as sfsalice env LD_PRELOAD="$SFS_PRELOAD" dd if=/dev/zero of=$T/a1 bs=1M count=20 \
    2>"$SFS_TEST_TMP/dd.err" && sfs_fail "dd of 20 MiB under a 10 MiB quota succeeded"
grep -q "Disk quota exceeded" "$SFS_TEST_TMP/dd.err" || sfs_fail "dd: $(cat "$SFS_TEST_TMP/dd.err")"
sfs_expect_eq "$(sfs_pl stat -c %s $T/a1)" $((10 * MIB)) "size of a1 after dd hit the quota"
echo "ok: dd: $(grep -m1 quota "$SFS_TEST_TMP/dd.err")"
head -c 100000 /dev/urandom >"$SFS_TEST_TMP/local.bin" && chmod 644 "$SFS_TEST_TMP/local.bin"
sfs_as sfsalice "$RUN" --mpi=openmpi cp "$SFS_TEST_TMP/local.bin" $T/a2 2>"$SFS_TEST_TMP/cp.err" &&
    sfs_fail "cp over the quota succeeded"
grep -q "Disk quota exceeded" "$SFS_TEST_TMP/cp.err" || sfs_fail "cp: $(cat "$SFS_TEST_TMP/cp.err")"
echo "ok: cp under stripefs-run: $(head -n1 "$SFS_TEST_TMP/cp.err")"
# the message names the quota
sfs_expect_fail "quota: user sfsalice \(uid $SFS_ALICE_UID\) over its space limit 10 MiB" \
    sfs_as sfsalice "$SFS_CTL" put "$SFS_TEST_TMP/local.bin" /q/a3
# overwriting what is already charged is allowed (as on ext4)
sfs_as sfsalice env LD_PRELOAD="$SFS_PRELOAD" dd if=/dev/zero of=$T/a1 bs=1M count=4 conv=notrunc \
    2>/dev/null || sfs_fail "overwrite of a1 within its size under the quota"
echo "ok: overwriting charged bytes is allowed"
# a space quota counts sizes: truncate -s past the limit is refused too
sfs_expect_fail "Disk quota exceeded" sfs_as sfsalice env LD_PRELOAD="$SFS_PRELOAD" truncate -s 11M $T/a1
sfs_expect_eq "$(sfs_pl stat -c %s $T/a1)" $((10 * MIB)) "size of a1 after a refused truncate"
sfs_as sfsalice env LD_PRELOAD="$SFS_PRELOAD" truncate -s 9M $T/a1 || sfs_fail "shrinking a1 under the quota"
sfs_as sfsalice env LD_PRELOAD="$SFS_PRELOAD" truncate -s 10M $T/a1 || sfs_fail "growing a1 back to the limit"

# --- another user is unaffected
sfs_as sfsbob env LD_PRELOAD="$SFS_PRELOAD" dd if=/dev/zero of=$T/b1 bs=1M count=20 2>/dev/null ||
    sfs_fail "sfsbob (no space quota) could not write 20 MiB"
sfs_expect_eq "$(sfs_pl stat -c %s $T/b1)" $((20 * MIB)) "sfsbob's 20 MiB file"

# --- files: the group sfsbob may own 3
sfs_as sfsbob env LD_PRELOAD="$SFS_PRELOAD" touch $T/b2 $T/b3 || sfs_fail "sfsbob's files 2 and 3"
sfs_as sfsbob env LD_PRELOAD="$SFS_PRELOAD" touch $T/b4 2>"$SFS_TEST_TMP/touch.err" &&
    sfs_fail "a 4th file of group sfsbob (file limit 3) was created"
grep -q "Disk quota exceeded" "$SFS_TEST_TMP/touch.err" || sfs_fail "touch: $(cat "$SFS_TEST_TMP/touch.err")"
sfs_expect_fail "quota: group sfsbob \(gid $SFS_BOB_GID\) over its file limit 3 on /q/b5" \
    sfs_as sfsbob "$SFS_CTL" put "$SFS_TEST_TMP/local.bin" /q/b5
sfs_as sfsalice env LD_PRELOAD="$SFS_PRELOAD" touch $T/a4 || sfs_fail "sfsalice is not under sfsbob's file limit"
sfs_as sfsbob env LD_PRELOAD="$SFS_PRELOAD" rm $T/b3 || sfs_fail "rm b3"
sfs_as sfsbob env LD_PRELOAD="$SFS_PRELOAD" touch $T/b4 || sfs_fail "a file freed by rm is not usable again"
sfs_expect_eq "$(usage --group sfsbob)" "files=3 space=$((20 * MIB)) files_limit=3 space_limit=0" \
    "group sfsbob's record"
echo "ok: the group file limit refuses the 4th create, names the quota, and rm frees one"

# --- chgrp by a user into a group at its file limit is refused (as ext4); root's is not
sfs_ctl quota set --group sfsteam --files 1 || sfs_fail "quota set --group sfsteam --files 1"
sfs_as sfsalice env LD_PRELOAD="$SFS_PRELOAD" chgrp sfsteam $T/a4 || sfs_fail "chgrp a4 into sfsteam (0 of 1)"
sfs_as sfsalice env LD_PRELOAD="$SFS_PRELOAD" chgrp sfsteam $T/a2 2>"$SFS_TEST_TMP/chgrp.err" &&
    sfs_fail "chgrp of a 2nd file into sfsteam (file limit 1) succeeded"
grep -q "Disk quota exceeded" "$SFS_TEST_TMP/chgrp.err" || sfs_fail "chgrp: $(cat "$SFS_TEST_TMP/chgrp.err")"
sfs_as sfsalice env LD_PRELOAD="$SFS_PRELOAD" chgrp sfsalice $T/a4 || sfs_fail "chgrp a4 back"
sfs_expect_eq "$(usage --group sfsteam)" "files=0 space=0 files_limit=1 space_limit=0" "group sfsteam's record"
echo "ok: a user's chgrp into a group at its file limit: $(head -n1 "$SFS_TEST_TMP/chgrp.err")"

# --- MPI-IO: MPI_ERR_QUOTA with the quota's words
sfs_ctl quota set --user sfsalice --space 14m || sfs_fail "quota set 14m"
sfs_as sfsalice timeout 120 mpirun.openmpi --oversubscribe -np 1 -x STRIPEFS_CONFIG "$RUN" \
    "$SFS_TEST_TMP/mpi_quota_check" stripefs:/q/mpi 8 >"$SFS_TEST_TMP/mpi.out" 2>&1 ||
    { cat "$SFS_TEST_TMP/mpi.out"; sfs_fail "mpi_quota_check"; }
cat "$SFS_TEST_TMP/mpi.out"
grep -q "^CLASS MPI_ERR_QUOTA" "$SFS_TEST_TMP/mpi.out" || sfs_fail "MPI-IO: no MPI_ERR_QUOTA"
grep -q "^MESSAGE .*quota: user sfsalice" "$SFS_TEST_TMP/mpi.out" || sfs_fail "MPI-IO: message names no quota"
sfs_expect_eq "$(grep ^WROTE "$SFS_TEST_TMP/mpi.out")" "WROTE 4" "MPI-IO blocks written under 14 MiB"

# --- an administrator lists every record
sfs_ctl quota list --raw >"$SFS_TEST_TMP/list.txt" || sfs_fail "quota list"
cat "$SFS_TEST_TMP/list.txt"
grep -q "^user sfsalice $SFS_ALICE_UID files=5 .* space_limit=$((14 * MIB))\$" "$SFS_TEST_TMP/list.txt" ||
    sfs_fail "quota list has no record of sfsalice with her 5 files and 14 MiB limit"
grep -q "^group sfsbob $SFS_BOB_GID files=3 .* files_limit=3 " "$SFS_TEST_TMP/list.txt" ||
    sfs_fail "quota list has no record of group sfsbob with its file limit"

# --- usage is what du counts
sfs_expect_eq "$(usage --user sfsalice | cut -d' ' -f1-2)" "$(du_count -user sfsalice)" "sfsalice's usage vs find"
sfs_expect_eq "$(usage --user sfsbob | cut -d' ' -f1-2)" "$(du_count -user sfsbob)" "sfsbob's usage vs find"

# --- kill -9 during a stream of writes and removals, then a restart
sfs_ctl quota set --user sfsalice --space 1g || sfs_fail "quota set 1g"
sfs_as sfsalice env LD_PRELOAD="$SFS_PRELOAD" sh -c "
    i=0; while [ \$i -lt 400 ]; do i=\$((i + 1))
        dd if=/dev/zero of=$T/c\$i bs=4k count=\$((i % 40 + 1)) 2>/dev/null
        [ \$i -gt 3 ] && rm -f $T/c\$((i - 3))
    done" &
stream=$!
sleep 4
kill -0 $stream 2>/dev/null || sfs_fail "the dd/rm stream ended before the kill (make it longer)"
sfs_kill9_service
wait $stream 2>/dev/null
sfs_start_service 3 --targets 2
"$SFS_BUILD/stripefs-fsck" >"$SFS_TEST_TMP/fsck.out" 2>&1 ||
    { cat "$SFS_TEST_TMP/fsck.out"; sfs_fail "stripefs-fsck after kill -9 (quota usage vs inodes)"; }
echo "ok: after kill -9 fsck finds every usage record equal to its inodes' recount"
# before the leases run out a cut-off writer is charged its grant: never less than it wrote
charged=$(usage --user sfsalice | sed 's/.*space=\([0-9]*\).*/\1/')
counted=$(du_count -user sfsalice | sed 's/.*space=//')
[ "$charged" -ge "$counted" ] || sfs_fail "after kill -9: sfsalice charged $charged bytes, find counts $counted"
echo "ok: right after the restart sfsalice is charged $charged bytes, find counts $counted"
# a writer the kill cut off stays registered for its lease (10 s + 10 s):
# until then stats ask the targets and its usage is its grant; after it,
# one stat keeps the targets' size and the usage follows
sleep 21
du_count -user sfsalice >/dev/null
sfs_expect_eq "$(usage --user sfsalice | cut -d' ' -f1-2)" "$(du_count -user sfsalice)" \
    "sfsalice's usage vs find after kill -9 and restart"
sfs_expect_eq "$(usage --group sfsalice | cut -d' ' -f1-2)" "$(du_count -group sfsalice)" \
    "group sfsalice's usage vs find after kill -9 and restart"
sfs_stop_service
