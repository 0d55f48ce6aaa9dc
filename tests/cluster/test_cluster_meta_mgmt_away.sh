#!/usr/bin/env bash
# Metadata goes on while management is away (issue 11, item 5;
# docs/metadata-mirror.md, "The mirror's word"), on the four hosts of
# ci/cluster.sh: the metadata server on imaging-01, its mirror on
# imaging-02, management on imaging-03; RPC timeout 10 s, offline 12 s (a
# lease of 6 s). sfsalice's client on imaging-04 connects once, then makes
# a directory, stats it and lists its parent, round after round. imaging-03
# is cut off from the three other hosts (blackhole routes both ways) for
# 20 s: the metadata server's lease from management runs out after 6 s, and
# it goes on on its mirror's word (every batch and probe answered by the
# mirror). Checked: rounds end with success all through the cut, also from
# 8 s after it began to its end (before 2026-12-07 metadata paused from the
# lease's end until management was back: none would); no round fails; the
# server says it goes on on the word and never that it stopped; after the
# heal the metadata mirror is still good (nothing was promoted), every
# directory made is there, and `stripefs-ctl shutdown` stops every rank
# with exit 0.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/cluster/cluster_lib.sh"
sfs_test_users
cluster_begin
PROG="$SFS_BUILD/tests/progs/sfs_meta_loop_client"
[ -x "$PROG" ] || sfs_fail "missing $PROG (make check builds it)"
client=""
away_cleanup() {
    [ -n "$client" ] && kill "$client" 2>/dev/null
    cluster_cleanup
}
trap away_cleanup EXIT

cluster_meta_mirror_start
cluster_as_alice imaging-04 "$SFS_CTL" mkdir /shared/loop || sfs_fail "sfsalice's mkdir before the cut"

out="$SFS_TEST_TMP/client.out"
stop="$SFS_TEST_TMP/stop"
cluster_as_alice imaging-04 "$PROG" /shared/loop "$stop" >"$out" 2>&1 &
client=$!
cluster_wait_line "$out" "round 3 " 60 >/dev/null || sfs_fail "sfsalice's client did not start its rounds: $(cat "$out")"

cut_at=$(date +%s.%N)
for h in imaging-01 imaging-02 imaging-04; do
    cluster_cut imaging-03 "$h"
done
sfs_log "injected: imaging-03 (management) cut from every other host, both ways"
sleep 20
heal_at=$(date +%s.%N)
cluster_heal
sfs_log "healed: imaging-03 reaches the other hosts again"
sleep 3
touch "$stop"
wait "$client" || sfs_fail "sfsalice's client exited with $?: $(tail -n 5 "$out")"
client=""

rounds=$(grep -c '^round ' "$out")
failed=$(grep '^round ' "$out" | grep -v ' rc=0 ' || true)
[ -z "$failed" ] || sfs_fail "rounds failed: $(echo "$failed" | head -n 3)"
during=$(awk -v a="$cut_at" -v b="$heal_at" '$1 == "round" { split($4, e, "="); if (e[2] > a + 8 && e[2] < b - 1) n++ } END {print n + 0}' "$out")
longest=$(awk '$1 == "round" { split($5, m, "="); if (m[2] > x) x = m[2] } END {printf "%.1f", x / 1000}' "$out")
echo "rounds: $rounds, all succeeded; $during ended between 8 s after the cut and 1 s before the heal; the longest took $longest s"
[ "$during" -ge 5 ] ||
    sfs_fail "only $during rounds ended while management was away past the lease (metadata paused): $(grep -i fencing "$SFS_SERVICE_LOG" | tail -n 3)"
grep -q "fencing: this metadata server's lease from management expired .*it goes on on its mirror's word" "$SFS_SERVICE_LOG" ||
    sfs_fail "the metadata server did not say it goes on on its mirror's word"
grep -q "fencing: this metadata server answers no request from now on" "$SFS_SERVICE_LOG" &&
    sfs_fail "the metadata server stopped although its mirror could vouch for it: $(grep -m1 "answers no request from now on" "$SFS_SERVICE_LOG")"
echo "ok: metadata went on while management was away, on the mirror's word"

cluster_wait_meta_mirror "rank 1 on imaging-02 [online], good since batch " ||
    sfs_fail "the metadata mirror is not good after the heal: '$CLUSTER_MIRROR_LINE'"
# (management, cut off, finds both ranks offline and promotes nobody)
grep -q "is the metadata server now" "$SFS_SERVICE_LOG" &&
    sfs_fail "the metadata mirror was promoted: $(grep -m1 'is the metadata server now' "$SFS_SERVICE_LOG")"
listed=$(ctl_on imaging-04 ls /shared/loop | grep -c '^d[0-9]')
made=$(grep -c '^round .* rc=0 ' "$out")
[ "$listed" = "$made" ] || sfs_fail "$made directories were made, $listed are listed"
echo "ok: after the heal the metadata mirror is good (nothing promoted), and all $made directories are there"
cluster_stop_service imaging-04
exit 0
