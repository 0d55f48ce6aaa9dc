#!/usr/bin/env bash
# ucx.sh: the transport ceiling. UCX's own active-message bandwidth between
# two processes on this host (ucx_perftest -t ucp_am_bw, a server/client
# pair over localhost, package ucx-utils), and, in the same run, the read
# bandwidth of one stripefs client process from one storage rank (large
# reads through the client library, the chunk file in the server's page
# cache), as a fraction of it. Writes ucx.csv, ucx-summary.csv, ucx-net.txt.
#
#   bash benchmarks/ucx.sh [--quick] [--sizes "1M 16M"] [--file-size 1G]
#        [--reps 5] [--depths "1 4"] [--out DIR] [--build DIR]
#
# UCX chooses its transports itself on both sides (shared memory / CMA
# between processes on one host); neither side is pinned to a core. The
# ceiling is the best of 3 ucx_perftest runs per message size; stripefs is
# the best of --reps passes over the file per read size and depth (requests
# in flight); the median pass and the slowest single request are reported
# too, since passes with several requests in flight can stall. ucx-net.txt
# has `stripefs-ctl net` (the transports stripefs uses). Both sides reuse
# one destination buffer. ucx_perftest also sends the same source buffer
# every time (in the CPU caches); a stripefs read that streams a file reads
# its source from memory, so the script also measures stripefs reading the
# same region over and over (stripefs-read-same, the like-for-like figure)
# and what one core copies from memory not in its caches (memcpy-stream, the
# ceiling of a streaming read on this machine). On one host the client reads
# the chunk file itself once the server has handed it over (short-circuit
# reads, docs/faults.md); stripefs-read-via-server turns that off
# (STRIPEFS_LOCAL_READ=0): every read is a request the server answers, with
# a direct copy into the client, the path reads between hosts take through UCX.
. "$(dirname "$0")/lib.sh"
bench_setup ucx "$@"

sizes="1M 16M"
file_size=1G
reps=5
depths="1 4"
ucx_bytes=$((8 << 30))
if [ "$BENCH_QUICK" = 1 ]; then
    file_size=512M
    reps=3
    ucx_bytes=$((2 << 30))
fi
set -- ${BENCH_ARGS[@]+"${BENCH_ARGS[@]}"}
while [ $# -gt 0 ]; do
    case $1 in
    --sizes) sizes=$2; shift 2 ;;
    --file-size) file_size=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --depths) depths=$2; shift 2 ;;
    -h|--help) sed -n '2,/^\. /p' "$0" | sed -e '/^\. /d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) bench_die "unknown option '$1' (see --help)" ;;
    esac
done
command -v ucx_perftest >/dev/null || bench_die "ucx_perftest is missing (apt-get install ucx-utils)"
to_bytes() {
    awk -v s="$1" 'BEGIN { n = s + 0; u = toupper(substr(s, length(n "") + 1, 1));
        if (u == "K") n *= 1024; else if (u == "M") n *= 1048576; else if (u == "G") n *= 1073741824;
        printf "%d\n", n }'
}

csv=$BENCH_OUT/ucx.csv
echo "what,xfer_bytes,depth,pass,bytes,seconds,MiB_s,max_request_ms,slow_requests" >"$csv"
bench_log "machine: $(bench_machine)"

# --- UCX between two processes
perftest_pid=""
stop_perftest() { [ -n "$perftest_pid" ] && kill "$perftest_pid" 2>/dev/null; perftest_pid=""; }
trap 'stop_perftest; bench_cleanup' EXIT
for size in $sizes; do
    bytes=$(to_bytes "$size")
    iters=$((ucx_bytes / bytes))
    for pass in 1 2 3; do
        port=$(bench_free_port)
        ucx_perftest -p "$port" >"$BENCH_TMP/perftest-server.log" 2>&1 &
        perftest_pid=$!
        line=""
        for _ in $(seq 50); do
            sleep 0.1
            if line=$(timeout 120 ucx_perftest 127.0.0.1 -p "$port" -t ucp_am_bw -s "$bytes" \
                -n "$iters" -w 20 2>"$BENCH_TMP/perftest-client.err" | grep '^Final:'); then
                break
            fi
        done
        [ -n "$line" ] || kill "$perftest_pid" 2>/dev/null
        wait "$perftest_pid" 2>/dev/null
        perftest_pid=""
        [ -n "$line" ] || bench_die "ucx_perftest failed: $(tail -n 3 "$BENCH_TMP/perftest-client.err")"
        # Final: iterations, overhead 50%/avg/overall, bandwidth avg/overall (MiB/s), rates
        mib=$(echo "$line" | awk '{ print $7 }')
        secs=$(awk -v b="$bytes" -v n="$iters" -v m="$mib" 'BEGIN { printf "%.4f", b * n / 1048576 / m }')
        echo "ucx_perftest-ucp_am_bw,$bytes,1,$pass,$((bytes * iters)),$secs,$mib,-,-" >>"$csv"
        bench_log "  ucx_perftest ucp_am_bw $size pass $pass: $mib MiB/s"
    done
done

