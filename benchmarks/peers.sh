#!/usr/bin/env bash
# peers.sh: stripefs against real peer file systems on this host, in the same
# run, with the same POSIX workloads: GlusterFS (a distributed volume with
# sharding and a replica-2 volume, FUSE) and CephFS (ceph-fuse; a size-1 data
# pool and a size-2 one), stripefs through the POSIX preload (its own one-host
# service; stripefs-mirror: the same with mirror groups 101+102 and 103+104,
# every file mirrored, beside the replica-2 peers) and the local disk.
# Writes peers.csv (every run), peers-summary.csv (min/median/max per side
# and metric) and peers.png (fio bandwidth by transfer size, every side),
# and prints the table.
#
#   bash benchmarks/peers.sh [--quick] [--reps 3] [--items 1000] [--fio-size 256M]
#        [--bs "64K 1M 16M"] [--systems "local stripefs stripefs-mirror gluster ceph"]
#        [--ranks 4] [--server-ranks 3] [--out DIR] [--build DIR] [--tmp DIR] [--keep]
#
# Workloads on every side, each in a fresh directory per rep:
#   md    mdtest-easy-like: benchmarks/sfs_bench_md -s easy (a directory
#         per rank), --items files and directories per rank, --ranks ranks;
#         file create/stat/open-close/remove, directory create/stat/remove
#   fio   IOR-easy-like: fio file per process, --ranks jobs of --fio-size each,
#         sequential writes of each --bs transfer size (a new set of files per
#         size) with end_fsync=1 (the fsync is inside the
#         timed run), then a read of the same files right after (caches are
#         whatever each system keeps: not a cold read); the byte counts that
#         fio reports are checked against jobs x size (data is not verified)
# Systems run one at a time with the others down: each rep brings each peer
# up (benchmarks/peers/{gluster,ceph}.sh, which install Debian's packages),
# runs its sides, and tears it down; the stripefs service also runs only
# during its turn. The order of the systems rotates from rep to rep.
# --quick: --items 200, --fio-size 64M, --bs 1M (still 3 reps).
. "$(dirname "$0")/lib.sh"
bench_setup peers "$@"

reps=3
items=1000
fio_size=256M
fio_bs="64K 1M 16M"
systems="local stripefs stripefs-mirror gluster ceph"
server_ranks=3
if [ "$BENCH_QUICK" = 1 ]; then
    items=200
    fio_size=64M
    fio_bs=1M
fi
set -- ${BENCH_ARGS[@]+"${BENCH_ARGS[@]}"}
while [ $# -gt 0 ]; do
    case $1 in
    --reps) reps=$2; shift 2 ;;
    --items) items=$2; shift 2 ;;
    --fio-size) fio_size=$2; shift 2 ;;
    --bs) fio_bs=$2; shift 2 ;;
    --systems) systems=$2; shift 2 ;;
    --server-ranks) server_ranks=$2; shift 2 ;;
    -h|--help) sed -n '2,/^\. /p' "$0" | sed -e '/^\. /d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) bench_die "unknown option '$1' (see --help)" ;;
    esac
done
PEER_NAME=peers
. "$BENCH_SRC/benchmarks/peers/common.sh"
peer_install fio jq

peersdir=$BENCH_SRC/benchmarks/peers
md=$BENCH_BUILD/benchmarks/sfs_bench_md
preload=$BENCH_BUILD/.libs/libstripefs-posix.so
[ -x "$md" ] || bench_die "$md is missing (make -C $BENCH_BUILD bench)"
[ -f "$preload" ] || bench_die "$preload is missing (build stripefs first)"
csv=$BENCH_OUT/peers.csv
summary=$BENCH_OUT/peers-summary.csv
echo "rep,system,side,workload,metric,value,errors" >"$csv"
fio_bytes=$(numfmt --from=iec "$fio_size") || bench_die "bad --fio-size '$fio_size'"

# What is up now, so that the exit trap takes it down (also on Ctrl-C).
PEER_UP=""
PEER_DIR=""
peer_down() {
    [ -n "$PEER_UP" ] || return 0
    bash "$peersdir/$PEER_UP.sh" down "$PEER_DIR" || bench_log "$PEER_UP.sh down failed"
    PEER_UP=""
}
trap 'rc=$?; peer_down; bench_cleanup; exit $rc' EXIT

