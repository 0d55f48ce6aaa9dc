#!/usr/bin/env bash
# Attacks on the munge mode: AUTHs with no credential, another handshake's
# credential (replayed, unused, the server's own), an expired one, one from
# a munged with another key; a MUNGE session that claims to be a server
# rank; storage I/O with forged, foreign or too weak capabilities; requests
# on another process's session; a non-admin user's SHUTDOWN. Each is
# refused and logged, and the service keeps serving (it stops cleanly at
# the end).
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"

[ "$(id -u)" = 0 ] || sfs_skip "needs root (the one-host service runs as root, service_uid 0)"
[ -x /usr/sbin/munged ] || sfs_skip "munged is not installed"

sfs_start_service 2 --targets 2
socket=$(sed -n 's/^ *munge_socket: *//p' "$STRIPEFS_CONFIG" | tr -d '"' | head -n 1)
[ -S "$socket" ] || sfs_fail "no munge socket in $STRIPEFS_CONFIG (got '$socket')"

# A second munged with a key of its own: its credentials are forgeries here.
other="$SFS_TEST_TMP/other-munge"
mkdir -p "$other"
chmod 0755 "$other"
dd if=/dev/urandom of="$other/munge.key" bs=1024 count=1 status=none
chmod 0400 "$other/munge.key"
/usr/sbin/munged --foreground --socket="$other/munge.socket" --key-file="$other/munge.key" \
    --log-file="$other/munged.log" --pid-file="$other/munged.pid" \
    --seed-file="$other/munged.seed" >"$other/munged.out" 2>&1 &
other_pid=$!
stop_other() { kill "$other_pid" 2>/dev/null; wait "$other_pid" 2>/dev/null; }
trap 'stop_other; sfs_cleanup' EXIT
for _ in $(seq 100); do
    munge -S "$other/munge.socket" -n >/dev/null 2>&1 && break
    kill -0 "$other_pid" 2>/dev/null || sfs_fail "the second munged exited: $(cat "$other/munged.out" "$other/munged.log" 2>/dev/null)"
    sleep 0.1
done
munge -S "$other/munge.socket" -n | unmunge -S "$socket" >/dev/null 2>&1 &&
    sfs_fail "the service's munged decodes the second munged's credentials (same key?)"
echo "ok: a second munged with another key runs (pid $other_pid)"

attack_rc=0
"$SFS_BUILD/tests/progs/sfs_munge_attack" "$socket" localhost "$SFS_PORT" "$other/munge.socket" \
    || attack_rc=$?
stop_other

# A user who is no administrator may not stop the service.
echo "not yours" >"$SFS_TEST_TMP/nobody.txt"
chmod 0644 "$SFS_TEST_TMP/nobody.txt"
sfs_expect_fail "administrator|not permitted|EPERM" \
    runuser -u nobody -- env STRIPEFS_CONFIG="$STRIPEFS_CONFIG" "$SFS_CTL" shutdown
sfs_ctl check-servers >/dev/null || sfs_fail "the service does not answer after nobody's SHUTDOWN"
echo "ok: the service still answers after nobody's SHUTDOWN"

for what in "authentication refused: .*MUNGE credential refused" \
    "authentication refused: .*(a replay)" \
    "authentication refused: .*made for another session" \
    "authentication refused: .*[Ee]xpired" \
    "authentication refused: .*[Ii]nvalid credential" \
    "refused REGISTER from uid 0" "refused HEARTBEAT from uid 0" \
    "refused READ on target .*no capability" "refused CHUNK_STAT on target .*no capability" \
    "refused READ on target .*forged capability" \
    "refused READ on target .*the capability is for entry" \
    "refused WRITE on target .*read-only" "refused TRUNCATE on target .*read-only" \
    "refused WRITE on target .*forged capability" \
    "refused READ on target .* from uid 65534 .*granted to uid 0, not 65534" \
    "PING .* failed its integrity check: dropped" \
    "refused SHUTDOWN from uid 65534 .*not an administrator"; do
    grep -qE -- "$what" "$SFS_SERVICE_LOG" || sfs_fail "the service log does not say '$what'"
    echo "ok: the service logged: $(grep -E -- "$what" "$SFS_SERVICE_LOG" | head -n 1 | cut -c 28-)"
done

# Ordinary clients are still served, data goes in and comes out.
head -c 100000 /dev/urandom >"$SFS_TEST_TMP/after.bin"
sfs_ctl put "$SFS_TEST_TMP/after.bin" /after-attacks.bin || sfs_fail "put after the attacks"
sfs_ctl get /after-attacks.bin "$SFS_TEST_TMP/after.out" || sfs_fail "get after the attacks"
cmp "$SFS_TEST_TMP/after.bin" "$SFS_TEST_TMP/after.out" || sfs_fail "the file came back different"
echo "ok: a file put after the attacks comes back the same"
sfs_stop_service
[ $attack_rc = 0 ] || sfs_fail "sfs_munge_attack: an attack was not refused (exit $attack_rc, see FAILED above)"
