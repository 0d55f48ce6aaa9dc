# shellcheck shell=bash disable=SC2034
# Shared helpers of the benchmark scripts (sourced). Each script:
#   bench_setup NAME ARGS...   common options (below), temp dir, cleanup trap
#   bench_start_service ...    a one-host stripefs service of its own
#   ...runs, appends CSV lines, prints tables...
# and everything it started is stopped when it exits, also on failure.
#
# Common options: --quick, --out DIR (default benchmarks/results), --build DIR
# (default $SFS_BUILD, else ./_build, else the current directory when it is a
# build tree), --tmp DIR (where the state and local directories go; default
# $TMPDIR or /tmp: the local side and the targets share that disk), --keep
# (keep the temp dir), --ranks N (client ranks, default 4), --cluster (the
# stripefs side across ci/cluster.sh's four namespace hosts: lib_cluster.sh;
# for the scripts that say they take it).
set -u -o pipefail

BENCH_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Open MPI's own traffic stays on this host (shared memory, loopback TCP).
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
# Every process is free to run on any core: the service's ranks and the
# clients share the machine, and no binding is fairer than a wrong one.
BENCH_MPIRUN=(mpirun.openmpi --oversubscribe --bind-to none)

BENCH_QUICK=0
BENCH_OUT=$BENCH_SRC/benchmarks/results
BENCH_BUILD=${SFS_BUILD:-}
BENCH_TMPBASE=${TMPDIR:-/tmp}
BENCH_KEEP=0
BENCH_RANKS=4
BENCH_ARGS=()            # what the script's own parser still has to look at
BENCH_TMP=""
BENCH_SERVICE_PID=""
BENCH_SERVICE_STATE=""
BENCH_SERVICE_LOG=""
BENCH_SERVICE_MPI_ARGS=() # more mpirun options for the service (failover.sh: rank recovery)
BENCH_MOUNTS=()          # file systems a script mounted (bench_mount_ext4): unmounted at exit
# shellcheck source=benchmarks/lib_cluster.sh
. "$BENCH_SRC/benchmarks/lib_cluster.sh"

bench_log() { echo "[$(date +%T)] $*" >&2; }
bench_die() {
    echo "$BENCH_NAME: $*" >&2
    if [ -n "$BENCH_SERVICE_LOG" ] && [ -f "$BENCH_SERVICE_LOG" ]; then
        echo "--- last lines of the service log ($BENCH_SERVICE_LOG):" >&2
        tail -n 20 "$BENCH_SERVICE_LOG" >&2
    fi
    exit 1
}

bench_setup() { # NAME ARGS...
    BENCH_NAME=$1
    shift
    while [ $# -gt 0 ]; do
        case $1 in
        --quick) BENCH_QUICK=1; shift ;;
        --out) BENCH_OUT=$2; shift 2 ;;
        --build) BENCH_BUILD=$2; shift 2 ;;
        --tmp) BENCH_TMPBASE=$2; shift 2 ;;
        --keep) BENCH_KEEP=1; shift ;;
        --ranks) BENCH_RANKS=$2; shift 2 ;;
        --cluster)
            # the scripts whose stripefs side lib_cluster.sh moves; ucx.sh has
            # a two-host part of its own, the others refuse the option
            case $BENCH_NAME in
            bw | md | io500 | mirror | failover | ls) BENCH_CLUSTER=1 ;;
            *) BENCH_ARGS+=("$1") ;;
            esac
            shift
            ;;
        *) BENCH_ARGS+=("$1"); shift ;;
        esac
    done
    if [ -z "$BENCH_BUILD" ]; then
        if [ -x "$BENCH_SRC/_build/stripefs-server" ]; then
            BENCH_BUILD=$BENCH_SRC/_build
        elif [ -x ./stripefs-server ]; then
            BENCH_BUILD=$(pwd)
        else
            bench_build_here
        fi
    fi
    [ -n "$BENCH_BUILD" ] && [ -x "$BENCH_BUILD/stripefs-server" ] ||
        bench_die "no stripefs build found: build it (README.md) and pass --build DIR or set SFS_BUILD"
    BENCH_BUILD=$(cd "$BENCH_BUILD" && pwd)
    mkdir -p "$BENCH_OUT" || bench_die "cannot create $BENCH_OUT"
    BENCH_OUT=$(cd "$BENCH_OUT" && pwd)
    make -C "$BENCH_BUILD" -s bench >/dev/null ||
        bench_die "building the benchmark programs failed (make -C $BENCH_BUILD bench)"
    BENCH_TMP=$(mktemp -d "$BENCH_TMPBASE/sfs-bench-$BENCH_NAME.XXXXXX") ||
        bench_die "cannot make a temp dir in $BENCH_TMPBASE"
    # munged wants its socket below directories everyone may search
    chmod 0755 "$BENCH_TMP"
    trap bench_cleanup EXIT
    trap 'exit 130' INT TERM
    export SFS_BENCH_CTL=$BENCH_BUILD/stripefs-ctl
    [ "$BENCH_CLUSTER" = 1 ] && bench_cluster_begin
    return 0
}

