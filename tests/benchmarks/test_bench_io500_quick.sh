#!/usr/bin/env bash
# benchmarks/io500.sh in its smallest mode completes and verifies: one rep
# of every IO500-shape phase (ior-easy and ior-hard write/read, mdtest-easy
# create/stat/delete, mdtest-hard create/stat/read/delete, find) on stripefs
# (its own service: MPI-IO driver and POSIX preload) and on a journaled ext4
# on a loop file, every phase verified (byte counts, data, entries, find's
# matches), the CSV files with their columns, a score per system, the disk
# and memcpy ceilings, and nothing left mounted. Skipped where loop mounts
# or fio are not available (the ext4 side and the ceilings need them).
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"

[ "$(id -u)" = 0 ] || sfs_skip "io500.sh mounts a journaled ext4 on a loop file: needs root"
command -v fio >/dev/null || sfs_skip "fio is not installed (the disk ceiling)"
command -v jq >/dev/null || sfs_skip "jq is not installed (reads fio's JSON)"
probe=$SFS_TEST_TMP/probe
mkdir -p "$probe/mnt" && truncate -s 16M "$probe/img" && mkfs.ext4 -q -F "$probe/img" >/dev/null 2>&1 ||
    sfs_skip "cannot make an ext4 image (mkfs.ext4)"
mount -o loop "$probe/img" "$probe/mnt" 2>/dev/null || sfs_skip "loop mounts are not permitted here"
umount "$probe/mnt" || sfs_fail "cannot unmount the probe $probe/mnt"

out=$SFS_TEST_TMP/out
# a short path: munged's socket goes below it (108 bytes at most)
tmp=$(mktemp -d /tmp/sfs-io5q.XXXXXX) && chmod 0755 "$tmp" || sfs_fail "mktemp"
trap 'rmdir "$tmp" 2>/dev/null' EXIT
# 120 hard files per rank: names ...101 to ...109 match find's *01*
ASAN_OPTIONS=${SFS_SERVER_ASAN_OPTIONS:-${ASAN_OPTIONS:-}} bash "$SFS_SRC/benchmarks/io500.sh" --quick \
    --reps 1 --easy-size 4M --hard-segments 30 --easy-items 40 --hard-items 120 --fio-time 1 \
    --fs-size 256M --build "$SFS_BUILD" --out "$out" --tmp "$tmp" >"$SFS_TEST_TMP/io500.out" 2>&1
rc=$?
cat "$SFS_TEST_TMP/io500.out"
[ $rc = 0 ] || sfs_fail "io500.sh --quick exited with $rc"
grep -q "$tmp" /proc/mounts && sfs_fail "io500.sh left a file system mounted: $(grep "$tmp" /proc/mounts)"
[ -z "$(ls -A "$tmp")" ] || sfs_fail "io500.sh left its temp dir: $(ls -A "$tmp")"

csv=$out/io500.csv
sfs_expect_eq "$(head -n 1 "$csv")" "rep,system,phase,unit,value,seconds,amount,verified" "io500.csv header"
phases="ior-easy-write mdtest-easy-write ior-hard-write mdtest-hard-write find ior-easy-read
        mdtest-easy-stat ior-hard-read mdtest-hard-stat mdtest-easy-delete mdtest-hard-read mdtest-hard-delete"
for system in stripefs ext4; do
    # IO500's order, each phase once, verified, with a rate
    sfs_expect_eq "$(awk -F, -v s=$system '$2 == s { printf "%s ", $3 }' "$csv")" \
        "$(echo $phases) " "phases of $system in IO500's order"
    sfs_expect_eq "$(awk -F, -v s=$system '$2 == s && $8 == "ok" && $5 + 0 > 0' "$csv" | wc -l)" 12 \
        "verified phases of $system with a rate"
    # what each phase moved: 4 ranks' bytes, items, or find's entries
    sfs_expect_eq "$(awk -F, -v s=$system '$2 == s && $3 == "ior-easy-write" { print $7 }' "$csv")" \
        $((4 * 4 * 1048576)) "ior-easy bytes of $system"
    sfs_expect_eq "$(awk -F, -v s=$system '$2 == s && $3 == "ior-hard-read" { print $7 }' "$csv")" \
        $((4 * 30 * 47008)) "ior-hard bytes of $system"
    sfs_expect_eq "$(awk -F, -v s=$system '$2 == s && $3 == "mdtest-hard-read" { print $7 }' "$csv")" \
        480 "mdtest-hard files read on $system"
    # the tree: 4 top directories, 4 + 1 ior files, 4 + 1 mdtest roots, 160 + 480 files
    sfs_expect_eq "$(awk -F, -v s=$system '$2 == s && $3 == "find" { print $7 }' "$csv")" 654 \
        "entries find examined on $system"
done
sfs_expect_eq "$(head -n 1 "$out/io500-summary.csv")" "system,phase,unit,reps,min,median,max" \
    "io500-summary.csv header"
sfs_expect_eq "$(tail -n +2 "$out/io500-summary.csv" | wc -l)" 24 "summary lines (2 systems x 12 phases)"
sfs_expect_eq "$(head -n 1 "$out/io500-score.csv")" "system,bw_GiB_s,md_kIOPS,score,reps,score_min,score_max" \
    "io500-score.csv header"
awk -F, 'NR > 1 && $2 > 0 && $3 > 0 && $4 > 0 && $5 == 1 { n++ } END { exit n != 2 }' "$out/io500-score.csv" ||
    sfs_fail "a score per system from 1 rep: $(cat "$out/io500-score.csv")"
# the score is the geometric mean of the two geometric means
awk -F, 'NR > 1 { d = $4 - sqrt($2 * $3); if (d > 0.002 * $4 + 0.001 || d < -0.002 * $4 - 0.001) bad = 1 }
    END { exit bad }' "$out/io500-score.csv" || sfs_fail "score != sqrt(bw x md): $(cat "$out/io500-score.csv")"
awk -F, 'NR > 1 && $2 + 0 > 0 { n++ } END { exit n != 3 }' "$out/io500-ceilings.csv" ||
    sfs_fail "ceilings (disk direct write, read, memcpy): $(cat "$out/io500-ceilings.csv")"
grep -q "not an IO500 submission" "$SFS_TEST_TMP/io500.out" || sfs_fail "no caveat printed with the score"
if command -v gnuplot >/dev/null; then
    [ -s "$out/io500.png" ] || sfs_fail "no io500.png"
fi

# find counts what it is told to (a tree whose answer is known), and fails
# when the expected count differs
d=$SFS_TEST_TMP/findtree
mkdir -p "$d/a/b" && head -c 3901 /dev/zero >"$d/a/x01" && head -c 3901 /dev/zero >"$d/a/b/y01z" &&
    head -c 3900 /dev/zero >"$d/a/b/w01" && head -c 3901 /dev/zero >"$d/a/b/nomatch" || sfs_fail "findtree"
line=$("${SFS_MPIRUN[@]}" -np 2 "$SFS_BUILD/benchmarks/sfs_bench_find" -d "$d" -e 2 -E 6 2>&1 | grep '^csv,')
sfs_expect_eq "$(echo "$line" | cut -d, -f5-7)" "6,4,2" "find's entries, files, matches"
"${SFS_MPIRUN[@]}" -np 2 "$SFS_BUILD/benchmarks/sfs_bench_find" -d "$d" -e 3 >/dev/null 2>&1 &&
    sfs_fail "sfs_bench_find passed with a wrong expected count"
echo "PASS"
