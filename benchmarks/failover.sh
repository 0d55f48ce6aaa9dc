#!/usr/bin/env bash
# failover.sh: what losing a mirror member costs a writer, and how fast the
# member that comes back is resynced (issue 11: "the failover pause, the
# resync rate"; docs/mirroring.md, "Failover" and "Resync").
#
#   bash benchmarks/failover.sh [--quick] [--cluster] [--reps 3] [--size 256M]
#
# One mirror group, the config's default timeouts (heartbeat 2 s, offline
# 20 s: printed), one client process (sfs_bench_mirror, the client library)
# writing a mirrored file in 1 MiB blocks, one at a time, then fsync. Each
# rep, in a directory of its own:
#   ref        SIZE written with both members up (forwarding, the normal
#              case): its MB/s is the yardstick for the resync's rate;
#   secondary  SIZE written while the secondary's rank is killed (-9) a
#              quarter of the way in (the writer waits there until the
#              process is dead): the write's longest block is the pause
#              the loss cost (the primary's forward fails, it serves alone
#              and logs the file); the rank then rejoins (--rejoin) and the
#              primary resyncs it: the copy's bytes, seconds and MB/s come
#              from the primary's log ("resync ... done"), and "rejoin to
#              good" is from the rejoined rank's ready file until `mirror
#              list` shows both members good (detection included);
#   primary    the same with the primary killed: the pause is at most the
#              offline timeout (management promotes the secondary 1 s before
#              it, the client resends to it), then the old primary rejoins
#              and the promoted member resyncs it. The roles stay swapped;
#              the next rep starts from them.
# After each resync the two members' chunk files are compared byte for
# byte, and each written file was read back and checked by the writer.
# Before every timed part the disk is synced (the writeback of what was
# just written is in no figure).
# A resync copies whole chunk files (the log names files, not ranges), one
# request of 512 KiB at a time: that is what its rate measures.
#
# One host: 3 ranks (rank 0 management and metadata; 101 on rank 1, 102 on
# rank 2, same_host: true), same-host shortcuts off, so every byte goes
# through UCX (shared memory). --cluster: the namespace cluster, group 201
# (imaging-02) + 301 (imaging-03), management, metadata and 101 on
# imaging-01, the client on imaging-04 (UCX over TCP on the bridge). Every
# "host" shares this machine's disk and two cores.
. "$(dirname "$0")/lib.sh"
bench_setup failover "$@"

reps=3
size=256M
[ "$BENCH_QUICK" = 1 ] && reps=2 size=32M
set -- ${BENCH_ARGS[@]+"${BENCH_ARGS[@]}"}
while [ $# -gt 0 ]; do
    case $1 in
    --reps) reps=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    -h|--help) sed -n '2,/^\. /p' "$0" | sed -e '/^\. /d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) bench_die "unknown option '$1' (see --help)" ;;
    esac
done
[[ $reps =~ ^[1-9][0-9]*$ ]] || bench_die "--reps: '$reps' is not a count"
[[ $size =~ ^[1-9][0-9]*[MG]$ ]] || bench_die "--size: '$size' is not a size in M or G (e.g. 256M)"

state=$BENCH_TMP/state
prog=$BENCH_BUILD/benchmarks/sfs_bench_mirror
csv=$BENCH_OUT/failover.csv
BENCH_SERVICE_MPI_ARGS=(--mca orte_enable_recovery 1)
bench_log "machine: $(bench_machine)"
if [ "$BENCH_CLUSTER" = 1 ]; then
    bench_write_config "$state" 3 1 "" 1 # 101 201 301
    group="201 301"
    run_client() { "$BENCH_CLUSTER_TOOL" exec "$BENCH_CLUSTER_CLIENT" env STRIPEFS_CONFIG="$STRIPEFS_CONFIG" "$@"; }
    ctl() { bench_cluster_ctl "$@"; }
    where="across hosts: the client on $BENCH_CLUSTER_CLIENT, group 201 (imaging-02) + 301 (imaging-03)"
else
    bench_write_config "$state" 2 3 "" 1 # 101 102
    group="101 102"
    run_client() { env STRIPEFS_DIRECT_COPY=0 STRIPEFS_DIRECT_PULL=0 STRIPEFS_LOCAL_READ=0 "$@"; }
    ctl() { bench_ctl "$@"; }
    where="one host, same-host shortcuts off, group 101 (rank 1) + 102 (rank 2)"
