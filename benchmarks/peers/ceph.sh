#!/usr/bin/env bash
# ceph.sh: a one-host CephFS for the peer benchmarks (Debian 12's ceph 16.2),
# bootstrapped by hand (monmaptool, ceph-mon --mkfs, keyrings; no cephadm, no
# systemd) and torn down by this script alone.
#
#   bash benchmarks/peers/ceph.sh up DIR     # prints "NAME MOUNTPOINT" lines
#   bash benchmarks/peers/ceph.sh down DIR   # unmounts, stops, removes DIR
#
# "up" installs the packages if missing and starts, all on 127.0.0.1 with
# cephx keyrings under DIR: one monitor (a), one manager (x), four OSDs with
# BlueStore on a sparse 3 GiB file each (DIR/osd/N/block, the default path; osd_memory_target
# 1 GiB, the cache small), one MDS (a), a file system "sfspeer" with a
# metadata pool and a data pool of size 1 (no redundancy, like stripefs
# without mirroring) and a second data pool of size 2 (two OSDs hold every
# object; the metadata pool stays size 1), mounted with ceph-fuse:
#   plain  DIR/mnt            files in the size-1 data pool
#   rep    DIR/mnt/rep2       a directory whose layout puts its files in the
#                             size-2 pool (ceph.dir.layout.pool)
# It refuses to start when any ceph daemon or ceph-fuse is already running.
# A failure in "up" tears down what it had started.
PEER_NAME=ceph
. "$(dirname "$0")/common.sh"

usage() { sed -n '2,/^PEER_NAME/p' "$0" | sed -e '/^PEER_NAME/d' -e 's/^# \{0,1\}//'; }
NOSD=4

ceph_() { ceph -c "$DIR/ceph.conf" --connect-timeout 20 "$@"; }

