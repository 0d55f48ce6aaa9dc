#!/usr/bin/env bash
# ucx.sh: transport figures that are transport figures, and same-host paths
# labelled as what they are. Three parts, each side against its own ceiling
# at the same transfer size, sides alternating rep by rep:
#
#  1. Through the server, the data on UCX (the path between hosts): one
#     client process and one storage rank, every same-host shortcut off
#     (STRIPEFS_LOCAL_READ=0: no chunk file handed over; STRIPEFS_DIRECT_COPY=0
#     and STRIPEFS_DIRECT_PULL=0: no process_vm_readv/writev of the payload),
#     reads and writes (sfs_bench_read, -W for writes, to the server's page
#     cache, no fsync in the timed part; data checked after), against
#     `ucx_perftest -t ucp_am_bw -e` (endpoints with error handling, as
#     stripefs creates them) at the same message size, with the same UCX_TLS
#     on every process: `tcp` (UCX_TLS=tcp,self: TCP over loopback here) and
#     `sm` (UCX_TLS=sm,self: shared memory), and the network's own ceiling
#     for tcp (iperf3 over the same interface).
#  2. --cluster: the same over two hosts of ci/cluster.sh's four-host
#     namespace cluster (veth pairs on a bridge, UCX over TCP): storage on
#     imaging-02, the client and ucx_perftest's client on imaging-03,
#     management and metadata on imaging-01; iperf3 between imaging-03 and
#     imaging-02 is the network's ceiling there. Needs root.
#  3. Same-host paths (one host only), against local ceilings: the
#     short-circuit read (the client preads the chunk file the server handed
#     over) against a local pread of a file of the same size on the same disk,
#     and the direct copy (STRIPEFS_LOCAL_READ=0, the server copies into the
#     client with process_vm_writev) against memcpy of memory not in the
#     caches. These are not transport figures.
#
#   bash benchmarks/ucx.sh [--quick] [--sizes "1M 16M"] [--file-size 1G] [--reps 3]
#        [--depths "1 4"] [--tls "tcp sm"] [--cluster] [--perftest-bytes N]
#        [--out DIR] [--build DIR]
#
# Writes ucx.csv (every pass), ucx-summary.csv (min/median/max per line and
# the ratio of medians to the ceiling at the same size) and ucx-net.txt.
. "$(dirname "$0")/lib.sh"
bench_setup ucx "$@"

sizes="1M 16M"
file_size=1G
reps=3
depths="1 4"
tls_list="tcp sm"
cluster=0
ucx_bytes=$((4 << 30))
iperf_seconds=4
if [ "$BENCH_QUICK" = 1 ]; then
    sizes="1M"
    file_size=256M
    depths="1"
    ucx_bytes=$((1 << 30))
    iperf_seconds=1 # a check that it runs, not a ceiling to quote
fi
set -- ${BENCH_ARGS[@]+"${BENCH_ARGS[@]}"}
while [ $# -gt 0 ]; do
    case $1 in
    --sizes) sizes=$2; shift 2 ;;
    --file-size) file_size=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --depths) depths=$2; shift 2 ;;
    --tls) tls_list=$2; shift 2 ;;
    --cluster) cluster=1; shift ;;
    --perftest-bytes) ucx_bytes=$2; shift 2 ;;
    -h|--help) sed -n '2,/^\. /p' "$0" | sed -e '/^\. /d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) bench_die "unknown option '$1' (see --help)" ;;
    esac
done
[ "$reps" -ge 3 ] || bench_die "--reps must be at least 3 (min/median/max of 3 or more)"
# what a fresh machine lacks: installed here when root
need_tool() { # COMMAND PACKAGE
    command -v "$1" >/dev/null && return 0
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        bench_log "installing $2 (for $1)"
        DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq "$2" \
            >"$BENCH_TMP/apt-$2.log" 2>&1 || { apt-get update -qq >/dev/null 2>&1 &&
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >>"$BENCH_TMP/apt-$2.log" 2>&1; }
    fi
    command -v "$1" >/dev/null || bench_die "$1 is missing (apt-get install $2)"
}
need_tool ucx_perftest ucx-utils
need_tool iperf3 iperf3
to_bytes() {
    awk -v s="$1" 'BEGIN { n = s + 0; u = toupper(substr(s, length(n "") + 1, 1));
        if (u == "K") n *= 1024; else if (u == "M") n *= 1048576; else if (u == "G") n *= 1073741824;
        printf "%d\n", n }'
}
tls_value() { case $1 in tcp) echo tcp,self ;; sm) echo sm,self ;; *) echo "$1" ;; esac; }

csv=$BENCH_OUT/ucx.csv
echo "where,tls,what,xfer_bytes,depth,rep,bytes,seconds,MiB_s" >"$csv"
bench_log "machine: $(bench_machine)"
file_bytes=$(to_bytes "$file_size")
record() { # where tls what xfer depth rep bytes seconds mibs
    echo "$1,$2,$3,$4,$5,$6,$7,$8,$9" >>"$csv"
    bench_log "  [$1 $2] $3 $(bench_human_size "$4") depth $5 rep $6: $9 MiB/s"
}

