# shellcheck shell=bash
# Helpers of the four-host cluster tests (sourced after tests/lib/sfs_test_lib.sh).
# The cluster is ci/cluster.sh's: network namespaces imaging-01..04 on a
# bridge. A test brings it up if it is not up (state under SFS_TEST_TMP) and
# then tears it down at the end; a cluster that was up already is left up.
# Cluster tests run one at a time on a machine (tests/lib/sfs_cluster_lock.sh).
set -u
source "$SFS_SRC/tests/lib/sfs_cluster_lock.sh"
CLUSTER="$SFS_SRC/ci/cluster.sh"
CLUSTER_HOSTS=(imaging-01 imaging-02 imaging-03 imaging-04)
CLUSTER_ALL=imaging-01,imaging-02,imaging-03,imaging-04
CLUSTER_BROUGHT_UP=0
CLUSTER_JOB=""
CLUSTER_CONFIG=""
CLUSTER_READY="$SFS_TEST_TMP/ready"
CLUSTER_PORT=8008   # a random one on a cluster someone else brought up

# Every process on a host speaks to the others over eth0 (see ci/cluster-agent.sh);
# the one-host defaults of sfs_test_lib.sh (lo) must not leak into the hosts.
unset OMPI_MCA_btl_tcp_if_include OMPI_MCA_oob_tcp_if_include

# on HOST CMD...: run CMD on a host, at most 120 s (CLUSTER_ON_TIMEOUT).
on() {
    timeout --kill-after=10 "${CLUSTER_ON_TIMEOUT:-120}" "$CLUSTER" exec "$@"
}

# The ctl on a host, against this test's config.
ctl_on() { # HOST VERB...
    local host=$1
    shift
    on "$host" "$SFS_CTL" --config "$CLUSTER_CONFIG" "$@"
}

cluster_begin() {
    local out rc state
    [ "$(id -u)" = 0 ] || sfs_skip "network namespaces are not available here: the cluster tests need root (uid $(id -u))"
    command -v mpirun.openmpi >/dev/null || sfs_skip "mpirun.openmpi is not installed"
    sfs_cluster_lock 600
    trap cluster_cleanup EXIT
    trap 'exit 143' TERM INT
    if "$CLUSTER" status >/dev/null 2>&1; then
        state=$(source "$SFS_SRC/ci/cluster-agent.sh" --lib && sfs_cluster_state_dir)
        if [ -n "$state" ] && [ -f "$state/.stripefs-cluster" ]; then
            CLUSTER_PORT=$(( (RANDOM % 30000) + 20000 ))
            sfs_log "cluster: already up (state $state), using it and leaving it up; management port $CLUSTER_PORT"
            return 0
        fi
        # its state directory is gone: left behind by a test that was killed
        sfs_log "cluster: up, but its state directory ${state:-?} is gone (left by a killed test?): remaking it"
        timeout 120 "$CLUSTER" down || sfs_fail "ci/cluster.sh down (of a stale cluster) failed"
    fi
    out=$(timeout 120 "$CLUSTER" up --state "$SFS_TEST_TMP/cluster" 2>&1)
    rc=$?
    echo "$out"
    if [ $rc = 3 ]; then
        sfs_skip "network namespaces are not available here: $(echo "$out" | sed -n 's/.*not available here: //p' | head -n 1)"
    fi
    [ $rc = 0 ] || sfs_fail "ci/cluster.sh up failed (exit $rc)"
    CLUSTER_BROUGHT_UP=1
    sfs_log "cluster: brought up for this test (torn down at the end)"
}

# Kill what this test started and, if it brought the cluster up, tear it down.
cluster_cleanup() {
    local pids p h
    trap - EXIT TERM INT
    if [ -n "$CLUSTER_JOB" ] && kill -0 "$CLUSTER_JOB" 2>/dev/null; then
        kill -TERM "$CLUSTER_JOB" 2>/dev/null
        for _ in $(seq 100); do kill -0 "$CLUSTER_JOB" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$CLUSTER_JOB" 2>/dev/null
    fi
    # stray server ranks of this test's config on the hosts (by pid)
    if [ -n "$CLUSTER_CONFIG" ]; then
        for h in "${CLUSTER_HOSTS[@]}"; do
            [ -e "/run/netns/$h" ] || continue
            for p in $(ip netns pids "$h" 2>/dev/null); do
                tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q -- "-c $CLUSTER_CONFIG" &&
                    pids+=" $p"
            done
        done
        if [ -n "${pids:-}" ]; then
            echo "cleanup: killing server ranks left behind:$pids"
            # shellcheck disable=SC2086
            kill -9 $pids 2>/dev/null
        fi
    fi
    sfs_cleanup
    if [ $CLUSTER_BROUGHT_UP = 0 ]; then
        # a cluster someone else brought up stays: without this test's cuts
        cluster_heal
        for h in "${CLUSTER_LINKS_DOWN[@]}"; do
            ip -n imaging-switch link set "to-$h" up 2>/dev/null
        done
    fi
    if [ $CLUSTER_BROUGHT_UP = 1 ]; then
        timeout 120 "$CLUSTER" down
        if "$CLUSTER" status >/dev/null 2>&1 || ls /run/netns/imaging-* /etc/netns/imaging-* >/dev/null 2>&1; then
            echo "cleanup: the cluster is not completely gone" >&2
        else
            echo "cleanup: cluster torn down (no namespaces, /etc/netns entries or processes left)"
        fi
    fi
}

