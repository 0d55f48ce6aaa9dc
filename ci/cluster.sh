#!/usr/bin/env bash
# cluster.sh: a four-host test cluster on this one machine (docs/cluster.md).
#
#   ci/cluster.sh up [--state DIR]   make it (quick when it is up already)
#   ci/cluster.sh down               remove everything: processes, namespaces, files
#   ci/cluster.sh status             what is up (exit 0 up, 1 down or partly up)
#   ci/cluster.sh exec HOST CMD...   run CMD "on" HOST
#   ci/cluster.sh mpirun ARGS...     mpirun.openmpi from imaging-01 across the hosts:
#       ci/cluster.sh mpirun -np 4 --host imaging-01,imaging-02,imaging-03,imaging-04 hostname
#
# Hosts imaging-01..imaging-04 are network namespaces with an address each
# (10.199.0.1..4 on their device eth0), a host name of their own (a UTS
# namespace per process tree) and /etc/hosts naming all four; a veth link
# joins each to the bridge br0 in the namespace imaging-switch. Nothing is
# added to this machine's own network namespace. Processes started on a host
# get UCX_TLS=tcp,self UCX_NET_DEVICES=eth0, so their traffic crosses the
# bridge (TCP), never shared memory. The state directory (default
# /tmp/stripefs-cluster) holds a directory per host ($SFS_HOST_DIR there).
#
# Needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN). Exit status 3 from `up`: network
# namespaces cannot be made here (the message says why).
set -u
here=$(cd "$(dirname "$0")" && pwd)
agent="$here/cluster-agent.sh"
# shellcheck source=ci/cluster-agent.sh
source "$agent" --lib
prog=cluster.sh
NS_ALL=("${SFS_CLUSTER_NAMES[@]}" "$SFS_CLUSTER_SWITCH")
MADE_RUN_NETNS=0   # set by up when /run/netns did not exist before
MPIRUN=${SFS_CLUSTER_MPIRUN:-mpirun.openmpi}

