#!/usr/bin/env bash
# create_latency.sh: where the time of one create goes (docs/metadata.md,
# "Where a create's time goes"). One process makes --items files one at a
# time in a fresh directory, then stats and removes them (sfs_bench_lat),
# and each call is timed in the process (the client's round trip). On
# stripefs (through the POSIX preload, default crash-safe settings: every
# acknowledged create is committed) the metadata server's own timing of
# the same requests (`stripefs-ctl stats meta`, reset before each rep)
# splits it: queue (arrival to its batch's start on the metadata thread:
# while it commits the batch before), ahead (the operations before it in
# its batch), handler,
# commit wait (the rest of its batch), commit (LMDB's commit and fsync),
# reply (back to the progress thread and out); wire = the client's mean
# round trip - the server's mean total (the client library, UCX and the
# loopback both ways). Baselines in the same run: a journaled ext4 on a
# loop file this script makes (needs root), plain and with an fsync of each
# file and its directory per create and unlink (ext4-fsync).
#
#   benchmarks/create_latency.sh [--quick] [--items N] [--reps R]
#        [--systems "stripefs ext4 ext4-fsync"] [--out DIR] [--build DIR]
#
# A fresh service (new state directory) per stripefs rep; 3 reps (--quick:
# 1 rep of 100 items; default 1000); each cell is the median over the reps
# of that rep's mean, p50 and p99. Writes create_latency.csv (every rep)
# and prints the table. Mark figures with the load (`uptime`): a loaded
# machine's latencies are mostly waiting for a core.
. "$(dirname "$0")/lib.sh"
bench_setup create_latency "$@"

items=1000
reps=3
systems="stripefs ext4 ext4-fsync"
if [ "$BENCH_QUICK" = 1 ]; then
    items=100
    reps=1
fi
set -- ${BENCH_ARGS[@]+"${BENCH_ARGS[@]}"}
while [ $# -gt 0 ]; do
    case $1 in
    --items) items=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --systems) systems=$2; shift 2 ;;
    -h|--help) sed -n '2,/^\. /p' "$0" | sed -e '/^\. /d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) bench_die "unknown option '$1' (see --help)" ;;
    esac
done

lat=$BENCH_BUILD/benchmarks/sfs_bench_lat
preload=$BENCH_BUILD/.libs/libstripefs-posix.so
# a sanitizer build's library needs the ASan runtime loaded first (the
# program itself is built without it), and no leak check of the program
asan=$(ldd "$preload" 2>/dev/null | awk '/libasan/ {print $3; exit}')
preload_asan=$preload
if [ -n "$asan" ]; then
    preload_asan="$asan $preload"
    lat_asan="verify_asan_link_order=0:detect_leaks=0"
fi
csv=$BENCH_OUT/create_latency.csv
[ -x "$lat" ] || bench_die "$lat is not built (make -C $BENCH_BUILD bench)"
echo "rep,system,what,n,mean_us,p50_us,p99_us,max_us" >"$csv"

mnt=$BENCH_TMP/ext4
case " $systems " in *" ext4"*)
    if [ "$(id -u)" != 0 ]; then
        bench_log "skipping ext4 and ext4-fsync: needs root (mount -o loop)"
        systems=$(echo " $systems " | sed 's/ ext4 / /; s/ ext4-fsync / /')
    else
        # (unmounted by bench_cleanup)
        bench_mount_ext4 "$BENCH_TMP/ext4.img" "$mnt" 1G ||
            bench_die "cannot make the journaled ext4 on $BENCH_TMP/ext4.img"
    fi ;;
esac

bench_log "machine: $(bench_machine); load: $(uptime | sed 's/.*load average/load average/')"
bench_log "1 process x $items files, $reps reps, systems: $systems"

# stripefs-ctl stats meta's lines "OP PHASE COUNT MEAN P50 P99 MAX" as CSV rows
stats_csv() { # REP
    awk -v r="$1" '$1 ~ /^(CREATE|STAT|UNLINK|SIZE)$/ && NF == 7 {
        printf "%s,server,%s-%s,%s,%s,%s,%s,%s\n", r, $1, $2, $3, $4, $5, $6, $7 }'
}

