#!/usr/bin/env bash
# The real service (3 ranks, 4 targets) driven by stripefs-ctl and the client
# library: namespace operations, patterns, error codes, listtargets/df.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
CHECK="$SFS_BUILD/tests/progs/sfs_client_check"

sfs_start_service 3 --targets 4

out=$(sfs_ctl listtargets) || sfs_fail "listtargets failed"
echo "$out"
sfs_expect_eq "$(echo "$out" | grep -c ' online ')" 4 "targets online in listtargets"
echo "$out" | awk 'NR > 1 && $6 == "" {exit 1}' || sfs_fail "a target without free space shown"
out=$(sfs_ctl df) || sfs_fail "df failed"
echo "$out" | grep -q "4 of 4 targets online" || sfs_fail "df does not count 4 online targets: $out"
out=$(sfs_ctl listnodes) || sfs_fail "listnodes failed"
sfs_expect_eq "$(echo "$out" | tail -n +2 | wc -l)" 3 "server ranks in listnodes"
sfs_ctl check-servers || sfs_fail "check-servers reports a problem"

sfs_ctl mkdir -p /proj/run1/out || sfs_fail "mkdir -p"
sfs_ctl mkdir /proj/run2 || sfs_fail "mkdir"
sfs_expect_eq "$(sfs_ctl ls /proj | tr '\n' ' ')" "run1/ run2/ " "ls /proj"
sfs_expect_fail "exists" sfs_ctl mkdir /proj/run2
sfs_expect_fail "no such file" sfs_ctl stat /proj/nothing
sfs_ctl mv /proj/run2 /proj/run3 || sfs_fail "mv"
sfs_expect_eq "$(sfs_ctl ls /proj | tr '\n' ' ')" "run1/ run3/ " "ls after mv"
sfs_expect_fail "not empty" sfs_ctl rm /proj

# a directory pattern is inherited by files created in it
sfs_ctl setpattern --chunksize 1m --numtargets 2 /proj/run1 || sfs_fail "setpattern"
echo hello | sfs_ctl put - /proj/run1/small || sfs_fail "put"
info=$(sfs_ctl getentryinfo /proj/run1/small) || sfs_fail "getentryinfo"
echo "$info"
echo "$info" | grep -q "Chunksize: 1.0M\|Chunksize: 1M" || sfs_fail "chunk size not inherited"
sfs_expect_eq "$(echo "$info" | grep -c '^  + ')" 2 "targets of a file in a 2-target dir"
sfs_expect_eq "$(sfs_ctl get /proj/run1/small -)" "hello" "content read back"
sfs_expect_fail "power of two|must be|is not" sfs_ctl setpattern --chunksize 100k /proj
sfs_expect_fail "is a file" sfs_ctl setpattern --chunksize 1m /proj/run1/small

"$CHECK" errors /proj/run3 || sfs_fail "error codes"
sfs_ctl rm -r /proj || sfs_fail "rm -r"
sfs_expect_fail "no such" sfs_ctl ls /proj
sfs_stop_service
