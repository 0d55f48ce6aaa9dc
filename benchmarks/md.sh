#!/usr/bin/env bash
# md.sh: mdtest-style metadata rates on stripefs and, in the same run, on a
# local directory on the same disk: file create, stat, open/close, remove;
# directory create, stat, remove; N ranks, items per rank, ops/s and the
# ratio stripefs/local. Writes md.csv and md-summary.csv.
#
#   bash benchmarks/md.sh [--quick] [--items 1000] [--reps 3] [--ranks N] [--unique]
#        [--via "lib preload"] [--server-ranks 3] [--out DIR] [--build DIR]
#
# stripefs is driven through the client library directly (sfs_client.h,
# "lib"); --via "lib preload" adds a run of the same POSIX loop under the
# preload library (libstripefs-posix.so, /stripefs/... paths). The service
# runs with meta.sync on: every acknowledged create, mkdir, unlink and rmdir
# is durable (group commit). The local side runs twice: plain POSIX calls
# (what mdtest measures; the kernel acknowledges before anything is on disk)
# and with an fsync of the parent directory after each change ("durable").
# The ratio that the goal names is stripefs / plain local. Every back end
# runs --reps times, in turn; the summary takes the median of each (local
# metadata rates on a shared VM disk vary several-fold from second to second).
. "$(dirname "$0")/lib.sh"
bench_setup md "$@"

items=1000
reps=3
unique=0
via="lib"
server_ranks=3
[ "$BENCH_QUICK" = 1 ] && items=250
set -- ${BENCH_ARGS[@]+"${BENCH_ARGS[@]}"}
while [ $# -gt 0 ]; do
    case $1 in
    --items) items=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --unique) unique=1; shift ;;
    --via) via=$2; shift 2 ;;
    --server-ranks) server_ranks=$2; shift 2 ;;
    -h|--help) sed -n '2,/^\. /p' "$0" | sed -e '/^\. /d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) bench_die "unknown option '$1' (see --help)" ;;
    esac
done
flags=()
[ "$unique" = 1 ] && flags+=(-u)

csv=$BENCH_OUT/md.csv
summary=$BENCH_OUT/md-summary.csv
md=$BENCH_BUILD/benchmarks/sfs_bench_md
localdir=$BENCH_TMP/local
mkdir -p "$localdir"
echo "label,backend,ranks,items_per_rank,layout,phase,seconds,ops_s,errors" >"$csv"
bench_log "machine: $(bench_machine)"
bench_write_config "$BENCH_TMP/state" 4 "$server_ranks"
bench_start_service "$BENCH_TMP/state" "$server_ranks"

failed=0
run_md() { # NAME [mpirun args] -- PROGRAM ARGS
    local name=$1 out
    shift
    bench_settle
    if ! out=$("${BENCH_MPIRUN[@]}" -np "$BENCH_RANKS" -x STRIPEFS_CONFIG "$@" 2>&1); then
        failed=$((failed + 1))
        echo "$out" | tail -n 5 >&2
        bench_log "FAILED: $name"
    fi
    echo "$out" | sed -n 's/^csv,//p' >>"$csv"
    echo "$out" | awk -F, -v n="$name" '/^csv,/ { printf "  %-18s %-16s %10.0f ops/s\n", n, $7, $9 }' >&2
}

layout_text="one shared directory"
[ "$unique" = 1 ] && layout_text="a directory per rank"
bench_log "$BENCH_RANKS ranks x $items items, $layout_text"
for rep in $(seq "$reps"); do
    for v in $via; do
        case $v in
        lib) run_md stripefs-lib "$md" -a sfs -d /bench-md -n "$items" -l "md-$rep" \
            ${flags[@]+"${flags[@]}"} ;;
        preload)
            run_md stripefs-preload -x "LD_PRELOAD=$BENCH_BUILD/.libs/libstripefs-posix.so" \
                "$md" -a posix -d /stripefs/bench-md-preload -n "$items" -l "md-preload-$rep" \
                ${flags[@]+"${flags[@]}"} ;;
        *) bench_die "unknown --via '$v' (lib or preload)" ;;
        esac
    done
    run_md local "$md" -a posix -d "$localdir/md" -n "$items" -l "md-$rep" \
        ${flags[@]+"${flags[@]}"}
    run_md local-durable "$md" -a posix -D -d "$localdir/md-durable" -n "$items" -l "md-$rep" \
        ${flags[@]+"${flags[@]}"}
done
bench_stop_service

# summary: one line per phase, a column per back end (the median over the
# repetitions), ratios against local
awk -F, 'function median(k,   c, i, j, t, x) {
        c = cnt[k]; if (!c) return 0;
        for (i = 1; i <= c; i++) x[i] = val[k, i];
        for (i = 2; i <= c; i++) {
            t = x[i]
            for (j = i - 1; j >= 1 && x[j] > t; j--) x[j + 1] = x[j]
            x[j + 1] = t
        }
        return c % 2 ? x[(c + 1) / 2] : (x[c / 2] + x[c / 2 + 1]) / 2 }
    NR > 1 { b = $2; if ($1 ~ /^md-preload/) b = "stripefs-preload"; k = $6 SUBSEP b;
        val[k, ++cnt[k]] = $8 + 0;
        if (!($6 in seen)) { seen[$6] = 1; o[n++] = $6 } if (!(b in bs)) { bs[b] = 1; bo[m++] = b } }
    END { for (k in cnt) r[k] = sprintf("%.1f", median(k));
          printf "phase"; for (j = 0; j < m; j++) printf ",%s_ops_s", bo[j];
          for (j = 0; j < m; j++) if (bo[j] ~ /^stripefs/) printf ",%s/local,%s/local-durable", bo[j], bo[j];
          printf "\n";
          for (i = 0; i < n; i++) { p = o[i]; printf "%s", p;
              for (j = 0; j < m; j++) printf ",%s", r[p, bo[j]];
              for (j = 0; j < m; j++) if (bo[j] ~ /^stripefs/) {
                  l = r[p, "posix"]; d = r[p, "posix-durable"];
                  printf ",%s,%s", l ? sprintf("%.2f", r[p, bo[j]] / l) : "-",
                                   d ? sprintf("%.2f", r[p, bo[j]] / d) : "-" }
              printf "\n" } }' "$csv" >"$summary"

echo
echo "metadata rates, ops/s ($BENCH_RANKS ranks x $items items, median of $reps; $(bench_machine))"
sed -e '1s/_ops_s//g' -e '1s/posix/local/g' "$summary" | bench_table
echo
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "stripefs-lib/local") c = i }
    $1 == "file_create" && c {
        printf "goal: durable file creates >= 0.5 of the local file system: %.2f (%s)\n", $c,
               ($c >= 0.5 ? "met" : "NOT met") }' "$summary" |
    tee "$BENCH_OUT/md-goals.txt"
echo "results: $csv, $summary"
[ "$failed" = 0 ] || bench_die "$failed runs failed"
