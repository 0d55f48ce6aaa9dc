#!/usr/bin/env bash
# plot.sh: PNG plots of the benchmark CSVs with gnuplot (gnuplot-nox).
#
#   bash benchmarks/plot.sh bw      RESULTS/bw-summary.csv      OUT.png
#   bash benchmarks/plot.sh scaling RESULTS/scaling-summary.csv OUT.png
#   bash benchmarks/plot.sh io500   RESULTS/io500-summary.csv   OUT.png
#   bash benchmarks/plot.sh peers   RESULTS/peers-summary.csv   OUT.png
#
# bw: MiB/s by transfer size, write and read side by side, stripefs (solid)
# and local (dashed) for each layout. scaling: aggregate MiB/s by number of
# capped targets, with the ideal (targets x cap). io500: the IO500-shape
# phases per system, bars of the median with the min-max range, bandwidth
# phases (GiB/s) and metadata phases (kIOPS, log scale) side by side.
# peers: fio's MiB/s by transfer size for every side of peers.sh (stripefs,
# local, each peer volume), write and read side by side, median with the
# min-max range of the reps.
set -euo pipefail
kind=${1:-}
in=${2:-}
out=${3:-}
[ -n "$kind" ] && [ -f "$in" ] && [ -n "$out" ] || {
    echo "usage: plot.sh bw|scaling|io500|peers SUMMARY.csv OUT.png" >&2
    exit 2
}
if ! command -v gnuplot >/dev/null; then
    echo "plot.sh: gnuplot is not installed (apt-get install gnuplot-nox)" >&2
    exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ "$(gnuplot -e 'set terminal' 2>&1 | grep -c pngcairo)" -gt 0 ]; then
    term="pngcairo size 1400,700 font 'DejaVu Sans,11'"
else
    term="png size 1400,700"
fi

case $kind in
bw)
    # one data file per (mode, side, op): x = transfer size in KiB, y = MiB/s
    modes=$(awk -F, 'NR > 1 { print $1 }' "$in" | awk '!seen[$0]++')
    for op in write read; do
        for mode in $modes; do
            awk -F, -v m="$mode" -v o="$op" -v c=4 \
                'NR > 1 && $1 == m && $2 == o && $c != "-" { print $3 / 1024, $c }' \
                "$in" >"$tmp/$op-$mode-stripefs.dat"
            awk -F, -v m="$mode" -v o="$op" -v c=5 \
                'NR > 1 && $1 == m && $2 == o && $c != "-" { print $3 / 1024, $c }' \
                "$in" >"$tmp/$op-$mode-local.dat"
        done
    done
    {
        echo "set terminal $term"
        echo "set output '$out'"
        echo "set multiplot layout 1,2 title 'MPI-IO bandwidth by transfer size:" \
            "stripefs (solid) vs local file system (dashed)'"
        echo "set logscale x 2"
        echo "set xlabel 'transfer size (KiB)'"
        echo "set ylabel 'MiB/s (all ranks)'"
        echo "set yrange [0:*]"
        echo "set grid"
        echo "set key outside below horizontal maxrows 3"
        for op in write read; do
            if [ "$op" = read ]; then
                # local reads come from the page cache: a log scale keeps both readable
                echo "set logscale y"
                echo "set yrange [*:*]"
                echo "set title 'read (log scale)'"
            else
                echo "set title '$op'"
            fi
            plot="plot "
            color=1
            for mode in $modes; do
                style="using 1:2 with linespoints lw 2 lc $color"
                plot+="'$tmp/$op-$mode-stripefs.dat' $style pt 7 dt 1 title 'stripefs $mode', "
                plot+="'$tmp/$op-$mode-local.dat' $style pt 6 dt 2 title 'local $mode', "
                color=$((color + 1))
            done
            echo "${plot%, }"
        done
        echo "unset multiplot"
    } >"$tmp/plot.gp"
    ;;
scaling)
    # columns: layout,op,targets,cap_MiB_s,MiB_s,ideal_MiB_s,efficiency,speedup
    series=$(awk -F, 'NR > 1 { print $1 "-" $2 }' "$in" | awk '!seen[$0]++')
    for s in $series; do
        awk -F, -v s="$s" 'NR > 1 && $1 "-" $2 == s { print $3, $5 }' "$in" >"$tmp/$s.dat"
    done
    awk -F, 'NR > 1 && !seen[$3]++ { print $3, $6 }' "$in" | sort -n >"$tmp/ideal.dat"
    cap=$(awk -F, 'NR == 2 { print $4 }' "$in")
    {
        echo "set terminal ${term/1400,700/900,600}"
        echo "set output '$out'"
        echo "set title 'Scaling with storage targets, each capped at $cap MiB/s (server bandwidth: option)'"
        echo "set xlabel 'targets'"
        echo "set ylabel 'aggregate MiB/s'"
        echo "set xtics 1"
        echo "set xrange [0.5:*]"
        echo "set yrange [0:*]"
        echo "set grid"
        echo "set key top left"
        plot="plot '$tmp/ideal.dat' using 1:2 with lines lw 2 lc rgb 'gray' dt 2"
        plot+=" title 'ideal: targets x cap', "
        for s in $series; do
            plot+="'$tmp/$s.dat' using 1:2 with linespoints lw 2 pt 7 title '$s', "
        done
        echo "${plot%, }"
    } >"$tmp/plot.gp"
    ;;
