#!/usr/bin/env bash
# scaling.sh: the bandwidth run with 1, 2 and 4 storage targets, each
# target's disk capped by the server's `bandwidth:` option (default 50M),
# so that what scales is striping, not the one disk under all targets.
# Efficiency = aggregate / (targets x cap); speedup = aggregate / aggregate
# with one target. Writes scaling.csv, scaling-summary.csv, scaling.png.
#
#   bash benchmarks/scaling.sh [--quick] [--targets "1 2 4"] [--cap 50M]
#        [--xfer 4M] [--per-rank-per-target 64M] [--modes "fpp-indep shared-coll"]
#        [--fsync] [--throttle emulated|blkio] [--reps 3] [--ranks N] [--out DIR] [--build DIR]
#
# For each target count T a new service starts: rank 0 management and
# metadata, one storage rank per target (as on the cluster: one target per
# host), files striped over all T targets (512 KiB chunks). Every rank moves
# T x --per-rank-per-target bytes, so every run lasts about as long. Each
# (T, layout) runs --reps times (at least 3; a new file each rep, removed
# after it, and the next rep waits for its chunk deletions): the summary has
# the median and the min-max of the reps; the speedup is of the medians, and
# the goal is "met" only when the worst rep at 4 targets against the best
# at one reaches it.
#
# The write time does NOT include an fsync unless --fsync is given: the cap
# emulates each target's disk when the data is written, but the data then
# still goes to the one real disk under all targets, and a final fsync
# would time that shared disk (which is what this benchmark must not
# measure; bw.sh times writes with fsync). With --fsync it is included.
#
# --throttle blkio: instead of the server's in-process cap (an emulation),
# a real block-layer cap: every target on an ext4 of its own on a loop
# device, and the service's ranks in a cgroup whose blkio.throttle limits
# each loop device's reads and writes to the cap (cgroup v1 blkio: this
# kernel has no cgroup v2 io controller). Page-cache hits are not block
# I/O, so this mode includes the fsync in the writes and drops the page
# cache before the reads (sfs_bench_io -e -C), and the clients read through
# the servers (STRIPEFS_LOCAL_READ=0: a client's own pread of a handed-over
# chunk file would be outside the cgroup): both phases reach the devices.
# Needs root. Labelled "blkio" in the CSV, "emulated" otherwise.
. "$(dirname "$0")/lib.sh"
bench_setup scaling "$@"

target_counts="1 2 4"
cap=50M
xfer=4M
per_target=64M
modes="fpp-indep shared-coll"
reps=3
fsync=()
throttle=emulated
[ "$BENCH_QUICK" = 1 ] && per_target=32M
set -- ${BENCH_ARGS[@]+"${BENCH_ARGS[@]}"}
while [ $# -gt 0 ]; do
    case $1 in
    --targets) target_counts=$2; shift 2 ;;
    --cap) cap=$2; shift 2 ;;
    --xfer) xfer=$2; shift 2 ;;
    --per-rank-per-target) per_target=$2; shift 2 ;;
    --modes) modes=$2; shift 2 ;;
    --fsync) fsync=(-e); shift ;;
    --throttle) throttle=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    -h|--help) sed -n '2,/^\. /p' "$0" | sed -e '/^\. /d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) bench_die "unknown option '$1' (see --help)" ;;
    esac
done
[ "$reps" -ge 3 ] 2>/dev/null || bench_die "--reps must be at least 3 (min/median/max of 3 or more), not '$reps'"
to_mib() { # 100M, 1G, 512K -> MiB
    awk -v s="$1" 'BEGIN { n = s + 0; u = toupper(substr(s, length(n "") + 1, 1));
        if (u == "G") n *= 1024; else if (u == "K") n /= 1024; else if (u != "M") n /= 1048576;
        print n }'
}
cap_mib=$(to_mib "$cap")
case $throttle in
emulated) ;;
blkio)
    [ "$(id -u)" = 0 ] || bench_die "--throttle blkio needs root (loop devices, cgroups)"
    blkio_root=/sys/fs/cgroup/blkio
    [ -f "$blkio_root/blkio.throttle.write_bps_device" ] ||
        bench_die "--throttle blkio: no cgroup v1 blkio throttling here ($blkio_root)"
    fsync=(-e -C)
    # a client on this host would read the chunk files itself (short-circuit
    # reads), outside the cgroup: reads go through the capped server instead
    export STRIPEFS_LOCAL_READ=0
    ;;
