#!/usr/bin/env bash
# cluster-agent.sh: run a command "on" a host of the stripefs test cluster
# (ci/cluster.sh): inside the host's network namespace, in a UTS namespace of
# its own whose host name is the host's, with the environment every process
# of the cluster gets (UCX over TCP on eth0, Open MPI's traffic on eth0).
#
#   cluster-agent.sh HOST WORD...            remote-shell mode, as ssh does it: the
#                                            words are joined and run by `bash -c`
#                                            (Open MPI's --mca plm_rsh_agent)
#   cluster-agent.sh --exec HOST CMD ARG...  run CMD with its arguments as they are
#                                            (what `ci/cluster.sh exec` uses)
#
# HOST is a cluster host name (imaging-01, IMAGING-02.anything) or its address
# (10.199.0.3). The process replaces this script (exec), so signals sent to it
# reach the command.
#
# Sourced with `--lib`, it only defines the cluster's constants and helpers
# (ci/cluster.sh does that).
set -u

# The cluster: host i (1-based) is imaging-0i at $SFS_CLUSTER_SUBNET.i, its veth
# device inside its namespace is eth0; the bridge br0 lives in the namespace
# "imaging-switch".
SFS_CLUSTER_SUBNET=${SFS_CLUSTER_SUBNET:-10.199.0}
SFS_CLUSTER_NAMES=(imaging-01 imaging-02 imaging-03 imaging-04)
SFS_CLUSTER_SWITCH=imaging-switch
SFS_CLUSTER_BRIDGE=br0
SFS_CLUSTER_DEV=eth0
SFS_CLUSTER_MARK="stripefs-cluster"

# The name of a host given as a name (any case, short or full) or an address;
# nothing (and status 1) for anything else.
sfs_cluster_host_name() {
    local arg=${1,,} i
    arg=${arg%%.*}
    case $1 in
    "$SFS_CLUSTER_SUBNET".*)
        i=${1##*.}
        case $i in [1-9]) [ "$i" -le ${#SFS_CLUSTER_NAMES[@]} ] && { echo "${SFS_CLUSTER_NAMES[$((i - 1))]}"; return 0; } ;; esac
        return 1 ;;
    esac
    for i in "${SFS_CLUSTER_NAMES[@]}"; do
        [ "$arg" = "$i" ] && { echo "$i"; return 0; }
    done
    return 1
}

# The address of a cluster host name.
sfs_cluster_host_addr() {
    local i
    for i in "${!SFS_CLUSTER_NAMES[@]}"; do
        [ "${SFS_CLUSTER_NAMES[$i]}" = "$1" ] && { echo "$SFS_CLUSTER_SUBNET.$((i + 1))"; return 0; }
    done
    return 1
}

# What `cluster.sh up` recorded in the bridge's alias ("stripefs-cluster
# made_run_netns=0|1 state=DIR"), if it is up: the field KEY.
sfs_cluster_recorded() { # KEY
    local value
    value=$(ip -n "$SFS_CLUSTER_SWITCH" -o link show "$SFS_CLUSTER_BRIDGE" 2>/dev/null |
            sed -n "s/.*alias $SFS_CLUSTER_MARK .*\<$1=\([^ ]*\).*/\1/p")
    [ -n "$value" ] && echo "$value"
}
sfs_cluster_state_dir() { sfs_cluster_recorded state; }

# The environment of every process on a cluster host. Open MPI's out-of-band
# and TCP traffic and UCX stay on the veth device; UCX uses TCP only (the
# "hosts" share /dev/shm, so shared memory between them would be a lie).
sfs_cluster_export_env() { # HOST
    export UCX_TLS=tcp,self
    export UCX_NET_DEVICES=$SFS_CLUSTER_DEV
    # stripefs sets UCX_{POSIX,SYSV}_ERROR_HANDLING, unused without shared memory
    export UCX_WARN_UNUSED_ENV_VARS=n
    export OMPI_MCA_oob_tcp_if_include=$SFS_CLUSTER_DEV
    export OMPI_MCA_btl_tcp_if_include=$SFS_CLUSTER_DEV
    export SFS_CLUSTER_HOST=$1
    local state
    state=$(sfs_cluster_state_dir) && [ -d "$state/$1" ] && export SFS_HOST_DIR="$state/$1"
    return 0
}

[ "${1:-}" = "--lib" ] && return 0 2>/dev/null

prog=cluster-agent.sh
mode=shell
if [ "${1:-}" = "--exec" ]; then
    mode="exec"
    shift
fi
if [ $# -lt 2 ]; then
    echo "usage: $prog [--exec] HOST COMMAND..." >&2
    exit 2
fi
host=$(sfs_cluster_host_name "$1") || {
    echo "$prog: '$1' is not a host of the test cluster (${SFS_CLUSTER_NAMES[*]})" >&2
    exit 2
}
shift
if [ ! -e "/run/netns/$host" ]; then
    echo "$prog: host $host is not up (no network namespace $host): run ci/cluster.sh up" >&2
    exit 2
fi
sfs_cluster_export_env "$host"
if [ $mode = shell ]; then
    # like ssh: the words form one command line for the remote shell
    set -- bash -c "$*"
fi
# ip netns exec: the namespace and /etc/netns/$host/hosts as /etc/hosts;
# unshare --uts: a host name of its own. Each step execs the next.
# shellcheck disable=SC2016
exec ip netns exec "$host" unshare --uts -- \
    /bin/sh -c 'hostname "$0" || exit 127; exec "$@"' "$host" "$@"
