#!/usr/bin/env bash
# ls.sh: `ls -l` of a directory of N files, the command users feel a
# metadata server's round trips in. Three sides, the same files (100 bytes
# each, made by one process before the timed runs):
#   attrs     stripefs through the POSIX preload (libstripefs-posix.so) as it
#             runs by default: a page of 256 entries comes with their
#             attributes, and ls's stat of each entry takes them
#             (docs/posix-preload.md, "Listings with attributes")
#   per-stat  the same with STRIPEFS_PRELOAD_LIST_ATTRS=0: one round trip per
#             entry's stat, as before 2026-12-07
#   local     the same files in a directory of this machine's disk (the one
#             under the targets), page cache warm: what a local ls -l costs
#
#   bash benchmarks/ls.sh [--quick] [--files "2000 10000"] [--reps R] [--find] [--cluster]
#        [--out DIR] [--build DIR] [--tmp DIR] [--keep]
#
# --find: time `find DIR -type f -size 100c` instead (the shape of IO500's
# find phase: a test that needs each file's size, so find stats every
# entry, with fstatat on the directory's descriptor); it prints every file.
# Writes find.csv instead of ls.csv.
#
# --cluster: the stripefs sides across the four namespace hosts of
# ci/cluster.sh (benchmarks/lib_cluster.sh: metadata on imaging-01, ls on
# imaging-04, every round trip over TCP through the bridge); the local side
# as without it.
#
# Method: each run is one `ls -l --time-style=full-iso` process, timed from
# its start to its exit inside the client's host (its connect to the service
# included: ls of an empty directory shows that part, the "0 files" row);
# the sides alternate (rep 1 forward, rep 2 backward, ...); --reps (3;
# --quick 1) gives min / median / max. Checked outside the time: every run
# lists N files, and both stripefs sides print the same lines. Round trips
# (STAT, LOOKUP, READDIR, CHUNK_STAT) of one more run of each stripefs side
# are counted from the client's transport trace. Writes ls.csv.
. "$(dirname "$0")/lib.sh"
bench_setup ls "$@"

files_list="2000 10000"
reps=3
what=ls
if [ "$BENCH_QUICK" = 1 ]; then
    files_list="300"
    reps=1
fi
set -- ${BENCH_ARGS[@]+"${BENCH_ARGS[@]}"}
while [ $# -gt 0 ]; do
    case $1 in
    --files) files_list=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --find) what=find; shift ;;
    *) bench_die "unknown option '$1' (see the comment at the top of benchmarks/ls.sh)" ;;
    esac
done
[[ "$reps" =~ ^[1-9][0-9]*$ ]] || bench_die "--reps wants a positive count, not '$reps'"
for n in $files_list; do
    [[ "$n" =~ ^[0-9]+$ ]] || bench_die "--files wants counts of files, not '$n'"
done
command -v python3 >/dev/null || bench_die "python3 makes the files (Debian: python3)"
preload=$BENCH_BUILD/.libs/libstripefs-posix.so
[ -f "$preload" ] || bench_die "no $preload (make -C $BENCH_BUILD)"
# a sanitizer build's library needs the ASan runtime loaded first (ls and
# python3 are not instrumented), and no leak check of those programs
with_preload=("LD_PRELOAD=$preload")
asan=$(ldd "$preload" 2>/dev/null | awk '/libasan/ {print $3; exit}')
if [ -n "$asan" ]; then
    with_preload=("LD_PRELOAD=$asan $preload"
        "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0")
fi

csv=$BENCH_OUT/$what.csv
echo "side,files,rep,ms,lines,round_trips" >"$csv"
bench_write_config "$BENCH_TMP/state" 4 3
bench_start_service "$BENCH_TMP/state" 3
bench_ctl mkdir /ls >/dev/null || bench_die "stripefs-ctl mkdir /ls"
local_top=$BENCH_TMP/local
mkdir -p "$local_top" || bench_die "mkdir $local_top"

# A command on the client's host (imaging-04 with --cluster), with the
# preload and the service's config.
on_client() {
    if [ "$BENCH_CLUSTER" = 1 ]; then
        timeout --kill-after=10 600 "$BENCH_CLUSTER_TOOL" exec "$BENCH_CLUSTER_CLIENT" \
            env STRIPEFS_CONFIG="$STRIPEFS_CONFIG" STRIPEFS_PREFIX=/stripefs "$@"
    else
        timeout --kill-after=10 600 env STRIPEFS_PREFIX=/stripefs "$@"
    fi
}

MAKE=$BENCH_TMP/make_files.py
cat >"$MAKE" <<'EOF'
import os, sys
top, count = sys.argv[1], int(sys.argv[2])
os.mkdir(top)
for i in range(count):
    fd = os.open("%s/f%06d" % (top, i), os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o644)
    os.write(fd, b"x" * 100)
    os.close(fd)