fi
read -r g1 g2 <<<"$group"
{
    echo "mirror:"
    echo "  groups:"
    echo "    - {primary: $g1, secondary: $g2}"
    [ "$BENCH_CLUSTER" = 1 ] || echo "  same_host: true"
} >>"$state/stripefs.yaml"
bench_start_service "$state" 3
bench_log "$where; timeouts: the config's defaults (heartbeat 2 s, offline 20 s)"
rejoined=()

# members: "PRIMARY PRANK SECONDARY SRANK" from mirror list (both good), or fail
members() {
    ctl mirror list | awk -v a="$g1" -v b="$g2" '($2 == a || $2 == b) && $NF == "good" && $0 ~ / good +[0-9]+ @/ {
        print $2, $5, $(NF - 7), $(NF - 4); found = 1 } END { exit !found }'
}
# rank_pid RANK: its pid (listnodes)
rank_pid() { ctl listnodes | awk -v r="$1" '$1 == r {print $5; exit}'; }
# rank_host RANK: its host (listnodes)
rank_host() { ctl listnodes | awk -v r="$1" '$1 == r {print $2; exit}'; }
groups_good() { ctl mirror list 2>/dev/null | grep -qE "^[0-9]+ +[0-9]+ @.* good +[0-9]+ @.* good$"; }
resync_lines() { cat "$state"/*.log 2>/dev/null | grep -c "resync of target .* done:"; }

# write KIND REP PATH [KILL_RANK]: SIZE in 1 MiB blocks; with KILL_RANK that
# rank is killed a quarter of the way in. Sets W_MB (MB/s) and W_PAUSE_MS
# (the longest block).
write() {
    local kind=$1 rep=$2 path=$3 victim=${4:-} go=$BENCH_TMP/go pid wpid
    if [ -n "$victim" ]; then
        pid=$(rank_pid "$victim")
        [ -n "$pid" ] || bench_die "no pid for rank $victim in listnodes"
    fi
    bench_settle 0.2 # on a synced disk
    rm -f "$go"
    run_client "$prog" one -f "$path" -S "$size" -x 1M -q 1 ${victim:+-k "$go"} >"$BENCH_TMP/w.out" 2>&1 &
    wpid=$!
    if [ -n "$victim" ]; then
        # the writer waits at a quarter until the go file is gone: the rank
        # is dead by then, so the rest of the blocks meet the loss
        for _ in $(seq 3000); do [ -f "$go" ] && break; kill -0 $wpid 2>/dev/null || break; sleep 0.02; done
        [ -f "$go" ] || bench_die "$kind: the writer never reached a quarter: $(cat "$BENCH_TMP/w.out")"
        kill -9 "$pid" || bench_die "cannot kill rank $victim ($pid)"
        for _ in $(seq 500); do
            [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" = Z ] || [ ! -e "/proc/$pid" ] && break
            sleep 0.01
        done
        rm -f "$go"
    fi
    wait $wpid || bench_die "$kind write of $path failed: $(cat "$BENCH_TMP/w.out")"
    read -r W_MB W_PAUSE_MS < <(awk -F, '$1 == "csv" {printf "%s %.0f\n", $7, $10 / 1000}' "$BENCH_TMP/w.out")
    [ -n "${W_PAUSE_MS:-}" ] || bench_die "$kind: no result line: $(cat "$BENCH_TMP/w.out")"
}

# rejoin RANK: start it again (--rejoin), wait until both members are good
# and a new "resync ... done" line is logged. Sets R_BYTES R_SECONDS R_MB
# (the primary's figures) and R_GOOD (seconds from ready to good)
rejoin() {
    local rank=$1 host before t0 t1 line i
    host=$(rank_host "$rank")
    before=$(resync_lines)
    rm -f "$state/rejoined"
    if [ "$BENCH_CLUSTER" = 1 ]; then
        timeout --kill-after=20 3600 "${BENCH_CLUSTER_MPIRUN[@]}" -np 1 --host "$host" \
            "$BENCH_BUILD/stripefs-server" -c "$state/stripefs.yaml" --rejoin "$rank" \
            --ready-file "$state/rejoined" >>"$state/rejoin-$rank.log" 2>&1 &
    else
        "${BENCH_MPIRUN[@]}" -np 1 "$BENCH_BUILD/stripefs-server" -c "$state/stripefs.yaml" \
            --rejoin "$rank" --ready-file "$state/rejoined" >>"$state/rejoin-$rank.log" 2>&1 &
    fi
    rejoined+=($!)
    for _ in $(seq 1200); do [ -f "$state/rejoined" ] && break; sleep 0.05; done
    [ -f "$state/rejoined" ] || bench_die "rank $rank did not rejoin in 60 s: $(tail -n 5 "$state/rejoin-$rank.log")"
    t0=$(date +%s.%N)
    for i in $(seq 1200); do
        groups_good && [ "$(resync_lines)" -gt "$before" ] && break
        sleep 0.1
    done
    t1=$(date +%s.%N)
    groups_good && [ "$(resync_lines)" -gt "$before" ] ||
        bench_die "rank $rank rejoined, but no resync ended in 120 s: $(ctl mirror list)"
    # the latest by its time stamp (the logs of the service and of each rejoin)
    line=$(cat "$state"/*.log | grep "resync of target .* done:" | sort | tail -n 1)
    read -r R_BYTES R_SECONDS R_MB < <(echo "$line" |
        sed -nE 's/.*done: [0-9]+ chunk files, ([0-9]+) bytes in ([0-9.]+) s \(([0-9.]+) MB\/s\).*/\1 \2 \3/p')
    [ -n "${R_MB:-}" ] || bench_die "cannot read the resync's figures from: $line"
    R_GOOD=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}')
}