# cluster_write_config FILE: the Imaging layout (examples/imaging.yaml) with
# every directory under this test's temp dir, a directory tree per host.
cluster_write_config() {
    local cfg=$1 d="$SFS_TEST_TMP/hosts"
    CLUSTER_CONFIG=$cfg
    "$SFS_CTL" mkconnauth "$SFS_TEST_TMP/connauth" >/dev/null || sfs_fail "stripefs-ctl mkconnauth"
    # what an administrator makes first: the parent of the metadata store
    mkdir -p "$d/imaging-01/var/lib/stripefs" || sfs_fail "mkdir $d/imaging-01/var/lib/stripefs"
    cat >"$cfg" <<EOF
# the Imaging cluster (examples/imaging.yaml) on the test cluster of ci/cluster.sh
cluster: imaging
connauth_file: $SFS_TEST_TMP/connauth
mgmt: {host: imaging-01, port: $CLUSTER_PORT}
meta: {host: imaging-01, dir: $d/imaging-01/var/lib/stripefs/meta, sync: true}
hosts:
  - {name: imaging-01, ranks: 1}
  - {name: imaging-02, ranks: 1}
  - {name: imaging-03, ranks: 1}
  - {name: imaging-04, ranks: 1}
storage:
  - {id: 101, host: imaging-01, dir: $d/imaging-01/mnt/14t_drive/stripefs, capacity: 12G}
  - {id: 201, host: imaging-02, dir: $d/imaging-02/mnt/14t_drive/stripefs, capacity: 12G}
  - {id: 301, host: imaging-03, dir: $d/imaging-03/mnt/7t_drive/stripefs, capacity: 7G}
  - {id: 401, host: imaging-04, dir: $d/imaging-04/mnt/7t_drive/stripefs, capacity: 7G}
pattern: {chunk_size: 512K, stripe_count: 4}
timeouts: {rpc: 30s, connect: 10s, heartbeat: 2s, offline: 20s}
limits: {max_message: 64M, io_threads: 4}
# the hosts share one munged here (of the service's own, started by rank 0);
# the Imaging hosts each run the site's munged
security:
  mode: munge
  munge_socket: $SFS_TEST_TMP/munge/munge.socket
  munged_key: $SFS_TEST_TMP/munge/munge.key
  trusted_hosts: [imaging-01, imaging-02, imaging-03, imaging-04]
EOF
}

# cluster_start_service [HOSTS]: the service from $CLUSTER_CONFIG, one rank
# per host of the comma-separated HOSTS (default: all four), launched from
# imaging-01; waits until it serves (120 s). CLUSTER_MPI_ARGS: extra mpirun
# options (--mca orte_enable_recovery 1, for a test that kills a rank).
cluster_start_service() {
    local hosts=${1:-$CLUSTER_ALL} np
    np=$(echo "$hosts" | tr ',' '\n' | wc -l)
    rm -f "$CLUSTER_READY"
    # shellcheck disable=SC2086 # CLUSTER_MPI_ARGS: options, split on purpose
    timeout --kill-after=20 900 "${SFS_SERVER_ENV[@]}" "$CLUSTER" mpirun ${CLUSTER_MPI_ARGS:-} -np "$np" --host "$hosts" \
        "$SFS_SERVER" -c "$CLUSTER_CONFIG" --ready-file "$CLUSTER_READY" >>"$SFS_SERVICE_LOG" 2>&1 &
    CLUSTER_JOB=$!
    for _ in $(seq 1200); do
        [ -f "$CLUSTER_READY" ] && break
        kill -0 "$CLUSTER_JOB" 2>/dev/null || { wait "$CLUSTER_JOB"; sfs_fail "the service exited while starting (exit $?)"; }
        sleep 0.1
    done
    [ -f "$CLUSTER_READY" ] || sfs_fail "the service did not become ready in 120 s"
    sfs_log "service up: $np ranks on $hosts (management imaging-01:$CLUSTER_PORT), config $CLUSTER_CONFIG"
}

