#!/usr/bin/env bash
# Mirrored against unmirrored write bandwidth on one host (docs/mirroring.md):
# one writer, 256 MiB in 4 MiB writes then fsync, 3 reps each, min/median/max,
# the three kinds in alternating order (a b c, c b a, a b c), a new file each;
# mirror groups 101+102 and 103+104 (storage ranks 1 and 2 forward to each
# other). Run from the source tree:
#   SFS_BUILD=$PWD/_build SFS_SRC=$PWD SFS_TEST_TMP=$(mktemp -d) benchmarks/mirror_onehost.sh
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
W="$SFS_BUILD/tests/progs/sfs_mirror_writers"
sfs_start_service 3 --targets 4
sfs_stop_service
cat >>"$SFS_STATE/stripefs.yaml" <<YAML
mirror:
  groups:
    - {primary: 101, secondary: 102}
    - {primary: 103, secondary: 104}
  same_host: true
YAML
sfs_start_service 3
sfs_ctl mkdir /b2 /b4 /bm >/dev/null
sfs_ctl setpattern --chunksize 1m --numtargets 2 /b2 >/dev/null
sfs_ctl setpattern --chunksize 1m --numtargets 4 /b4 >/dev/null
sfs_ctl setpattern --chunksize 1m --numtargets 2 --mirror /bm >/dev/null
stats() { sort -n | awk '{a[NR]=$1} END {printf "min %.1f  median %.1f  max %.1f MB/s\n", a[1], a[2], a[3]}'; }
kinds=("plain /b2 unmirrored-2-targets" "plain /b4 unmirrored-4-targets" "mirror /bm mirrored-2-groups")
for rep in 1 2 3; do
    order=(0 1 2)
    [ $((rep % 2)) = 0 ] && order=(2 1 0)
    for k in "${order[@]}"; do
        set -- ${kinds[$k]}
        "$W" bench "$2/f$rep" $((256 << 20)) $((4 << 20)) "$1" >>"$SFS_TEST_TMP/$3.txt" || sfs_fail "bench"
    done
done
for kind in "${kinds[@]}"; do
    set -- $kind
    echo "$3: $(stats <"$SFS_TEST_TMP/$3.txt")  ($(tr '\n' ' ' <"$SFS_TEST_TMP/$3.txt"))"
done
sfs_stop_service
