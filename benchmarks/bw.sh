#!/usr/bin/env bash
# bw.sh: IOR-style MPI-IO bandwidth on stripefs and, in the same run, on a
# plain directory on the same disk through ROMIO's ufs driver (the same
# library, the same program, a plain path). Prints MiB/s of both and the
# ratio stripefs/local, writes bw.csv (every run), bw-summary.csv and
# bw.png (bandwidth by transfer size) in the output directory.
#
#   bash benchmarks/bw.sh [--quick|--full] [--ranks N] [--sizes "64K 1M 16M"]
#        [--per-rank 128M] [--modes "fpp-indep shared-indep shared-coll"]
#        [--cold] [--reps 3] [--targets 4] [--server-ranks 3] [--cluster] [--out DIR] [--build DIR]
#
# --cluster: the stripefs side across the four namespace hosts of
# ci/cluster.sh (benchmarks/lib_cluster.sh: servers on imaging-01..03, one
# rank each, the client ranks on imaging-04, UCX over TCP); the local side
# as without it. Needs root.
#
# Each case (layout, access, transfer size) runs on both sides --reps times
# (at least 3), the sides alternating: odd reps stripefs first, even reps
# local first. N ranks each write --per-rank bytes to a new file of that rep
# (fsync included in the write time), read them back (from the page cache
# unless --cold), check every call's byte count and verify every byte
# outside the timed part (sfs_bench_io); the file is removed, and the next
# run waits for the page cache's writeback and stripefs's background chunk
# deletions. --full: 1 GiB per rank (4 GiB a case with 4 ranks, well past
# the page cache share of any target here). The disk's direct-I/O ceiling
# (fio) and one core's memcpy are printed in the same run. The summary has
# min/median/max per side and the ratio of the medians; a goal is "met" only
# when even the worst stripefs rep against the best local one reaches it.
# See benchmarks/README.md for what is measured and how.
. "$(dirname "$0")/lib.sh"
bench_setup bw "$@"

sizes="64K 256K 1M 4M 16M"
per_rank=128M
modes="fpp-indep shared-indep shared-coll"
cold=0
reps=3
targets=4
server_ranks=3
if [ "$BENCH_QUICK" = 1 ]; then
    sizes="64K 1M 16M"
    per_rank=32M
fi
set -- ${BENCH_ARGS[@]+"${BENCH_ARGS[@]}"}
while [ $# -gt 0 ]; do
    case $1 in
    --sizes) sizes=$2; shift 2 ;;
    --per-rank) per_rank=$2; shift 2 ;;
    --modes) modes=$2; shift 2 ;;
    --cold) cold=1; shift ;;
    --full) per_rank=1G; shift ;;
    --reps) reps=$2; shift 2 ;;
    --targets) targets=$2; shift 2 ;;
    --server-ranks) server_ranks=$2; shift 2 ;;
    -h|--help) sed -n '2,/^\. /p' "$0" | sed -e '/^\. /d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) bench_die "unknown option '$1' (see --help)" ;;
    esac
done
[ "$reps" -ge 3 ] || bench_die "--reps must be at least 3 (min/median/max of 3 or more)"
if [ "$cold" = 1 ] && [ "$(id -u)" != 0 ]; then
    bench_die "--cold drops the page cache and needs root"
fi

csv=$BENCH_OUT/bw.csv
summary=$BENCH_OUT/bw-summary.csv
io=$BENCH_BUILD/benchmarks/sfs_bench_io
state=$BENCH_TMP/state
localdir=$BENCH_TMP/local
mkdir -p "$localdir"

bench_log "machine: $(bench_machine)"
bench_ceilings "$BENCH_OUT/bw-ceilings.csv" 5
bench_write_config "$state" "$targets" "$server_ranks"
bench_start_service "$state" "$server_ranks"
bench_ctl mkdir /bench >/dev/null || bench_die "stripefs-ctl mkdir /bench failed"
bench_ctl net >"$BENCH_OUT/bw-net.txt" 2>&1 || true