failed=0
record() { # REP SYSTEM SIDE WORKLOAD METRIC VALUE ERRORS
    local IFS=,
    echo "$*" >>"$csv"
}

# run_side REP SYSTEM SIDE DIR [ENV...]: both workloads in DIR (made fresh);
# ENV (VAR=value) goes to the programs (the preload for stripefs).
run_side() {
    local rep=$1 system=$2 side=$3 dir=$4 out rw bytes bw
    shift 4
    local env=("$@") xenv=() e
    for e in ${env[@]+"${env[@]}"}; do xenv+=(-x "$e"); done
    bench_settle
    bench_log "rep $rep: $side: md ($BENCH_RANKS ranks x $items)"
    if ! out=$("${BENCH_MPIRUN[@]}" -np "$BENCH_RANKS" ${xenv[@]+"${xenv[@]}"} \
        "$md" -s easy -d "$dir/md" -n "$items" -l "peers-$rep" -B "$side" </dev/null 2>&1); then
        failed=$((failed + 1))
        echo "$out" | tail -n 5 >&2
        bench_log "FAILED: $side md"
    fi
    # csv,label,system,shape,ranks,items,bytes,phase,seconds,ops_s,errors,verify_errors,...
    while IFS=, read -r _ _ _ _ _ _ _ phase _ ops errs verrs _; do
        errs=$((${errs:-0} + ${verrs:-0}))
        record "$rep" "$system" "$side" md "$phase" "$ops" "$errs"
        printf '  %-16s %-16s %10.0f ops/s\n' "$side" "$phase" "$ops" >&2
        [ "${errs:-0}" = 0 ] || failed=$((failed + 1))
    done < <(echo "$out" | grep '^csv,')
    for bs in $fio_bs; do
    for rw in write read; do
        bench_settle
        if ! out=$(env ${env[@]+"${env[@]}"} fio --name="easy-$bs" --directory="$dir/fio" \
            --rw="$rw" --bs="$bs" --size="$fio_size" --numjobs="$BENCH_RANKS" --ioengine=psync \
            --end_fsync=1 --fallocate=none --invalidate=0 --group_reporting \
            --output-format=json </dev/null 2>"$BENCH_TMP/fio.err"); then
            failed=$((failed + 1))
            tail -n 5 "$BENCH_TMP/fio.err" >&2
            bench_log "FAILED: $side fio $rw $bs"
            record "$rep" "$system" "$side" fio "${rw}_MiB_s@$bs" 0 1
            continue
        fi
        bytes=$(echo "$out" | jq ".jobs[0].$rw.io_bytes")
        bw=$(echo "$out" | jq ".jobs[0].$rw.bw_bytes / 1048576")
        e=0
        if [ "$bytes" != $((fio_bytes * BENCH_RANKS)) ]; then
            bench_log "FAILED: $side fio $rw $bs moved $bytes bytes, not $((fio_bytes * BENCH_RANKS))"
            e=1
            failed=$((failed + 1))
        fi
        record "$rep" "$system" "$side" fio "${rw}_MiB_s@$bs" "$bw" "$e"
        printf '  %-16s fio %-5s %-5s %10.1f MiB/s\n' "$side" "$rw" "$bs" "$bw" >&2
    done
    done
}

