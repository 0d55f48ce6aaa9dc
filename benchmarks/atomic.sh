#!/usr/bin/env bash
# atomic.sh: the cost of MPI atomic mode on stripefs. The same overlapping
# strided writes (tests/mpi/mpi_atomic_check.c: every rank writes NBLOCKS
# blocks of BLOCK bytes every 2*BLOCK, shifted by BLOCK/ranks, all at once),
# with and without MPI_File_set_atomicity(fh, 1), same sizes; each run times
# ITER iterations (write phase only: barrier to barrier) and checks each
# result (iterations that are not a serial order of the whole writes).
# Prints, per case, the mean over --reps runs of each run's mean write time,
# the spread (min-max of the runs) and the aggregate MiB/s, and the ratio
# atomic/non-atomic; writes atomic.csv (every run) to the output directory.
#
#   bash benchmarks/atomic.sh [--quick] [--ranks 4] [--reps 3] [--iter 10]
#        [--blocks "4K 64K 1M"] [--paths "indep coll"] [--targets 4] [--out DIR]
#
# In atomic mode each independent write takes an exclusive byte-range lock
# over its extent from the metadata server and releases it once the targets
# acknowledged: two more round trips per write, and overlapping writers
# wait for each other (that is the point).
. "$(dirname "$0")/lib.sh"
bench_setup atomic "$@"

reps=3
iter=10
blocks="4K 64K 1M"
paths="indep coll"
targets=4
server_ranks=3
nblocks_total=8M # of file extent per run: NBLOCKS = 8M / (2 * BLOCK)
if [ "$BENCH_QUICK" = 1 ]; then
    reps=2
    iter=4
    blocks="64K"
fi
set -- ${BENCH_ARGS[@]+"${BENCH_ARGS[@]}"}
while [ $# -gt 0 ]; do
    case $1 in
    --reps) reps=$2; shift 2 ;;
    --iter) iter=$2; shift 2 ;;
    --blocks) blocks=$2; shift 2 ;;
    --paths) paths=$2; shift 2 ;;
    --targets) targets=$2; shift 2 ;;
    -h|--help) sed -n '2,/^\. /p' "$0" | sed -e '/^\. /d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) bench_die "unknown option '$1' (see --help)" ;;
    esac
done

bytes() { numfmt --from=iec "$1"; }
prog=$BENCH_TMP/mpi_atomic_check
mpicc.openmpi -O2 -o "$prog" "$BENCH_SRC/tests/mpi/mpi_atomic_check.c" ||
    bench_die "compiling tests/mpi/mpi_atomic_check.c failed"
csv=$BENCH_OUT/atomic.csv
state=$BENCH_TMP/state

bench_log "machine: $(bench_machine)"
bench_write_config "$state" "$targets" "$server_ranks"
bench_start_service "$state" "$server_ranks"
"$SFS_BENCH_CTL" mkdir /bench >/dev/null || bench_die "stripefs-ctl mkdir /bench failed"
echo "block,path,mode,rep,ranks,iterations,bytes_per_rank,not_serial,write_s_mean,write_s_min,write_s_max,MiB_s" >"$csv"
for rep in $(seq "$reps"); do
    for block in $blocks; do
        b=$(bytes "$block")
        n=$(($(bytes $nblocks_total) / (2 * b)))
        for path in $paths; do
            # the sides alternate (odd reps non-atomic first, even ones
            # atomic first), each run on a file of its own
            modes="nonatomic atomic"
            [ $((rep % 2)) = 0 ] && modes="atomic nonatomic"
            for mode in $modes; do
                out=$(bench_mpi "$BENCH_RANKS" "$prog" "stripefs:/bench/atomic-$block-$path-$mode-$rep" \
                    "$mode" "$path" "$iter" "$b" "$n" 2>&1) ||
                    { echo "$out" | tail -5 >&2; bench_die "$mode $path $block failed"; }
                echo "$out" | awk -v blk="$block" -v rep="$rep" '/^RESULT/ {
                    for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
                    printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", blk, f["path"], f["mode"], rep,
                        f["ranks"], f["iterations"], f["bytes_per_rank"], f["not_serial"],
                        f["write_s_mean"], f["min"], f["max"], f["MiB_s"] }' >>"$csv"
            done
        done
    done
done
bench_stop_service

# per case: mean of the runs' means, their spread, MiB/s; atomic/non-atomic
awk -F, 'NR > 1 { k = $1 "," $2 "," $3; if (!(k in n)) order[c++] = k; n[k]++; s[k] += $9;
                  if (!(k in lo) || $9 < lo[k]) lo[k] = $9; if ($9 > hi[k]) hi[k] = $9;
                  mb[k] += $12; bad[k] += $8 }
    END { printf "%-6s %-6s %-10s %10s %21s %9s %12s %6s\n", "block", "path", "mode",
                 "write s", "spread (min-max)", "MiB/s", "not serial", "cost";
          for (i = 0; i < c; i++) { k = order[i]; split(k, f, ",");
              m = s[k] / n[k]; base = f[1] "," f[2] ",nonatomic";
              ratio = (f[3] == "atomic" && s[base] > 0) ? sprintf("x%.2f", m / (s[base] / n[base])) : "";
              printf "%-6s %-6s %-10s %10.4f %10.4f-%-10.4f %9.1f %12s %6s\n", f[1], f[2], f[3], m,
                     lo[k], hi[k], mb[k] / n[k], bad[k] "/" n[k] * '"$iter"', ratio } }' "$csv" |
    tee "$BENCH_OUT/atomic-summary.txt"
bench_log "every run: $csv"
