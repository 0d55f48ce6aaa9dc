#!/usr/bin/env bash
# Authentication: a client with a wrong secret is refused with a clear
# error and the refusal is logged; a connauth file readable by others is
# refused; the service keeps serving clients that hold the right secret.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"

sfs_start_service 2 --targets 2
mgmt="localhost:$SFS_PORT"

sfs_ctl mkconnauth "$SFS_TEST_TMP/wrong" >/dev/null || sfs_fail "mkconnauth"
sfs_expect_fail "connauth" env -u STRIPEFS_CONFIG "$SFS_CTL" --mgmt "$mgmt" \
    --connauth "$SFS_TEST_TMP/wrong" listnodes
grep -q "authentication refused" "$SFS_SERVICE_LOG" || sfs_fail "the refusal is not in the service log"
echo "ok: the service logged: $(grep "authentication refused" "$SFS_SERVICE_LOG" | tail -n 1)"

cp "$SFS_STATE/connauth" "$SFS_TEST_TMP/open"
chmod 0644 "$SFS_TEST_TMP/open"
sfs_expect_fail "mode 0644" env -u STRIPEFS_CONFIG "$SFS_CTL" --mgmt "$mgmt" \
    --connauth "$SFS_TEST_TMP/open" listnodes
sfs_expect_fail "cannot open connauth" env -u STRIPEFS_CONFIG "$SFS_CTL" --mgmt "$mgmt" \
    --connauth "$SFS_TEST_TMP/none" listnodes

# the right secret, given as host:port + connauth, still works
env -u STRIPEFS_CONFIG "$SFS_CTL" --mgmt "$mgmt" --connauth "$SFS_STATE/connauth" listnodes \
    || sfs_fail "a client with the right secret was refused"
echo "ok: the right secret is accepted after the refusals"
sfs_expect_fail "cannot reach|refused" env -u STRIPEFS_CONFIG "$SFS_CTL" --timeout 3 \
    --mgmt "localhost:$(sfs_free_port)" --connauth "$SFS_STATE/connauth" listnodes
sfs_stop_service
