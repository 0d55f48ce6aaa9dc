#!/usr/bin/env bash
# Visibility with a storage rank killed: getentryinfo shows the pattern with
# the dead rank's targets marked; stripefs-ctl ls -l and stat, and ls -l and
# stat(1) through libstripefs-posix.so, answer for every file (mode, owner,
# times from the metadata server) and show a size that needs a dead target
# as unknown ("?" in ctl ls -l, with a note naming the targets). They used
# to fail: getentryinfo with "storage target 102 unreachable", ls -l with
# "??????????". Reading a chunk on the dead target still fails fast, naming
# the target (unmirrored files keep fail-fast data).
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/preload/preload_lib.sh"

SFS_SERVICE_MPI_ARGS="--mca orte_enable_recovery 1"
sfs_start_service 3 --targets 4
sfs_ctl mkdir /d /one || sfs_fail "mkdir"
sfs_ctl setpattern --numtargets 1 /one >/dev/null || sfs_fail "setpattern"
head -c 3000000 /dev/urandom >"$SFS_TEST_TMP/big.dat"
head -c 1000 /dev/urandom >"$SFS_TEST_TMP/small.dat"
sfs_ctl put "$SFS_TEST_TMP/big.dat" /d/big || sfs_fail "put big"
sfs_ctl chmod 640 /d/big || sfs_fail "chmod"
for n in 1 2 3 4; do
    sfs_ctl put "$SFS_TEST_TMP/small.dat" "/one/s$n" || sfs_fail "put s$n"
done
# the same mode on local ext4, for the mode string
cp "$SFS_TEST_TMP/big.dat" "$SFS_TEST_TMP/local" && chmod 640 "$SFS_TEST_TMP/local"
local_mode=$(stat -c %A "$SFS_TEST_TMP/local")
sfs_ctl getentryinfo /d/big | grep -q "10[24] @" || sfs_fail "/d/big has no chunk on rank 2's targets"
# a writer holds /d/big (its first byte rewritten): the metadata server
# does not know its size, only the targets do (docs/metadata.md); a closed
# file's kept size would be answered without them
mkfifo "$SFS_TEST_TMP/hold" || sfs_fail "mkfifo"
"$SFS_BUILD/tests/progs/sfs_size_writer" /d/big write:0:1 hold <"$SFS_TEST_TMP/hold" >"$SFS_TEST_TMP/held" 2>&1 &
holder=$!
exec 9>"$SFS_TEST_TMP/hold"
for _ in $(seq 300); do grep -q holding "$SFS_TEST_TMP/held" && break; sleep 0.1; done
grep -q holding "$SFS_TEST_TMP/held" || sfs_fail "the writer of /d/big did not start: $(cat "$SFS_TEST_TMP/held")"

victim=$(sfs_ctl listnodes | awk '$1 == 2 {print $5}')
[ -n "$victim" ] || sfs_fail "no pid for rank 2 in listnodes"
kill -9 "$victim"
sfs_log "injected: SIGKILL to storage rank 2 (pid $victim), which serves targets 102 and 104"