io500)
    # columns: system,phase,unit,reps,min,median,max; one data file per unit:
    # a row per phase, then median, min, max of each system
    systems=$(awk -F, 'NR > 1 { print $1 }' "$in" | awk '!seen[$0]++')
    for unit in GiB_s kIOPS; do
        awk -F, -v u="$unit" -v systems="$systems" '
            BEGIN { ns = split(systems, sy, "\n") }
            NR > 1 && $3 == u { if (!($2 in seen)) { seen[$2] = 1; ph[n++] = $2 }
                med[$2, $1] = $6; lo[$2, $1] = $5; hi[$2, $1] = $7 }
            END { for (i = 0; i < n; i++) { p = ph[i]; printf "%s", p
                    for (j = 1; j <= ns; j++) { s = sy[j]
                        if ((p, s) in med) printf " %s %s %s", med[p, s], lo[p, s], hi[p, s]
                        else printf " NaN NaN NaN" }
                    printf "\n" } }' "$in" >"$tmp/$unit.dat"
    done
    {
        echo "set terminal $term"
        echo "set output '$out'"
        echo "set multiplot layout 1,2 title 'IO500-shaped phases (median, bars: min-max of the reps)'"
        echo "set style data histogram"
        echo "set style histogram errorbars gap 2 lw 1"
        echo "set style fill solid 0.7 border -1"
        echo "set boxwidth 0.9"
        echo "set grid ytics"
        echo "set xtics rotate by -30"
        echo "set key outside below horizontal"
        for unit in GiB_s kIOPS; do
            if [ "$unit" = GiB_s ]; then
                echo "set title 'bandwidth phases'"
                echo "set ylabel 'GiB/s (all ranks)'"
                echo "set yrange [0:*]"
            else
                echo "set title 'metadata phases (log scale)'"
                echo "set ylabel 'kIOPS (all ranks)'"
                echo "set logscale y"
                echo "set yrange [*:*]"
            fi
            plot="plot "
            col=2
            for s in $systems; do
                plot+="'$tmp/$unit.dat' using $col:$((col + 1)):$((col + 2)):xtic(1) title '$s', "
                col=$((col + 3))
            done
            echo "${plot%, }"
        done
        echo "unset multiplot"
    } >"$tmp/plot.gp"
    ;;
peers)
    # columns: side,workload,metric,reps,min,median,max; metric write_MiB_s@1M:
    # one data file per (side, op): x = transfer size in KiB, median, min, max
    sides=$(awk -F, 'NR > 1 && $2 == "fio" { print $1 }' "$in" | awk '!seen[$0]++')
    [ -n "$sides" ] || { echo "plot.sh: no fio rows in $in" >&2; exit 1; }
    for op in write read; do
        for side in $sides; do
            awk -F, -v s="$side" -v o="$op" 'NR > 1 && $1 == s && $2 == "fio" && index($3, o "_MiB_s@") == 1 {
                    b = substr($3, length(o) + 8); k = b + 0
                    if (b ~ /K$/) k = k; else if (b ~ /M$/) k = k * 1024; else if (b ~ /G$/) k = k * 1048576; else k = k / 1024
                    print k, $6, $5, $7 }' "$in" | sort -n >"$tmp/$op-$side.dat"
        done
    done
    {
        echo "set terminal $term"
        echo "set output '$out'"
        echo "set multiplot layout 1,2 title 'fio file per process, POSIX, by transfer size:" \
            "every side of peers.sh (median, bars: min-max of the reps)'"
        echo "set logscale x 2"
        echo "set xlabel 'transfer size (KiB)'"
        echo "set ylabel 'MiB/s (all jobs)'"
        echo "set yrange [0:*]"
        echo "set offsets graph 0.05, graph 0.05, 0, 0"
        echo "set grid"
        echo "set key outside below horizontal maxrows 2"
        for op in write read; do
            if [ "$op" = write ]; then
                echo "set title 'write, fsync at the end (inside the time)'"
            else
                echo "set title 'read right after (whatever each side caches)'"
            fi
            plot="plot "
            color=1
            for side in $sides; do
                plot+="'$tmp/$op-$side.dat' using 1:2:3:4 with yerrorlines lw 2 pt 7 lc $color title '$side', "
                color=$((color + 1))
            done
            echo "${plot%, }"
        done
        echo "unset multiplot"
    } >"$tmp/plot.gp"
    ;;
*)
    echo "plot.sh: unknown plot '$kind' (bw, scaling, io500 or peers)" >&2
    exit 2
    ;;
esac
gnuplot "$tmp/plot.gp"
echo "plot: $out"
