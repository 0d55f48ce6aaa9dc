#!/usr/bin/env bash
# Draining under a running job (docs/migration.md "One run per target", "The
# kept flag", "--wait"). Five targets, files of 1 and 2 targets (64 KiB
# chunks) put by sfsalice.
# - migrate --from 101 --wait 60 while sfsalice holds a file of 101 open for
#   writing: it waits, and once the writer closes it moves the file too and
#   ends with exit 0 and no chunk file left on 101;
# - the draining flag is kept in the metadata store: after kill -9 of the
#   service and a restart, listtargets says 101 draining and new files
#   avoid it; migrate --cancel is kept across a second kill -9;
# - a second migrate of 102 is refused while a slowed one
#   (STRIPEFS_TEST_MIGRATE_DELAY_MS) runs, naming the holder (its pid);
#   after kill -9 of that stripefs-ctl its lease (STRIPEFS_MIGRATE_LEASE_S=6)
#   runs out and a rerun empties 102;
# - every file equal to its source, stripefs-fsck clean.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/lib/migrate_lib.sh"
WRITER="$SFS_BUILD/tests/progs/sfs_size_writer"
[ -x "$WRITER" ] || sfs_fail "tests/progs are not built (make check TESTS=)"
sfs_test_users
sfs_start_service 3 --targets 5
sfs_ctl mkdir /m && sfs_ctl chmod 1777 /m || sfs_fail "mkdir /m (1777)"

as_alice() { sfs_as sfsalice "$SFS_CTL" "$@"; }
targets_of() { sfs_ctl getentryinfo "$1" | awk '/^  \+ [0-9]+ @/ {printf "%s ", $2}'; }
draining() { sfs_ctl listtargets | grep -Eq "^$1 .*draining"; }
src=$SFS_TEST_TMP/src
mkdir -p "$src" && chmod 0755 "$src"
files=()
n=0
for w in 1 2; do
    as_alice mkdir "/m/w$w" && as_alice setpattern --chunksize 64k --numtargets "$w" "/m/w$w" >/dev/null ||
        sfs_fail "mkdir/setpattern /m/w$w as sfsalice"
    for i in 1 2 3 4 5 6 7 8; do
        n=$((n + 1))
        head -c $(((n * 7919) % 500 * 1024 + 20480)) /dev/urandom >"$src/w$w-$i"
        chmod 0644 "$src/w$w-$i"
        as_alice put "$src/w$w-$i" "/m/w$w/f$i" || sfs_fail "put /m/w$w/f$i"
        files+=("w$w/f$i")
    done
done
as_alice mkdir /m/all && as_alice setpattern --numtargets 5 /m/all >/dev/null || sfs_fail "mkdir /m/all"
check_all() { # what
    local f
    for f in "${files[@]}"; do
        as_alice get "/m/$f" - >"$SFS_TEST_TMP/out" || sfs_fail "$1: get /m/$f"
        cmp -s "$SFS_TEST_TMP/out" "$src/${f/\/f/-}" || sfs_fail "$1: /m/$f differs from its source"
    done
    echo "ok: $1: all ${#files[@]} files cmp equal to their sources"
}
busy=
for f in "${files[@]}"; do
    case " $(targets_of "/m/$f")" in *" 101 "*) busy=${busy:-$f} ;; esac
done
[ -n "$busy" ] || sfs_fail "no file on target 101"

# --- --wait: a writer holds a file of 101 ---
mkfifo "$SFS_TEST_TMP/in" && chmod 0666 "$SFS_TEST_TMP/in"
sfs_as sfsalice "$WRITER" "/m/$busy" "write:0:10" hold <"$SFS_TEST_TMP/in" >"$SFS_TEST_TMP/w.out" 2>&1 &
wp=$!
exec 8>"$SFS_TEST_TMP/in"
for _ in $(seq 300); do grep -q '^holding' "$SFS_TEST_TMP/w.out" && break; sleep 0.1; done
grep -q '^holding' "$SFS_TEST_TMP/w.out" || sfs_fail "the writer did not start: $(cat "$SFS_TEST_TMP/w.out")"
printf 'wwwwwwwwww' | dd of="$src/${busy/\/f/-}" conv=notrunc status=none
sfs_ctl migrate --from 101 --wait 60 >"$SFS_TEST_TMP/mig1.txt" 2>&1 8>&- &
mp=$!
sfs_wait_line "$SFS_TEST_TMP/mig1.txt" "files open for writing: waiting up to 60 s" $mp 60
grep -q "1 files open for writing: waiting up to 60 s" "$SFS_TEST_TMP/mig1.txt" ||
    sfs_fail "migrate --wait does not wait for the writer: $(cat "$SFS_TEST_TMP/mig1.txt")"
# past the retries of a run without --wait (3 passes): it says so every 10 s
sfs_wait_line "$SFS_TEST_TMP/mig1.txt" "files still open for writing" $mp 120
grep -q "1 files still open for writing ([0-9]* s left)" "$SFS_TEST_TMP/mig1.txt" ||
    sfs_fail "migrate --wait did not keep waiting: $(cat "$SFS_TEST_TMP/mig1.txt")"
