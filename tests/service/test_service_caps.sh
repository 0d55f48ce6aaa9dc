#!/usr/bin/env bash
# Capabilities outlive nothing: with security.capability_lifetime at its
# minimum (10 s), an ordinary user keeps a file open for 12 s and still
# writes and reads it, on its handle and on one passed on (the client renews
# at half the lifetime; the targets refuse an expired capability, which
# tests/unit/service/test_perm checks).
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
sfs_test_users
sfs_start_service 2 --targets 2
sfs_ctl mkdir /users && sfs_ctl chmod 1777 /users || sfs_fail "mkdir /users (1777)"
sfs_stop_service
cfg=$SFS_STATE/stripefs.yaml
grep -q "capability_lifetime: 1h" "$cfg" || sfs_fail "no capability_lifetime in $cfg"
sed -i 's/capability_lifetime: 1h/capability_lifetime: 10s/' "$cfg"
sfs_start_service 2 --targets 2
sfs_as sfsalice "$SFS_BUILD/tests/progs/sfs_cap_renew" /users/renew.bin 12 ||
    sfs_fail "I/O after the capability's lifetime failed"
grep "refused .* expired" "$SFS_SERVICE_LOG" && sfs_fail "a target refused an expired capability: none was renewed"
echo "ok: a file open past the capability's lifetime is written and read (renewed by the client)"
sfs_stop_service