# Clean stop through stripefs-ctl shutdown from HOST (default imaging-03);
# the job must exit 0 within 60 s.
cluster_stop_service() {
    local host=${1:-imaging-03} rc
    [ -n "$CLUSTER_JOB" ] || return 0
    ctl_on "$host" shutdown >/dev/null || sfs_fail "stripefs-ctl shutdown on $host failed"
    for _ in $(seq 600); do
        kill -0 "$CLUSTER_JOB" 2>/dev/null || break
        sleep 0.1
    done
    kill -0 "$CLUSTER_JOB" 2>/dev/null && sfs_fail "the service did not stop in 60 s after stripefs-ctl shutdown"
    wait "$CLUSTER_JOB"
    rc=$?
    CLUSTER_JOB=""
    [ $rc -eq 0 ] || sfs_fail "the service job exited with $rc after stripefs-ctl shutdown"
    [ "$(grep -c 'stopped cleanly' "$SFS_SERVICE_LOG")" -ge 1 ] || sfs_fail "no clean stop in the service log"
    echo "ok: stripefs-ctl shutdown on $host: the service job exited 0"
}

# cluster_mirror_config FILE GROUP...: the Imaging layout with short
# timeouts (offline after 3 s, 20 s by default: a fencing lease of 1.5 s,
# and several failovers fit a test) and the mirror groups GROUP, each
# PRIMARY:SECONDARY (test_cluster_mirror_*.sh).
cluster_mirror_config() {
    local cfg=$1
    shift
    cluster_write_config "$cfg"
    cluster_mirror_groups "$cfg" "$@"
}

# cluster_mirror_groups FILE GROUP...: cluster_mirror_config's short
# timeouts and mirror groups, added to the config FILE.
cluster_mirror_groups() {
    local cfg=$1 g
    shift
    sed -i "s/^timeouts:.*/timeouts: {rpc: 6s, connect: 2s, heartbeat: 500ms, offline: 3s}/" "$cfg"
    grep -q "offline: 3s" "$cfg" || sfs_fail "timeouts not set in $cfg"
    {
        echo "mirror:"
        echo "  groups:"
        for g in "$@"; do echo "    - {primary: ${g%:*}, secondary: ${g#*:}}"; done
    } >>"$cfg" || sfs_fail "cannot write the mirror groups to $cfg"
}