kill -0 $mp 2>/dev/null || sfs_fail "migrate --wait ended while the writer holds its file"
echo "ok: migrate --wait waits for the writer of /m/$busy"
exec 8>&-
wait $wp || sfs_fail "the writer failed: $(cat "$SFS_TEST_TMP/w.out")"
wait $mp
rc=$?
cat "$SFS_TEST_TMP/mig1.txt"
[ $rc = 0 ] || sfs_fail "migrate --wait exited $rc after the writer closed, not 0"
grep -q "0 busy (open for writing, not moved)" "$SFS_TEST_TMP/mig1.txt" || sfs_fail "migrate --wait left a busy file"
[ "$(sfs_chunks_on 101)" = 0 ] || sfs_fail "target 101 still has $(sfs_chunks_on 101) chunk files"
echo "ok: once the writer closed, migrate --wait moved its file: exit 0, no chunk file on 101"
check_all "after draining 101 with --wait"

# --- the flag across kill -9 ---
draining 101 || sfs_fail "listtargets does not show 101 draining"
sfs_kill9_service
sfs_start_service 3 --targets 5
sfs_ctl listtargets
draining 101 || sfs_fail "after kill -9 and a restart, 101 is not draining"
grep -q "storage target 101 draining (kept in the metadata store)" "$SFS_SERVICE_LOG" ||
    sfs_fail "the metadata server did not say it read 101's flag"
for i in 1 2 3 4; do
    echo "new $i" | as_alice put - "/m/all/new$i" || sfs_fail "put /m/all/new$i"
    t=$(targets_of "/m/all/new$i")
    case " $t" in *" 101 "*) sfs_fail "/m/all/new$i ($t) went to the draining 101 after the restart" ;; esac
done
echo "ok: after kill -9 and a restart listtargets says 101 draining, new files avoid it ($t)"
sfs_ctl migrate --from 101 --cancel || sfs_fail "migrate --cancel"
draining 101 && sfs_fail "101 still draining after --cancel"
sfs_kill9_service
sfs_start_service 3 --targets 5
draining 101 && sfs_fail "after --cancel, kill -9 and a restart, 101 is draining again"
echo "new 5" | as_alice put - /m/all/new5 || sfs_fail "put /m/all/new5"
case " $(targets_of /m/all/new5)" in *" 101 "*) ;; *) sfs_fail "/m/all/new5 avoids 101 after --cancel" ;; esac
echo "ok: --cancel is kept across a second kill -9: 101 takes new files ($(targets_of /m/all/new5))"
as_alice rm /m/all/new5 || sfs_fail "rm /m/all/new5" # on every target: it cannot move

# --- one migrate per target: a second is refused, a dead holder's lease runs out ---
sfs_expect_fail "MIGRATE_LEASE is for administrators" sfs_as sfsbob "$SFS_CTL" migrate --from 102
left=$(sfs_chunks_on 102)
[ "$left" -ge 3 ] || sfs_fail "only $left chunk files on 102"
STRIPEFS_TEST_MIGRATE_DELAY_MS=2000 STRIPEFS_MIGRATE_LEASE_S=6 "$SFS_CTL" migrate --from 102 \
    >"$SFS_TEST_TMP/mig2.txt" 2>&1 &
mp=$!
sfs_wait_line "$SFS_TEST_TMP/mig2.txt" "^migrate: target 102: 0/" $mp 60
kill -0 $mp 2>/dev/null || sfs_fail "the slowed migrate ended: $(cat "$SFS_TEST_TMP/mig2.txt")"
sfs_ctl migrate --from 102 >"$SFS_TEST_TMP/mig3.txt" 2>&1 && sfs_fail "a second migrate of 102 ran"
cat "$SFS_TEST_TMP/mig3.txt"
grep -Eq "storage target 102: another migrate runs on it \(uid 0, pid $mp on [^;]+; its lease runs out in [0-9]+ s if it died\)" \
    "$SFS_TEST_TMP/mig3.txt" || sfs_fail "the refusal does not name the holder (pid $mp)"
grep -q "draining: no new files" "$SFS_TEST_TMP/mig3.txt" && sfs_fail "the refused run did something"
echo "ok: a second migrate of 102 is refused, naming the holder (pid $mp)"
kill -9 $mp
wait $mp 2>/dev/null
cat "$SFS_TEST_TMP/mig2.txt"
[ "$(sfs_chunks_on 102)" -gt 0 ] || sfs_fail "the slowed migrate finished before the kill: nothing tested"
sfs_expect_fail "another migrate runs on it \(uid 0, pid $mp" sfs_ctl migrate --from 102
for _ in $(seq 120); do
    sfs_ctl migrate --from 102 >"$SFS_TEST_TMP/mig4.txt" 2>&1
    rc=$?
    grep -q "another migrate runs on it" "$SFS_TEST_TMP/mig4.txt" || break
    sleep 0.5
done
cat "$SFS_TEST_TMP/mig4.txt"
[ $rc = 0 ] || sfs_fail "the rerun after the holder's death exited $rc"
[ "$(sfs_chunks_on 102)" = 0 ] || sfs_fail "target 102 still has $(sfs_chunks_on 102) chunk files"
echo "ok: the killed holder's lease ran out; the rerun emptied target 102"
STRIPEFS_MIGRATE_LEASE_S=6 sfs_ctl migrate --from 102 >/dev/null || sfs_fail "a run after a finished one"
echo "ok: a finished run releases its lease"
check_all "after draining 102"
sfs_fsck_after_move "after the drains"
sfs_stop_service
