#!/usr/bin/env bash
# Draining a storage target while the service runs (docs/migration.md).
# Five targets, 101, 103 and 105 on rank 1, 102 and 104 on rank 2 (five, so
# that a 3-target file drained off 101 and then off 102 has a target left
# that holds no tombstone of it); files of 1
# to 3 targets (64 KiB chunks, 20 KiB to 700 KiB) put by an ordinary user.
# - migrate --from 101 marks it draining (listtargets says so; new files
#   avoid it), moves every file's chunk off it: the target ends with no
#   chunk file, every file cmp's equal to its source, stripefs-fsck is clean;
# - a file held by a registered writer is "busy, not moved" (exit 1) until
#   the writer closes; the rerun moves it;
# - opens made before the move, reading with same-host chunk files and
#   without (then the old target answers ESTALE and the client fetches the
#   pattern again), read the right bytes after it, and an open that writes
#   after the move has its write kept;
# - migrate --cancel clears the flag;
# - kill -9 of the service in the middle of migrate --from 102 (slowed by
#   STRIPEFS_TEST_MIGRATE_DELAY_MS=1000), restart, rerun: everything correct and
#   fsck clean (after its --repair of what the killed move left, if any).
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/lib/migrate_lib.sh"
READER="$SFS_BUILD/tests/progs/sfs_migrate_reader"
WRITER="$SFS_BUILD/tests/progs/sfs_size_writer"
FSCK="$SFS_BUILD/stripefs-fsck"
[ -x "$READER" ] && [ -x "$WRITER" ] || sfs_fail "tests/progs are not built (make check TESTS=)"
sfs_test_users
sfs_start_service 3 --targets 5
sfs_ctl mkdir /m && sfs_ctl chmod 1777 /m || sfs_fail "mkdir /m (1777)"

as_alice() { sfs_as sfsalice "$SFS_CTL" "$@"; }
targets_of() { sfs_ctl getentryinfo "$1" | awk '/^  \+ [0-9]+ @/ {printf "%s ", $2}'; }
src=$SFS_TEST_TMP/src
mkdir -p "$src" && chmod 0755 "$src"
files=()
n=0
for w in 1 2 3; do
    as_alice mkdir "/m/w$w" && as_alice setpattern --chunksize 64k --numtargets "$w" "/m/w$w" >/dev/null ||
        sfs_fail "mkdir/setpattern /m/w$w as sfsalice"
    for i in 1 2 3 4 5; do
        n=$((n + 1))
        head -c $(((n * 7919) % 700 * 1024 + 20480)) /dev/urandom >"$src/w$w-$i"
        chmod 0644 "$src/w$w-$i"
        as_alice put "$src/w$w-$i" "/m/w$w/f$i" || sfs_fail "put /m/w$w/f$i"
        files+=("w$w/f$i")
    done
done
check_all() { # what
    local f
    for f in "${files[@]}"; do
        as_alice get "/m/$f" - >"$SFS_TEST_TMP/out" || sfs_fail "$1: get /m/$f"
        cmp -s "$SFS_TEST_TMP/out" "$src/${f/\/f/-}" || sfs_fail "$1: /m/$f differs from its source"
    done
    echo "ok: $1: all ${#files[@]} files cmp equal to their sources"
}
# files with bytes on 101 first (the readers' reads there must not be zeros)
on101=()
rest=()
for f in "${files[@]}"; do
    case " $(targets_of "/m/$f")" in
    *" 101 "*)
        id=$(sfs_ctl getentryinfo "/m/$f" | awk '/^EntryID:/ {print $2}')
        chunk="$SFS_STATE/targets/101/chunks/${id:14:2}/$id"
        if [ -s "$chunk" ]; then on101+=("$f"); else rest+=("$f"); fi ;;
    esac