*) bench_die "--throttle must be emulated or blkio, not '$throttle'" ;;
esac
cap_bytes=$(awk -v m="$cap_mib" 'BEGIN { printf "%d", m * 1048576 }')
loops=()
mounts=()
cgroup=""
throttle_cleanup() {
    local m l
    [ -n "$cgroup" ] && [ -d "$cgroup" ] && { rmdir "$cgroup" 2>/dev/null || true; }
    for m in ${mounts[@]+"${mounts[@]}"}; do umount "$m" 2>/dev/null; done
    for l in ${loops[@]+"${loops[@]}"}; do losetup -d "$l" 2>/dev/null; done
    mounts=() loops=() cgroup=""
}
trap 'bench_stop_service; throttle_cleanup; bench_cleanup' EXIT
# blkio_targets STATE T: each target's directory an ext4 on a loop device of
# its own, and a cgroup capping each device; sets cgroup
blkio_targets() {
    local state=$1 t=$2 id img loop dev
    cgroup=$blkio_root/sfs-bench-scaling-$$
    mkdir -p "$cgroup" || bench_die "cannot make the cgroup $cgroup"
    for i in $(seq "$t"); do
        id=$((100 + i))
        img=$state/disk-$id.img
        truncate -s $(( (BENCH_RANKS * per_target_mib * 2 + 64) * 3 / 2 ))M "$img" &&
            mkfs.ext4 -q -F "$img" >/dev/null 2>&1 || bench_die "cannot make an ext4 image for target $id"
        loop=$(losetup -f --show "$img") || bench_die "losetup $img failed"
        loops+=("$loop")
        mount "$loop" "$state/targets/$id" || bench_die "mount $loop on $state/targets/$id failed"
        mounts+=("$state/targets/$id")
        dev=$(lsblk -dno MAJ:MIN "$loop" | tr -d ' ')
        echo "$dev $cap_bytes" >"$cgroup/blkio.throttle.write_bps_device" &&
            echo "$dev $cap_bytes" >"$cgroup/blkio.throttle.read_bps_device" ||
            bench_die "cannot cap $loop ($dev) in $cgroup"
    done
}
per_target_mib=$(to_mib "$per_target")

csv=$BENCH_OUT/scaling.csv
summary=$BENCH_OUT/scaling-summary.csv
io=$BENCH_BUILD/benchmarks/sfs_bench_io
header="targets,label,api,layout,access,ranks,xfer_bytes,bytes_per_rank,op,seconds,MiB_s"
# (the label column says which cap: scaling-emulated or scaling-blkio)
echo "$header,open_s,xfer_s,sync_s,close_s,verified" >"$csv"
bench_log "machine: $(bench_machine)"
fsync_text="not included"
[ ${#fsync[@]} -gt 0 ] && fsync_text=included
bench_log "$BENCH_RANKS client ranks, transfers of $xfer, targets capped at $cap/s each" \
    "($throttle), fsync in the write time: $fsync_text"
failed=0
for t in $target_counts; do
    state=$BENCH_TMP/state-$t
    if [ "$throttle" = blkio ]; then
        bench_write_config "$state" "$t" $((t + 1)) "" "$t"
        blkio_targets "$state" "$t"
        # the service's ranks start inside the cgroup (this shell goes back)
        echo $$ >"$cgroup/cgroup.procs" || bench_die "cannot enter $cgroup"
        bench_start_service "$state" $((t + 1))
        echo $$ >"$blkio_root/cgroup.procs" || bench_die "cannot leave $cgroup"
    else
        bench_write_config "$state" "$t" $((t + 1)) "$cap" "$t"
        bench_start_service "$state" $((t + 1))
    fi
    bench_ctl mkdir /bench >/dev/null || bench_die "stripefs-ctl mkdir /bench failed"
    per_rank=$((per_target_mib * t))M
    for rep in $(seq "$reps"); do
    for mode in $modes; do
        case $mode in
        fpp-indep) flags=(-F) ;;
        shared-indep) flags=() ;;
        shared-coll) flags=(-c) ;;
        *) bench_die "unknown mode $mode" ;;
        esac
        bench_settle
        bench_wait_deletions
        if ! out=$(bench_mpi "$BENCH_RANKS" "$io" -o "stripefs:/bench/scale-$mode-$rep" -t "$xfer" \
            -s "$per_rank" ${fsync[@]+"${fsync[@]}"} -l "scaling-$throttle-r$rep" ${flags[@]+"${flags[@]}"} 2>&1); then
            failed=$((failed + 1))
            echo "$out" | tail -n 5 >&2
        fi
        echo "$out" | grep -q MISMATCH && failed=$((failed + 1))
        echo "$out" | sed -n "s/^csv,/$t,/p" >>"$csv"
        echo "$out" | awk -F, -v t="$t" -v m="$mode" -v r="$rep" \
            '/^csv,/ { printf "  %d target(s) %-12s %-5s rep %d %8.1f MiB/s\n", t, m, $9, r, $11 }' >&2
        bench_rm_io_files "/bench/scale-$mode-$rep" "$mode"
    done
    done
    bench_wait_deletions
    bench_stop_service
    [ "$throttle" = blkio ] && throttle_cleanup
