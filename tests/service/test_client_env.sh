#!/usr/bin/env bash
# The client's environment knobs and connect timeout, without a service:
# a bad STRIPEFS_* value makes the client fail naming the variable (it used
# to be ignored), and a config's timeouts: {connect} is the connect timeout
# (it used to be capped at 10 s), with STRIPEFS_TIMEOUT overriding it.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
head -c 64 /dev/urandom >"$SFS_TEST_TMP/connauth" && chmod 0400 "$SFS_TEST_TMP/connauth"
export STRIPEFS_CONNAUTH="$SFS_TEST_TMP/connauth"
unset STRIPEFS_CONFIG STRIPEFS_TIMEOUT STRIPEFS_WINDOW STRIPEFS_MAX_REQUEST STRIPEFS_LOCAL_READ

# nothing listens here: a connect with good values fails with "refused"
closed=$(sfs_free_port)
export STRIPEFS_MGMT="127.0.0.1:$closed"
sfs_expect_fail "127.0.0.1:$closed.*refused" "$SFS_CTL" listtargets

# each bad value is named, before anything is tried
for bad in STRIPEFS_TIMEOUT=abc STRIPEFS_TIMEOUT=-1 STRIPEFS_TIMEOUT=0 STRIPEFS_TIMEOUT=2.5x \
    STRIPEFS_WINDOW=0 STRIPEFS_WINDOW=many STRIPEFS_MAX_REQUEST=1000 STRIPEFS_MAX_REQUEST=8Q \
    STRIPEFS_LOCAL_READ=maybe STRIPEFS_SERVICE_UID=-5; do
    name=${bad%%=*}
    value=${bad#*=}
    out=$(env "$bad" "$SFS_CTL" listtargets 2>&1) && sfs_fail "$bad: listtargets succeeded"
    echo "$out" | grep -qF -- "$name=$value" ||
        sfs_fail "$bad: the error does not name the variable and its value: $out"
    echo "$out" | grep -q "refused" && sfs_fail "$bad: the client tried to connect: $out"
    echo "ok: $bad refused: $out"
done
sfs_expect_fail "STRIPEFS_MGMT=nowhere: .*not host:port" env STRIPEFS_MGMT=nowhere "$SFS_CTL" listtargets
# good values in range are taken
sfs_expect_fail "refused" env STRIPEFS_TIMEOUT=7 STRIPEFS_WINDOW=4 STRIPEFS_MAX_REQUEST=1M \
    STRIPEFS_LOCAL_READ=no "$SFS_CTL" listtargets

# a listener that accepts and then says nothing (a hung management host)
silent=$(sfs_free_port)
perl -MIO::Socket::INET -e '
    my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => $ARGV[0], Listen => 16,
                                  ReuseAddr => 1) or die "listen: $!";
    my @held; alarm 120; while (my $c = $s->accept) { push @held, $c }' "$silent" &
listener=$!
trap 'kill $listener 2>/dev/null; sfs_cleanup' EXIT
sleep 0.5
unset STRIPEFS_MGMT
cfg="$SFS_TEST_TMP/silent.yaml"
"$SFS_CTL" genconfig --hosts 127.0.0.1 --port "$silent" --shared-secret \
    --connauth "$SFS_TEST_TMP/connauth" -o "$cfg" || sfs_fail "genconfig"
sed -i 's/connect: 10s/connect: 2s/' "$cfg"
grep -q "connect: 2s" "$cfg" || sfs_fail "no connect timeout to change in $cfg: $(cat "$cfg")"
start=$(date +%s)
sfs_expect_fail "127.0.0.1:$silent.*timed out.*connect timeout 2.000 s, from the config's timeouts: \{connect\}" \
    env STRIPEFS_CONFIG="$cfg" "$SFS_CTL" listtargets