say() { echo "$prog: $*"; }
die() { echo "$prog: $*" >&2; exit 1; }
usage() { sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//'; }

ns_exists() { [ -e "/run/netns/$1" ]; }

# Serialize up and down (of this checkout): a lock on the ci directory itself.
take_lock() {
    exec 8<"$here" || die "cannot open $here for locking"
    flock -w 120 8 || die "another cluster.sh up/down has been running for 2 minutes; giving up"
}

# Is every piece there? Prints nothing; status 0 when fully up.
is_up() {
    local h
    ns_exists "$SFS_CLUSTER_SWITCH" || return 1
    ip -n "$SFS_CLUSTER_SWITCH" link show "$SFS_CLUSTER_BRIDGE" >/dev/null 2>&1 || return 1
    for h in "${SFS_CLUSTER_NAMES[@]}"; do
        ns_exists "$h" && [ -f "/etc/netns/$h/hosts" ] || return 1
        ip -n "$h" -o -4 addr show dev "$SFS_CLUSTER_DEV" 2>/dev/null |
            grep -q " $(sfs_cluster_host_addr "$h")/" || return 1
    done
}

any_left() {
    local n
    for n in "${NS_ALL[@]}"; do
        ns_exists "$n" && return 0
        [ -e "/etc/netns/$n" ] && return 0
    done
    return 1
}

# The pids of every process inside our namespaces, on one line.
ns_pids() {
    local n
    for n in "${NS_ALL[@]}"; do
        ns_exists "$n" && ip netns pids "$n" 2>/dev/null
    done | sort -un | paste -sd' ' -
}

# Stop every process inside our namespaces: SIGTERM, up to 5 s, then
# SIGKILL, up to 5 s more.
kill_ns_processes() {
    local pids sig
    for sig in TERM KILL; do
        pids=$(ns_pids)
        [ -n "$pids" ] || return 0
        [ $sig = TERM ] && say "stopping processes still running on the hosts: $pids"
        # shellcheck disable=SC2086
        kill -s $sig $pids 2>/dev/null
        for _ in $(seq 50); do
            [ -n "$(ns_pids)" ] || return 0
            sleep 0.1
        done
    done
    say "warning: processes $(ns_pids) did not exit after SIGKILL"
}

# Remove everything (also a partial cluster); quiet when there is nothing.
teardown() {
    local n state made
    state=$(sfs_cluster_state_dir)
    made=$(sfs_cluster_recorded made_run_netns || echo "$MADE_RUN_NETNS")
    any_left || { remove_state "$state"; remove_run_netns "$made"; return 0; }
    kill_ns_processes
    for n in "${NS_ALL[@]}"; do
        if ns_exists "$n"; then
            ip netns del "$n" 2>/dev/null || say "warning: cannot delete network namespace $n"
        fi
        rm -rf "/etc/netns/$n"
    done
    rmdir /etc/netns 2>/dev/null
    remove_state "$state"
    remove_run_netns "$made"
    say "down: namespaces ${NS_ALL[*]} removed"
}

# ip netns add makes /run/netns a mount point of its own; when up made it
# and no other namespace is left there, unmount and remove it.
remove_run_netns() { # made (1 or 0)
    [ "$1" = 1 ] && [ -d /run/netns ] && [ -z "$(ls -A /run/netns 2>/dev/null)" ] || return 0
    if mountpoint -q /run/netns; then umount /run/netns 2>/dev/null || return 0; fi
    rmdir /run/netns 2>/dev/null
    return 0
}

# The state directory, only if `up` made it (it has our mark file).
remove_state() {
    local state=$1 h
    [ -n "$state" ] && [ -f "$state/.$SFS_CLUSTER_MARK" ] || return 0
    for h in "${SFS_CLUSTER_NAMES[@]}"; do rm -rf "${state:?}/$h"; done
    rm -f "$state/.$SFS_CLUSTER_MARK"
    rmdir "$state" 2>/dev/null
    return 0
}

# Can this process make network namespaces, veth links and bridges at all?
# Exit 3 with the reason when not.
check_capable() {
    local out probe="sfs-probe-$$"
    [ "$(id -u)" = 0 ] || { echo "$prog: network namespaces are not available here: not root (uid $(id -u))" >&2; exit 3; }
    for n in ip unshare hostname flock "$MPIRUN"; do
        command -v "$n" >/dev/null || { echo "$prog: network namespaces are not available here: '$n' is not installed" >&2; exit 3; }
    done
    if ! out=$(ip netns add "$probe" 2>&1); then
        remove_run_netns "$MADE_RUN_NETNS"
        echo "$prog: network namespaces are not available here: ip netns add: ${out:-failed} (root with CAP_NET_ADMIN and CAP_SYS_ADMIN is needed)" >&2
        exit 3
    fi
    if ! out=$(ip -n "$probe" link add sfsbr type bridge 2>&1 &&
               ip -n "$probe" link add sfsa type veth peer name sfsb 2>&1 &&
               ip netns exec "$probe" unshare --uts true 2>&1); then
        ip netns del "$probe" 2>/dev/null
        remove_run_netns "$MADE_RUN_NETNS"
        echo "$prog: network namespaces are not available here: bridge, veth or UTS namespace: ${out:-failed}" >&2
        exit 3
    fi
    ip netns del "$probe"
}

# Wait until host $1 reaches address $2 (a refused TCP connection counts: the
# packet got there). At most 10 s.
wait_reach() {
    local out
    for _ in $(seq 20); do
        out=$(timeout 2 ip netns exec "$1" bash -c "echo >/dev/tcp/$2/9" 2>&1)
        case $? in
        0) return 0 ;;
        *) echo "$out" | grep -q "refused" && return 0 ;;
        esac
        sleep 0.5
    done
    return 1
}

