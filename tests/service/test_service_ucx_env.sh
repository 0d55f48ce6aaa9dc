#!/usr/bin/env bash
# The client library configures its UCX context itself (ucp_config_modify)
# and leaves the application's environment alone: a preloaded program's
# children see no UCX_* variable the user did not set (the library used to
# setenv UCX_POSIX_ERROR_HANDLING, UCX_SYSV_ERROR_HANDLING and
# UCX_KEEPALIVE_INTERVAL in the application). Our settings still apply
# (same-host ranks are reached over shared memory, which needs UCX's peer
# failure detection on it), and a user's own UCX_* wins over them.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/preload/preload_lib.sh"
for v in $(env | sed -n 's/^\(UCX_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done

sfs_start_service 3
sfs_ctl mkdir /env || sfs_fail "mkdir /env"

# a program that reached stripefs, then started a child: the child's environment
sfs_pl perl -e 'opendir(my $d, "/stripefs/env") or die "opendir: $!"; exec("env")' \
    >"$SFS_TEST_TMP/child.env" 2>"$SFS_TEST_TMP/child.err" ||
    { cat "$SFS_TEST_TMP/child.err" >&2; sfs_fail "the preloaded program failed"; }
grep -q "^STRIPEFS_PREFIX=" "$SFS_TEST_TMP/child.env" || sfs_fail "the child's environment was not captured"
if grep "^UCX_" "$SFS_TEST_TMP/child.env"; then
    sfs_fail "the library put UCX variables into the application's environment"
fi
echo "ok: a preloaded program's child sees no UCX_* variable"

# our own settings apply: same-host ranks over shared memory
net=$(sfs_ctl net) || sfs_fail "net: $net"
echo "$net" | grep "this process reaches it over" | head -n 3
echo "$net" | grep "this process reaches it over" | grep -Eq "posix|sysv" ||
    sfs_fail "the client reaches no rank over shared memory (UCX's error handling on it not set?)"
echo "ok: same-host ranks are reached over shared memory"

# a user's own UCX_* wins
net=$(UCX_TLS=tcp sfs_ctl net) || sfs_fail "net with UCX_TLS=tcp: $net"
if echo "$net" | grep "this process reaches it over" | grep -Ev "tcp" | grep -q .; then
    echo "$net" >&2
    sfs_fail "with UCX_TLS=tcp the client still used another transport"
fi
echo "ok: UCX_TLS=tcp is honoured"
net=$(UCX_POSIX_ERROR_HANDLING=n UCX_SYSV_ERROR_HANDLING=n sfs_ctl net) || sfs_fail "net: $net"
if echo "$net" | grep "this process reaches it over" | grep -Eq "posix|sysv"; then
    echo "$net" >&2
    sfs_fail "the user's UCX_POSIX/SYSV_ERROR_HANDLING=n did not win over ours"
fi
echo "ok: the user's UCX_POSIX_ERROR_HANDLING=n UCX_SYSV_ERROR_HANDLING=n win (no shared memory)"
sfs_stop_service