# --- stripefs: one client process, one storage rank
state=$BENCH_TMP/state
bench_write_config "$state" 1 2 "" 1
bench_start_service "$state" 2
"$SFS_BENCH_CTL" net >"$BENCH_OUT/ucx-net.txt" 2>&1 || true
# stripefs-read: every pass streams the whole file (from the server's page
# cache, through memory); stripefs-read-same: each pass reads as many bytes
# but the same region of the read's size over and over (as ucx_perftest sends
# the same buffer), so the data is in the CPU caches on both sides
read_run() { # LABEL SIZE DEPTH EXTRA-ARGS...
    local label=$1 size=$2 depth=$3 out
    shift 3
    out=$("$BENCH_BUILD/benchmarks/sfs_bench_read" -p "/$label-$size-$depth" -S "$file_size" \
        -x "$size" -r "$reps" -q "$depth" -l "$label" "$@" 2>&1) ||
        bench_die "sfs_bench_read failed: $out"
    echo "$out" | sed -n 's/^csv,//p' >>"$csv"
    echo "$out" | awk -F, -v s="$size" -v d="$depth" -v l="$label" '
        $5 == "best" { b = $8 } $5 == "median" { m = $8 }
        $10 ~ /^[0-9]/ { slow += $10; if ($9 + 0 > worst) worst = $9 + 0 }
        END { printf "  %s %s, %s in flight: best %s MiB/s, median %s MiB/s, " \
                     "%d requests over 50 ms, slowest %.0f ms\n", l, s, d, b, m, slow, worst }' >&2
}
for size in $sizes; do
    for depth in $depths; do
        read_run stripefs-read "$size" "$depth"
        read_run stripefs-read-same "$size" "$depth" -H "$size"
        STRIPEFS_LOCAL_READ=0 read_run stripefs-read-via-server "$size" "$depth"
    done
done
bench_stop_service

# --- what one core copies from memory not in its caches (no stripefs)
for size in $sizes; do
    out=$("$BENCH_BUILD/benchmarks/sfs_bench_read" -C -S "$file_size" -x "$size" -r "$reps" \
        -l memcpy-stream 2>&1) || bench_die "sfs_bench_read -C failed: $out"
    echo "$out" | sed -n 's/^csv,//p' >>"$csv"
    bench_log "  memcpy of $size pieces from a $file_size buffer: best $(echo "$out" |
        awk -F, '$5 == "best" { print $8 }') MiB/s"
done

# summary: per (what, size, depth) the best and median pass, stalls, and the
# ratio to UCX at the same message size and to the best UCX figure
summary=$BENCH_OUT/ucx-summary.csv
awk -F, 'NR == 1 { next }
    { k = $1 "," $2 "," $3; if (!(k in seen)) { seen[k] = 1; o[n++] = k }
      if ($1 ~ /^ucx/) { if ($7 > best[k]) best[k] = $7; v[k, c[k]++] = $7;
                         if ($7 > ucx[$2]) ucx[$2] = $7; if ($7 > top) top = $7 }
      else if ($4 == "best") best[k] = $7; else if ($4 == "median") med[k] = $7;
      else { slow[k] += $9; if ($8 > worst[k]) worst[k] = $8 } }
    END { print "what,xfer_bytes,depth,best_MiB_s,median_MiB_s,slow_requests,max_request_ms," \
                "vs_ucx_same_size,vs_ucx_best";
          for (i = 0; i < n; i++) { k = o[i]; split(k, a, ",");
              if (a[1] ~ /^ucx/) { printf "%s,%s,-,-,-,-,-\n", k, best[k]; continue }
              printf "%s,%s,%s,%d,%.1f,%s,%.2f\n", k, best[k], med[k], slow[k], worst[k],
                     ucx[a[2]] ? sprintf("%.2f", best[k] / ucx[a[2]]) : "-", top ? best[k] / top : 0 } }' \
    "$csv" >"$summary"

echo
echo "transport ceiling vs stripefs read, one client process ($(bench_machine))"
awk -F, 'NR == 1 { print "what,xfer,in flight,best MiB/s,median MiB/s,requests > 50 ms," \
                        "slowest ms,vs UCX same size,vs UCX best"; next }
    { $2 = sprintf("%dM", $2 / 1048576); print }' OFS=, "$summary" | bench_table
echo
awk -F, 'NR > 1 && $1 ~ /^ucx/ && $4 > u { u = $4; us = $2 }
    NR > 1 && $1 == "stripefs-read" && $4 > s { s = $4; ss = $2; sd = $3 }
    NR > 1 && $1 == "stripefs-read-same" && $4 > h { h = $4; hs = $2; hd = $3 }
    NR > 1 && $1 == "memcpy-stream" && $4 > m { m = $4 }
    NR > 1 && $1 == "stripefs-read-via-server" && $4 > v { v = $4; vs = $2; vd = $3 }
    END { r = u ? s / u : 0; rh = u ? h / u : 0;
          printf "ceiling: UCX ucp_am_bw %.0f MiB/s (%dM messages, the same buffer every time)\n",
                 u, us / 1048576;
          printf "stripefs read, streaming a file from the page cache: best %.0f MiB/s " \
                 "(%dM reads, %d in flight) = %.2f of UCX, %.2f of one core memcpy-ing memory " \
                 "not in its caches (%.0f MiB/s)\n", s, ss / 1048576, sd, r, m ? s / m : 0, m;
          printf "stripefs read, the same region every time (like ucx_perftest): best %.0f MiB/s " \
                 "(%dM reads, %d in flight) = %.2f of UCX\n", h, hs / 1048576, hd, rh;
          printf "stripefs read through the server (STRIPEFS_LOCAL_READ=0: a request per read, " \
                 "no chunk file handed over): best %.0f MiB/s (%dM reads, %d in flight) = %.2f of UCX\n",
                 v, vs / 1048576, vd, u ? v / u : 0;
          printf "goal: stripefs read >= 0.85 of UCX between two processes: streaming %.2f (%s), " \
                 "same region %.2f (%s)\n", r, (r >= 0.85 ? "met" : "NOT met"), rh,
                 (rh >= 0.85 ? "met" : "NOT met") }' "$summary" | tee "$BENCH_OUT/ucx-goals.txt"
echo "results: $csv, $summary, $BENCH_OUT/ucx-net.txt"