cmd_up() {
    local state=/tmp/stripefs-cluster given="" h i addr old
    while [ $# -gt 0 ]; do
        case $1 in
        --state) [ $# -ge 2 ] || die "--state needs a directory"; given=$2; shift 2 ;;
        --state=*) given=${1#--state=}; shift ;;
        *) die "up: unknown argument '$1' (usage: up [--state DIR])" ;;
        esac
    done
    [ -n "$given" ] && state=$given
    [ "$(id -u)" = 0 ] || { echo "$prog: network namespaces are not available here: not root (uid $(id -u))" >&2; exit 3; }
    take_lock
    if is_up; then
        old=$(sfs_cluster_state_dir)
        say "already up (${SFS_CLUSTER_NAMES[*]}; state ${old:-unknown})"
        if [ -n "$given" ] && [ "$old" != "$(realpath -m "$given")" ]; then
            say "note: it keeps its state directory $old, not $given"
        fi
        return 0
    fi
    any_left && { say "a partial cluster is there; removing it first"; teardown; }
    [ -d /run/netns ] || MADE_RUN_NETNS=1
    check_capable
    mkdir -p "$state" || die "cannot create the state directory $state"
    state=$(cd "$state" && pwd)
    case $state in *[[:space:]]*) die "the state directory must not contain spaces: $state" ;; esac
    : >"$state/.$SFS_CLUSTER_MARK"
    # on any failure from here on, leave nothing behind
    trap 'teardown >/dev/null 2>&1' EXIT
    set -e
    ip netns add "$SFS_CLUSTER_SWITCH"
    ip -n "$SFS_CLUSTER_SWITCH" link set lo up
    ip -n "$SFS_CLUSTER_SWITCH" link add "$SFS_CLUSTER_BRIDGE" type bridge
    ip -n "$SFS_CLUSTER_SWITCH" link set "$SFS_CLUSTER_BRIDGE" alias "$SFS_CLUSTER_MARK made_run_netns=$MADE_RUN_NETNS state=$state"
    ip -n "$SFS_CLUSTER_SWITCH" link set "$SFS_CLUSTER_BRIDGE" up
    mkdir -p /etc/netns
    for i in "${!SFS_CLUSTER_NAMES[@]}"; do
        h=${SFS_CLUSTER_NAMES[$i]}
        addr=$(sfs_cluster_host_addr "$h")
        ip netns add "$h"
        # the veth pair is made in the switch namespace: the host's end moves
        # straight into its namespace as eth0 (never seen in the root namespace)
        ip -n "$SFS_CLUSTER_SWITCH" link add "to-$h" type veth peer name "$SFS_CLUSTER_DEV" netns "$h"
        ip -n "$SFS_CLUSTER_SWITCH" link set "to-$h" master "$SFS_CLUSTER_BRIDGE" up
        ip netns exec "$h" sysctl -qw "net.ipv6.conf.$SFS_CLUSTER_DEV.disable_ipv6=1" 2>/dev/null || true
        ip -n "$h" addr add "$addr/24" dev "$SFS_CLUSTER_DEV"
        ip -n "$h" link set "$SFS_CLUSTER_DEV" up
        ip -n "$h" link set lo up
        mkdir -p "/etc/netns/$h" "$state/$h"
        {
            echo "# written by stripefs ci/cluster.sh for the test host $h"
            echo "127.0.0.1 localhost"
            echo "::1 localhost ip6-localhost ip6-loopback"
            for n in "${SFS_CLUSTER_NAMES[@]}"; do
                echo "$(sfs_cluster_host_addr "$n") $n"
            done
        } >"/etc/netns/$h/hosts"
    done
    set +e
    # check: every host reaches every other, has its name and resolves the others
    for h in "${SFS_CLUSTER_NAMES[@]}"; do
        for n in "${SFS_CLUSTER_NAMES[@]}"; do
            [ "$h" = "$n" ] && continue
            wait_reach "$h" "$(sfs_cluster_host_addr "$n")" || die "up: $h cannot reach $n ($(sfs_cluster_host_addr "$n")) over the bridge"
        done
        [ "$(timeout 10 "$agent" --exec "$h" hostname)" = "$h" ] || die "up: the host name on $h is not '$h'"
        [ "$(timeout 10 "$agent" --exec "$h" getent hosts imaging-04 | awk '{print $1}')" = "$(sfs_cluster_host_addr imaging-04)" ] ||
            die "up: imaging-04 does not resolve on $h"
    done
    trap - EXIT
    say "up: ${SFS_CLUSTER_NAMES[*]} at $SFS_CLUSTER_SUBNET.1-${#SFS_CLUSTER_NAMES[@]} (device $SFS_CLUSTER_DEV, bridge $SFS_CLUSTER_BRIDGE in $SFS_CLUSTER_SWITCH); state $state"
}

