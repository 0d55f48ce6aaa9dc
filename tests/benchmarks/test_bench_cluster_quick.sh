#!/usr/bin/env bash
# The bandwidth, metadata, IO500-shape and mirror benchmarks across hosts
# (--cluster: servers on imaging-01..03 of ci/cluster.sh's namespace
# cluster, the client ranks on imaging-04) complete and verify in a small
# quick mode: bw.sh (every run's bytes and data checked by sfs_bench_io),
# md.sh (every count, stat and byte checked by sfs_bench_md) and io500.sh
# (every phase verified), each with its rows on both sides, ls.sh (ls -l
# through the preload: every file listed, both ways the same lines), and mirror.sh
# (both directions of the mirror's data path, links capped with tc: every
# file read back, the mirrored copies compared); the clients'
# connections are TCP on eth0 (not shared memory, not loopback); each
# script tears down the cluster it brought up. Figures are not judged here.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"

[ "$(id -u)" = 0 ] || sfs_skip "--cluster makes network namespaces: needs root (uid $(id -u))"
command -v fio >/dev/null || sfs_skip "fio is not installed (the disk ceiling of bw.sh and io500.sh)"
command -v jq >/dev/null || sfs_skip "jq is not installed (reads fio's JSON)"
# one cluster at a time on the machine: the cluster tests' lock
source "$SFS_SRC/tests/lib/sfs_cluster_lock.sh"
sfs_cluster_lock 900
"$SFS_SRC/ci/cluster.sh" status >/dev/null 2>&1 &&
    sfs_fail "a namespace cluster is up already (ci/cluster.sh down, or a killed test left it)"
out=$SFS_TEST_TMP/out
# a short path: munged's socket goes below it (108 bytes at most)
tmp=$(mktemp -d /tmp/sfs-clq.XXXXXX) && chmod 0755 "$tmp" || sfs_fail "mktemp"
trap 'rm -rf "$tmp"' EXIT
export ASAN_OPTIONS=${SFS_SERVER_ASAN_OPTIONS:-${ASAN_OPTIONS:-}}
common=(--cluster --build "$SFS_BUILD" --tmp "$tmp")
# run_bench NAME ARGS...: benchmarks/NAME.sh --quick --cluster ARGS, which
# must exit 0, say that stripefs ran across hosts and take the cluster down
run_bench() {
    local name=$1 rc
    shift
    timeout 900 bash "$SFS_SRC/benchmarks/$name.sh" --quick "$@" --out "$out/$name" "${common[@]}" \
        >"$SFS_TEST_TMP/$name.out" 2>&1
    rc=$?
    cat "$SFS_TEST_TMP/$name.out"
    [ $rc = 0 ] || sfs_fail "$name.sh --quick --cluster exited with $rc"
    "$SFS_SRC/ci/cluster.sh" status >/dev/null 2>&1 && sfs_fail "$name.sh --cluster left the cluster up"
    grep -q "across hosts: clients on imaging-04" "$SFS_TEST_TMP/$name.out" ||
        sfs_fail "$name.sh does not say that stripefs ran across hosts"
}

run_bench bw --reps 3 --sizes 1M --per-rank 8M --modes "fpp-indep shared-coll"
grep -q "tcp/eth0" "$out/bw/bw-net.txt" || sfs_fail "bw.sh --cluster: the client's connections are not tcp/eth0: $(cat "$out/bw/bw-net.txt")"
# the writes' rows carry no verdict ("-"): their data is checked by the read
for api in stripefs local; do
    n=$(awk -F, -v a=$api '$2 == a && $8 == "write" && $10 + 0 > 0' "$out/bw/bw.csv" | wc -l)
    sfs_expect_eq "$n" 6 "bw.sh writes of $api with a rate (2 modes x 3 reps)"
    n=$(awk -F, -v a=$api '$2 == a && $8 == "read" && $10 + 0 > 0 && $NF == "ok"' "$out/bw/bw.csv" | wc -l)
    sfs_expect_eq "$n" 6 "bw.sh reads of $api with a rate, every byte verified"
done
echo "ok: bw.sh --cluster: every run verified on both sides"

run_bench md --items 30 --systems "stripefs tmpfs"
for system in stripefs tmpfs; do
    # label,system,shape,ranks,items,bytes,phase,seconds,ops_s,errors,verify_errors,...
    n=$(awk -F, -v s=$system '$2 == s && $7 == "file_create" && $9 + 0 > 0 && $10 == 0 && $11 == 0' \
        "$out/md/md.csv" | wc -l)
    sfs_expect_eq "$n" 2 "md.sh file-create rows of $system (easy and hard)"
done
echo "ok: md.sh --cluster: every phase verified"

run_bench io500 --reps 1 --easy-size 4M --hard-segments 30 --easy-items 40 --hard-items 120 \
    --fio-time 1 --fs-size 256M
sfs_expect_eq "$(awk -F, '$2 == "stripefs" && $8 == "ok" && $5 + 0 > 0' "$out/io500/io500.csv" | wc -l)" 12 \
    "verified io500 phases of stripefs across hosts, with a rate"
echo "ok: io500.sh --cluster: all 12 phases verified"

run_bench ls --files 300
# side,files,rep,ms,lines,round_trips
sfs_expect_eq "$(awk -F, '$2 == 300 && $3 == 1 && $4 + 0 > 0 && $5 == 300' "$out/ls/ls.csv" | wc -l)" 3 \
    "ls.sh runs that listed all 300 files (listing's attributes, a stat per entry, local disk)"
echo "ok: ls.sh --cluster: every side listed every file, the stripefs sides the same lines"

run_bench mirror --link 1gbit
grep -q "link capped at 1gbit each way" "$SFS_TEST_TMP/mirror.out" || sfs_fail "mirror.sh --link did not cap the links"
grep -q "copies compared: [0-9]* chunk files identical on 101 and 201" "$SFS_TEST_TMP/mirror.out" ||
    sfs_fail "mirror.sh did not compare the mirrored copies"
# kind,block,bytes,depth,rep,seconds,MB_s,...: 3 kinds x 3 cases x 2 reps
sfs_expect_eq "$(awk -F, 'NR > 1 && $7 + 0 > 0' "$out/mirror/mirror.csv" | wc -l)" 18 \
    "mirror.sh runs with a rate (3 kinds x 3 cases x 2 reps)"
echo "ok: mirror.sh --cluster: every file read back, the copies identical"