EOF
# time one ls -l (or find): prints "MS FILES" (its output kept in OUT)
TIMED=$BENCH_TMP/timed.sh
cat >"$TIMED" <<'EOF'
what=$1 out=$2 dir=$3
start=$(date +%s%N)
if [ "$what" = find ]; then
    find "$dir" -type f -size 100c >"$out" || exit 1
    end=$(date +%s%N)
    lines=$(wc -l <"$out")
else
    ls -l --time-style=full-iso "$dir" >"$out" || exit 1
    end=$(date +%s%N)
    lines=$(($(wc -l <"$out") - 1)) # its "total" line
fi
echo "$(((end - start) / 1000)) $lines"
EOF

run_side() { # SIDE FILES REP
    local side=$1 n=$2 rep=$3 out=$BENCH_TMP/out.$1.$2 result
    case $side in
    attrs) result=$(on_client env "${with_preload[@]}" bash "$TIMED" $what "$out" "/stripefs/ls/d$n") ;;
    per-stat) result=$(on_client env STRIPEFS_PRELOAD_LIST_ATTRS=0 "${with_preload[@]}" \
        bash "$TIMED" $what "$out" "/stripefs/ls/d$n") ;;
    local) result=$(bash "$TIMED" $what "$out" "$local_top/d$n") ;;
    esac || bench_die "$what of the $side side ($n files) failed"
    set -- $result
    [ "${2:-}" = "$n" ] || bench_die "$what of the $side side listed ${2:-nothing}, not $n files"
    echo "$side,$n,$rep,$(awk -v u="$1" 'BEGIN { printf "%.2f", u / 1000 }'),$2," >>"$csv"
}

round_trips() { # LIST_ATTRS FILES
    on_client env STRIPEFS_LOG_MASK=ucx=trace STRIPEFS_PRELOAD_LIST_ATTRS="$1" "${with_preload[@]}" \
        bash "$TIMED" $what /dev/null "/stripefs/ls/d$2" 2>&1 >/dev/null |
        grep -oE "rpc [0-9]+: (STAT|LOOKUP|READDIR|CHUNK_STAT) " | wc -l
}

bench_log "machine: $(bench_machine)"
bench_log "$what of $files_list files (and 0), $reps reps; stripefs $(bench_where)"
sides=(attrs per-stat local)
for n in 0 $files_list; do
    on_client env "${with_preload[@]}" python3 "$MAKE" "/stripefs/ls/d$n" "$n" ||
        bench_die "making $n files in /stripefs/ls/d$n"
    python3 "$MAKE" "$local_top/d$n" "$n" || bench_die "making $n files in $local_top/d$n"
    bench_settle
    for rep in $(seq "$reps"); do
        if [ $((rep % 2)) = 1 ]; then order=("${sides[@]}"); else order=(local per-stat attrs); fi
        for side in "${order[@]}"; do
            run_side "$side" "$n" "$rep"
        done
    done
    cmp -s "$BENCH_TMP/out.attrs.$n" "$BENCH_TMP/out.per-stat.$n" ||
        bench_die "$what of $n files: the listing's attributes and a stat per entry print different lines: $(diff "$BENCH_TMP/out.per-stat.$n" "$BENCH_TMP/out.attrs.$n" | head -n 4)"
    echo "attrs,$n,trace,,,$(round_trips 1 "$n")" >>"$csv"
    echo "per-stat,$n,trace,,,$(round_trips 0 "$n")" >>"$csv"
done
bench_stop_service

echo
echo "$([ $what = find ] && echo "find -type f -size 100c" || echo "ls -l"), ms per run (process start to exit): median (min-max) of $reps; stripefs $(bench_where); $(bench_machine)"
awk -F, 'NR > 1 && $3 != "trace" { k = $1 SUBSEP $2; v[k] = v[k] " " $4; n[$2] = 1 }
    NR > 1 && $3 == "trace" { rt[$1 SUBSEP $2] = $6 }
    function stats(list,    a, c, i, j, t) {
        c = split(list, a, " ")
        for (i = 1; i <= c; i++) for (j = i + 1; j <= c; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
        med = c % 2 ? a[(c + 1) / 2] : (a[c / 2] + a[c / 2 + 1]) / 2
        return sprintf("%.1f (%.1f-%.1f)", med, a[1], a[c])
    }
    END {
        print "files,attrs,per-stat,local,round trips attrs,round trips per-stat,attrs/per-stat,attrs/local"
        for (f in n) order[++m] = f + 0
        for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (order[j] < order[i]) { t = order[i]; order[i] = order[j]; order[j] = t }
        for (i = 1; i <= m; i++) {
            f = order[i]
            a = stats(v["attrs" SUBSEP f]); ma = med
            p = stats(v["per-stat" SUBSEP f]); mp = med
            l = stats(v["local" SUBSEP f]); ml = med
            printf "%d,%s,%s,%s,%s,%s,%s,%s\n", f, a, p, l, rt["attrs" SUBSEP f], rt["per-stat" SUBSEP f],
                (mp > 0 ? sprintf("%.2f", ma / mp) : "-"), (ml > 0 ? sprintf("%.1f", ma / ml) : "-")
        }
    }' "$csv" | bench_table
echo "results: $csv"