cmd_down() {
    [ $# -eq 0 ] || die "down takes no arguments"
    [ "$(id -u)" = 0 ] || die "down: must run as root"
    take_lock
    teardown
}

cmd_status() {
    local h state pids up=0
    [ $# -eq 0 ] || die "status takes no arguments"
    if is_up; then
        up=1
        state=$(sfs_cluster_state_dir)
        echo "cluster: up (bridge $SFS_CLUSTER_BRIDGE in namespace $SFS_CLUSTER_SWITCH; state ${state:-unknown})"
    elif any_left; then
        echo "cluster: partly up (run '$0 down' or '$0 up')"
    else
        echo "cluster: down"
        return 1
    fi
    for h in "${SFS_CLUSTER_NAMES[@]}"; do
        if ns_exists "$h"; then
            pids=$(ip netns pids "$h" 2>/dev/null | wc -l)
            printf '  %-11s %-13s %-8s %3s process(es)  %s\n' "$h" \
                "$(ip -n "$h" -o -4 addr show dev "$SFS_CLUSTER_DEV" 2>/dev/null | awk '{print $4}')" \
                "$SFS_CLUSTER_DEV" "$pids" "${state:+$state/$h}"
        else
            printf '  %-11s missing\n' "$h"
        fi
    done
    [ $up = 1 ]
}

cmd_exec() {
    [ $# -ge 2 ] || die "usage: exec HOST COMMAND [ARG...]"
    is_up || die "the cluster is not up: run '$0 up' first"
    exec "$agent" --exec "$@"
}

cmd_mpirun() {
    local extra=()
    is_up || die "the cluster is not up: run '$0 up' first"
    [ "$(id -u)" = 0 ] && extra+=(--allow-run-as-root)
    # mpirun itself runs on imaging-01; it starts orted on the other hosts
    # through the agent, one hop each (no tree spawn); Open MPI's own traffic
    # and UCX stay on eth0, and the UCX settings reach every rank (-x).
    exec "$agent" --exec "${SFS_CLUSTER_NAMES[0]}" "$MPIRUN" "${extra[@]}" \
        --mca plm_rsh_agent "$agent" --mca plm_rsh_no_tree_spawn 1 \
        --mca oob_tcp_if_include "$SFS_CLUSTER_DEV" --mca btl_tcp_if_include "$SFS_CLUSTER_DEV" \
        -x UCX_TLS -x UCX_NET_DEVICES -x SFS_CLUSTER_SUBNET="$SFS_CLUSTER_SUBNET" "$@"
}

verb=${1:-}
[ $# -gt 0 ] && shift
case $verb in
up) cmd_up "$@" ;;
down) cmd_down "$@" ;;
status) cmd_status "$@" ;;
exec) cmd_exec "$@" ;;
mpirun) cmd_mpirun "$@" ;;
-h|--help|help) usage ;;
"") usage >&2; exit 2 ;;
*) echo "$prog: unknown verb '$verb' (up, down, status, exec, mpirun)" >&2; exit 2 ;;
esac