done

awk -F, -v cap="$cap_mib" '
    function sorted(k, t,    m, a, b, x) { m = c[k, t]; for (a = 1; a <= m; a++) x[a] = v[k, t, a]
        for (a = 2; a <= m; a++) { tv = x[a]; for (b = a - 1; b >= 1 && x[b] > tv; b--) x[b + 1] = x[b]; x[b + 1] = tv }
        lo = x[1]; hi = x[m]; return m % 2 ? x[(m + 1) / 2] : (x[m / 2] + x[m / 2 + 1]) / 2 }
    NR > 1 { key = $4 "-" $5 "," $9; v[key, $1, ++c[key, $1]] = $11
        if (!(key in seen)) { seen[key] = 1; order[n++] = key } ts[$1] = 1 }
    END { print "layout,op,targets,cap_MiB_s,MiB_s,ideal_MiB_s,efficiency,speedup,reps,min_MiB_s,max_MiB_s,worst_speedup";
          for (i = 0; i < n; i++) { k = order[i]; split(k, ko, ",");
              b1 = ((k, 1) in c) ? sorted(k, 1) : 0; b1hi = hi
              for (t in ts) if ((k, t) in c) { med = sorted(k, t)
                  printf "%s,%s,%d,%s,%.1f,%.1f,%.2f,%s,%d,%.1f,%.1f,%s\n", ko[1], ko[2], t, cap, med,
                         t * cap, med / (t * cap), b1 ? sprintf("%.2f", med / b1) : "-", c[k, t], lo, hi,
                         b1hi ? sprintf("%.2f", lo / b1hi) : "-" } } }' \
    "$csv" | { read -r header; echo "$header"; sort -t, -k1,1 -k2,2r -k3,3n; } >"$summary"

echo
echo "scaling with capped targets ($cap/s each, cap: $throttle, $BENCH_RANKS ranks, $xfer transfers," \
    "fsync $fsync_text; $(bench_machine))"
awk -F, 'NR == 1 { print "layout,op,targets,MiB/s median [min-max],ideal,efficiency,speedup vs 1"; next }
    { printf "%s,%s,%s,%s [%s-%s],%s,%s,%s\n", $1, $2, $3, $5, $10, $11, $6, $7, $8 }' "$summary" | bench_table
echo
{
echo "scaling goal: 4 capped targets >= 3.6 x one capped target (cap $cap/s, $throttle; medians of $reps reps, worst pairing in brackets)"
awk -F, 'NR > 1 && $3 == 4 { printf "  %-12s %-5s %sx [worst %sx], efficiency %s  (%s)\n", $1, $2, $8, $12, $7,
                                (($12 != "-" && $12 >= 3.6) ? "met" : ($8 != "-" && $8 >= 3.6) ? "within the reps spread" : "NOT met") }' "$summary"
} | tee "$BENCH_OUT/scaling-goals.txt"
bash "$BENCH_SRC/benchmarks/plot.sh" scaling "$summary" "$BENCH_OUT/scaling.png" ||
    bench_log "plotting failed (is gnuplot installed?)"
echo "results: $csv, $summary, $BENCH_OUT/scaling.png"
[ "$failed" = 0 ] || bench_die "$failed runs failed or did not verify"
