#!/usr/bin/env bash
# Root squash and the admin group: with this host taken out of
# security.trusted_hosts, root's clients are nobody (they cannot write in
# root's directories, read root's 0600 files or stop the service: refused
# and logged), while a holder of the connauth file still can; members of
# security.admin_group may stop the service, other users may not.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
sfs_test_users
sfs_start_service 2 --targets 2
cfg=$SFS_STATE/stripefs.yaml
echo secret >"$SFS_TEST_TMP/secret.txt"
sfs_ctl put "$SFS_TEST_TMP/secret.txt" /secret.txt || sfs_fail "put as trusted root"
sfs_ctl chmod 600 /secret.txt || sfs_fail "chmod as trusted root"
sfs_ctl mkdir /rootdir || sfs_fail "mkdir as trusted root"
sfs_stop_service

# untrust this host; make sfsteam the admin group
grep -q "trusted_hosts:" "$cfg" || sfs_fail "the one-host config trusts no host: $(cat "$cfg")"
sed -i -e '/trusted_hosts:/d' -e 's/^\(  mode: munge\)$/\1\n  admin_group: sfsteam/' "$cfg"
grep -q "admin_group: sfsteam" "$cfg" || sfs_fail "could not set admin_group in $cfg"
sfs_start_service 2 --targets 2

sfs_expect_fail "permission denied" sfs_ctl mkdir /rootdir/by-squashed-root
sfs_expect_fail "permission denied" sfs_ctl get /secret.txt "$SFS_TEST_TMP/leak.txt"
[ -s "$SFS_TEST_TMP/leak.txt" ] && sfs_fail "squashed root read root's 0600 file"
sfs_expect_fail "administrator" sfs_ctl shutdown
grep -q "squashed to nobody" "$SFS_SERVICE_LOG" || sfs_fail "the squash is not in the service log"
echo "ok: the service logged: $(grep "squashed to nobody" "$SFS_SERVICE_LOG" | head -n 1 | cut -c 28-)"
# the servers' secret is root's on the server hosts: it still works
sfs_ctl --connauth "$SFS_STATE/connauth" mkdir /rootdir/by-secret ||
    sfs_fail "a holder of the connauth file was refused"
echo "ok: with the connauth file root is root again"
sfs_expect_fail "administrator" sfs_as nobody "$SFS_CTL" shutdown
# sfsalice is in sfsteam (sfsbob too): an administrator
sfs_as sfsalice "$SFS_CTL" shutdown || sfs_fail "a member of admin_group could not stop the service"
sfs_wait_service_exit
echo "ok: sfsalice (admin_group sfsteam) stopped the service; it exited 0"
