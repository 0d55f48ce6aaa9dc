#!/usr/bin/env bash
# benchmarks/md.sh in a small quick mode completes and verifies: both
# shapes (mdtest-easy, mdtest-hard), all four systems (stripefs through the
# preload, a journaled ext4 on a loop file plain and with fsyncs, tmpfs),
# every phase with a rate, no error and no failed verification, the
# group-commit batch sizes of the stripefs phases read from the metadata
# server's log, and nothing left mounted. Skipped where loop mounts are not
# permitted (the baselines need them; a run without them is no pass).
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"

[ "$(id -u)" = 0 ] || sfs_skip "md.sh mounts its baselines (ext4 on a loop file, tmpfs): needs root"
probe=$SFS_TEST_TMP/probe
mkdir -p "$probe/mnt" && truncate -s 16M "$probe/img" && mkfs.ext4 -q -F "$probe/img" >/dev/null 2>&1 ||
    sfs_skip "cannot make an ext4 image (mkfs.ext4)"
mount -o loop "$probe/img" "$probe/mnt" 2>/dev/null || sfs_skip "loop mounts are not permitted here"
umount "$probe/mnt" || sfs_fail "cannot unmount the probe $probe/mnt"
mount -t tmpfs -o size=1M tmpfs "$probe/mnt" 2>/dev/null || sfs_skip "tmpfs mounts are not permitted here"
umount "$probe/mnt" || sfs_fail "cannot unmount the probe tmpfs"

items=40
out=$SFS_TEST_TMP/out
# a short path: munged's socket goes below it (108 bytes at most)
tmp=$(mktemp -d /tmp/sfs-mdq.XXXXXX) && chmod 0755 "$tmp" || sfs_fail "mktemp"
trap 'rmdir "$tmp" 2>/dev/null' EXIT
# the service's ranks run as the suite runs servers (a sanitizer build: no
# leak check of the MPI runtime's exit); the clients go through stripefs-run
ASAN_OPTIONS=${SFS_SERVER_ASAN_OPTIONS:-${ASAN_OPTIONS:-}} bash "$SFS_SRC/benchmarks/md.sh" --quick --items $items --pause 1.2 --build "$SFS_BUILD" \
    --out "$out" --tmp "$tmp" >"$SFS_TEST_TMP/md.out" 2>&1
rc=$?
cat "$SFS_TEST_TMP/md.out"
[ $rc = 0 ] || sfs_fail "md.sh --quick exited with $rc"
grep -q "$tmp" /proc/mounts && sfs_fail "md.sh left a file system mounted: $(grep "$tmp" /proc/mounts)"
[ -z "$(ls -A "$tmp")" ] || sfs_fail "md.sh left its temp dir: $(ls -A "$tmp")"
[ -s "$out/md-skipped.txt" ] && sfs_fail "md.sh skipped systems: $(cat "$out/md-skipped.txt")"

# 2 shapes x 4 systems x 9 phases, each with a rate and nothing wrong
csv=$out/md.csv
sfs_expect_eq "$(awk -F, 'NR > 1 && $9 + 0 > 0 && $10 == 0 && $11 == 0' "$csv" | wc -l)" 72 \
    "phases with a rate and no error in md.csv"
for system in stripefs ext4 ext4-fsync tmpfs; do
    for shape in easy hard; do
        sfs_expect_eq "$(awk -F, -v s=$system -v h=$shape '$2 == s && $3 == h' "$csv" | wc -l)" 9 \
            "phases of $system $shape"
    done
done
sfs_expect_eq "$(awk -F, '$3 == "hard" && $2 == "ext4" && $7 == "file_create" { print $6 }' "$csv")" 3901 \
    "bytes per file of mdtest-hard"

# batch sizes: every file create is two of a batch's writes, its CREATE
# (which registers the writer) and the SIZE END of its close (answered
# before the commit, but in the batch), shared by at most the 4 ranks'
# requests: one waited for, and ENDs sent without waiting
b=$out/md-batches.csv
easy_w=$(awk -F, '$2 == "easy" && $3 == "file_create" { print $4 }' "$b")
hard_w=$(awk -F, '$2 == "hard" && $3 == "file_create" { print $4 }' "$b")
sfs_expect_eq "$easy_w" $((2 * 4 * items)) "client writes committed in the easy file-create phase"
sfs_expect_eq "$hard_w" $((2 * 4 * items)) "client writes committed in the hard file-create phase"
awk -F, 'NR > 1 && $4 > 0 && ($5 < 1 || $5 > $4 || $7 > 8) { bad = 1 } END { exit bad }' "$b" ||
    sfs_fail "batch sizes out of range (commits within 1..writes, at most 8 writes each: 4 waited-for requests and 4 ENDs): $(cat "$b")"
# the reads: each answered on arrival on the progress thread while the
# metadata thread is idle (sfs_meta_read_now.c), else in a batch. The stat
# and read phases alone make 3 x 4 x items in each shape, all reaching the
# server (the verification's listing 1.2 s before, --pause, answers none:
# test_preload_ls_attrs checks the rules). Summed over every phase: a burst
# reported late may be counted with the phase before.
reads=$(awk -F, 'NR > 1 { q += $16; a += $20 } END { print q + 0, a + 0 }' "$b")
set -- $reads
[ $(($1 + $2)) -ge $((2 * 3 * 4 * items)) ] && [ "$2" -gt 0 ] ||
    sfs_fail "reads at the server: $1 in batches and $2 answered on arrival, not at least $((2 * 3 * 4 * items)) with some on arrival"
echo "ok: reads at the server: $2 answered on arrival, $1 in batches (the stat and read phases make $((2 * 3 * 4 * items)))"
grep -q "^goal: mdtest-easy file creates" "$SFS_TEST_TMP/md.out" || sfs_fail "no goal line"

# the program insists on a fresh directory
mkdir -p "$SFS_TEST_TMP/exists"
"${SFS_MPIRUN[@]}" -np 1 "$SFS_BUILD/benchmarks/sfs_bench_md" -d "$SFS_TEST_TMP/exists" -n 1 \
    >/dev/null 2>&1 && sfs_fail "sfs_bench_md ran in a directory that existed"
echo "PASS"
