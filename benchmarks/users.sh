#!/usr/bin/env bash
# users.sh: the same MPI-IO job as root and as an unprivileged user (nobody)
# against one service run by root on this host. Root's client reaches the
# servers over UCX shared memory; the user's client cannot attach the
# servers' shared-memory segments (they are root's: POSIX 0600, SysV 0660) and reaches
# them over loopback TCP, while large reads and writes still take the
# same-host shortcuts (the root server copies into and out of the user's
# memory, and hands it chunk files to read). Prints MiB/s of both and the
# ratio user/root, writes users.csv and users-summary.csv.
#
#   bash benchmarks/users.sh [--quick] [--ranks N] [--sizes "64K 1M 16M"] [--per-rank 128M]
#        [--reps 3] [--user nobody] [--out DIR] [--build DIR]
#
# Each rep runs both sides, in alternating order (root first in odd reps),
# file per process, fsync included in the write time (-e), reads from the
# page cache, every byte verified; the summary gives min/median/max.
. "$(dirname "$0")/lib.sh"
bench_setup users "$@"

sizes="64K 1M 16M"
per_rank=128M
reps=3
user=nobody
if [ "$BENCH_QUICK" = 1 ]; then
    sizes="1M"
    per_rank=32M
    reps=3
fi
set -- ${BENCH_ARGS[@]+"${BENCH_ARGS[@]}"}
while [ $# -gt 0 ]; do
    case $1 in
    --sizes) sizes=$2; shift 2 ;;
    --per-rank) per_rank=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --user) user=$2; shift 2 ;;
    -h|--help) sed -n '2,/^\. /p' "$0" | sed -e '/^\. /d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) bench_die "unknown option '$1' (see --help)" ;;
    esac
done
[ "$(id -u)" = 0 ] || bench_die "runs the service as root and the user's side with runuser: run it as root"
id "$user" >/dev/null 2>&1 || bench_die "no user '$user' on this host"
command -v runuser >/dev/null || bench_die "runuser is missing (Debian package util-linux)"

csv=$BENCH_OUT/users.csv
summary=$BENCH_OUT/users-summary.csv
io=$BENCH_BUILD/benchmarks/sfs_bench_io
state=$BENCH_TMP/state
preload=$BENCH_BUILD/.libs/libstripefs-posix.so

bench_log "machine: $(bench_machine)"
bench_write_config "$state" 4 3
bench_start_service "$state" 3
"$SFS_BENCH_CTL" mkdir /bench >/dev/null || bench_die "stripefs-ctl mkdir /bench failed"
# a directory both may write in (as /tmp)
STRIPEFS_PREFIX=/stripefs LD_PRELOAD=$preload chmod 1777 /stripefs/bench ||
    bench_die "chmod 1777 /stripefs/bench failed"

# how each side reaches the servers (a client of each, while the service runs)
{
    echo "--- root's client:"
    "$SFS_BENCH_CTL" net
    echo "--- $user's client:"
    (cd /tmp && runuser -u "$user" -- env STRIPEFS_CONFIG="$STRIPEFS_CONFIG" "$SFS_BENCH_CTL" net)
} >"$BENCH_OUT/users-net.txt" 2>&1 || true

echo "who,label,api,layout,access,ranks,xfer_bytes,bytes_per_rank,op,seconds,MiB_s" >"$csv"
failed=0
run_side() { # WHO SIZE REP
    local who=$1 size=$2 rep=$3 out cmd
    cmd=("${BENCH_MPIRUN[@]}" -np "$BENCH_RANKS" -x STRIPEFS_CONFIG "$BENCH_BUILD/tools/stripefs-run"
        "$io" -o "stripefs:/bench/$who-$size-$rep" -t "$size" -s "$per_rank" -l "users-$rep" -F -e)
    bench_settle
    if [ "$who" = root ]; then
        out=$("${cmd[@]}" 2>&1)
    else
        out=$(cd /tmp && runuser -u "$user" -- env STRIPEFS_CONFIG="$STRIPEFS_CONFIG" "${cmd[@]}" 2>&1)
    fi
    local rc=$?
    if [ $rc -ne 0 ] || echo "$out" | grep -q MISMATCH; then
        failed=$((failed + 1))
        echo "$out" | tail -n 5 >&2
        bench_log "FAILED: $who $size (exit $rc)"
    fi
    echo "$out" | sed -n "s/^csv,/$who,/p" | cut -d, -f1-11 >>"$csv"
    echo "$out" | awk -F, -v w="$who" -v s="$size" \
        '/^csv,/ { printf "  %-6s %5s %-5s %9.1f MiB/s\n", w, s, $9, $11 }' >&2
}

bench_log "$BENCH_RANKS client ranks, $per_rank per rank, file per process, sizes: $sizes, $reps reps"
for rep in $(seq "$reps"); do
    for size in $sizes; do
        if [ $((rep % 2)) = 1 ]; then
            run_side root "$size" "$rep"
            run_side "$user" "$size" "$rep"
        else
            run_side "$user" "$size" "$rep"
            run_side root "$size" "$rep"
        fi
    done
done
bench_stop_service

# min/median/max per (who, op, size) and the ratio of the medians
stats() { # WHO OP XFER -> "min,median,max" of MiB/s
    awk -F, -v w="$1" -v o="$2" -v x="$3" '$1 == w && $9 == o && $7 == x { print $11 }' "$csv" |
        sort -g | awk '{ v[++n] = $1 } END { if (!n) { print "-,-,-"; exit }
            printf "%.1f,%.1f,%.1f\n", v[1], n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2, v[n] }'
}
echo "op,xfer,root_min,root_median,root_max,user_min,user_median,user_max,user/root" >"$summary"
for size in $sizes; do
    bytes=$(awk -F, -v l="users-1" 'NR > 1 && $2 == l { print $7 }' "$csv" | sort -u | while read -r b; do
        [ "$(bench_human_size "$b")" = "$size" ] && echo "$b"; done | head -n 1)
    for op in write read; do
        r=$(stats root "$op" "$bytes")
        u=$(stats "$user" "$op" "$bytes")
        echo "$op,$size,$r,$u,$(bench_ratio "$(echo "$u" | cut -d, -f2)" "$(echo "$r" | cut -d, -f2)")"
    done
done >>"$summary"
echo
echo "MPI-IO as root and as $user (file per process, $BENCH_RANKS ranks x $per_rank, fsync in writes; MiB/s over $reps reps; $(bench_machine))"
bench_table "$summary"
echo "how each reached the servers: $BENCH_OUT/users-net.txt"
[ "$failed" = 0 ] || bench_die "$failed runs failed"
