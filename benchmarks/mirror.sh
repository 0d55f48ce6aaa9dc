#!/usr/bin/env bash
# mirror.sh: who should write the second copy of a mirrored file? The two
# directions of the trade-off (docs/mirroring.md, "The data path"), one
# client process (sfs_bench_mirror), the same blocks, fsync at the end:
#   forward  a mirrored file (setpattern --mirror, one group): the client
#            writes the primary, which writes its copy and then forwards
#            the write to the secondary, and answers when both hold it
#            (what stripefs does)
#   both     the client writes both copies itself: each block to two
#            unmirrored files at once (sfs_file_iwrite on both, then both
#            waited for), on one target of each member's host (storage
#            pools of one target each), as a client-writes-both mirror would
#   single   one unmirrored copy (the floor: what mirroring costs)
# Cases BLOCK:BYTES:DEPTH (DEPTH blocks in flight): by default 4M:256M:1
# and 4M:256M:4 for bandwidth (one write at a time, and four, as a
# pipelining writer or several ranks keep them), 4K:8M:1 (2048 writes) for
# the latency of one acknowledged small write. Timed: the writes and the fsyncs;
# untimed after each run: every file read back and every block checked, and
# at the end the mirrored files' two chunk files compared byte for byte.
# A new file for every run; the kinds alternate (single forward both,
# both forward single, ...); --reps runs each, min/median/max.
#
#   bash benchmarks/mirror.sh [--quick] [--cluster] [--reps 3]
#        [--cases "4M:256M:1 4M:256M:4 4K:8M:1"] [--link RATE] [--out DIR]
#
# One host (default): 3 ranks, group 101+102 (storage ranks 1 and 2,
# same_host: true), pools of 103 (rank 1) and 104 (rank 2); the same-host
# shortcuts are off (STRIPEFS_DIRECT_COPY=0 STRIPEFS_DIRECT_PULL=0
# STRIPEFS_LOCAL_READ=0), so every byte goes through UCX (shared memory).
# --cluster: servers on imaging-01..03 of ci/cluster.sh's namespace cluster,
# the client on imaging-04 (UCX over TCP on the bridge), group 101+201
# (imaging-01 and -02), pools of 102 (imaging-01) and 202 (imaging-02):
# both kinds put their two copies on the same two hosts. All "hosts" share
# this machine's disk and cores: the bridge has no wire limit, so the
# client's doubled sends (both) cost CPU here, not a link's bandwidth.
# --link RATE (with --cluster; tc's units, e.g. 1gbit) caps every host's
# link at RATE each way, as a NIC of that speed would: then the client's
# link carries both copies (both), or one (forward: the second copy leaves
# from the primary's link).
. "$(dirname "$0")/lib.sh"
bench_setup mirror "$@"

reps=3
cases="4M:256M:1 4M:256M:4 4K:8M:1"
link=""
if [ "$BENCH_QUICK" = 1 ]; then
    reps=2
    cases="1M:8M:1 1M:8M:4 4K:256K:1"
fi
set -- ${BENCH_ARGS[@]+"${BENCH_ARGS[@]}"}
while [ $# -gt 0 ]; do
    case $1 in
    --reps) reps=$2; shift 2 ;;
    --cases) cases=$2; shift 2 ;;
    --link) link=$2; shift 2 ;;
    -h|--help) sed -n '2,/^\. /p' "$0" | sed -e '/^\. /d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) bench_die "unknown option '$1' (see --help)" ;;
    esac
done
for c in $cases; do
    [[ $c =~ ^[0-9]+[KMG]?:[0-9]+[KMG]?:[0-9]+$ ]] || bench_die "--cases: '$c' is not BLOCK:BYTES:DEPTH (e.g. 4M:256M:1)"
done
if [ -n "$link" ]; then
    [ "$BENCH_CLUSTER" = 1 ] || bench_die "--link caps the namespace cluster's links: it needs --cluster"
    bench_cluster_cap_links "$link"
fi

state=$BENCH_TMP/state
prog=$BENCH_BUILD/benchmarks/sfs_bench_mirror
csv=$BENCH_OUT/mirror.csv
bench_log "machine: $(bench_machine)"
if [ "$BENCH_CLUSTER" = 1 ]; then
    bench_write_config "$state" 5 1 "" 1 # 101 201 301 102 202
    group="101 201" copies="102 202"
    run_client() { "$BENCH_CLUSTER_TOOL" exec "$BENCH_CLUSTER_CLIENT" env STRIPEFS_CONFIG="$STRIPEFS_CONFIG" "$@"; }
    where="across hosts: clients on $BENCH_CLUSTER_CLIENT, group 101 (imaging-01) + 201 (imaging-02), links ${link:-not capped}"
else
    bench_write_config "$state" 4 3 "" 1 # 101 102 103 104
    group="101 102" copies="103 104"
    run_client() { env STRIPEFS_DIRECT_COPY=0 STRIPEFS_DIRECT_PULL=0 STRIPEFS_LOCAL_READ=0 "$@"; }
    where="one host, same-host shortcuts off, group 101 (rank 1) + 102 (rank 2)"