done
[ ${#on101[@]} -ge 3 ] || sfs_fail "only ${#on101[@]} files with bytes on target 101"
on101+=("${rest[@]}")
[ ${#on101[@]} -ge 4 ] || sfs_fail "only ${#on101[@]} files on target 101"
echo "ok: ${#on101[@]} of ${#files[@]} files have a chunk on target 101 ($(sfs_chunks_on 101) chunk files)"

# opens made before the move: a reader with same-host chunk files, one
# through the storage server (STRIPEFS_LOCAL_READ=0), and one that writes
# after the move; a registered writer holding a fourth file
r1=${on101[0]} r2=${on101[1]} r3=${on101[2]} busy=${on101[3]}
cp "$src/${r3/\/f/-}" "$SFS_TEST_TMP/r3.want" && chmod 0666 "$SFS_TEST_TMP/r3.want"
for r in 1 2 3 4; do mkfifo "$SFS_TEST_TMP/in$r" && chmod 0666 "$SFS_TEST_TMP/in$r"; done
sfs_as sfsalice "$READER" "/m/$r1" "$src/${r1/\/f/-}" <"$SFS_TEST_TMP/in1" >"$SFS_TEST_TMP/r1.out" 2>&1 &
p1=$!
STRIPEFS_LOCAL_READ=0 sfs_as sfsalice "$READER" "/m/$r2" "$src/${r2/\/f/-}" <"$SFS_TEST_TMP/in2" \
    >"$SFS_TEST_TMP/r2.out" 2>&1 &
p2=$!
STRIPEFS_LOCAL_READ=0 sfs_as sfsalice "$READER" "/m/$r3" "$SFS_TEST_TMP/r3.want" write 8192 \
    <"$SFS_TEST_TMP/in3" >"$SFS_TEST_TMP/r3.out" 2>&1 &
p3=$!
sfs_as sfsalice "$WRITER" "/m/$busy" "write:0:10" hold <"$SFS_TEST_TMP/in4" >"$SFS_TEST_TMP/w.out" 2>&1 &
p4=$!
exec 5>"$SFS_TEST_TMP/in1" 6>"$SFS_TEST_TMP/in2" 7>"$SFS_TEST_TMP/in3" 8>"$SFS_TEST_TMP/in4"
for _ in $(seq 300); do
    [ "$(cat "$SFS_TEST_TMP"/r[123].out "$SFS_TEST_TMP/w.out" | grep -c '^opened\|^holding')" = 4 ] && break
    sleep 0.1
done
[ "$(cat "$SFS_TEST_TMP"/r[123].out "$SFS_TEST_TMP/w.out" | grep -c '^opened\|^holding')" = 4 ] ||
    sfs_fail "the opens did not start: $(cat "$SFS_TEST_TMP"/r[123].out "$SFS_TEST_TMP/w.out")"
# the writer's 10 bytes replace the start of its source
printf 'wwwwwwwwww' | dd of="$src/${busy/\/f/-}" conv=notrunc status=none

# --- drain 101: the writer's file is busy ---
sfs_expect_fail "MIGRATE_(DRAIN|LEASE) is for administrators" sfs_as sfsbob "$SFS_CTL" migrate --from 101
sfs_ctl listtargets | grep -Eq "^101 .*draining" && sfs_fail "an ordinary user's migrate marked 101 draining"
sfs_ctl migrate --from 101 >"$SFS_TEST_TMP/mig1.txt" 2>&1
rc=$?
cat "$SFS_TEST_TMP/mig1.txt"
[ $rc = 1 ] || sfs_fail "migrate with a file open for writing exited $rc, not 1"
grep -q "1 busy (open for writing, not moved)" "$SFS_TEST_TMP/mig1.txt" ||
    sfs_fail "migrate did not report the busy file"
grep -q "1 chunk files left on it" "$SFS_TEST_TMP/mig1.txt" || sfs_fail "migrate: chunk files left"
echo "ok: the file open for writing is busy, not moved (exit 1); the others moved"
sfs_ctl listtargets | tee "$SFS_TEST_TMP/targets.txt" | grep -Eq "^101 .*online,draining" ||
    sfs_fail "listtargets does not show 101 draining"
echo "ok: listtargets shows 101 draining"

exec 5>&- 6>&- 7>&-
for p in $p1 $p2 $p3; do wait $p || sfs_fail "a reader opened before the move failed: $(cat "$SFS_TEST_TMP"/r[123].out)"; done
cat "$SFS_TEST_TMP"/r[123].out
cp "$SFS_TEST_TMP/r3.want" "$src/${r3/\/f/-}"
echo "ok: opens made before the move (same-host chunk files, through the server, a writer) read the right bytes after it"
exec 8>&-
wait $p4 || sfs_fail "the registered writer failed: $(cat "$SFS_TEST_TMP/w.out")"

sfs_ctl migrate --from 101 | tee "$SFS_TEST_TMP/mig2.txt" || sfs_fail "the rerun of migrate failed"
grep -q "1/1 files moved" "$SFS_TEST_TMP/mig2.txt" || sfs_fail "the rerun did not move the formerly busy file"
[ "$(sfs_chunks_on 101)" = 0 ] || sfs_fail "target 101 still has $(sfs_chunks_on 101) chunk files"
echo "ok: target 101 has no chunk file left"
for f in "${files[@]}"; do
    case " $(targets_of "/m/$f")" in *" 101 "*) sfs_fail "/m/$f still uses 101" ;; esac
done
check_all "after draining 101"
"$FSCK" >"$SFS_TEST_TMP/fsck1.txt" 2>&1 || sfs_fail "stripefs-fsck after the drain: $(cat "$SFS_TEST_TMP/fsck1.txt")"
echo "ok: stripefs-fsck: $(tail -n 1 "$SFS_TEST_TMP/fsck1.txt")"
for i in 1 2 3 4 5 6 7 8; do
    echo "new $i" | as_alice put - "/m/w$(((i - 1) % 2 + 1))/new$i" || sfs_fail "put new$i"
    case " $(targets_of "/m/w$(((i - 1) % 2 + 1))/new$i")" in *" 101 "*) sfs_fail "new$i went to the draining 101" ;; esac
done
echo "ok: 8 new files of 1 and 2 targets avoid the draining target 101"
sfs_ctl migrate --from 101 --cancel || sfs_fail "migrate --cancel"
sfs_ctl listtargets | grep -Eq "^101 .*draining" && sfs_fail "101 still draining after --cancel"
echo "ok: migrate --cancel: 101 takes new files again"

# --- kill -9 in the middle of draining 102 ---
# (a second per file; killed once its progress line says 2 files moved)
STRIPEFS_TEST_MIGRATE_DELAY_MS=1000 sfs_ctl migrate --from 102 >"$SFS_TEST_TMP/mig3.txt" 2>&1 &
mp=$!
sfs_wait_line "$SFS_TEST_TMP/mig3.txt" "^migrate: target 102: ([2-9]|[1-9][0-9]+)/[0-9]+ files moved" $mp 60
sfs_kill9_service
wait $mp
cat "$SFS_TEST_TMP/mig3.txt"
left=$(sfs_chunks_on 102)
echo "killed with $left chunk files left on 102"
[ "$left" -gt 0 ] || sfs_fail "migrate finished before the kill: nothing tested"
sfs_start_service 3 --targets 5
sfs_ctl listtargets
sfs_ctl migrate --from 102 | tee "$SFS_TEST_TMP/mig4.txt" || sfs_fail "migrate after the restart"
[ "$(sfs_chunks_on 102)" = 0 ] || sfs_fail "target 102 still has $(sfs_chunks_on 102) chunk files"
echo "ok: after kill -9 and restart, the rerun emptied target 102"
check_all "after the killed and rerun drain of 102"
# a copy the kill left uncommitted is an orphan on its new target: nothing else
sfs_fsck_after_move "after the killed and rerun drain of 102" check_all "after fsck --repair"
sfs_stop_service
