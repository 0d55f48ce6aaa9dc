# shellcheck shell=bash disable=SC2034
# --cluster for the benchmark scripts (sourced by lib.sh): the stripefs side
# runs across ci/cluster.sh's four-host namespace cluster instead of on one
# host. Servers on three hosts, clients on the fourth, so that every byte
# and every metadata request of the timed part crosses the bridge (UCX over
# TCP, UCX_TLS=tcp,self on eth0; no shared memory, no same-host shortcut,
# since the client's host holds no target):
#   imaging-01  rank 0: management, metadata, and storage targets
#   imaging-02  rank 1: storage targets
#   imaging-03  rank 2: storage targets
#   imaging-04  the client ranks (mpirun from imaging-01, --host imaging-04:N)
# Targets are dealt to imaging-01..03 in turn (ids 101, 201, 301, 102, ...).
# The baselines touch no network: md.sh's and io500.sh's (ext4, tmpfs) run
# in this machine's own namespace; bw.sh's local side runs as its stripefs
# side does (bench_mpi: the ranks on imaging-04), so that both sides' MPI
# (ROMIO's collective exchange) is the same. All hosts share this machine's one
# disk and two cores: the cluster adds a network, not hardware.
# The cluster is brought up when it is not up, and torn down again at exit.

BENCH_CLUSTER=0
BENCH_CLUSTER_UP_HERE=0
BENCH_CLUSTER_SERVERS=(imaging-01 imaging-02 imaging-03)
BENCH_CLUSTER_CLIENT=imaging-04

bench_cluster_tool() { echo "$BENCH_SRC/ci/cluster.sh"; }

# Bring the cluster up for this script (or use one that is up).
bench_cluster_begin() {
    local cl rc
    cl=$(bench_cluster_tool)
    [ "$(id -u)" = 0 ] || bench_die "--cluster needs root (network namespaces)"
    if "$cl" status >/dev/null 2>&1; then
        bench_log "cluster: already up, using it (and leaving it up)"
        return 0
    fi
    "$cl" up --state "$BENCH_TMP/cluster" >"$BENCH_TMP/cluster-up.log" 2>&1
    rc=$?
    [ $rc = 0 ] || bench_die "ci/cluster.sh up failed (exit $rc): $(tail -n 3 "$BENCH_TMP/cluster-up.log")"
    BENCH_CLUSTER_UP_HERE=1
    bench_log "cluster: brought up (torn down at exit)"
}

bench_cluster_end() {
    [ "$BENCH_CLUSTER_UP_HERE" = 1 ] || return 0
    timeout 120 "$(bench_cluster_tool)" down >/dev/null 2>&1 ||
        bench_log "ci/cluster.sh down failed: run it by hand"
    BENCH_CLUSTER_UP_HERE=0
}

# bench_cluster_write_config STATE TARGETS [BANDWIDTH [STRIPES [CHUNK]]]
bench_cluster_write_config() {
    local state=$1 targets=$2 bw=${3:-} stripes=${4:-$2} chunk=${5:-512K}
    local port i host id
    local -A next=()
    port=$(( (RANDOM % 30000) + 20000 ))
    mkdir -p "$state/meta" "$state/targets" || bench_die "cannot create $state"
    "$BENCH_BUILD/stripefs-ctl" mkconnauth "$state/connauth" >/dev/null ||
        bench_die "stripefs-ctl mkconnauth failed"
    {
        echo "cluster: bench"
        echo "connauth_file: $state/connauth"
        echo "mgmt: {host: ${BENCH_CLUSTER_SERVERS[0]}, port: $port}"
        echo "meta: {host: ${BENCH_CLUSTER_SERVERS[0]}, dir: $state/meta, sync: true}"
        echo "hosts:"
        for host in "${BENCH_CLUSTER_SERVERS[@]}"; do
            echo "  - {name: $host, ranks: 1}"
        done
        echo "storage:"
        for i in $(seq 0 $((targets - 1))); do
            host=${BENCH_CLUSTER_SERVERS[$((i % ${#BENCH_CLUSTER_SERVERS[@]}))]}
            next[$host]=$(( ${next[$host]:-0} + 1 ))
            id=$(( 10#${host#imaging-} * 100 + ${next[$host]} ))
            mkdir -p "$state/targets/$id"
            echo "  - {id: $id, host: $host, dir: $state/targets/$id${bw:+, bandwidth: $bw}}"
        done
        echo "pattern: {chunk_size: $chunk, stripe_count: $stripes}"
        echo "security: {mode: munge, munge_socket: $state/munge/munge.socket,"
        echo "           munged_key: $state/munge/munge.key, service_uid: $(id -u),"
        echo "           trusted_hosts: [imaging-01, imaging-02, imaging-03, imaging-04]}"
    } >"$state/stripefs.yaml"
}

# mpirun across the cluster (from imaging-01), without this machine's
# loopback-only Open MPI settings of lib.sh, and as lib.sh's: unbound and
# --oversubscribe (4 ranks on 2 cores). The client ranks' own MPI traffic
# (ROMIO's collective exchange) then goes over the cluster's TCP settings:
# on the local side too, collective 64 KiB writes run at about 24 MiB/s.
bench_cluster_mpirun() {
    env -u OMPI_MCA_btl_tcp_if_include -u OMPI_MCA_oob_tcp_if_include \
        "$(bench_cluster_tool)" mpirun --oversubscribe --bind-to none "$@"
}

bench_cluster_start_service() { # STATE
    local state=$1 hosts
    hosts=$(IFS=,; echo "${BENCH_CLUSTER_SERVERS[*]}")
    timeout --kill-after=20 14400 env -u OMPI_MCA_btl_tcp_if_include -u OMPI_MCA_oob_tcp_if_include \
        "$(bench_cluster_tool)" mpirun --oversubscribe --bind-to none -np "${#BENCH_CLUSTER_SERVERS[@]}" --host "$hosts" \
        "$BENCH_BUILD/stripefs-server" -c "$state/stripefs.yaml" \
        --ready-file "$state/ready" >>"$BENCH_SERVICE_LOG" 2>&1 &
    BENCH_SERVICE_PID=$!
}

# The client side's command prefix: N ranks on imaging-04 under stripefs-run.
bench_cluster_client_mpi() { # N PROGRAM ARGS...
    local n=$1
    shift
    bench_cluster_mpirun -np "$n" --host "$BENCH_CLUSTER_CLIENT:$n" -x STRIPEFS_CONFIG \
        "$BENCH_BUILD/tools/stripefs-run" "$@"
}

# stripefs-ctl on the client's host, against the running service's config.
bench_cluster_ctl() {
    timeout --kill-after=10 300 "$(bench_cluster_tool)" exec "$BENCH_CLUSTER_CLIENT" \
        "$BENCH_BUILD/stripefs-ctl" --config "$STRIPEFS_CONFIG" "$@"
}