echo "ok: it gave up after $(( $(date +%s) - start )) s (config: connect 2 s; it was 10 s before)"
sfs_expect_fail "127.0.0.1:$silent.*timed out.*connect timeout 3.000 s, from STRIPEFS_TIMEOUT" \
    env STRIPEFS_CONFIG="$cfg" STRIPEFS_TIMEOUT=3 "$SFS_CTL" listtargets
sfs_expect_fail "127.0.0.1:$silent.*timed out.*connect timeout 1.500 s, from the caller's timeout" \
    env STRIPEFS_CONFIG="$cfg" STRIPEFS_TIMEOUT=3 "$SFS_CTL" --timeout 1.5 listtargets
sfs_expect_fail "--timeout" "$SFS_CTL" --timeout 0 listtargets
sfs_expect_fail "--timeout" "$SFS_CTL" --timeout abc listtargets

# stripefs-ctl info: every tunable with its current value, without a
# service or a config
out=$(env -u STRIPEFS_MGMT STRIPEFS_CONFIG="$SFS_TEST_TMP/none.yaml" STRIPEFS_TIMEOUT=7 \
    "$SFS_CTL" info 2>&1) || sfs_fail "info failed without a service: $out"
echo "$out"
echo "$out" | grep -q "^# client" || sfs_fail "info shows no client section"
echo "$out" | grep -qE "^STRIPEFS_TIMEOUT=7  #" || sfs_fail "info does not show STRIPEFS_TIMEOUT=7"
echo "$out" | grep -qE "^STRIPEFS_WINDOW=32 \(default\)" || sfs_fail "info does not show the window's default"
# every STRIPEFS_* name the listed subsystems' sources read is in the output
for dir in common ucx_transport cluster client service preload; do
    for name in $(grep -ohE '"STRIPEFS_[A-Z0-9_]+"' "$SFS_SRC/$dir"/*.[ch] | tr -d '"' | sort -u); do
        echo "$out" | grep -q "^$name=" || sfs_fail "stripefs-ctl info does not list $name (read in $dir/)"
    done
done
echo "ok: info lists every STRIPEFS_* variable of client/"
out=$(env STRIPEFS_WINDOW=0 STRIPEFS_TIMEOUT=abc "$SFS_CTL" info 2>&1) &&
    sfs_fail "info exits 0 with invalid values: $out"
echo "$out" | grep -qE "^STRIPEFS_WINDOW=0 .*INVALID" || sfs_fail "info does not flag STRIPEFS_WINDOW=0: $out"
echo "$out" | grep -qE "^STRIPEFS_TIMEOUT=abc .*INVALID" || sfs_fail "info does not flag STRIPEFS_TIMEOUT=abc: $out"
echo "$out" | grep -q "2 invalid values" || sfs_fail "info does not count the invalid values: $out"
echo "ok: info flags invalid values and exits 1"
sfs_expect_fail "unexpected operand 'extra'" "$SFS_CTL" info extra

# genconfig without -o prints the config (it used to rename a temporary file
# over /dev/stdout: nothing came out, and as root the device link was gone)
out=$("$SFS_CTL" genconfig --hosts localhost | head -n 3) || sfs_fail "genconfig to stdout failed"
echo "$out" | grep -q "^cluster: " || sfs_fail "genconfig printed no config: '$out'"
[ -L /dev/stdout ] || [ ! -e /dev/stdout ] || [ -c /dev/stdout ] ||
    sfs_fail "/dev/stdout is no longer a link or a device: $(ls -l /dev/stdout)"
echo "ok: genconfig prints the config to stdout"

# numeric options are numbers: "-s 64x" used to make a 64-byte key, "--port 80x" port 80
sfs_expect_fail "not a number" "$SFS_CTL" mkconnauth -s 64x "$SFS_TEST_TMP/key"
[ -e "$SFS_TEST_TMP/key" ] && sfs_fail "mkconnauth -s 64x wrote a key"
sfs_expect_fail "usage" "$SFS_CTL" genconfig --hosts localhost --port 80x
