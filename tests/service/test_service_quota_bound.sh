#!/usr/bin/env bash
# Quotas enforced by the storage targets (docs/quotas.md, "Enforced by the
# storage targets"), as sfsalice under a 2 MiB space limit: a modified
# client (tests/progs/sfs_quota_bypass.c) that holds a grant's write bound
# and sends hand-made WRITE and TRUNCATE requests gets EDQUOT one byte past
# the bound, at 16 MiB, without a bound and for a truncate to 1 GiB, while
# the 4 KiB ending at the bound are stored; a raised bound and another
# file's bound get EACCES; nothing reads back at the refused offsets and
# each chunk file is within its bound. Honest clients are unchanged: dd
# stops at exactly 2 MiB on a plain and on a mirrored file (the primary's
# forward to its buddy carries no bound), sfsbob (no limit) writes 4 MiB,
# a file open past the capability's lifetime gets new bounds with its
# renewed capability, and the usage equals what find counts.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/preload/preload_lib.sh"
sfs_test_users
MIB=1048576
BYPASS="$SFS_BUILD/tests/progs/sfs_quota_bypass"

# 4 targets in two mirror groups, as tests/faults/mirror_lib.sh
sfs_start_service 3 --targets 4
sfs_stop_service
cat >>"$SFS_STATE/stripefs.yaml" <<YAML
mirror:
  groups:
    - {primary: 101, secondary: 102}
    - {primary: 103, secondary: 104}
  same_host: true
YAML
# capabilities (and so bounds) of 20 s: the last step outlives one
sed -i 's/capability_lifetime: 1h/capability_lifetime: 20s/' "$SFS_STATE/stripefs.yaml"
grep -q "capability_lifetime: 20s" "$SFS_STATE/stripefs.yaml" || sfs_fail "capability_lifetime not set to 20s"
sfs_start_service 3
T=/stripefs/q
sfs_ctl mkdir /q && sfs_ctl chmod 1777 /q || sfs_fail "mkdir /q (1777)"
sfs_ctl mkdir /q/m && sfs_ctl chmod 1777 /q/m || sfs_fail "mkdir /q/m (1777)"
sfs_ctl setpattern --mirror --numtargets 2 --chunksize 64k /q/m >/dev/null || sfs_fail "setpattern --mirror /q/m"
sfs_ctl quota set --user sfsalice --space 2m || sfs_fail "quota set --user sfsalice --space 2m"

usage() { # --user|--group NAME: "files=N space=B"
    sfs_ctl quota show "$1" "$2" --raw | sed -n 's/^[a-z]* [^ ]* [0-9]* \(files=[0-9]* space=[0-9]*\).*/\1/p'
}
du_count() { # -user|-group NAME: what find says of NAME's files under /q
    sfs_pl find $T -type f "$1" "$2" -printf '%s\n' |
        awk '{n++; s += $1} END {printf "files=%d space=%d\n", n, s}'
}

# --- the modified client
sfs_as sfsalice "$BYPASS" /q/bypass /q/other >"$SFS_TEST_TMP/bypass.out" 2>&1
rc=$?
cat "$SFS_TEST_TMP/bypass.out"
[ $rc = 0 ] && grep -q "^PASSED" "$SFS_TEST_TMP/bypass.out" || sfs_fail "sfs_quota_bypass (exit $rc)"
sfs_expect_eq "$(usage --user sfsalice)" "$(du_count -user sfsalice)" "sfsalice's usage vs find after the bypass"
sfs_as sfsalice env LD_PRELOAD="$SFS_PRELOAD" rm $T/bypass $T/other || sfs_fail "rm the bypass files"

# --- honest clients are unchanged: dd stops at exactly the limit, plain and mirrored
head -c $((3 * MIB)) /dev/urandom >"$SFS_TEST_TMP/local.bin" && chmod 644 "$SFS_TEST_TMP/local.bin"
for f in $T/plain $T/m/mirrored; do
    sfs_as sfsalice env LD_PRELOAD="$SFS_PRELOAD" dd if="$SFS_TEST_TMP/local.bin" of=$f bs=64k \
        2>"$SFS_TEST_TMP/dd.err" && sfs_fail "dd of 3 MiB to $f under a 2 MiB quota succeeded"
    grep -q "Disk quota exceeded" "$SFS_TEST_TMP/dd.err" || sfs_fail "dd to $f: $(cat "$SFS_TEST_TMP/dd.err")"
    sfs_expect_eq "$(sfs_pl stat -c %s $f)" $((2 * MIB)) "size of $f after dd hit the quota"
    sfs_pl cat $f >"$SFS_TEST_TMP/back.bin" || sfs_fail "read $f back"
    cmp -n $((2 * MIB)) "$SFS_TEST_TMP/back.bin" "$SFS_TEST_TMP/local.bin" || sfs_fail "$f's 2 MiB differ"
    echo "ok: honest dd to $f stops at exactly 2 MiB, bytes equal: $(grep -m1 quota "$SFS_TEST_TMP/dd.err")"
    sfs_expect_eq "$(usage --user sfsalice)" "$(du_count -user sfsalice)" "sfsalice's usage vs find ($f)"
    sfs_as sfsalice env LD_PRELOAD="$SFS_PRELOAD" rm $f || sfs_fail "rm $f"
done
sfs_ctl mirror list | grep -q "needs-resync" && sfs_fail "a mirror member needs a resync: $(sfs_ctl mirror list)"

# --- sfsbob (no limit) is unaffected
sfs_as sfsbob env LD_PRELOAD="$SFS_PRELOAD" dd if=/dev/zero of=$T/b1 bs=1M count=4 2>/dev/null ||
    sfs_fail "sfsbob (no space quota) could not write 4 MiB"
sfs_expect_eq "$(sfs_pl stat -c %s $T/b1)" $((4 * MIB)) "sfsbob's 4 MiB file"
echo "ok: sfsbob is unaffected by sfsalice's limit"

# --- a bound lasts as long as its capability: a file open past the
# capability's lifetime (20 s) asks a new bound with the renewed one, even
# for a write within the old bound (under 10 MiB the first grant is 5 MiB)
sfs_ctl quota set --user sfsalice --space 10m || sfs_fail "quota set --user sfsalice --space 10m"
mark=$(wc -l <"$SFS_SERVICE_LOG")
sfs_as sfsalice "$SFS_BUILD/tests/progs/sfs_cap_renew" /q/renew.bin 22 ||
    sfs_fail "2 MiB written across a capability renewal"
tail -n +$((mark + 1)) "$SFS_SERVICE_LOG" | grep "refused " &&
    sfs_fail "a target refused an honest client's request"
sfs_expect_eq "$(usage --user sfsalice)" "$(du_count -user sfsalice)" "sfsalice's usage vs find after renewal"
echo "ok: an open past the capability's lifetime writes on with a renewed bound"
sfs_stop_service
