#!/usr/bin/env bash
# benchmarks/create_latency.sh in a small quick mode completes: stripefs
# (through the preload, the metadata server's timing fetched with
# stripefs-ctl stats meta) and, where loop mounts are permitted, a
# journaled ext4 plain and with fsyncs; every call kind timed for every
# file; the server counted every CREATE, STAT and UNLINK of the run and no
# more (the timing was reset before it); the table has the derived wire
# line; nothing left mounted. sfs_bench_lat refuses a directory that exists.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"

items=20
systems=stripefs
if [ "$(id -u)" = 0 ]; then
    probe=$SFS_TEST_TMP/probe
    mkdir -p "$probe/mnt" && truncate -s 16M "$probe/img" && mkfs.ext4 -q -F "$probe/img" >/dev/null 2>&1 &&
        mount -o loop "$probe/img" "$probe/mnt" 2>/dev/null && umount "$probe/mnt" &&
        systems="stripefs ext4 ext4-fsync"
fi
out=$SFS_TEST_TMP/out
# a short path: munged's socket goes below it (108 bytes at most)
tmp=$(mktemp -d /tmp/sfs-latq.XXXXXX) && chmod 0755 "$tmp" || sfs_fail "mktemp"
trap 'rmdir "$tmp" 2>/dev/null' EXIT
ASAN_OPTIONS=${SFS_SERVER_ASAN_OPTIONS:-${ASAN_OPTIONS:-}} bash "$SFS_SRC/benchmarks/create_latency.sh" \
    --quick --items $items --systems "$systems" --build "$SFS_BUILD" --out "$out" --tmp "$tmp" \
    >"$SFS_TEST_TMP/lat.out" 2>&1
rc=$?
cat "$SFS_TEST_TMP/lat.out"
[ $rc = 0 ] || sfs_fail "create_latency.sh --quick exited with $rc"
grep -q "$tmp" /proc/mounts && sfs_fail "create_latency.sh left a file system mounted"
[ -z "$(ls -A "$tmp")" ] || sfs_fail "create_latency.sh left its temp dir: $(ls -A "$tmp")"

csv=$out/create_latency.csv
for system in $systems; do
    for call in create open close stat unlink; do
        sfs_expect_eq "$(awk -F, -v s=$system -v c=$call '$2 == s && $3 == c && $5 > 0 {print $4}' "$csv")" \
            $items "$system $call: timed calls"
    done
done
for op in CREATE STAT UNLINK; do
    sfs_expect_eq "$(awk -F, -v w="$op-total" '$2 == "server" && $3 == w {print $4}' "$csv")" $items \
        "the metadata server's $op count"
done
awk -F, '$2 == "server" && $3 == "CREATE-commit" { exit !($5 > 0) }' "$csv" ||
    sfs_fail "no commit time for CREATE"
grep -q "^wire + client library" "$SFS_TEST_TMP/lat.out" || sfs_fail "no wire line in the table"

mkdir -p "$SFS_TEST_TMP/exists"
"$SFS_BUILD/benchmarks/sfs_bench_lat" -d "$SFS_TEST_TMP/exists" -n 1 >/dev/null 2>&1 &&
    sfs_fail "sfs_bench_lat ran in a directory that existed"
echo "PASS"