# stripefs-ctl against the running service (on the client's host with --cluster).
bench_ctl() {
    if [ "$BENCH_CLUSTER" = 1 ]; then
        bench_cluster_ctl "$@"
    else
        "$BENCH_BUILD/stripefs-ctl" "$@"
    fi
}

# bench_rm_io_files PATH MODE: remove what sfs_bench_io wrote to the stripefs
# name PATH (outside the timed part): PATH.0 ... PATH.N-1 for fpp-indep (a
# file per rank), else PATH itself.
bench_rm_io_files() {
    local path=$1 mode=$2 r
    if [ "$mode" = fpp-indep ]; then
        for r in $(seq 0 $((BENCH_RANKS - 1))); do
            bench_ctl rm "$path.$r" >/dev/null 2>&1
        done
    else
        bench_ctl rm "$path" >/dev/null 2>&1
    fi
}

# Where the stripefs side runs, in words (for the tables).
bench_where() {
    if [ "$BENCH_CLUSTER" = 1 ]; then
        echo "across hosts: clients on $BENCH_CLUSTER_CLIENT, servers on ${BENCH_CLUSTER_SERVERS[*]} (UCX over TCP through the namespace bridge)"
    else
        echo "one host"
    fi
}

# A fresh clone, no build anywhere: as root, install what is needed
# (ci/install-deps.sh: Debian packages, ROMIO's source) and build _build/ as
# the quick start does (about 8 minutes on 2 cores); else say how.
bench_build_here() {
    local b=$BENCH_SRC/_build
    [ "$(id -u)" = 0 ] ||
        bench_die "no stripefs build found: build it (README.md, 'Building') and pass --build DIR or set SFS_BUILD"
    bench_log "no build found: installing the dependencies and building $b (log: $b/bench-build.log)"
    mkdir -p "$b" || bench_die "cannot create $b"
    {
        bash "$BENCH_SRC/ci/install-deps.sh" &&
            (cd "$BENCH_SRC" && autoreconf -fi) &&
            (cd "$b" && { [ -f Makefile ] || ../configure; } && make -j"$(nproc)")
    } >"$b/bench-build.log" 2>&1 || bench_die "the build failed: $(tail -n 5 "$b/bench-build.log")"
    BENCH_BUILD=$b
}

bench_free_port() {
    "$BENCH_SRC/ci/free-port.sh" || bench_die "no free TCP port for the service"
}