check_views() { # when: "just after the kill" or "once management noticed"
    local when=$1 out
    out=$(STRIPEFS_TIMEOUT=8 "$SFS_CTL" getentryinfo /d/big 2>&1) ||
        sfs_fail "getentryinfo /d/big $when: $out"
    echo "$out" | grep -E "^  \+ 10[24] @" | grep -qvE "offline" &&
        sfs_fail "getentryinfo $when does not mark targets 102/104 offline: $out"
    echo "$out" | grep -E "^  \+ 10[13] @" | grep -q "offline" &&
        sfs_fail "getentryinfo $when marks a live target offline: $out"
    echo "$out" | grep -q "^File size: unknown (at least" ||
        sfs_fail "getentryinfo $when does not say the size is unknown: $out"
    echo "ok: getentryinfo $when: $(echo "$out" | grep -E '^  \+ 102 @' | sed 's/^ *//')"

    STRIPEFS_TIMEOUT=8 "$SFS_CTL" ls -l /d /one >"$SFS_TEST_TMP/ls.out" 2>"$SFS_TEST_TMP/ls.err" ||
        sfs_fail "ctl ls -l $when failed: $(cat "$SFS_TEST_TMP/ls.out" "$SFS_TEST_TMP/ls.err")"
    grep -q '??????????' "$SFS_TEST_TMP/ls.out" && sfs_fail "ctl ls -l $when: $(cat "$SFS_TEST_TMP/ls.out")"
    grep -qE "^$local_mode .* \? .* big$" "$SFS_TEST_TMP/ls.out" ||
        sfs_fail "ctl ls -l $when: no '$local_mode ... ? ... big' line: $(cat "$SFS_TEST_TMP/ls.out")"
    grep -qE "size of [0-9]+ files? cannot be known: storage targets? 10[24]" "$SFS_TEST_TMP/ls.err" ||
        sfs_fail "ctl ls -l $when: no note naming the dead targets: $(cat "$SFS_TEST_TMP/ls.err")"
    # the small files on rank 1's targets keep their exact size
    [ "$(grep -cE " 1000 .* s[1-4]$" "$SFS_TEST_TMP/ls.out")" -ge 1 ] ||
        sfs_fail "ctl ls -l $when: no file on a live target shows its size 1000: $(cat "$SFS_TEST_TMP/ls.out")"
    echo "ok: ctl ls -l $when: $(grep ' big$' "$SFS_TEST_TMP/ls.out"); $(cat "$SFS_TEST_TMP/ls.err")"

    out=$(STRIPEFS_TIMEOUT=8 "$SFS_CTL" stat /d/big 2>&1) || sfs_fail "ctl stat $when: $out"
    echo "$out" | grep -qE "Size: unknown \(at least [0-9]+; storage targets? 10[24]" ||
        sfs_fail "ctl stat $when: $out"
    echo "ok: ctl stat $when: $(echo "$out" | grep Size: | sed 's/^ *//')"

    out=$(STRIPEFS_TIMEOUT=8 sfs_pl ls -l /stripefs/d /stripefs/one 2>&1) ||
        sfs_fail "ls -l through the preload $when: $out"
    echo "$out" | grep -q '?????????' && sfs_fail "ls -l through the preload $when: $out"
    echo "$out" | grep -qE "^$local_mode .* big$" || sfs_fail "preload ls -l $when: $out"
    echo "ok: preload ls -l $when: $(echo "$out" | grep ' big$')"
    out=$(STRIPEFS_TIMEOUT=8 sfs_pl stat -c '%A %U %s' /stripefs/d/big 2>&1) ||
        sfs_fail "stat(1) through the preload $when: $out"
    echo "$out" | grep -qE "^$local_mode root [0-9]+$" || sfs_fail "preload stat $when: $out"
    echo "$out" | grep -q "size unknown: storage target 10[24] did not answer" ||
        sfs_fail "preload stat $when: no note that the size is unknown: $out"
    echo "ok: preload stat $when: $(echo "$out" | tr '\n' ' ')"
    # what acts on the size of an open file fails, naming the target
    out=$(STRIPEFS_TIMEOUT=8 sfs_pl python3 -c "import os
fd = os.open('/stripefs/d/big', os.O_RDONLY)
try:
    os.fstat(fd)
    print('fstat answered')
except OSError as e:
    print('fstat failed:', e)
try:
    os.lseek(fd, 0, os.SEEK_END)
    print('lseek answered')
except OSError as e:
    print('lseek SEEK_END failed:', e)" 2>&1)
    echo "$out" | grep -q "^fstat failed" || sfs_fail "preload fstat $when: $out"
    echo "$out" | grep -q "^lseek SEEK_END failed" || sfs_fail "preload lseek SEEK_END $when: $out"
    echo "$out" | grep -qE "target 10[24]" || sfs_fail "preload fstat/lseek $when do not name the target: $out"
    echo "ok: preload fstat and lseek(SEEK_END) $when fail: $(echo "$out" | grep '^fstat failed')"
}
check_views "just after the kill"
sleep 4 # past one heartbeat and the margin: management calls them probably-offline
STRIPEFS_TIMEOUT=8 "$SFS_CTL" listtargets 2>&1 | grep -E "10[24]" | grep -q "offline" ||
    sfs_fail "management does not list 102/104 offline 4 s after the kill: $("$SFS_CTL" listtargets 2>&1)"
check_views "once management noticed"

# data on the dead target fails fast, naming it
started=$(date +%s.%N)
out=$(STRIPEFS_TIMEOUT=8 "$SFS_CTL" get /d/big "$SFS_TEST_TMP/back" 2>&1) &&
    sfs_fail "reading /d/big with targets 102/104 dead succeeded"
took=$(awk -v s="$started" -v n="$(date +%s.%N)" 'BEGIN {printf "%.1f", n - s}')
echo "$out" | grep -qE "target 10[24]" || sfs_fail "the read error does not name target 102/104: $out"
awk -v t="$took" 'BEGIN {exit !(t < 10)}' || sfs_fail "the read took $took s to fail (timeout 8 s)"
echo "ok: reading /d/big fails in $took s: $(echo "$out" | head -n 1)"
kill -9 "$holder"
sfs_kill9_service
