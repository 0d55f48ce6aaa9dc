#!/usr/bin/env bash
# benchmarks/ucx.sh in a small quick mode completes and verifies: through
# the server with the shortcuts off over UCX_TLS=tcp (reads and writes, each
# checked by sfs_bench_read), ucx_perftest -e and iperf3 beside them, the
# same between two hosts of the namespace cluster where it can be made
# (root), and the same-host paths; every part has its rows and the goal line
# is written. Figures are not judged here (benchmarks/README.md has them).
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"

command -v ucx_perftest >/dev/null || sfs_skip "ucx_perftest is not installed (ucx-utils: ci/install-deps.sh)"
command -v iperf3 >/dev/null || sfs_skip "iperf3 is not installed (ci/install-deps.sh)"
cluster=()
if [ "$(id -u)" = 0 ]; then
    # one cluster at a time on the machine: the cluster tests' lock
    source "$SFS_SRC/tests/lib/sfs_cluster_lock.sh"
    sfs_cluster_lock 900
fi
if [ "$(id -u)" = 0 ] && ! "$SFS_SRC/ci/cluster.sh" status >/dev/null 2>&1; then
    cluster=(--cluster)
else
    echo "note: no --cluster part (not root, or a cluster is up already)"
fi
out=$SFS_TEST_TMP/out
tmp=$(mktemp -d /tmp/sfs-ucxq.XXXXXX) && chmod 0755 "$tmp" || sfs_fail "mktemp"
trap 'rm -rf "$tmp"' EXIT
ASAN_OPTIONS=${SFS_SERVER_ASAN_OPTIONS:-${ASAN_OPTIONS:-}} timeout 600 bash "$SFS_SRC/benchmarks/ucx.sh" --quick \
    --reps 3 --tls tcp --sizes 1M --file-size 32M --perftest-bytes $((128 << 20)) "${cluster[@]}" \
    --build "$SFS_BUILD" --out "$out" --tmp "$tmp" >"$SFS_TEST_TMP/ucx.out" 2>&1
rc=$?
cat "$SFS_TEST_TMP/ucx.out"
[ $rc = 0 ] || sfs_fail "ucx.sh --quick exited with $rc"
csv=$out/ucx.csv
wheres="onehost samehost"
[ ${#cluster[@]} = 1 ] && wheres="onehost cluster samehost"
for where in $wheres; do
    case $where in
    samehost) whats="local-pread stripefs-read-shortcircuit stripefs-read-directcopy memcpy-stream" ;;
    *) whats="ucx_perftest-am_bw-e stripefs-read-ucx stripefs-write-ucx iperf3-tcp" ;;
    esac
    for what in $whats; do
        n=$(awk -F, -v w="$where" -v t="$what" '$1 == w && $3 == t && $9 + 0 > 0' "$csv" | wc -l)
        sfs_expect_eq "$n" 3 "reps of $where $what with a rate"
    done
done
[ -s "$out/ucx-goals.txt" ] || sfs_fail "no goal line written"
grep -q "one host over loopback" "$out/ucx-goals.txt" || sfs_fail "the goal line of one host is missing"
if [ ${#cluster[@]} = 1 ]; then
    grep -q "two hosts" "$out/ucx-goals.txt" || sfs_fail "the goal line of two hosts is missing"
    grep -q "tcp/eth0" "$out/ucx-net-cluster.txt" || sfs_fail "the cluster's connections are not tcp/eth0"
    "$SFS_SRC/ci/cluster.sh" status >/dev/null 2>&1 && sfs_fail "ucx.sh --cluster left the cluster up"
fi
grep -q "tcp/lo" "$out/ucx-net-tcp.txt" || sfs_fail "UCX_TLS=tcp: the service's connections are not tcp/lo"
echo "ok: ucx.sh --quick: $(wc -l <"$csv") rows, goal lines: $(wc -l <"$out/ucx-goals.txt")"