# bench_write_config STATE TARGETS SERVER_RANKS [BANDWIDTH [STRIPES [CHUNK]]]: a
# config with TARGETS targets under STATE, each capped at BANDWIDTH (e.g.
# 100M; "" = no cap), files striped over STRIPES targets. On one host: its
# SERVER_RANKS ranks, targets 101, 102, ...; with --cluster: one rank on each
# server host, the targets dealt to them in turn (101, 201, 301, 102, ...).
bench_write_config() {
    local state=$1 targets=$2 ranks=$3 bw=${4:-} stripes=${5:-$2} chunk=${6:-512K}
    local port i host id trusted
    local -a servers
    local -A next=()
    if [ "$BENCH_CLUSTER" = 1 ]; then
        servers=("${BENCH_CLUSTER_SERVERS[@]}")
        ranks=1
        # free on the cluster's hosts, not on this one
        port=$(( (RANDOM % 30000) + 20000 ))
        trusted="${BENCH_CLUSTER_SERVERS[*]} $BENCH_CLUSTER_CLIENT"
    else
        servers=("$(hostname)")
        port=$(bench_free_port)
        trusted=${servers[0]}
    fi
    mkdir -p "$state/meta" "$state/targets" || bench_die "cannot create $state"
    "$BENCH_BUILD/stripefs-ctl" mkconnauth "$state/connauth" >/dev/null ||
        bench_die "stripefs-ctl mkconnauth failed"
    {
        echo "cluster: bench"
        echo "connauth_file: $state/connauth"
        echo "mgmt: {host: ${servers[0]}, port: $port}"
        echo "meta: {host: ${servers[0]}, dir: $state/meta, sync: true}"
        echo "hosts:"
        for host in "${servers[@]}"; do
            echo "  - {name: $host, ranks: $ranks}"
        done
        echo "storage:"
        for i in $(seq 0 $((targets - 1))); do
            host=${servers[$((i % ${#servers[@]}))]}
            next[$host]=$(( ${next[$host]:-0} + 1 ))
            id=$(( 100 + ${next[$host]} ))
            [ "$BENCH_CLUSTER" = 1 ] && id=$(( 10#${host#imaging-} * 100 + ${next[$host]} ))
            mkdir -p "$state/targets/$id"
            echo "  - {id: $id, host: $host, dir: $state/targets/$id${bw:+, bandwidth: $bw}}"
        done
        echo "pattern: {chunk_size: $chunk, stripe_count: $stripes}"
        # users proven by a munged of the service's own (started by it)
        echo "security: {mode: munge, munge_socket: $state/munge/munge.socket,"
        echo "           munged_key: $state/munge/munge.key, service_uid: $(id -u),"
        echo "           trusted_hosts: [${trusted// /, }]}"
    } >"$state/stripefs.yaml"
}

# bench_mirror_config STATE: pair the config's targets into mirror groups,
# in the order written (1st+2nd, 3rd+4th, ...): on one host 101+102 and
# 103+104 (same_host: true, for a benchmark only); with --cluster 101+201
# and 301+102, members on different hosts. Needs an even target count.
bench_mirror_config() {
    local state=$1 ids n i
    read -r -a ids < <(sed -n 's/^  - {id: \([0-9]*\),.*/\1/p' "$state/stripefs.yaml" | tr '\n' ' ')
    n=${#ids[@]}
    [ "$n" -ge 2 ] && [ $((n % 2)) = 0 ] || bench_die "mirror groups need an even number of targets, not $n"
    {
        echo "mirror:"
        echo "  groups:"
        for ((i = 0; i < n; i += 2)); do
            echo "    - {primary: ${ids[$i]}, secondary: ${ids[$((i + 1))]}}"
        done
        [ "$BENCH_CLUSTER" = 1 ] || echo "  same_host: true"
    } >>"$state/stripefs.yaml"
}

# bench_meta_mirror_config STATE: a metadata mirror (docs/metadata-mirror.md)
# in STATE/meta-mirror: on one host beside the metadata server (a directory
# of its own, mirror.same_host: true, for a benchmark only; the service
# needs 2 ranks or more); with --cluster on the second server host.
bench_meta_mirror_config() {
    local state=$1 cfg=$1/stripefs.yaml host
    if [ "$BENCH_CLUSTER" = 1 ]; then
        host=${BENCH_CLUSTER_SERVERS[1]}
    else
        host=$(hostname)
    fi
    sed -i "s|^meta: {\(.*\)}\$|meta: {\1, mirror: $host, mirror_dir: $state/meta-mirror}|" "$cfg"
    grep -q "mirror: $host, mirror_dir: $state/meta-mirror}" "$cfg" ||
        bench_die "no metadata mirror in $cfg: $(grep '^meta' "$cfg")"
    if [ "$BENCH_CLUSTER" != 1 ]; then
        if grep -q '^mirror:' "$cfg"; then
            grep -q 'same_host: true' "$cfg" || sed -i 's/^mirror:$/mirror:\n  same_host: true/' "$cfg"
        else
            printf 'mirror:\n  same_host: true\n' >>"$cfg"
        fi
    fi
}

# bench_wait_meta_mirror: until the running service's metadata mirror is in
# step (its log says so; at most 60 s).
bench_wait_meta_mirror() {
    for _ in $(seq 600); do
        grep -q "metadata mirror active at batch" "$BENCH_SERVICE_LOG" && {
            bench_log "metadata mirror in step: $(grep -o 'metadata mirror in step.*' "$BENCH_SERVICE_LOG" | tail -n 1)"
            return 0
        }
        sleep 0.1
    done
    bench_die "the metadata mirror did not come in step in 60 s: $(grep -i 'metadata mirror' "$BENCH_SERVICE_LOG" | tail -n 3)"
}

# bench_start_service STATE NP: start the service of the config in STATE
# (bench_write_config) with NP ranks: rank 0 management and metadata, the
# targets dealt round-robin to the others (with NP 1, one rank does all).
# With --cluster, one rank on each server host (NP is not used).
bench_start_service() {
    local state=$1 np=$2
    [ -z "$BENCH_SERVICE_PID" ] || bench_stop_service
    BENCH_SERVICE_STATE=$state
    BENCH_SERVICE_LOG=$state/service.log
    rm -f "$state/ready"
    if [ "$BENCH_CLUSTER" = 1 ]; then
        np=${#BENCH_CLUSTER_SERVERS[@]}
        bench_cluster_start_service "$state"
    else
        "${BENCH_MPIRUN[@]}" ${BENCH_SERVICE_MPI_ARGS[@]+"${BENCH_SERVICE_MPI_ARGS[@]}"} -np "$np" \
            "$BENCH_BUILD/stripefs-server" -c "$state/stripefs.yaml" \
            --ready-file "$state/ready" >>"$BENCH_SERVICE_LOG" 2>&1 &
        BENCH_SERVICE_PID=$!
    fi
    for _ in $(seq 1200); do
        [ -f "$state/ready" ] && break
        kill -0 "$BENCH_SERVICE_PID" 2>/dev/null || bench_die "the service exited while starting"
        sleep 0.1
    done
    [ -f "$state/ready" ] || bench_die "the service did not become ready in 120 s"
    export STRIPEFS_CONFIG=$state/stripefs.yaml
    bench_log "service up: $np ranks ($(bench_where)), config $STRIPEFS_CONFIG"
}

# The server processes of our service (matched by its unique config path).
bench_server_pids() {
    [ -n "$BENCH_SERVICE_STATE" ] || return 0
    pgrep -f -- "stripefs-server -c $BENCH_SERVICE_STATE/stripefs.yaml" || true
}

bench_stop_service() {
    local pids
    [ -n "$BENCH_SERVICE_PID" ] || return 0
    bench_ctl --timeout 20 shutdown >/dev/null 2>&1 ||
        kill -TERM "$BENCH_SERVICE_PID" 2>/dev/null
    for _ in $(seq 300); do
        kill -0 "$BENCH_SERVICE_PID" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$BENCH_SERVICE_PID" 2>/dev/null; then
        bench_log "the service did not stop in 30 s: killing it"
        pids=$(bench_server_pids)
        [ -n "$pids" ] && kill -9 $pids 2>/dev/null
        kill -9 "$BENCH_SERVICE_PID" 2>/dev/null
    fi
    wait "$BENCH_SERVICE_PID" 2>/dev/null
    BENCH_SERVICE_PID=""
    bench_log "service stopped"
}

bench_cleanup() {
    local rc=$?
    bench_stop_service
    bench_unmount_all
    bench_cluster_end
    if [ -n "$BENCH_TMP" ] && [ -d "$BENCH_TMP" ]; then
        if [ "$BENCH_KEEP" = 1 ]; then
            bench_log "kept $BENCH_TMP"
        else
            rm -rf "$BENCH_TMP"
        fi
    fi
    return $rc
}

# bench_mount_ext4 IMG MNT SIZE: a journaled ext4 (mkfs.ext4 -O has_journal,
# default data=ordered) on a loop file IMG of SIZE, mounted on MNT; unmounted
# by bench_cleanup. Needs root; says why it failed on stderr.
bench_mount_ext4() {
    local img=$1 mnt=$2 size=$3
    mkdir -p "$mnt" && truncate -s "$size" "$img" || return 1
    mkfs.ext4 -q -F -O has_journal -E lazy_itable_init=0,lazy_journal_init=0 "$img" || return 1
    mount -o loop "$img" "$mnt" || return 1
    BENCH_MOUNTS+=("$mnt")
}

# Unmount what bench_mount_ext4 mounted (before the temp dir goes: rm -rf
# must never walk into a mounted file system); keeps the temp dir otherwise.
bench_unmount_all() {
    local m
    for m in ${BENCH_MOUNTS[@]+"${BENCH_MOUNTS[@]}"}; do
        mountpoint -q "$m" 2>/dev/null || continue
        umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
        if mountpoint -q "$m"; then
            bench_log "cannot unmount $m: keeping $BENCH_TMP"
            BENCH_KEEP=1
        fi
    done
    BENCH_MOUNTS=()
}

# Wait (up to 60 s) until the running service's metadata server has deleted
# the chunk files of every removed file (`stripefs-ctl df`), so that its
# background deletions do not run into the next side's time.
bench_wait_deletions() {
    local left=""
    [ -n "$BENCH_SERVICE_PID" ] || return 0
    for _ in $(seq 600); do
        left=$(bench_ctl df 2>/dev/null |
            sed -n 's/.* \([0-9][0-9]*\) removed files awaiting chunk deletion.*/\1/p')
        [ "$left" = 0 ] && return 0
        sleep 0.1
    done
    bench_log "still $left removed files awaiting chunk deletion after 60 s"
}

# bench_ceilings CSV FIO_SECONDS: the ceilings printed beside a run: the disk
# under $BENCH_TMP (fio, direct I/O, 1 MiB, sequential write then read,
# time-based) and one core's memcpy of memory not in its caches; written to
# CSV (what,MiB_s,how) and logged. A missing fio gives "-" (with the reason).
bench_ceilings() {
    local csv=$1 secs=$2 disk fio_w fio_r memcpy
    bench_fio() { # RW
        local out
        command -v fio >/dev/null && command -v jq >/dev/null ||
            { bench_log "fio or jq is missing (apt-get install fio jq): no disk ceiling"; echo "-"; return; }
        out=$(fio --name=ceiling --directory="$BENCH_TMP/fio" --rw="$1" --bs=1M --direct=1 \
            --size=1G --time_based --runtime="$secs" --ioengine=psync --numjobs=1 \
            --end_fsync=1 --output-format=json 2>"$BENCH_TMP/fio.err") || {
            bench_log "fio $1 failed: $(tail -n 3 "$BENCH_TMP/fio.err")"
            echo "-"
            return
        }
        echo "$out" | jq -r ".jobs[0].$1.bw_bytes / 1048576 * 10 | round / 10"
    }
    mkdir -p "$BENCH_TMP/fio"
    disk=$(df -P "$BENCH_TMP" | awk 'NR == 2 { print $1 " (" $6 ")" }')
    fio_w=$(bench_fio write)
    bench_settle
    fio_r=$(bench_fio read)
    rm -rf "$BENCH_TMP/fio"
    memcpy=$("$BENCH_BUILD/benchmarks/sfs_bench_read" -C -S 512M -x 1M -r 3 -l memcpy 2>&1 |
        awk -F, '$5 == "best" { print $8 }')
    {
        echo "what,MiB_s,how"
        echo "disk-direct-write,${fio_w:--},fio --rw=write --bs=1M --direct=1 --time_based --runtime=$secs on $disk"
        echo "disk-direct-read,${fio_r:--},fio --rw=read --bs=1M --direct=1 --time_based --runtime=$secs on $disk"
        echo "memcpy-one-core,${memcpy:--},sfs_bench_read -C -S 512M -x 1M (best of 3)"
    } >"$csv"
    bench_log "ceilings: disk direct write ${fio_w:--} MiB/s, read ${fio_r:--} MiB/s; memcpy ${memcpy:--} MiB/s"
}

# Run an MPI job of N ranks with the stripefs MPI-IO library preloaded.
# With --cluster, the ranks run on the client host of the cluster.
bench_mpi() { # N PROGRAM ARGS...
    local n=$1
    shift
    if [ "$BENCH_CLUSTER" = 1 ]; then
        bench_cluster_client_mpi "$n" "$@"
    else
        "${BENCH_MPIRUN[@]}" -np "$n" -x STRIPEFS_CONFIG "$BENCH_BUILD/tools/stripefs-run" "$@"
    fi
}

# Settle the disk between runs: write back whatever the last run left dirty
# (the benchmarks sync their own data; this catches deletions and the like).
bench_settle() {
    sync
    sleep "${1:-0.5}"
}

# Pretty-print a CSV file (or stdin) as columns.
bench_table() {
    column -t -s, "$@"
}

bench_ratio() { # A B -> A/B with 2 decimals ("-" if B is 0)
    awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0) print "-"; else printf "%.2f\n", a / b }'
}

# One line about this machine, for the results.
bench_machine() {
    local mem
    mem=$(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
    echo "$(date '+%Y-%m-%d %H:%M %Z'), $(hostname), $(nproc) cores," \
        "$mem memory, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
}

bench_human_size() { # BYTES -> 64K, 1M, ...
    awk -v b="$1" 'BEGIN { if (b >= 1048576 && b % 1048576 == 0) printf "%dM\n", b / 1048576;
                           else if (b >= 1024 && b % 1024 == 0) printf "%dK\n", b / 1024;
                           else print b }'
}
