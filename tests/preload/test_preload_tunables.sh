#!/usr/bin/env bash
# The preload's environment knobs (preload/sfs_preload_tunables.h), read
# through the tunable table: a malformed STRIPEFS_PRELOAD_DEBUG is reported
# by name, 0 means off and 1 on; STRIPEFS_PREFIX=none leaves only
# stripefs: names ours; STRIPEFS_CLIENT_LIBRARY names the library loaded.
# And no preload source calls getenv() itself.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/preload/preload_lib.sh"

if grep -n 'getenv' "$SFS_SRC"/preload/*.c "$SFS_SRC"/preload/*.h; then
    sfs_fail "preload/ reads the environment around its tunable table"
fi
echo "ok: no getenv() in preload/ (the tunable table reads the environment)"

sfs_start_service 1 --targets 2
sfs_pl mkdir /stripefs/tun || sfs_fail "mkdir /stripefs/tun"

# a value that is no boolean is an error naming the variable, not "on"
out=$(STRIPEFS_PRELOAD_DEBUG=maybe sfs_pl stat /stripefs/tun/missing 2>&1)
grep -q 'STRIPEFS_PRELOAD_DEBUG=maybe: expected' <<<"$out" ||
    sfs_fail "STRIPEFS_PRELOAD_DEBUG=maybe is not reported by name: $out"
echo "ok: STRIPEFS_PRELOAD_DEBUG=maybe is reported: $(grep STRIPEFS_PRELOAD_DEBUG <<<"$out")"

# 0 is off (it used to switch reports on: any value did), 1 is on
out=$(STRIPEFS_PRELOAD_DEBUG=0 sfs_pl stat /stripefs/tun/missing 2>&1)
if grep -q 'stripefs-posix:' <<<"$out"; then
    sfs_fail "STRIPEFS_PRELOAD_DEBUG=0 reports: $out"
fi
out=$(STRIPEFS_PRELOAD_DEBUG=1 sfs_pl stat /stripefs/tun/missing 2>&1)
grep -q 'stripefs-posix: statx\? .*tun/missing: No such file' <<<"$out" ||
    sfs_fail "STRIPEFS_PRELOAD_DEBUG=1 does not report the failed stat: $out"
echo "ok: STRIPEFS_PRELOAD_DEBUG=0 is silent, =1 reports the failed stat"

# STRIPEFS_PREFIX=none: /stripefs is a local path again, stripefs: is ours
[ -e /stripefs ] && sfs_skip "a local /stripefs exists: cannot tell it from stripefs"
STRIPEFS_PREFIX=none sfs_pl /usr/bin/test -d /stripefs/tun &&
    sfs_fail "STRIPEFS_PREFIX=none still serves /stripefs"
STRIPEFS_PREFIX=none sfs_pl /usr/bin/test -d stripefs:/tun ||
    sfs_fail "STRIPEFS_PREFIX=none does not serve stripefs:/tun"
STRIPEFS_PREFIX= sfs_pl /usr/bin/test -d /stripefs/tun ||
    sfs_fail "an empty STRIPEFS_PREFIX is not the default /stripefs"
echo "ok: STRIPEFS_PREFIX=none serves only stripefs: names; empty is the default"
out=$(STRIPEFS_PREFIX=relative sfs_pl /usr/bin/test -d stripefs:/tun 2>&1) ||
    sfs_fail "STRIPEFS_PREFIX=relative breaks stripefs: names: $out"
grep -q "STRIPEFS_PREFIX='relative' ignored" <<<"$out" ||
    sfs_fail "STRIPEFS_PREFIX=relative is not reported: $out"
echo "ok: a relative STRIPEFS_PREFIX is reported and ignored"

# STRIPEFS_CLIENT_LIBRARY: the one named is loaded (or its failure said)
out=$(STRIPEFS_CLIENT_LIBRARY=/nonexistent/libstripefs.so.0 sfs_pl /usr/bin/test -d /stripefs/tun 2>&1) &&
    sfs_fail "a missing STRIPEFS_CLIENT_LIBRARY still served /stripefs/tun"
grep -q 'cannot load the stripefs client library: /nonexistent/libstripefs.so.0' <<<"$out" ||
    sfs_fail "the missing client library is not named: $out"
STRIPEFS_CLIENT_LIBRARY="$SFS_BUILD/.libs/libstripefs.so.0" sfs_pl /usr/bin/test -d /stripefs/tun ||
    sfs_fail "STRIPEFS_CLIENT_LIBRARY=$SFS_BUILD/.libs/libstripefs.so.0 does not serve"
echo "ok: STRIPEFS_CLIENT_LIBRARY is the library loaded"
sfs_stop_service
