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

BENCH_CLUSTER_TOOL=$BENCH_SRC/ci/cluster.sh

# Bring the cluster up for this script (or use one that is up).
bench_cluster_begin() {
    local cl=$BENCH_CLUSTER_TOOL rc
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

# bench_cluster_cap_links RATE: every host's link to the switch carries at
# most RATE (tc's units: 1gbit, 10gbit) each way, as a full-duplex NIC of
# that speed: a token bucket (tbf) on the host's eth0 (what it sends) and on
# the switch's port to it (what it receives). Removed by bench_cluster_end.
BENCH_CLUSTER_CAPPED=0
bench_cluster_cap_links() {
    local rate=$1 h
    for h in "${BENCH_CLUSTER_SERVERS[@]}" "$BENCH_CLUSTER_CLIENT"; do
        ip netns exec "$h" tc qdisc replace dev eth0 root tbf rate "$rate" burst 256kb latency 50ms &&
            ip netns exec imaging-switch tc qdisc replace dev "to-$h" root tbf rate "$rate" burst 256kb latency 50ms ||
            bench_die "cannot cap the link of $h at $rate (tc tbf)"
    done
    BENCH_CLUSTER_CAPPED=1
    bench_log "cluster: every host's link capped at $rate each way (tc tbf)"
}

bench_cluster_uncap_links() {
    local h
    [ "$BENCH_CLUSTER_CAPPED" = 1 ] || return 0
    for h in "${BENCH_CLUSTER_SERVERS[@]}" "$BENCH_CLUSTER_CLIENT"; do
        ip netns exec "$h" tc qdisc del dev eth0 root 2>/dev/null
        ip netns exec imaging-switch tc qdisc del dev "to-$h" root 2>/dev/null
    done
    BENCH_CLUSTER_CAPPED=0
}

bench_cluster_end() {
    bench_cluster_uncap_links
    [ "$BENCH_CLUSTER_UP_HERE" = 1 ] || return 0
    timeout 120 "$BENCH_CLUSTER_TOOL" down >/dev/null 2>&1 ||
        bench_log "ci/cluster.sh down failed: run it by hand"
    BENCH_CLUSTER_UP_HERE=0
}

# mpirun across the cluster (from imaging-01), without this machine's
# loopback-only Open MPI settings of lib.sh, and as lib.sh's: unbound and
# --oversubscribe (4 ranks on 2 cores). The client ranks' own MPI traffic
# (ROMIO's collective exchange) then goes over the cluster's TCP settings:
# on the local side too, collective 64 KiB writes run at about 24 MiB/s.
BENCH_CLUSTER_MPIRUN=(env -u OMPI_MCA_btl_tcp_if_include -u OMPI_MCA_oob_tcp_if_include
    "$BENCH_CLUSTER_TOOL" mpirun --oversubscribe --bind-to none)

bench_cluster_start_service() { # STATE
    local state=$1 hosts
    hosts=$(IFS=,; echo "${BENCH_CLUSTER_SERVERS[*]}")
    timeout --kill-after=20 14400 "${BENCH_CLUSTER_MPIRUN[@]}" \
        ${BENCH_SERVICE_MPI_ARGS[@]+"${BENCH_SERVICE_MPI_ARGS[@]}"} -np "${#BENCH_CLUSTER_SERVERS[@]}" \
        --host "$hosts" "$BENCH_BUILD/stripefs-server" -c "$state/stripefs.yaml" \
        --ready-file "$state/ready" >>"$BENCH_SERVICE_LOG" 2>&1 &
    BENCH_SERVICE_PID=$!
}

# The client side's command prefix: N ranks on imaging-04 under stripefs-run.
bench_cluster_client_mpi() { # N PROGRAM ARGS...
    local n=$1
    shift
    "${BENCH_CLUSTER_MPIRUN[@]}" -np "$n" --host "$BENCH_CLUSTER_CLIENT:$n" -x STRIPEFS_CONFIG \
        "$BENCH_BUILD/tools/stripefs-run" "$@"
}

# stripefs-ctl on the client's host, against the running service's config.
bench_cluster_ctl() {
    timeout --kill-after=10 300 "$BENCH_CLUSTER_TOOL" exec "$BENCH_CLUSTER_CLIENT" \
        "$BENCH_BUILD/stripefs-ctl" --config "$STRIPEFS_CONFIG" "$@"
}
