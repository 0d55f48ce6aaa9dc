#!/usr/bin/env bash
# stripefs-ctl stats meta (docs/metadata.md, "Where a create's time goes"):
# the metadata server times each request's phases per opcode. After 20
# creates by an unprivileged user through the preload, root sees CREATE
# counted 20 times with a commit phase, the closes' SIZE ENDs with none
# (answered before the commit); the user is
# refused; --reset starts again; STRIPEFS_META_TIMING=0 turns it off.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/preload/preload_lib.sh"
sfs_test_users

sfs_start_service 3 --targets 2
sfs_ctl mkdir /st && sfs_ctl chmod 1777 /st || sfs_fail "mkdir /st (1777)"
sfs_ctl stats meta --reset >/dev/null || sfs_fail "stats meta --reset"
sfs_as sfsalice env LD_PRELOAD="$SFS_PRELOAD" sh -c \
    'i=0; while [ $i -lt 20 ]; do : > /stripefs/st/f$i || exit 1; i=$((i+1)); done; stat -c %s /stripefs/st/f0' \
    >/dev/null || sfs_fail "20 creates through the preload"
OUT=$SFS_TEST_TMP/stats.out
sfs_ctl stats meta >"$OUT" || sfs_fail "stats meta: $(cat "$OUT")"
cat "$OUT"
grep -q "^metadata timing on" "$OUT" || sfs_fail "timing is not on by default"
# OP PHASE COUNT MEAN P50 P99 MAX
field() { awk -v op="$1" -v ph="$2" -v f="$3" '$1 == op && $2 == ph {print $f}' "$OUT"; }
sfs_expect_eq "$(field CREATE total 3)" 20 "CREATE requests counted"
awk -v c="$(field CREATE commit 4)" 'BEGIN {exit !(c > 0)}' || sfs_fail "CREATE has no commit time"
awk -v t="$(field CREATE total 4)" -v c="$(field CREATE commit 4)" -v h="$(field CREATE handler 4)" \
    'BEGIN {exit !(t >= c && t >= h)}' || sfs_fail "CREATE's total is less than a part of it"
# the closes' SIZE ENDs are answered before their batch's commit: no commit phases
sfs_expect_eq "$(field SIZE total 3)" 20 "SIZE END requests counted (one per close)"
sfs_expect_eq "$(field SIZE commit 7) $(field SIZE commit_wait 7)" "0.0 0.0" \
    "SIZE END's commit phases (answered before the commit)"
sfs_expect_fail "for administrators and the service.s own user" sfs_as sfsalice "$SFS_CTL" stats meta
sfs_ctl stats meta --reset >/dev/null || sfs_fail "stats meta --reset"
sfs_ctl stats meta >"$OUT" || sfs_fail "stats meta after the reset"
[ -z "$(field CREATE total 3)" ] || sfs_fail "CREATE still counted after --reset: $(cat "$OUT")"
sfs_stop_service

STRIPEFS_META_TIMING=0 sfs_start_service 3 --targets 2
sfs_as sfsalice env LD_PRELOAD="$SFS_PRELOAD" sh -c ': > /stripefs/st/off' || sfs_fail "create"
sfs_ctl stats meta >"$OUT" || sfs_fail "stats meta with timing off"
grep -q "^metadata timing off" "$OUT" || sfs_fail "STRIPEFS_META_TIMING=0 did not turn it off: $(cat "$OUT")"
[ -z "$(field CREATE total 3)" ] || sfs_fail "CREATE counted with timing off"
sfs_stop_service
