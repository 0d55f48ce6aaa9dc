#!/usr/bin/env bash
# Targets of unequal size fill alike (docs/capacity.md). Four targets whose
# `capacity:` is 48, 48, 28 and 28 MiB (12/12/7/7 x 4 MiB), 101 and 103 on
# rank 1, 102 and 104 on rank 2. As an ordinary user:
# - a 1-target file too big for its target fails with ENOSPC naming it, and
#   the files created right after it (well within a heartbeat) avoid that
#   target: the storage server reports it full at once;
# - then files of 1 to 4 targets (128 KiB to 2 MiB) are put until the first
#   ENOSPC: every target is then within 5% of the mean fill, at least 95%
#   of the sum of the capacities is used, and no 2-target file has both its
#   targets on one rank;
# - the service warned that the default pattern (4 targets) spans these
#   unequal targets.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
sfs_test_users
sfs_start_service 3 --targets 4
sfs_ctl mkdir /users && sfs_ctl chmod 1777 /users || sfs_fail "mkdir /users (1777)"
sfs_stop_service
cfg=$SFS_STATE/stripefs.yaml
for spec in 101:48 102:48 103:28 104:28; do
    sed -i "s|\(- {id: ${spec%:*}, host: [^,]*, dir: [^}]*\)}|\1, capacity: ${spec#*:}M}|" "$cfg"
done
[ "$(grep -c 'capacity:' "$cfg")" = 4 ] || sfs_fail "could not set the capacities in $cfg"
sfs_start_service 3 --targets 4
sfs_ctl listtargets | tee "$SFS_TEST_TMP/targets"
declare -A rank_of
while read -r id node _; do rank_of[$id]=$node; done < <(awk '$1 ~ /^10[1-4]$/' "$SFS_TEST_TMP/targets")
[ "${rank_of[101]}" = "${rank_of[103]}" ] && [ "${rank_of[102]}" = "${rank_of[104]}" ] &&
    [ "${rank_of[101]}" != "${rank_of[102]}" ] || sfs_fail "targets not on the ranks expected: ${rank_of[*]}"

as_alice() { sfs_as sfsalice "$SFS_CTL" "$@"; }
targets_of() { as_alice getentryinfo "$1" | awk '/^  \+ [0-9]+ @/ {printf "%s ", $2}'; }
for w in 1 2 3 4; do
    as_alice mkdir "/users/w$w" && as_alice setpattern --numtargets "$w" "/users/w$w" >/dev/null ||
        sfs_fail "mkdir/setpattern /users/w$w as sfsalice"
done
head -c $((56 << 20)) /dev/urandom >"$SFS_TEST_TMP/data"
chmod 0644 "$SFS_TEST_TMP/data"

# ENOSPC at once: a 56 MiB file on one target of at most 48 MiB
head -c $((56 << 20)) "$SFS_TEST_TMP/data" | as_alice put - /users/w1/big 2>"$SFS_TEST_TMP/big.err" &&
    sfs_fail "a 56 MiB file fitted on one target of at most 48 MiB"
full=$(grep -o "target 10[1-4] is full" "$SFS_TEST_TMP/big.err" | head -n 1 | awk '{print $2}')
[ -n "$full" ] || sfs_fail "the big put did not fail naming a full target: $(head -c 300 "$SFS_TEST_TMP/big.err")"
echo "ok: the 56 MiB file failed: $(grep -o "target $full is full[^:]*" "$SFS_TEST_TMP/big.err" | head -n 1)"
failed_at=$(date +%s.%N)
for i in 1 2 3 4 5 6; do
    echo "small $i" | as_alice put - "/users/w1/after$i" || sfs_fail "a small file after the ENOSPC"
    t=$(targets_of "/users/w1/after$i")
    echo "  after$i on $t"
    [ "$t" != "$full " ] || sfs_fail "a file created $(awk -v s="$failed_at" -v n="$(date +%s.%N)" \
        'BEGIN {printf "%.1f", n - s}') s after the ENOSPC went to the full target $full"
done
echo "ok: the 6 files created in the $(awk -v s="$failed_at" -v n="$(date +%s.%N)" \
    'BEGIN {printf "%.1f", n - s}') s after the ENOSPC avoid the full target $full"