down() {
    local pids=() f
    DIR=$1
    [ -d "$DIR" ] || return 0
    peer_umount "$DIR/mnt"
    for f in "$DIR"/run/*.pid; do
        [ -f "$f" ] && pids+=("$(cat "$f")")
    done
    peer_kill_pids ${pids[@]+"${pids[@]}"}
    rm -rf "$DIR"
    peer_log "down ($DIR removed)"
}

up() {
    local fsid i uuid id
    DIR=$1
    [ ! -e "$DIR" ] || [ -z "$(ls -A "$DIR")" ] || peer_die "$DIR exists and is not empty"
    peer_install ceph-mon ceph-mgr ceph-osd ceph-mds ceph-fuse ceph-common uuid-runtime attr
    peer_refuse_running ceph-mon ceph-mgr ceph-osd ceph-mds ceph-fuse
    [ -c /dev/fuse ] || peer_die "/dev/fuse is missing: no FUSE mounts here"
    mkdir -p "$DIR"/{run,log,mon,mgr,osd,mds,mnt} || peer_die "cannot create $DIR"
    DIR=$(cd "$DIR" && pwd)
    trap 'rc=$?; [ $rc = 0 ] || { peer_log "up failed: tearing down"; down "$DIR"; }' EXIT
    trap 'exit 130' INT TERM
    fsid=$(uuidgen)
    cat >"$DIR/ceph.conf" <<CONF
[global]
fsid = $fsid
mon_host = v2:127.0.0.1:3300
public_network = 127.0.0.0/8
auth_cluster_required = cephx
auth_service_required = cephx
auth_client_required = cephx
run_dir = $DIR/run
pid_file = $DIR/run/\$name.pid
admin_socket = $DIR/run/\$name.asok
log_file = $DIR/log/\$name.log
keyring = $DIR/\$type/\$id/keyring
osd_pool_default_size = 1
osd_pool_default_min_size = 1
mon_allow_pool_size_one = true
mon_allow_pool_delete = true
osd_crush_chooseleaf_type = 0
mon_warn_on_pool_no_redundancy = false
ms_bind_ipv6 = false
auth_allow_insecure_global_id_reclaim = false
mon_data_avail_warn = 5
[mon]
mon_data = $DIR/mon/\$id
[mgr]
mgr_data = $DIR/mgr/\$id
[osd]
osd_data = $DIR/osd/\$id
osd_objectstore = bluestore
bluestore_block_create = true
bluestore_block_size = 3221225472
bluestore_block_db_create = false
bluestore_block_wal_create = false
osd_memory_target = 1073741824
bluestore_cache_autotune = false
bluestore_cache_size = 268435456
osd_op_num_shards = 2
osd_op_num_threads_per_shard = 1
[mds]
mds_data = $DIR/mds/\$id
mds_cache_memory_limit = 536870912
[client]
admin_socket = $DIR/run/\$name.\$pid.asok
keyring = $DIR/client.admin.keyring
client_mountpoint = /
CONF
    # keyrings: mon., client.admin (for this script and ceph-fuse)
    mkdir -p "$DIR/mon/a"
    ceph-authtool --create-keyring "$DIR/mon.keyring" --gen-key -n mon. --cap mon 'allow *' \
        >/dev/null || peer_die "ceph-authtool mon. failed"
    ceph-authtool --create-keyring "$DIR/client.admin.keyring" --gen-key -n client.admin \
        --cap mon 'allow *' --cap osd 'allow *' --cap mds 'allow *' --cap mgr 'allow *' \
        >/dev/null || peer_die "ceph-authtool client.admin failed"
    ceph-authtool "$DIR/mon.keyring" --import-keyring "$DIR/client.admin.keyring" >/dev/null ||
        peer_die "ceph-authtool --import-keyring failed"
    monmaptool --create --addv a "[v2:127.0.0.1:3300,v1:127.0.0.1:6789]" --fsid "$fsid" \
        "$DIR/monmap" >/dev/null || peer_die "monmaptool failed"
    ceph-mon -c "$DIR/ceph.conf" --mkfs -i a --monmap "$DIR/monmap" --keyring "$DIR/mon.keyring" \
        >"$DIR/log/mon-mkfs.txt" 2>&1 || peer_die "ceph-mon --mkfs failed: $(tail -n 5 "$DIR/log/mon-mkfs.txt")"
    ceph-mon -c "$DIR/ceph.conf" -i a 2>>"$DIR/log/start.txt" || peer_die "ceph-mon did not start (log: $DIR/log/mon.a.log)"
    peer_wait 60 ceph_ -s || peer_die "the monitor does not answer (log: $DIR/log/mon.a.log)"
    peer_log "monitor up"

    mkdir -p "$DIR/mgr/x"
    ceph_ auth get-or-create mgr.x mon 'allow profile mgr' osd 'allow *' mds 'allow *' \
        >"$DIR/mgr/x/keyring" || peer_die "auth for mgr.x failed"
    ceph-mgr -c "$DIR/ceph.conf" -i x 2>>"$DIR/log/start.txt" || peer_die "ceph-mgr did not start (log: $DIR/log/mgr.x.log)"

    for i in $(seq "$NOSD"); do
        uuid=$(uuidgen)
        id=$(ceph_ osd new "$uuid") || peer_die "ceph osd new failed"
        mkdir -p "$DIR/osd/$id"
        ceph-authtool --create-keyring "$DIR/osd/$id/keyring" --gen-key -n "osd.$id" >/dev/null ||
            peer_die "ceph-authtool osd.$id failed"
        ceph_ auth add "osd.$id" osd 'allow *' mon 'allow profile osd' mgr 'allow profile osd' \
            -i "$DIR/osd/$id/keyring" >/dev/null 2>&1 || peer_die "ceph auth add osd.$id failed"
        ceph-osd -c "$DIR/ceph.conf" -i "$id" --mkfs --osd-uuid "$uuid" \
            >"$DIR/log/osd-mkfs-$id.txt" 2>&1 ||
            peer_die "ceph-osd --mkfs $id failed: $(tail -n 5 "$DIR/log/osd-mkfs-$id.txt")"
        ceph-osd -c "$DIR/ceph.conf" -i "$id" 2>>"$DIR/log/start.txt" ||
            peer_die "ceph-osd $id did not start (log: $DIR/log/osd.$id.log)"
    done
    osds_up() { [ "$(ceph_ osd stat -f json | sed -n 's/.*"num_up_osds":\([0-9]*\).*/\1/p')" = "$NOSD" ]; }
    peer_wait 120 osds_up || peer_die "not all $NOSD OSDs came up: $(ceph_ osd stat 2>&1)"
    peer_log "$NOSD OSDs up"

    mkdir -p "$DIR/mds/a"
    ceph_ auth get-or-create mds.a mon 'allow profile mds' osd 'allow rwx' mds 'allow' \
        mgr 'allow profile mds' >"$DIR/mds/a/keyring" || peer_die "auth for mds.a failed"
    ceph_ osd pool create sfspeer_meta 16 >/dev/null 2>&1 &&
        ceph_ osd pool create sfspeer_data 32 >/dev/null 2>&1 &&
        ceph_ osd pool create sfspeer_data2 32 >/dev/null 2>&1 || peer_die "pool create failed"
    for p in sfspeer_meta sfspeer_data; do
        ceph_ osd pool set "$p" size 1 --yes-i-really-mean-it >/dev/null 2>&1 ||
            peer_die "pool set $p size 1 failed"
    done
    ceph_ osd pool set sfspeer_data2 size 2 >/dev/null 2>&1 &&
        ceph_ osd pool set sfspeer_data2 min_size 1 >/dev/null 2>&1 ||
        peer_die "pool set sfspeer_data2 size 2 failed"
    ceph_ fs new sfspeer sfspeer_meta sfspeer_data >/dev/null 2>&1 || peer_die "ceph fs new failed"
    ceph_ fs add_data_pool sfspeer sfspeer_data2 >/dev/null 2>&1 ||
        peer_die "ceph fs add_data_pool failed"
    ceph-mds -c "$DIR/ceph.conf" -i a >>"$DIR/log/start.txt" 2>&1 || peer_die "ceph-mds did not start (log: $DIR/log/mds.a.log)"
    mds_active() { ceph_ fs status sfspeer 2>/dev/null | grep -q active ||
        ceph_ mds stat 2>/dev/null | grep -q 'up:active'; }
    peer_wait 120 mds_active || peer_die "the MDS did not become active: $(ceph_ mds stat 2>&1)"
    peer_log "MDS active"

    ceph-fuse -c "$DIR/ceph.conf" --id admin "$DIR/mnt" >"$DIR/log/fuse.txt" 2>&1 ||
        peer_die "ceph-fuse failed: $(tail -n 5 "$DIR/log/fuse.txt")"
    peer_wait 30 mountpoint -q "$DIR/mnt" || peer_die "$DIR/mnt is not a mount point"
    mkdir "$DIR/mnt/rep2" && setfattr -n ceph.dir.layout.pool -v sfspeer_data2 "$DIR/mnt/rep2" ||
        peer_die "cannot set the layout of $DIR/mnt/rep2"
    echo "plain $DIR/mnt"
    echo "rep $DIR/mnt/rep2"
    peer_log "up: $(ceph_ -s 2>/dev/null | grep -E 'health|osd:|mds:' | tr -s ' ' | tr '\n' ';')"
    trap - EXIT
}

case ${1:-} in
up) [ $# = 2 ] || { usage >&2; exit 2; }; up "$2" ;;
down) [ $# = 2 ] || { usage >&2; exit 2; }; down "$2" ;;
-h|--help) usage ;;
*) usage >&2; exit 2 ;;
esac
