#!/usr/bin/env bash
# Several users on the four-host cluster, every decision the servers': root
# on imaging-01 makes a sticky shared directory; sfsalice on imaging-03
# writes a file there and makes it 0600; sfsbob on imaging-04 can neither
# read, overwrite nor remove it, and nobody there cannot stop the service;
# sfsalice reads it back identical on imaging-02 and removes it. The users'
# clients hold no secret: MUNGE proves who they are (one munged shared by
# the four hosts here), the capability of each open lets them at the
# targets of all four hosts.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/cluster/cluster_lib.sh"
sfs_test_users
cluster_begin
cfg="$SFS_TEST_TMP/imaging.yaml"
cluster_write_config "$cfg"
chmod 0644 "$cfg"
cluster_start_service

# ctl as USER on HOST (uid, groups from the user database; no connauth)
ctl_as() { # HOST USER VERB...
    local host=$1 user=$2 home
    shift 2
    home=$(sfs_user_home "$user")
    on "$host" setpriv --reuid="$user" --regid="$(id -g "$user")" --init-groups \
        env -i PATH="$PATH" HOME="$home" "$SFS_CTL" --config "$CLUSTER_CONFIG" "$@"
}

ctl_on imaging-01 mkdir /shared || sfs_fail "mkdir /shared as root"
ctl_on imaging-01 chmod 1777 /shared || sfs_fail "chmod 1777 /shared as root"
alice_home=$(sfs_user_home sfsalice)
head -c $((3 * 1024 * 1024 + 777)) /dev/urandom >"$alice_home/data.in"
chown sfsalice "$alice_home/data.in"
ctl_as imaging-03 sfsalice put "$alice_home/data.in" /shared/alice.bin ||
    sfs_fail "sfsalice on imaging-03 cannot put into /shared"
ctl_as imaging-03 sfsalice chmod 600 /shared/alice.bin || sfs_fail "sfsalice cannot chmod her file"
st=$(ctl_on imaging-02 stat /shared/alice.bin) || sfs_fail "stat as root"
echo "$st"
echo "$st" | grep -q "sfsalice" || sfs_fail "the file is not sfsalice's: $st"
echo "$st" | grep -qE "0600|rw-------" || sfs_fail "the file's mode is not 0600: $st"
echo "ok: sfsalice's file on 4 targets is hers, mode 0600"

bob_home=$(sfs_user_home sfsbob)
sfs_expect_fail "permission denied" ctl_as imaging-04 sfsbob get /shared/alice.bin "$bob_home/stolen"
[ -s "$bob_home/stolen" ] && sfs_fail "sfsbob got bytes of sfsalice's 0600 file"
head -c 1000 /dev/urandom >"$bob_home/junk" && chown sfsbob "$bob_home/junk"
sfs_expect_fail "permission denied" ctl_as imaging-04 sfsbob put "$bob_home/junk" /shared/alice.bin
sfs_expect_fail "not permitted|sticky" ctl_as imaging-04 sfsbob rm /shared/alice.bin
sfs_expect_fail "administrator" ctl_as imaging-04 nobody shutdown

ctl_as imaging-02 sfsalice get /shared/alice.bin "$alice_home/data.out" ||
    sfs_fail "sfsalice cannot read her own file on imaging-02"
cmp "$alice_home/data.in" "$alice_home/data.out" || sfs_fail "sfsalice's file came back different"
echo "ok: sfsalice reads her file back identical on imaging-02"
ctl_as imaging-02 sfsalice rm /shared/alice.bin || sfs_fail "sfsalice cannot remove her file"
for what in "refused SHUTDOWN from uid $SFS_NOBODY_UID"; do
    grep -q "$what" "$SFS_SERVICE_LOG" || sfs_fail "the service log does not say '$what'"
done
echo "ok: the service logged the refused shutdown"
cluster_stop_service imaging-01