run_system() { # REP SYSTEM
    local rep=$1 system=$2 name mnt state out
    case $system in
    local)
        mkdir -p "$BENCH_TMP/local/r$rep/fio" || bench_die "cannot create the local dir"
        run_side "$rep" local local "$BENCH_TMP/local/r$rep"
        rm -rf "$BENCH_TMP/local/r$rep"
        ;;
    stripefs|stripefs-mirror)
        state=$BENCH_TMP/state-$rep
        bench_write_config "$state" 4 "$server_ranks"
        [ "$system" = stripefs-mirror ] && bench_mirror_config "$state"
        bench_start_service "$state" "$server_ranks"
        bench_ctl mkdir "/peers-$rep" >/dev/null || bench_die "stripefs-ctl mkdir /peers-$rep failed"
        if [ "$system" = stripefs-mirror ]; then
            bench_ctl setpattern --mirror --numtargets 2 "/peers-$rep" >/dev/null ||
                bench_die "stripefs-ctl setpattern --mirror /peers-$rep failed"
        fi
        bench_ctl mkdir "/peers-$rep/fio" >/dev/null || bench_die "stripefs-ctl mkdir /peers-$rep/fio failed"
        run_side "$rep" "$system" "$system" "/stripefs/peers-$rep" \
            "LD_PRELOAD=$preload" "STRIPEFS_CONFIG=$STRIPEFS_CONFIG"
        bench_stop_service
        rm -rf "$state"
        ;;
    gluster|ceph)
        PEER_DIR=$BENCH_TMP/$system-$rep
        bench_log "rep $rep: bringing $system up"
        PEER_UP=$system
        out=$(bash "$peersdir/$system.sh" up "$PEER_DIR") || {
            PEER_UP=""
            failed=$((failed + 1))
            bench_log "FAILED: $system did not come up (skipped in rep $rep)"
            return 0
        }
        while read -r name mnt; do
            mkdir -p "$mnt/peers-$rep/fio" || bench_die "cannot create $mnt/peers-$rep"
            run_side "$rep" "$system" "$system-$name" "$mnt/peers-$rep"
        done <<<"$out"
        peer_down
        ;;
    *) bench_die "unknown system '$system' (local, stripefs, stripefs-mirror, gluster, ceph)" ;;
    esac
}

bench_log "machine: $(bench_machine)"
bench_log "systems: $systems; $reps reps; md $BENCH_RANKS ranks x $items; fio $BENCH_RANKS x $fio_size"
read -r -a sys <<<"$systems"
for rep in $(seq "$reps"); do
    n=${#sys[@]}
    for k in $(seq 0 $((n - 1))); do
        run_system "$rep" "${sys[$(((k + rep - 1) % n))]}"
    done
done

# summary: min/median/max over the reps of each side and metric
awk -F, 'NR > 1 && $7 == 0 { k = $3 SUBSEP $4 SUBSEP $5; v[k, ++c[k]] = $6 + 0;
        if (!(k in seen)) { seen[k] = 1; o[n++] = k } }
    END { print "side,workload,metric,reps,min,median,max";
          for (i = 0; i < n; i++) { k = o[i]; m = c[k];
              for (a = 1; a <= m; a++) x[a] = v[k, a];
              for (a = 2; a <= m; a++) { t = x[a]; for (b = a - 1; b >= 1 && x[b] > t; b--) x[b + 1] = x[b]; x[b + 1] = t }
              med = m % 2 ? x[(m + 1) / 2] : (x[m / 2] + x[m / 2 + 1]) / 2;
              split(k, p, SUBSEP);
              printf "%s,%s,%s,%d,%.1f,%.1f,%.1f\n", p[1], p[2], p[3], m, x[1], med, x[m] } }' \
    "$csv" >"$summary"

echo
echo "peers, POSIX ($BENCH_RANKS ranks; md $items items/rank, fio $BENCH_RANKS x $fio_size;" \
    "median [min-max] of $reps reps; $(bench_machine))"
awk -F, -v bs="$fio_bs" 'NR > 1 { s = $1; if (!(s in seen)) { seen[s] = 1; o[n++] = s }
        cell[s, $3] = sprintf("%.0f [%.0f-%.0f]", $6, $5, $7) }
    END { nb = split(bs, b, " ")
          printf "side,create/s,stat/s,remove/s,dir create/s"
          for (j = 1; j <= nb; j++) printf ",fio write %s MiB/s,fio read %s MiB/s", b[j], b[j]
          print ""
          for (i = 0; i < n; i++) { s = o[i];
              printf "%s,%s,%s,%s,%s", s, cell[s, "file_create"], cell[s, "file_stat"],
                  cell[s, "file_remove"], cell[s, "dir_create"]
              for (j = 1; j <= nb; j++) printf ",%s,%s", cell[s, "write_MiB_s@" b[j]], cell[s, "read_MiB_s@" b[j]]
              print "" } }' "$summary" | sed 's/,,/,-,/g; s/,,/,-,/g; s/,$/,-/' | bench_table -o ' | '
bash "$BENCH_SRC/benchmarks/plot.sh" peers "$summary" "$BENCH_OUT/peers.png" ||
    bench_log "plotting failed (is gnuplot installed?)"
echo "results: $csv, $summary, $BENCH_OUT/peers.png"
[ "$failed" = 0 ] || bench_die "$failed runs failed"