# same_copies: the chunk files of both members are byte-identical
same_copies() {
    diff -r "$state/targets/$g1/chunks" "$state/targets/$g2/chunks" >"$BENCH_TMP/diff" 2>&1 ||
        bench_die "the chunk files of $g1 and $g2 differ after the resync: $(head -n 3 "$BENCH_TMP/diff")"
}

echo "rep,kind,primary,secondary,write_MB_s,pause_ms,resync_bytes,resync_s,resync_MB_s,rejoin_to_good_s" >"$csv"
for rep in $(seq "$reps"); do
    ctl mkdir "/r$rep" >/dev/null && ctl setpattern --mirror --numtargets 1 "/r$rep" >/dev/null ||
        bench_die "mkdir/setpattern --mirror /r$rep"
    p="" prank="" s="" srank=""
    read -r p prank s srank < <(members)
    [ -n "${srank:-}" ] || bench_die "both members are not good: $(ctl mirror list)"
    write ref "$rep" "/r$rep/ref"
    echo "$rep,ref,$p,$s,$W_MB,$W_PAUSE_MS,,,," >>"$csv"
    bench_log "rep $rep: ref: $W_MB MB/s, both members up ($p primary)"
    for kind in secondary primary; do
        p="" prank="" s="" srank=""
        read -r p prank s srank < <(members)
        [ -n "${srank:-}" ] || bench_die "both members are not good: $(ctl mirror list)"
        victim=$srank lost=$s
        [ $kind = primary ] && victim=$prank lost=$p
        write "$kind" "$rep" "/r$rep/$kind" "$victim"
        # the resync is timed alone, not against the writeback of the file
        # just written
        bench_settle 0.2
        rejoin "$victim"
        same_copies
        echo "$rep,$kind,$p,$s,$W_MB,$W_PAUSE_MS,$R_BYTES,$R_SECONDS,$R_MB,$R_GOOD" >>"$csv"
        bench_log "rep $rep: $kind $lost (rank $victim) lost: pause $W_PAUSE_MS ms, $W_MB MB/s; resync $R_BYTES bytes in $R_SECONDS s ($R_MB MB/s), rejoin to good $R_GOOD s"
    done
done
bench_stop_service
for p in "${rejoined[@]}"; do wait "$p" 2>/dev/null; done

python3 - "$csv" <<'PY' | tee "$BENCH_OUT/failover-summary.txt"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
def mmm(kind, col, fmt="%.1f"):
    v = [float(r[col]) for r in rows if r["kind"] == kind and r[col] != ""]
    return "/".join(fmt % x for x in (min(v), statistics.median(v), max(v))) if v else "-"
print("%-10s %-22s %-22s %-22s %-22s" % ("lost", "pause s min/med/max", "write MB/s", "resync MB/s", "rejoin to good s"))
print("%-10s %-22s %-22s %-22s %-22s" % ("(none)", "-", mmm("ref", "write_MB_s"), "-", "-"))
for k in ("secondary", "primary"):
    pause = [float(r["pause_ms"]) / 1000 for r in rows if r["kind"] == k]
    print("%-10s %-22s %-22s %-22s %-22s" % (k, "/".join("%.2f" % x for x in (min(pause), statistics.median(pause), max(pause))),
          mmm(k, "write_MB_s"), mmm(k, "resync_MB_s"), mmm(k, "rejoin_to_good_s", "%.2f")))
ref = statistics.median(float(r["write_MB_s"]) for r in rows if r["kind"] == "ref")
rs = [float(r["resync_MB_s"]) for r in rows if r["resync_MB_s"]]
print("resync rate / a client's mirrored write of the same size (medians): %.2f" % (statistics.median(rs) / ref))
PY
bench_log "($where; every run: $csv)"
