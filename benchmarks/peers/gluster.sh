#!/usr/bin/env bash
# gluster.sh: a one-host GlusterFS for the peer benchmarks (Debian 12's
# glusterfs-server 10.3), set up and torn down by this script alone.
#
#   bash benchmarks/peers/gluster.sh up DIR     # prints "NAME MOUNTPOINT" lines
#   bash benchmarks/peers/gluster.sh down DIR   # unmounts, stops, removes DIR
#
# "up" installs the packages if missing, starts a glusterd of its own (its
# working directory under DIR, not /var/lib/glusterd), makes eight brick
# directories under DIR (bricks on the root file system, hence `force`) and
# two volumes over them, each with four bricks and FUSE-mounted:
#   dist  distributed over 4 bricks, features.shard on (64 MiB shards, the
#         default): no redundancy, like stripefs without mirroring
#   rep   distributed-replicated, replica 2 (2 x 2 bricks): every byte twice
# Bricks are on this host's address (glusterd refuses loopback names for
# bricks); the servers listen on all addresses, the mounts go to localhost.
# It refuses to start when a glusterd or brick process is already running.
# No systemd: the daemons are started directly and "down" stops them by
# their pid files. A failure in "up" tears down what it had started.
PEER_NAME=gluster
. "$(dirname "$0")/common.sh"

VOLS="dist rep"
vol_name() { echo "sfspeer-$1"; }

usage() { sed -n '2,/^PEER_NAME/p' "$0" | sed -e '/^PEER_NAME/d' -e 's/^# \{0,1\}//'; }

# Every pid of a process of our setup: glusterd, bricks, self-heal daemon,
# FUSE clients (found by our volume names or DIR in their command line).
our_pids() {
    local dir=$1 p
    [ -f "$dir/glusterd.pid" ] && cat "$dir/glusterd.pid"
    for p in $(pgrep -x glusterfsd; pgrep -x glusterfs); do
        tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -qE "sfspeer-|$dir" && echo "$p"
    done
}

down() {
    local dir=$1 v pids
    [ -d "$dir" ] || return 0
    for v in $VOLS; do peer_umount "$dir/mnt/$v"; done
    if [ -f "$dir/glusterd.pid" ] && kill -0 "$(cat "$dir/glusterd.pid")" 2>/dev/null; then
        for v in $VOLS; do
            gluster --mode=script volume stop "$(vol_name "$v")" force >/dev/null 2>&1
            gluster --mode=script volume delete "$(vol_name "$v")" >/dev/null 2>&1
        done
    fi
    pids=$(our_pids "$dir" | sort -u)
    # shellcheck disable=SC2086
    peer_kill_pids $pids
    # the brick and mount logs glusterd keeps under /var/log/glusterfs
    rm -f /var/log/glusterfs/bricks/"$(echo "${dir#/}" | tr / -)"-* \
        /var/log/glusterfs/"$(echo "${dir#/}" | tr / -)"-mnt-*.log
    # glusterd's run files of our volumes; its sockets once no gluster runs
    rm -rf /var/run/gluster/vols/sfspeer-* /var/run/gluster/shd/sfspeer-*
    pgrep -x glusterd >/dev/null || pgrep -x glusterfsd >/dev/null || pgrep -x glusterfs >/dev/null ||
        rm -f /var/run/gluster/*.socket
    rm -rf "$dir"
    peer_log "down ($dir removed)"
}

up() {
    local dir=$1 host v b i
    [ ! -e "$dir" ] || [ -z "$(ls -A "$dir")" ] || peer_die "$dir exists and is not empty"
    peer_install glusterfs-server glusterfs-client
    peer_refuse_running glusterd glusterfsd
    command -v mount.glusterfs >/dev/null || peer_die "mount.glusterfs is missing"
    [ -c /dev/fuse ] || peer_die "/dev/fuse is missing: no FUSE mounts here"
    mkdir -p "$dir/glusterd" "$dir/bricks" "$dir/log" || peer_die "cannot create $dir"
    dir=$(cd "$dir" && pwd)
    trap 'rc=$?; [ $rc = 0 ] || { peer_log "up failed: tearing down"; down "$dir"; }' EXIT
    trap 'exit 130' INT TERM
    host=$(hostname -I 2>/dev/null | awk '{ print $1 }')
    [ -n "$host" ] || peer_die "no non-loopback address for the bricks"
    cat >"$dir/glusterd.vol" <<VOL
volume management
    type mgmt/glusterd
    option working-directory $dir/glusterd
    option transport-type socket
    option transport.socket.keepalive-time 10
    option transport.socket.keepalive-interval 2
    option transport.socket.read-fail-log off
    option ping-timeout 0
    option event-threads 1
end-volume
VOL
    mkdir -p /var/run/gluster /var/log/glusterfs
    glusterd -f "$dir/glusterd.vol" -p "$dir/glusterd.pid" -l "$dir/log/glusterd.log" ||
        peer_die "glusterd did not start (log: $dir/log/glusterd.log)"
    peer_wait 60 gluster --mode=script volume list ||
        peer_die "glusterd does not answer (log: $dir/log/glusterd.log)"
    for v in $VOLS; do
        b=()
        for i in 1 2 3 4; do
            mkdir -p "$dir/bricks/$v$i"
            b+=("$host:$dir/bricks/$v$i")
        done
        case $v in
        dist) gluster --mode=script volume create "$(vol_name $v)" transport tcp "${b[@]}" force ;;
        rep) gluster --mode=script volume create "$(vol_name $v)" replica 2 transport tcp "${b[@]}" force ;;
        esac >"$dir/log/create-$v.txt" 2>&1 ||
            peer_die "volume create $v failed: $(cat "$dir/log/create-$v.txt")"
        if [ "$v" = dist ]; then
            gluster --mode=script volume set "$(vol_name $v)" features.shard on >/dev/null ||
                peer_die "volume set features.shard on failed"
        fi
        gluster --mode=script volume start "$(vol_name $v)" >"$dir/log/start-$v.txt" 2>&1 ||
            peer_die "volume start $v failed: $(cat "$dir/log/start-$v.txt")"
        mkdir -p "$dir/mnt/$v"
        # the brick ports need a moment after "start" returns
        peer_wait 30 mount -t glusterfs -o log-file="$dir/log/mnt-$v.log" \
            "localhost:/$(vol_name $v)" "$dir/mnt/$v" ||
            peer_die "mount of $(vol_name $v) failed (log: $dir/log/mnt-$v.log)"
        peer_wait 30 mountpoint -q "$dir/mnt/$v" || peer_die "$dir/mnt/$v is not a mount point"
        touch "$dir/mnt/$v/.probe" && rm -f "$dir/mnt/$v/.probe" ||
            peer_die "cannot write to $dir/mnt/$v"
        echo "$v $dir/mnt/$v"
    done
    peer_log "up: $(gluster --mode=script volume info | grep -cE '^Volume Name') volumes on $host"
    trap - EXIT
}

case ${1:-} in
up) [ $# = 2 ] || { usage >&2; exit 2; }; up "$2" ;;
down) [ $# = 2 ] || { usage >&2; exit 2; }; down "$2" ;;
-h|--help) usage ;;
*) usage >&2; exit 2 ;;
esac