# cluster_cut A B [oneway]: the network between hosts A and B cut both ways
# (with oneway: A cannot send to B, B still reaches A), and only there: a
# blackhole route to the other in each namespace (this kernel lacks tc's
# filters); several cuts may stand at once. cluster_heal A B takes that cut
# away, cluster_heal every cut (cluster_cleanup too, on a cluster it leaves
# up; the namespaces of one it tears down go with their routes).
CLUSTER_CUTS=()
cluster_cut() {
    local a b
    a=$(source "$SFS_SRC/ci/cluster-agent.sh" --lib && sfs_cluster_host_addr "$1") &&
        b=$(source "$SFS_SRC/ci/cluster-agent.sh" --lib && sfs_cluster_host_addr "$2") ||
        sfs_fail "no addresses for $1 and $2"
    ip -n "$1" route add blackhole "$b/32" || sfs_fail "cannot cut $1's way to $2"
    if [ "${3:-}" = oneway ]; then
        CLUSTER_CUTS+=("$1 $b $2 -")
        return
    fi
    ip -n "$2" route add blackhole "$a/32" || sfs_fail "cannot cut $2's way to $1"
    CLUSTER_CUTS+=("$1 $b $2 $a")
}
cluster_heal() {
    local -a c keep=()
    local cut
    for cut in "${CLUSTER_CUTS[@]}"; do
        read -r -a c <<<"$cut"
        if [ $# = 2 ] && [ "${c[0]} ${c[2]}" != "$1 $2" ]; then
            keep+=("$cut")
            continue
        fi
        ip -n "${c[0]}" route del blackhole "${c[1]}/32" 2>/dev/null
        [ "${c[3]}" = - ] || ip -n "${c[2]}" route del blackhole "${c[3]}/32" 2>/dev/null
    done
    CLUSTER_CUTS=("${keep[@]}")
}

# cluster_link HOST down|up: the switch's end of HOST's link (the host loses
# carrier, its processes run on); cluster_cleanup brings a link left down up
# again on a cluster it leaves up.
CLUSTER_LINKS_DOWN=()
cluster_link() {
    local h keep=()
    ip -n imaging-switch link set "to-$1" "$2" || sfs_fail "cannot set $1's link $2"
    for h in "${CLUSTER_LINKS_DOWN[@]}"; do [ "$h" = "$1" ] || keep+=("$h"); done
    [ "$2" = down ] && keep+=("$1")
    CLUSTER_LINKS_DOWN=("${keep[@]}")
}

# The metadata mirror's tests (test_cluster_meta_*.sh).

# cluster_meta_mirror_config FILE [SED-EXPR...]: the Imaging layout with
# management on imaging-03 (so that it outlives the metadata server's host)
# and the metadata mirror on imaging-02, then each further sed expression;
# fails unless the config says so afterwards.
cluster_meta_mirror_config() {
    local cfg=$1 d="$SFS_TEST_TMP/hosts" e
    local -a extra=()
    shift
    for e in "$@"; do extra+=(-e "$e"); done
    cluster_write_config "$cfg"
    mkdir -p "$d/imaging-02/var/lib/stripefs" || sfs_fail "mkdir for the mirror's store"
    sed -i -e "s|^mgmt: {host: imaging-01,|mgmt: {host: imaging-03,|" \
        -e "s|^\(meta: {.*\), sync: true}|\1, sync: true, mirror: imaging-02, mirror_dir: $d/imaging-02/var/lib/stripefs/meta-mirror}|" \
        "${extra[@]}" "$cfg" || sfs_fail "sed of $cfg"
    grep -q "mirror: imaging-02" "$cfg" && grep -q "host: imaging-03, port" "$cfg" ||
        sfs_fail "the test config was not rewritten: $(cat "$cfg")"
    chmod 0644 "$cfg"
}

# cluster_meta_mirror_start: the layout of cluster_meta_mirror_config with
# short timeouts (RPC 10 s, offline 12 s: a lease of 6 s), started, the
# metadata mirror good, and /shared (mode 1777) for the users' files.
cluster_meta_mirror_start() {
    local cfg="$SFS_TEST_TMP/imaging.yaml"
    cluster_meta_mirror_config "$cfg" \
        "s|rpc: 30s, connect: 10s, heartbeat: 2s, offline: 20s}|rpc: 10s, connect: 5s, heartbeat: 2s, offline: 12s}|"
    grep -q "offline: 12s" "$cfg" || sfs_fail "the test config has not the short timeouts: $(cat "$cfg")"
    cluster_start_service
    cluster_wait_meta_mirror ", good since batch " ||
        sfs_fail "the metadata mirror is not good: '$CLUSTER_MIRROR_LINE'"
    echo "ok: $CLUSTER_MIRROR_LINE"
    ctl_on imaging-01 mkdir /shared && ctl_on imaging-01 chmod 1777 /shared || sfs_fail "mkdir /shared"
}

# cluster_wait_meta_mirror PATTERN: wait (60 s) until the metadata mirror's
# line of `mirror list` (asked on imaging-04) contains PATTERN (literally);
# the line is in CLUSTER_MIRROR_LINE. Returns 1 if it never does.
cluster_wait_meta_mirror() {
    CLUSTER_MIRROR_LINE=""
    for _ in $(seq 300); do
        CLUSTER_MIRROR_LINE=$(ctl_on imaging-04 --timeout 10 mirror list 2>&1 | grep '^Metadata mirror:')
        case "$CLUSTER_MIRROR_LINE" in *"$1"*) return 0 ;; esac
        sleep 0.2
    done
    return 1
}

# cluster_as_alice HOST CMD...: CMD as sfsalice on HOST, against $CLUSTER_CONFIG.
cluster_as_alice() {
    local host=$1
    shift
    on "$host" setpriv --reuid=sfsalice --regid="$(id -g sfsalice)" --init-groups \
        env -i PATH="$PATH" HOME="$(sfs_user_home sfsalice)" STRIPEFS_CONFIG="$CLUSTER_CONFIG" "$@"
}

# cluster_alice_mirror_dir HOST GROUPS CHUNK: /m (mode 0777, root's) and
# sfsalice's /m/mine, made by her on HOST, mirrored over GROUPS groups in
# chunks of CHUNK.
cluster_alice_mirror_dir() {
    ctl_on imaging-01 mkdir -m 0777 /m || sfs_fail "mkdir /m"
    cluster_as_alice "$1" "$SFS_CTL" mkdir /m/mine || sfs_fail "sfsalice's mkdir"
    cluster_as_alice "$1" "$SFS_CTL" setpattern --mirror --numtargets "$2" --chunksize "$3" /m/mine \
        >/dev/null || sfs_fail "setpattern --mirror"
}

# cluster_wait_mirror HOST REGEX: wait (60 s) until a line of `mirror list`
# on HOST matches REGEX; then print the whole list; 1 if none did.
cluster_wait_mirror() {
    for _ in $(seq 600); do
        ctl_on "$1" --timeout 10 mirror list 2>/dev/null | grep -qE "$2" && break
        sleep 0.1
    done
    ctl_on "$1" mirror list | tee /dev/stderr | grep -qE "$2"
}

# cluster_wait_line FILE PREFIX SECONDS: print FILE's first line that starts
# with PREFIX once there is one; 1 if none came within SECONDS.
cluster_wait_line() {
    local i
    for ((i = 0; i < $3 * 10; i++)); do
        grep -m 1 "^$2" "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}