header="label,api,layout,access,ranks,xfer_bytes,bytes_per_rank,op,seconds,MiB_s"
echo "$header,open_s,xfer_s,sync_s,close_s,verified" >"$csv"
failed=0
run_case() { # API MODE SIZE REP
    local api=$1 mode=$2 size=$3 rep=$4 path flags=(-e) out
    case $mode in
    fpp-indep) flags+=(-F) ;;
    shared-indep) ;;
    shared-coll) flags+=(-c) ;;
    *) bench_die "unknown mode $mode" ;;
    esac
    [ "$cold" = 1 ] && flags+=(-C)
    if [ "$api" = stripefs ]; then
        path=stripefs:/bench/io-$mode-$size-$rep
    else
        path=$localdir/io-$mode-$size-$rep
    fi
    # the last run's writeback and background chunk deletions are over
    bench_settle
    bench_wait_deletions
    if out=$(bench_mpi "$BENCH_RANKS" "$io" -o "$path" -t "$size" -s "$per_rank" -l "bw-$rep" \
        "${flags[@]}" 2>&1); then
        echo "$out" | sed -n 's/^csv,//p' >>"$csv"
    else
        failed=$((failed + 1))
        echo "$out" | tail -n 5 >&2
        echo "$out" | sed -n 's/^csv,//p' >>"$csv"
        bench_log "FAILED: $api $mode $size"
    fi
    echo "$out" | grep -q "MISMATCH\|SHORT" && failed=$((failed + 1))
    echo "$out" | awk -F, -v a="$api" -v m="$mode" -v s="$size" \
        '/^csv,/ { printf "  %-8s %-12s %5s %-5s %9.1f MiB/s\n", a, m, s, $9, $11 }' >&2
    # remove it (outside the timed part): the next run waits for the deletion
    if [ "$api" = stripefs ]; then
        bench_rm_io_files "/bench/io-$mode-$size-$rep" "$mode"
    else
        rm -f "$path" "$path".*
    fi
}

bench_log "$BENCH_RANKS client ranks, $per_rank per rank, sizes: $sizes;" \
    "service: $server_ranks ranks, $targets targets ($(bench_where))"
for rep in $(seq "$reps"); do
    for mode in $modes; do
        for size in $sizes; do
            if [ $((rep % 2)) = 1 ]; then
                run_case stripefs "$mode" "$size" "$rep"
                run_case local "$mode" "$size" "$rep"
            else
                run_case local "$mode" "$size" "$rep"
                run_case stripefs "$mode" "$size" "$rep"
            fi
        done
    done
done
bench_stop_service

# summary: medians, min and max per side, ratio of the medians; goal lines
python3 "$BENCH_SRC/benchmarks/bw_summary.py" "$csv" "$summary" "$BENCH_OUT/bw-goals.txt" ||
    bench_die "bw_summary.py failed"

echo
echo "bandwidth, stripefs vs local ($BENCH_RANKS ranks x $per_rank, median [min-max] of $reps reps, sides alternating; stripefs $(bench_where); $(bench_machine))"
awk -F, 'NR == 1 { print "mode,op,xfer,stripefs MiB/s,local MiB/s,stripefs/local"; next }
    { x = $3; u = "B"; if (x >= 1048576) { x /= 1048576; u = "M" } else if (x >= 1024) { x /= 1024; u = "K" }
      printf "%s,%s,%d%s,%s [%s-%s],%s [%s-%s],%s\n", $1, $2, x, u, $4, $7, $8, $5, $9, $10, $6 }' "$summary" | bench_table
echo
echo "ceilings: $(awk -F, 'NR > 1 { printf "%s %s MiB/s; ", $1, $2 }' "$BENCH_OUT/bw-ceilings.csv")"
cat "$BENCH_OUT/bw-goals.txt"
bash "$BENCH_SRC/benchmarks/plot.sh" bw "$summary" "$BENCH_OUT/bw.png" ||
    bench_log "plotting failed (is gnuplot installed?)"
echo "results: $csv, $summary, $BENCH_OUT/bw.png"
[ "$failed" = 0 ] || bench_die "$failed runs failed or did not verify"