# --- the ceilings -----------------------------------------------------------
# ucx_perftest's server on SERVER_CMD's side, its client on CLIENT_CMD's
# (prefixes that run a command on a host; empty on this host)
perftest() { # where tls bytes rep server-address run-server-prefix run-client-prefix
    local where=$1 tls=$2 bytes=$3 rep=$4 addr=$5 srv=$6 cli=$7 port iters line mib secs pid
    iters=$((ucx_bytes / bytes))
    port=$(bench_free_port)
    # -e needs peer-failure detection on the shared-memory transports, which
    # stripefs turns on for itself (UCX_{POSIX,SYSV}_ERROR_HANDLING=y)
    local -a eh=(UCX_POSIX_ERROR_HANDLING=y UCX_SYSV_ERROR_HANDLING=y)
    # shellcheck disable=SC2086
    env "${eh[@]}" UCX_TLS="$(tls_value "$tls")" $srv ucx_perftest -p "$port" >"$BENCH_TMP/perftest-server.log" 2>&1 &
    pid=$!
    line=""
    for _ in $(seq 50); do
        sleep 0.2
        # shellcheck disable=SC2086
        if line=$(env "${eh[@]}" UCX_TLS="$(tls_value "$tls")" timeout 120 $cli ucx_perftest "$addr" -p "$port" \
            -t ucp_am_bw -e -s "$bytes" -n "$iters" -w 20 2>"$BENCH_TMP/perftest-client.err" | grep '^Final:'); then
            break
        fi
    done
    [ -n "$line" ] || kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    [ -n "$line" ] || bench_die "ucx_perftest ($where, UCX_TLS=$(tls_value "$tls")) failed: $(tail -n 3 "$BENCH_TMP/perftest-client.err")"
    # Final: iterations, overhead 50%/avg/overall, bandwidth avg/overall (MiB/s), rates
    mib=$(echo "$line" | awk '{ print $7 }')
    secs=$(awk -v b="$bytes" -v n="$iters" -v m="$mib" 'BEGIN { printf "%.4f", b * n / 1048576 / m }')
    record "$where" "$tls" ucx_perftest-am_bw-e "$bytes" 1 "$rep" $((bytes * iters)) "$secs" "$mib"
}
iperf() { # where rep server-address run-server-prefix run-client-prefix
    local where=$1 rep=$2 addr=$3 srv=$4 cli=$5 port pid out bps
    port=$(bench_free_port)
    # shellcheck disable=SC2086
    $srv iperf3 -s -1 -p "$port" >"$BENCH_TMP/iperf-server.log" 2>&1 &
    pid=$!
    out=""
    for _ in $(seq 50); do
        sleep 0.2
        # shellcheck disable=SC2086
        out=$(timeout 60 $cli iperf3 -c "$addr" -p "$port" -t "$iperf_seconds" -J 2>/dev/null) && break
        out=""
    done
    wait "$pid" 2>/dev/null
    [ -n "$out" ] || bench_die "iperf3 ($where) failed: $(tail -n 3 "$BENCH_TMP/iperf-server.log")"
    bps=$(echo "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"])')
    record "$where" tcp iperf3-tcp - 1 "$rep" - - "$(awk -v b="$bps" 'BEGIN { printf "%.1f", b / 8 / 1048576 }')"
}

# --- stripefs: one client process, one storage rank -------------------------
# sfs_bench_read in the client's environment: LABEL XFER DEPTH EXTRA...; one
# pass per call (the sides alternate call by call), data checked in each
sfs_read() { # where tls label xfer depth rep prefix extra-args...
    local where=$1 tls=$2 label=$3 xfer=$4 depth=$5 rep=$6 prefix=$7 out line
    shift 7
    # shellcheck disable=SC2086
    out=$($prefix env STRIPEFS_CONFIG="$STRIPEFS_CONFIG" "$BENCH_BUILD/benchmarks/sfs_bench_read" \
        -p "/$label-$xfer-$depth-$rep" -S "$file_size" -x "$xfer" -r 1 -q "$depth" -l "$label" "$@" 2>&1) ||
        bench_die "sfs_bench_read ($label) failed: $out"
    line=$(echo "$out" | awk -F, '$1 == "csv" && $5 == "1"')
    [ -n "$line" ] || bench_die "sfs_bench_read ($label) printed no pass: $out"
    record "$where" "$tls" "$label" "$xfer" "$depth" "$rep" "$(echo "$line" | cut -d, -f6)" \
        "$(echo "$line" | cut -d, -f7)" "$(echo "$line" | cut -d, -f8)"
}
off_env=(STRIPEFS_LOCAL_READ=0 STRIPEFS_DIRECT_COPY=0 STRIPEFS_DIRECT_PULL=0)