failed=0
for rep in $(seq "$reps"); do
    for system in $systems; do
        sync
        case $system in
        stripefs)
            bench_write_config "$BENCH_TMP/state-$rep" 4 3
            bench_start_service "$BENCH_TMP/state-$rep" 3
            "$BENCH_BUILD/stripefs-ctl" stats meta --reset >/dev/null ||
                bench_die "stripefs-ctl stats meta --reset failed"
            out=$(STRIPEFS_PREFIX=/stripefs LD_PRELOAD="$preload_asan" \
                ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}${lat_asan:-} "$lat" -d /stripefs/lat-$rep \
                -n "$items" -l "$system" 2>&1) || failed=$((failed + 1))
            "$BENCH_BUILD/stripefs-ctl" stats meta | stats_csv "$rep" >>"$csv"
            bench_stop_service ;;
        ext4) out=$("$lat" -d "$mnt/lat-$rep" -n "$items" -l "$system" 2>&1) || failed=$((failed + 1)) ;;
        ext4-fsync) out=$("$lat" -d "$mnt/lat-fsync-$rep" -n "$items" -l "$system" -D 2>&1) ||
            failed=$((failed + 1)) ;;
        *) bench_die "unknown system '$system'" ;;
        esac
        echo "$out" | grep -v '^lat,' >&2
        echo "$out" | awk -F, -v r="$rep" '$1 == "lat" { printf "%s,%s,%s,%s,%s,%s,%s,%s\n", r, $2, $3, $4, $5, $6, $7, $8 }' >>"$csv"
        bench_log "rep $rep $system: $(awk -F, -v r="$rep" -v s="$system" \
            '$1 == r && $2 == s && $3 == "create" { printf "create mean %s us, p50 %s us", $5, $6 }' "$csv")"
    done
done

# The median over the reps of each (system, what, column).
echo
echo "One create, one process (median of $reps reps of $items; microseconds; $(uptime | sed 's/.*load average/load average/'))"
awk -F, 'NR > 1 { k = $2 "," $3; keys[k] = 1
        for (c = 5; c <= 7; c++) { n[k, c]++; v[k, c, n[k, c]] = $c } }
    function med(k, c,    i, j, t, m) { m = n[k, c]; if (!m) return ""
        for (i = 1; i <= m; i++) a[i] = v[k, c, i]
        for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
        return a[int((m + 1) / 2)] }
    function row(label, k) { if (k in keys) printf "%-44s %9.1f %9.1f %9.1f\n", label, med(k, 5), med(k, 6), med(k, 7) }
    END { printf "%-44s %9s %9s %9s\n", "", "mean", "p50", "p99"
        row("stripefs client: create (open + close)", "stripefs,create")
        row("stripefs client: open (the CREATE round trip)", "stripefs,open")
        row("stripefs client: close (SIZE END, not waited)", "stripefs,close")
        row("server CREATE total", "server,CREATE-total")
        row("  queue (arrival to the start of its batch)", "server,CREATE-queue")
        row("  ahead (the ops before it in its batch)", "server,CREATE-ahead")
        row("  handler", "server,CREATE-handler")
        row("  commit wait (the rest of the batch)", "server,CREATE-commit_wait")
        row("  commit (LMDB commit + fsync)", "server,CREATE-commit")
        row("  reply (to the progress thread and out)", "server,CREATE-reply")
        if (("stripefs,open" in keys) && ("server,CREATE-total" in keys))
            printf "%-44s %9.1f\n", "wire + client library (open - server total)", med("stripefs,open", 5) - med("server,CREATE-total", 5)
        row("ext4 (journaled) create", "ext4,create")
        row("ext4-fsync create", "ext4-fsync,create")
        row("stripefs client: stat", "stripefs,stat")
        row("server STAT total", "server,STAT-total")
        row("ext4 stat", "ext4,stat")
        row("stripefs client: unlink", "stripefs,unlink")
        row("server UNLINK total", "server,UNLINK-total")
        row("  commit", "server,UNLINK-commit")
        row("ext4 unlink", "ext4,unlink")
        row("ext4-fsync unlink", "ext4-fsync,unlink") }' "$csv"
echo "(every rep: $csv)"
[ "$failed" = 0 ] || bench_die "$failed runs failed (above)"