fi
read -r g1 g2 <<<"$group"
read -r c1 c2 <<<"$copies"
{
    echo "mirror:"
    echo "  groups:"
    echo "    - {primary: $g1, secondary: $g2}"
    [ "$BENCH_CLUSTER" = 1 ] || echo "  same_host: true"
    echo "pools:"
    echo "  - {id: 2, name: copya, targets: [$c1]}"
    echo "  - {id: 3, name: copyb, targets: [$c2]}"
} >>"$state/stripefs.yaml"
bench_start_service "$state" 3
bench_log "$where"
for d in single forward copya copyb; do
    bench_ctl mkdir "/$d" >/dev/null || bench_die "stripefs-ctl mkdir /$d failed"
done
bench_ctl setpattern --numtargets 1 --mirror /forward >/dev/null || bench_die "setpattern --mirror /forward"
bench_ctl setpattern --pool copya /copya >/dev/null || bench_die "setpattern --pool copya"
bench_ctl setpattern --pool copyb /copyb >/dev/null || bench_die "setpattern --pool copyb"
bench_ctl setpattern --numtargets 1 /single >/dev/null || bench_die "setpattern /single"

echo "kind,block,bytes,depth,rep,seconds,MB_s,lat_us_median,lat_us_p99,lat_us_max" >"$csv"
one() { # KIND BLOCK BYTES DEPTH REP
    local kind=$1 block=$2 bytes=$3 depth=$4 rep=$5 name out
    local -a args=(-S "$bytes" -x "$block" -q "$depth")
    name=$kind-$block-$depth-$rep
    case $kind in
    single) out=$(run_client "$prog" one -f "/single/$name" "${args[@]}" 2>&1) ;;
    forward) out=$(run_client "$prog" one -f "/forward/$name" "${args[@]}" 2>&1) ;;
    both) out=$(run_client "$prog" both -f "/copya/$name" -g "/copyb/$name" "${args[@]}" 2>&1) ;;
    esac || bench_die "$kind $block depth $depth: $out"
    echo "$out" | awk -F, -v k="$kind" -v r="$rep" '$1 == "csv" { printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n",
        k, $3, $4, $5, r, $6, $7, $8, $9, $10; n++ } END { exit n != 1 }' >>"$csv" ||
        bench_die "$kind $block depth $depth: no result line: $out"
}
kinds=(single forward both)
for rep in $(seq "$reps"); do
    for c in $cases; do
        IFS=: read -r block bytes depth <<<"$c"
        order=(0 1 2)
        [ $((rep % 2)) = 0 ] && order=(2 1 0)
        for k in "${order[@]}"; do
            one "${kinds[$k]}" "$block" "$bytes" "$depth" "$rep"
        done
        bench_settle 0.2
    done
done

# The two copies of every mirrored file: the same bytes (read back through
# the client, the runs checked the primary's only).
pairs=0
while IFS= read -r f; do
    other=$(find "$state/targets/$g2/chunks" -name "$(basename "$f")" -type f | head -n 1)
    [ -n "$other" ] || continue
    cmp -s "$f" "$other" || bench_die "the copies of chunk file $(basename "$f") on $g1 and $g2 differ"
    pairs=$((pairs + 1))
done < <(find "$state/targets/$g1/chunks" -type f)
ncases=$(wc -w <<<"$cases")
[ "$pairs" -ge $((reps * ncases)) ] ||
    bench_die "only $pairs chunk files on both $g1 and $g2 (expected $((reps * ncases)) or more)"
bench_log "copies compared: $pairs chunk files identical on $g1 and $g2"
bench_stop_service

# per block and kind: MB/s and the runs' median latency, min/median/max;
# each kind against forwarding (the medians of their runs)
python3 - "$csv" <<'PY' | tee "$BENCH_OUT/mirror-summary.txt"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
keys = list(dict.fromkeys((r["block"], r["depth"], r["kind"]) for r in rows))
def human(b):
    b = int(b)
    return "%dM" % (b >> 20) if b >= 1 << 20 and b % (1 << 20) == 0 else \
        "%dK" % (b >> 10) if b >= 1024 and b % 1024 == 0 else str(b)
def col(key, name):
    return [float(r[name]) for r in rows if (r["block"], r["depth"], r["kind"]) == key]
print("%-6s %-5s %-8s %-22s %-7s %-22s %-7s %s" % ("block", "depth", "kind", "MB/s min/med/max", "vs fwd",
      "lat us min/med/max", "vs fwd", "p99 us (median)"))
for key in keys:
    mb, lat, fwd = col(key, "MB_s"), col(key, "lat_us_median"), (key[0], key[1], "forward")
    print("%-6s %-5s %-8s %-22s %-7.2f %-22s %-7.2f %.0f" % (human(key[0]), key[1], key[2],
          "%.1f/%.1f/%.1f" % (min(mb), statistics.median(mb), max(mb)),
          statistics.median(mb) / statistics.median(col(fwd, "MB_s")),
          "%.0f/%.0f/%.0f" % (min(lat), statistics.median(lat), max(lat)),
          statistics.median(lat) / statistics.median(col(fwd, "lat_us_median")),
          statistics.median(col(key, "lat_us_p99"))))
PY
bench_log "($where; every run: $csv)"