# --- 1. one host, the data on UCX -------------------------------------------
for tls in $tls_list; do
    state=$BENCH_TMP/state-$tls
    bench_write_config "$state" 1 2 "" 1
    # every process of this part (servers, clients, ucx_perftest) runs with it
    export UCX_TLS
    UCX_TLS=$(tls_value "$tls")
    export "${off_env[@]}"
    bench_start_service "$state" 2
    "$SFS_BENCH_CTL" net >"$BENCH_OUT/ucx-net-$tls.txt" 2>&1 || true
    for size in $sizes; do
        bytes=$(to_bytes "$size")
        for rep in $(seq "$reps"); do
            # sides alternate: odd reps start with UCX, even ones with stripefs
            if [ $((rep % 2)) = 1 ]; then perftest onehost "$tls" "$bytes" "$rep" 127.0.0.1 "" ""; fi
            for depth in $depths; do
                sfs_read onehost "$tls" stripefs-read-ucx "$bytes" "$depth" "$rep" ""
                sfs_read onehost "$tls" stripefs-write-ucx "$bytes" "$depth" "$rep" "" -W
            done
            if [ $((rep % 2)) = 0 ]; then perftest onehost "$tls" "$bytes" "$rep" 127.0.0.1 "" ""; fi
        done
    done
    if [ "$tls" = tcp ]; then
        for rep in $(seq "$reps"); do iperf onehost "$rep" 127.0.0.1 "" ""; done
    fi
    bench_stop_service
    unset UCX_TLS STRIPEFS_LOCAL_READ STRIPEFS_DIRECT_COPY STRIPEFS_DIRECT_PULL
done
cp "$BENCH_OUT/ucx-net-tcp.txt" "$BENCH_OUT/ucx-net.txt" 2>/dev/null

# --- 2. two hosts of the namespace cluster ------------------------------------
if [ "$cluster" = 1 ]; then
    . "$BENCH_SRC/benchmarks/ucx_cluster.sh"
    ucx_cluster_run
fi

# --- 3. same-host paths, against local ceilings -------------------------------
state=$BENCH_TMP/state-local
bench_write_config "$state" 1 2 "" 1
bench_start_service "$state" 2
for size in $sizes; do
    bytes=$(to_bytes "$size")
    for rep in $(seq "$reps"); do
        if [ $((rep % 2)) = 1 ]; then
            out=$("$BENCH_BUILD/benchmarks/sfs_bench_read" -P "$BENCH_TMP/pread.dat" -S "$file_size" -x "$bytes" -r 1 -l local-pread) ||
                bench_die "local pread failed: $out"
            line=$(echo "$out" | awk -F, '$5 == "1"')
            record samehost - local-pread "$bytes" 1 "$rep" "$file_bytes" "$(echo "$line" | cut -d, -f7)" "$(echo "$line" | cut -d, -f8)"
        fi
        sfs_read samehost - stripefs-read-shortcircuit "$bytes" 1 "$rep" ""
        STRIPEFS_LOCAL_READ=0 sfs_read samehost - stripefs-read-directcopy "$bytes" 1 "$rep" ""
        out=$("$BENCH_BUILD/benchmarks/sfs_bench_read" -C -S "$file_size" -x "$bytes" -r 1 -l memcpy-stream) ||
            bench_die "memcpy failed: $out"
        line=$(echo "$out" | awk -F, '$5 == "1"')
        record samehost - memcpy-stream "$bytes" 1 "$rep" "$file_bytes" "$(echo "$line" | cut -d, -f7)" "$(echo "$line" | cut -d, -f8)"
        if [ $((rep % 2)) = 0 ]; then
            out=$("$BENCH_BUILD/benchmarks/sfs_bench_read" -P "$BENCH_TMP/pread.dat" -S "$file_size" -x "$bytes" -r 1 -l local-pread) ||
                bench_die "local pread failed: $out"
            line=$(echo "$out" | awk -F, '$5 == "1"')
            record samehost - local-pread "$bytes" 1 "$rep" "$file_bytes" "$(echo "$line" | cut -d, -f7)" "$(echo "$line" | cut -d, -f8)"
        fi
    done
done
bench_stop_service

# --- summary: min/median/max per line; the ratio of medians to its ceiling
summary=$BENCH_OUT/ucx-summary.csv
python3 "$BENCH_SRC/benchmarks/ucx_summary.py" "$csv" "$summary" "$BENCH_OUT/ucx-goals.txt" ||
    bench_die "ucx_summary.py failed"
echo
echo "ucx.sh: $(bench_machine); file $file_size, $reps reps, sides alternating"
bench_table "$summary"
echo
echo "onehost/cluster lines: through the server with every same-host shortcut off, the data on UCX"
echo "with the UCX_TLS shown, against ucx_perftest -t ucp_am_bw -e at the same message size;"
echo "iperf3-tcp: the network's own ceiling. samehost lines are not transport figures."
echo "results: $csv, $summary, $BENCH_OUT/ucx-net-*.txt"