as_alice rm /users/w1/big || sfs_fail "rm the partial big file"
for i in 1 2 3 4 5 6; do as_alice rm "/users/w1/after$i" || sfs_fail "rm after$i"; done
# its chunks go (the deletes run in the background): the target has room again
for _ in $(seq 100); do
    [ -z "$(find "$SFS_STATE/targets/$full/chunks" -type f -size +0 | head -n 1)" ] && break
    sleep 0.2
done
[ -z "$(find "$SFS_STATE/targets/$full/chunks" -type f -size +0 | head -n 1)" ] ||
    sfs_fail "the big file's chunks on $full were not deleted in 20 s"
sleep 2.5 # a heartbeat: the target reports its room

# the fill: files of 1 to 4 targets until the first ENOSPC
awk 'BEGIN { srand(13); for (i = 0; i < 2000; i++) printf "%d %d\n", 1 + int(rand() * 4),
    int(exp(log(131072) + rand() * (log(2097152) - log(131072)))) }' >"$SFS_TEST_TMP/files"
n=0
while read -r w size; do
    head -c "$size" "$SFS_TEST_TMP/data" | as_alice put - "/users/w$w/f$n" 2>"$SFS_TEST_TMP/put.err" ||
        break
    n=$((n + 1))
done <"$SFS_TEST_TMP/files"
grep -q "No space left\|is full\|ENOSPC" "$SFS_TEST_TMP/put.err" ||
    sfs_fail "the fill stopped after $n files without ENOSPC: $(head -c 300 "$SFS_TEST_TMP/put.err")"
echo "ok: $n files written, then: $(head -n 1 "$SFS_TEST_TMP/put.err" | cut -c1-160)"
report=$(for spec in 101:48 102:48 103:28 104:28; do
    find "$SFS_STATE/targets/${spec%:*}/chunks" -type f -printf '%s\n' |
        awk -v id="${spec%:*}" -v cap="${spec#*:}" '{s += $1} END {printf "%s %d %.4f\n", id, s, s / (cap * 1048576)}'
done)
echo "$report" | awk '{id[NR] = $1; f[NR] = $3; m += $3 / 4; u += $2}
    END { for (i = 1; i <= NR; i++) { d = f[i] - m; if (d < 0) d = -d; if (d > s) s = d;
              printf "  target %s: %.1f%% full\n", id[i], 100 * f[i] }
          printf "spread %.1f%% of the mean fill %.1f%%; usable %.1f%% of the sum\n", 100 * s / m,
                 100 * m, 100 * u / (152 * 1048576);
          exit !(s <= 0.05 * m && u >= 0.95 * 152 * 1048576) }' ||
    sfs_fail "targets not within 5% of the mean fill, or less than 95% of the capacity usable"
echo "ok: every target within 5% of the mean fill, at least 95% of the capacity used"

# the default pattern (4 targets) over these unequal targets is warned about
grep -q "the default pattern (stripe_count 4) spans all 4 targets, whose capacities differ (28 to 48 MiB)" \
    "$SFS_SERVICE_LOG" || sfs_fail "no warning about the default pattern spanning unequal targets"
echo "ok: the service warned that the default pattern spans all 4 unequal targets"

# nodes first: no 2-target file on two targets of one rank, among the files
# of the fill's first half (near its end one rank's targets may both be at
# their reserve, and then a file rightly takes the other rank's two)
pairs=0
for f in $(as_alice ls /users/w2 | grep -o 'f[0-9]*'); do
    [ "${f#f}" -lt $((n / 2)) ] || continue
    read -r a b <<<"$(targets_of "/users/w2/$f")"
    [ -n "$b" ] || continue # created when fewer were usable (the service log says so)
    [ "${rank_of[$a]}" != "${rank_of[$b]}" ] ||
        sfs_fail "/users/w2/$f has targets $a and $b, both on rank ${rank_of[$a]}"
    pairs=$((pairs + 1))
done
[ "$pairs" -ge 5 ] || sfs_fail "only $pairs 2-target files to look at"
echo "ok: the $pairs 2-target files each have their targets on both storage ranks"
sfs_stop_service
