#!/usr/bin/env bash
# bw.sh: IOR-style MPI-IO bandwidth on stripefs and, in the same run, on a
# plain directory on the same disk through ROMIO's ufs driver (the same
# library, the same program, a plain path). Prints MiB/s of both and the
# ratio stripefs/local, writes bw.csv (every run), bw-summary.csv and
# bw.png (bandwidth by transfer size) in the output directory.
#
#   bash benchmarks/bw.sh [--quick] [--ranks N] [--sizes "64K 1M 16M"]
#        [--per-rank 128M] [--modes "fpp-indep shared-indep shared-coll"]
#        [--cold] [--reps 1] [--targets 4] [--server-ranks 3] [--out DIR] [--build DIR]
#
# Each case (layout, access, transfer size) runs on stripefs, then locally
# (--reps times, alternating; the summary takes the median of each side):
# N ranks each write --per-rank bytes (fsync included in the write time),
# read them back (from the page cache unless --cold) and verify every byte.
# See benchmarks/README.md for what is measured and how.
. "$(dirname "$0")/lib.sh"
bench_setup bw "$@"

sizes="64K 256K 1M 4M 16M"
per_rank=128M
modes="fpp-indep shared-indep shared-coll"
cold=0
reps=1
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
    --reps) reps=$2; shift 2 ;;
    --targets) targets=$2; shift 2 ;;
    --server-ranks) server_ranks=$2; shift 2 ;;
    -h|--help) sed -n '2,/^\. /p' "$0" | sed -e '/^\. /d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) bench_die "unknown option '$1' (see --help)" ;;
    esac
done
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
bench_write_config "$state" "$targets" "$server_ranks"
bench_start_service "$state" "$server_ranks"
"$SFS_BENCH_CTL" mkdir /bench >/dev/null || bench_die "stripefs-ctl mkdir /bench failed"
"$SFS_BENCH_CTL" net >"$BENCH_OUT/bw-net.txt" 2>&1 || true

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
        path=stripefs:/bench/io-$mode-$size
    else
        path=$localdir/io-$mode-$size
    fi
    bench_settle
    if out=$(bench_mpi "$BENCH_RANKS" "$io" -o "$path" -t "$size" -s "$per_rank" -l "bw-$rep" \
        "${flags[@]}" 2>&1); then
        echo "$out" | sed -n 's/^csv,//p' >>"$csv"
    else
        failed=$((failed + 1))
        echo "$out" | tail -n 5 >&2
        echo "$out" | sed -n 's/^csv,//p' >>"$csv"
        bench_log "FAILED: $api $mode $size"
    fi
    echo "$out" | grep -q MISMATCH && failed=$((failed + 1))
    echo "$out" | awk -F, -v a="$api" -v m="$mode" -v s="$size" \
        '/^csv,/ { printf "  %-8s %-12s %5s %-5s %9.1f MiB/s\n", a, m, s, $9, $11 }' >&2
}

bench_log "$BENCH_RANKS client ranks, $per_rank per rank, sizes: $sizes;" \
    "service: $server_ranks ranks, $targets targets"
for rep in $(seq "$reps"); do
    for mode in $modes; do
        for size in $sizes; do
            run_case stripefs "$mode" "$size" "$rep"
            run_case local "$mode" "$size" "$rep"
        done
    done
done
bench_stop_service

# summary: one line per (layout-access, op, size) with both sides (the
# median over the repetitions) and the ratio
awk -F, 'function median(k, a,   m, i, j, t, x) {
        m = cnt[k, a]; if (!m) return "";
        for (i = 1; i <= m; i++) x[i] = val[k, a, i];
        for (i = 2; i <= m; i++) {
            t = x[i]
            for (j = i - 1; j >= 1 && x[j] > t; j--) x[j + 1] = x[j]
            x[j + 1] = t
        }
        return m % 2 ? x[(m + 1) / 2] : (x[m / 2] + x[m / 2 + 1]) / 2 }
    NR > 1 { key = $3 "-" $4 "," $8 "," $6; val[key, $2, ++cnt[key, $2]] = $10 + 0;
             if (!(key in seen)) { seen[key] = 1; order[n++] = key } }
    END { for (i = 0; i < n; i++) { v[order[i], "stripefs"] = median(order[i], "stripefs");
                                    v[order[i], "local"] = median(order[i], "local") }
          print "mode,op,xfer_bytes,stripefs_MiB_s,local_MiB_s,ratio";
          for (i = 0; i < n; i++) { k = order[i]; s = v[k, "stripefs"]; l = v[k, "local"];
              printf "%s,%s,%s,%s\n", k, s == "" ? "-" : s, l == "" ? "-" : l,
                     (s == "" || l + 0 == 0) ? "-" : sprintf("%.2f", s / l) } }' "$csv" >"$summary"

echo
echo "bandwidth, stripefs vs local ($BENCH_RANKS ranks x $per_rank, median of $reps; $(bench_machine))"
awk -F, 'NR == 1 { print "mode,op,xfer,stripefs MiB/s,local MiB/s,stripefs/local"; next }
    { x = $3; u = "B"; if (x >= 1048576) { x /= 1048576; u = "M" } else if (x >= 1024) { x /= 1024; u = "K" }
      printf "%s,%s,%d%s,%s,%s,%s\n", $1, $2, x, u, $4, $5, $6 }' "$summary" | bench_table
echo
{
echo "bandwidth goals (geometric mean of the ratios over the transfer sizes):"
for goal in "fpp-indep write 0.85" "shared-coll write 0.85" "shared-indep write -" \
    "fpp-indep read -" "shared-coll read -" "shared-indep read -"; do
    set -- $goal
    awk -F, -v m="$1" -v o="$2" -v g="$3" '$1 == m && $2 == o && $6 != "-" { s += log($6); n++ }
        END { if (!n) exit; r = exp(s / n);
              printf "  %-12s %-5s stripefs/local = %.2f", m, o, r;
              if (g != "-") printf "   (goal >= %s: %s)", g, (r >= g ? "met" : "NOT met");
              printf "\n" }' "$summary"
done
} | tee "$BENCH_OUT/bw-goals.txt"
bash "$BENCH_SRC/benchmarks/plot.sh" bw "$summary" "$BENCH_OUT/bw.png" ||
    bench_log "plotting failed (is gnuplot installed?)"
echo "results: $csv, $summary, $BENCH_OUT/bw.png"
[ "$failed" = 0 ] || bench_die "$failed runs failed or did not verify"
