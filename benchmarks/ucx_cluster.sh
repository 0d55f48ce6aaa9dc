# shellcheck shell=bash
# ucx.sh --cluster (sourced by benchmarks/ucx.sh): the transport figures
# between two hosts of ci/cluster.sh's namespace cluster. Management and
# metadata on imaging-01, the one storage rank (target 201) on imaging-02;
# the client (sfs_bench_read), ucx_perftest's client and iperf3's client on
# imaging-03, their servers on imaging-02: every byte of the timed part
# crosses the bridge over TCP (UCX_TLS=tcp,self, UCX_NET_DEVICES=eth0, which
# every process of the cluster gets). The cluster is brought up when it is
# not up, and then torn down again.
ucx_cluster_run() {
    local cl="$BENCH_SRC/ci/cluster.sh" d="$BENCH_TMP/cluster" cfg port up_here=0 rc job size bytes rep depth
    [ "$(id -u)" = 0 ] || bench_die "--cluster needs root (network namespaces)"
    if ! "$cl" status >/dev/null 2>&1; then
        "$cl" up --state "$d/state" >"$BENCH_TMP/cluster-up.log" 2>&1
        rc=$?
        [ $rc = 0 ] || bench_die "ci/cluster.sh up failed (exit $rc): $(tail -n 3 "$BENCH_TMP/cluster-up.log")"
        up_here=1
    fi
    cfg=$d/imaging.yaml
    port=$(( (RANDOM % 30000) + 20000 ))
    mkdir -p "$d/imaging-01/meta" "$d/imaging-02/t201" || bench_die "mkdir $d"
    "$BENCH_BUILD/stripefs-ctl" mkconnauth "$d/connauth" >/dev/null || bench_die "mkconnauth"
    cat >"$cfg" <<EOF
cluster: bench
connauth_file: $d/connauth
mgmt: {host: imaging-01, port: $port}
meta: {host: imaging-01, dir: $d/imaging-01/meta, sync: true}
hosts:
  - {name: imaging-01, ranks: 1}
  - {name: imaging-02, ranks: 1}
storage:
  - {id: 201, host: imaging-02, dir: $d/imaging-02/t201}
pattern: {chunk_size: 512K, stripe_count: 1}
security:
  mode: munge
  munge_socket: $d/munge/munge.socket
  munged_key: $d/munge/munge.key
  trusted_hosts: [imaging-01, imaging-02, imaging-03, imaging-04]
EOF
    chmod 0755 "$d"
    rm -f "$d/ready"
    (
        export "${off_env[@]}"
        exec timeout --kill-after=20 3600 "$cl" mpirun -np 2 --host imaging-01,imaging-02 \
            -x STRIPEFS_LOCAL_READ -x STRIPEFS_DIRECT_COPY -x STRIPEFS_DIRECT_PULL \
            "$BENCH_BUILD/stripefs-server" -c "$cfg" --ready-file "$d/ready"
    ) >>"$BENCH_TMP/cluster-service.log" 2>&1 &
    job=$!
    for _ in $(seq 1200); do
        [ -f "$d/ready" ] && break
        kill -0 $job 2>/dev/null || bench_die "the cluster service exited while starting: $(tail -n 5 "$BENCH_TMP/cluster-service.log")"
        sleep 0.1
    done
    [ -f "$d/ready" ] || bench_die "the cluster service did not become ready in 120 s"
    bench_log "cluster service up: imaging-01 (mgmt, meta), imaging-02 (storage 201); client on imaging-03"
    "$cl" exec imaging-03 "$BENCH_BUILD/stripefs-ctl" --config "$cfg" net >"$BENCH_OUT/ucx-net-cluster.txt" 2>&1 || true
    local saved=$STRIPEFS_CONFIG
    STRIPEFS_CONFIG=$cfg
    for size in $sizes; do
        bytes=$(to_bytes "$size")
        for rep in $(seq "$reps"); do
            if [ $((rep % 2)) = 1 ]; then
                perftest cluster tcp "$bytes" "$rep" 10.199.0.2 "$cl exec imaging-02" "$cl exec imaging-03"
            fi
            for depth in $depths; do
                sfs_read cluster tcp stripefs-read-ucx "$bytes" "$depth" "$rep" \
                    "$cl exec imaging-03 env ${off_env[*]}"
                sfs_read cluster tcp stripefs-write-ucx "$bytes" "$depth" "$rep" \
                    "$cl exec imaging-03 env ${off_env[*]}" -W
            done
            if [ $((rep % 2)) = 0 ]; then
                perftest cluster tcp "$bytes" "$rep" 10.199.0.2 "$cl exec imaging-02" "$cl exec imaging-03"
            fi
        done
    done
    for rep in $(seq "$reps"); do
        iperf cluster "$rep" 10.199.0.2 "$cl exec imaging-02" "$cl exec imaging-03"
    done
    STRIPEFS_CONFIG=$saved
    "$cl" exec imaging-03 "$BENCH_BUILD/stripefs-ctl" --config "$cfg" --timeout 20 shutdown >/dev/null 2>&1 ||
        kill -TERM $job 2>/dev/null
    for _ in $(seq 300); do kill -0 $job 2>/dev/null || break; sleep 0.1; done
    kill -KILL $job 2>/dev/null
    wait $job 2>/dev/null
    if [ $up_here = 1 ]; then
        timeout 120 "$cl" down >/dev/null 2>&1 || bench_log "ci/cluster.sh down failed: check 'ci/cluster.sh status'"
    fi
}
