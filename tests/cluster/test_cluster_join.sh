#!/usr/bin/env bash
# A host and a drive added to the running service on the four-host cluster
# (issue 13, item 4). The service starts on imaging-01..03 (targets 101,
# 201, 301). The administrator adds imaging-04 with its drive 401, and a
# second drive 202 on imaging-02, to the config; `stripefs-server --join`
# on each of the two hosts serves the new targets as new ranks. New files
# over all five targets, written by sfsalice on the new host, use both; every
# file, written before and after, reads back identical on another host; and
# `stripefs-ctl shutdown` stops the whole service, joined ranks included.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/cluster/cluster_lib.sh"
sfs_test_users
cluster_begin
cfg="$SFS_TEST_TMP/imaging.yaml"
cluster_write_config "$cfg"
chmod 0644 "$cfg"
d="$SFS_TEST_TMP/hosts"
# the cluster as it was before the fourth host: three hosts, three drives
sed -i -e '/{name: imaging-04,/d' -e '/{id: 401,/d' "$cfg" || sfs_fail "edit $cfg"
grep -q "imaging-04, ranks" "$cfg" && sfs_fail "imaging-04 still in $cfg"
cluster_start_service imaging-01,imaging-02,imaging-03

ctl_as() { # HOST USER VERB...
    local host=$1 user=$2 home
    shift 2
    home=$(sfs_user_home "$user")
    on "$host" setpriv --reuid="$user" --regid="$(id -g "$user")" --init-groups \
        env -i PATH="$PATH" HOME="$home" "$SFS_CTL" --config "$CLUSTER_CONFIG" "$@"
}
home=$(sfs_user_home sfsalice)
ctl_on imaging-01 mkdir /alice && ctl_on imaging-01 chown sfsalice:sfsalice /alice || sfs_fail "mkdir /alice"
head -c $((3 * 1024 * 1024 + 555)) /dev/urandom >"$home/before.bin"
chown sfsalice "$home/before.bin"
ctl_as imaging-02 sfsalice put "$home/before.bin" /alice/before.bin || sfs_fail "put before.bin"
sfs_expect_eq "$(ctl_on imaging-03 listtargets | grep -c ' online ')" 3 "online targets before the joins"

# the administrator adds the host and the drives to the config, then joins them
sed -i -e '/{name: imaging-03, ranks: 1}/a \  - {name: imaging-04, ranks: 1}' \
    -e "/{id: 301,/a \\  - {id: 401, host: imaging-04, dir: $d/imaging-04/mnt/7t_drive/stripefs, capacity: 7G}" \
    -e "/{id: 201,/a \\  - {id: 202, host: imaging-02, dir: $d/imaging-02/mnt/new_drive/stripefs, capacity: 4G}" \
    "$cfg" || sfs_fail "edit $cfg"
declare -A joined=()
for h in imaging-04 imaging-02; do
    rm -f "$SFS_TEST_TMP/joined-$h"
    timeout --kill-after=20 600 "${SFS_SERVER_ENV[@]}" "$CLUSTER" mpirun -np 1 --host "$h" \
        "$SFS_SERVER" -c "$cfg" --join --ready-file "$SFS_TEST_TMP/joined-$h" >"$SFS_TEST_TMP/join-$h.log" 2>&1 &
    joined[$h]=$!
    for _ in $(seq 1200); do
        [ -f "$SFS_TEST_TMP/joined-$h" ] && break
        kill -0 "${joined[$h]}" 2>/dev/null || break
        sleep 0.1
    done
    [ -f "$SFS_TEST_TMP/joined-$h" ] || { cat "$SFS_TEST_TMP/join-$h.log"; sfs_fail "the --join on $h did not start serving"; }
    echo "ok: on $h: $(grep -o 'new target.* joined as rank [0-9]*' "$SFS_TEST_TMP/join-$h.log")"
done
targets=$(ctl_on imaging-03 listtargets) || sfs_fail "listtargets"
echo "$targets"
for t in 401:imaging-04 202:imaging-02; do
    echo "$targets" | grep -qE "^${t%%:*} +[0-9]+ +${t#*:} +online " ||
        sfs_fail "target ${t%%:*} is not listed online on ${t#*:}"
done
echo "ok: 401 (a new host) and 202 (a new drive of imaging-02) are online"

# new files over all five targets use both new ones, once the metadata
# server's chooser has the new map (its next map refresh: a heartbeat
# interval, docs/capacity.md): empty probe files until one is placed there
ctl_as imaging-04 sfsalice setpattern --numtargets 5 /alice || sfs_fail "setpattern --numtargets 5"
: >"$home/empty" && chown sfsalice "$home/empty"
placed=0
for i in $(seq 60); do
    ctl_as imaging-04 sfsalice put "$home/empty" /alice/probe$i || sfs_fail "put probe$i"
    info=$(ctl_on imaging-01 getentryinfo /alice/probe$i) || sfs_fail "getentryinfo probe$i"
    if echo "$info" | grep -qw 401 && echo "$info" | grep -qw 202; then
        placed=$i
        break
    fi
    sleep 0.5
done
[ $placed != 0 ] || { echo "$info"; sfs_fail "no new file placed on 401 and 202 within 30 s of the joins"; }
echo "ok: the chooser places new files on 401 and 202 (probe $placed)"
head -c $((5 * 1024 * 1024 + 999)) /dev/urandom >"$home/after.bin"
chown sfsalice "$home/after.bin"
ctl_as imaging-04 sfsalice put "$home/after.bin" /alice/after.bin || sfs_fail "put after.bin on imaging-04"
info=$(ctl_on imaging-01 getentryinfo /alice/after.bin) || sfs_fail "getentryinfo"
for t in 401 202; do
    echo "$info" | grep -qw "$t" || { echo "$info"; sfs_fail "after.bin does not use target $t"; }
done
echo "ok: a new file over five targets uses 401 and 202"
for f in before after; do
    rm -f "$home/back.bin"
    ctl_as imaging-03 sfsalice get /alice/$f.bin "$home/back.bin" || sfs_fail "get $f.bin on imaging-03"
    cmp -s "$home/$f.bin" "$home/back.bin" || sfs_fail "$f.bin differs when read on imaging-03"
done
echo "ok: both files read back identical on imaging-03"

cluster_stop_service imaging-03
for h in imaging-04 imaging-02; do
    for _ in $(seq 600); do kill -0 "${joined[$h]}" 2>/dev/null || break; sleep 0.1; done
    wait "${joined[$h]}" || { cat "$SFS_TEST_TMP/join-$h.log"; sfs_fail "the joined rank on $h did not stop cleanly"; }
done
echo "ok: both joined ranks stopped cleanly with the service"
