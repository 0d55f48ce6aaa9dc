#!/usr/bin/env bash
# capacity_fill.sh: targets of unequal size filled until the first ENOSPC
# (issue 13's acceptance run, docs/capacity.md). Four targets whose
# `capacity:` is 12, 12, 7 and 7 units (default unit 10 MiB: 120, 120, 70
# and 70 MiB, the Imaging drives' 12T/7T scaled down), on two storage ranks
# of one host (101 and 103 on rank 1, 102 and 104 on rank 2). Files are put
# one after the other with `stripefs-ctl put`, each in a directory whose
# pattern asks 1, 2, 3 or 4 targets (512 KiB chunks), sizes log-uniform
# from 64 KiB to 8 MiB, the same sequence for every build (seeded by the
# rep), until a put fails. Then it prints each target's fill (its chunk
# files' bytes against its capacity), the largest distance from the mean
# fill in % of the mean (the spread), and the usable capacity: the bytes
# written in % of the sum of the capacities.
#
#   bash benchmarks/capacity_fill.sh [--build DIR] [--reps 3] [--unit 10M]
#        [--widths "1 2 3 4"] [--label NAME] [--out DIR]
#
# --widths: the patterns' target counts files are drawn from ("4": every
# file over every target, as the Imaging config's old default did). Writes
# capacity_fill.csv (one line per target and rep) to --out; compare two
# builds (main's and this one) with the same options and two --label.
. "$(dirname "$0")/lib.sh"
bench_setup capacity_fill "$@"

reps=3
unit=10M
widths="1 2 3 4"
label=$(basename "$(dirname "$BENCH_BUILD")")
set -- ${BENCH_ARGS[@]+"${BENCH_ARGS[@]}"}
while [ $# -gt 0 ]; do
    case $1 in
    --reps) reps=$2; shift 2 ;;
    --unit) unit=$2; shift 2 ;;
    --widths) widths=$2; shift 2 ;;
    --label) label=$2; shift 2 ;;
    -h|--help) sed -n '2,/^\. /p' "$0" | sed -e '/^\. /d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) bench_die "unknown option '$1' (see --help)" ;;
    esac
done
unit_mib=${unit%M}
case $unit_mib in '' | *[!0-9]*) bench_die "--unit takes MiB, e.g. 10M" ;; esac
sizes=(12 12 7 7)
csv=$BENCH_OUT/capacity_fill.csv
[ -f "$csv" ] || echo "label,widths,rep,target,capacity_MiB,used_MiB,fill_pct,files,first_error" >"$csv"
# a run of the same label and widths replaces the last one's lines
awk -F, -v l="$label" -v ws="$widths" '!($1 == l && $2 == ws)' "$csv" >"$BENCH_TMP/csv" &&
    cat "$BENCH_TMP/csv" >"$csv"
ctl=$BENCH_BUILD/stripefs-ctl
head -c $((8 << 20)) /dev/urandom >"$BENCH_TMP/data" || bench_die "cannot make the data file"
bench_log "machine: $(bench_machine); build $BENCH_BUILD ($label); capacities" \
    "$(printf '%s ' "${sizes[@]}")x $unit; widths $widths; $reps reps"

for rep in $(seq "$reps"); do
    state=$BENCH_TMP/state-$rep
    bench_write_config "$state" 4 3 "" 4
    # the capacity per target: 12, 12, 7, 7 units
    for i in 0 1 2 3; do
        sed -i "s|\(- {id: $((101 + i)), host: [^,]*, dir: [^}]*\)}|\1, capacity: $((sizes[i] * unit_mib))M}|" \
            "$state/stripefs.yaml"
    done
    [ "$(grep -c 'capacity:' "$state/stripefs.yaml")" = 4 ] || bench_die "could not set the capacities"
    bench_start_service "$state" 3
    for w in $widths; do
        "$ctl" mkdir "/w$w" >/dev/null && "$ctl" setpattern --numtargets "$w" "/w$w" >/dev/null ||
            bench_die "mkdir/setpattern /w$w failed"
    done
    # the sequence of (width, size): the same for every build
    awk -v seed="$rep" -v widths="$widths" 'BEGIN { srand(seed); n = split(widths, w, " ");
        for (i = 0; i < 100000; i++) printf "%s %d\n", w[1 + int(rand() * n)],
            int(exp(log(65536) + rand() * (log(8388608) - log(65536)))) }' >"$state/files"
    files=0 first_error=""
    while read -r w size; do
        if ! head -c "$size" "$BENCH_TMP/data" | "$ctl" put - "/w$w/f$files" >/dev/null \
            2>"$state/put.err"; then
            first_error=$(head -n 1 "$state/put.err" | tr ',' ';' | cut -c1-160)
            break
        fi
        files=$((files + 1))
    done <"$state/files"
    bench_log "rep $rep: $files files written; then: $first_error"
    bench_stop_service
    for i in 0 1 2 3; do
        id=$((101 + i))
        used=$(find "$state/targets/$id/chunks" -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}')
        awk -v l="$label" -v ws="$widths" -v r="$rep" -v id="$id" -v cap=$((sizes[i] * unit_mib)) \
            -v u="$used" -v f="$files" -v e="$first_error" 'BEGIN {
            printf "%s,%s,%d,%d,%d,%.1f,%.1f,%d,%s\n", l, ws, r, id, cap, u / 1048576,
                100 * u / 1048576 / cap, f, e }' >>"$csv"
    done
    rm -rf "$state/targets"
done

echo
echo "capacity fill until the first ENOSPC ($label, widths $widths, unit $unit; $(bench_machine))"
awk -F, -v l="$label" -v ws="$widths" '$1 == l && $2 == ws {
        k = $3; fill[k, $4] = $7; used[k] += $6; cap[k] += $5; n[k]++; files[k] = $8; ids[$4] = 1 }
    END { printf "rep   101    102    103    104   spread  usable  files\n";
        for (k = 1; (k, 101) in fill; k++) { m = 0; for (t = 101; t <= 104; t++) m += fill[k, t] / 4;
            s = 0; for (t = 101; t <= 104; t++) { d = fill[k, t] - m; if (d < 0) d = -d; if (d > s) s = d }
            printf "%-3d %5.1f%% %5.1f%% %5.1f%% %5.1f%%  %5.1f%%  %5.1f%%  %5d\n", k, fill[k, 101],
                fill[k, 102], fill[k, 103], fill[k, 104], 100 * s / m, 100 * used[k] / cap[k], files[k] } }' "$csv"
echo "(fill: chunk bytes / capacity; spread: largest |fill - mean| in % of the mean; usable: bytes"
echo " written / sum of the capacities; results in $csv)"
