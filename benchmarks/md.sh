#!/usr/bin/env bash
# md.sh: mdtest's phases in the shapes of IO500's mdtest-easy (a directory
# per rank, empty files: mdtest -F -u) and mdtest-hard (one shared
# directory, files of 3901 bytes written and read back), N ranks on this
# host, on stripefs and, in the same run, on the baselines:
#   stripefs    through the POSIX preload (stripefs-run), default crash-safe
#               settings (meta.sync: every acknowledged change is committed)
#   ext4        a journaled ext4 on a loop file this script makes (mkfs.ext4
#               with its journal, mount -o loop) and removes at the end
#   ext4-fsync  the same ext4, with an fsync of each written file and of its
#               directory after every create, mkdir, unlink and rmdir
#   tmpfs       a tmpfs of its own: the ceiling of the kernel's VFS
# Phases: tree create, directory create/stat/remove, file create/stat/read/
# remove, tree remove (sfs_bench_md: timed from a barrier to the slowest
# rank; every count, stat and byte verified outside the time).
#
#   bash benchmarks/md.sh [--quick] [--items N] [--reps R] [--shapes "easy hard"]
#        [--systems "stripefs ext4 ext4-fsync tmpfs"] [--mdtest PATH] [--ranks N]
#        [--cluster] [--meta-mirror] [--out DIR] [--build DIR] [--tmp DIR] [--keep]
#
# --meta-mirror: the stripefs side with a metadata mirror (meta.mirror,
# docs/metadata-mirror.md): every batch committed on a second rank too
# before its replies. On one host the copy is on the same disk, in a
# directory of its own (mirror.same_host); with --cluster on imaging-02.
# The script waits until the mirror is in step before the first phase.
# --cluster: the stripefs side across the four namespace hosts of
# ci/cluster.sh (benchmarks/lib_cluster.sh: management and metadata on
# imaging-01, storage on imaging-01..03, the client ranks on imaging-04,
# every request over TCP); the baselines as without it.
#
# Method: a fresh directory for every rep, shape and system; the systems run
# in alternating order (rep 1 forward, rep 2 backward, ...); --reps (3;
# --quick 1) gives min / median / max; between sides the script waits until
# the metadata server has deleted every removed file's chunk files
# (`stripefs-ctl df`) and runs sync. --items (1000 per rank; --quick 100).
# The metadata server's group-commit batch sizes of each stripefs phase come
# from its log ("group commit, last burst"; the program sleeps --pause 1.5 s
# between phases on stripefs so that each phase is one burst).
# --mdtest PATH runs a real mdtest (one you built) instead of sfs_bench_md,
# with the same shapes (easy: -F -u -n N; hard: -w 3901 -e 3901 -n N).
# The ext4 and tmpfs sides need root (mount); without it they are skipped
# and the script says so. Writes md.csv, md-summary.csv, md-batches.csv.
. "$(dirname "$0")/lib.sh"
bench_setup md "$@"

items=1000
reps=3
shapes="easy hard"
systems="stripefs ext4 ext4-fsync tmpfs"
pause=1.5
mdtest=""
fs_size=2G
meta_mirror=0
if [ "$BENCH_QUICK" = 1 ]; then
    items=100
    reps=1
fi
set -- ${BENCH_ARGS[@]+"${BENCH_ARGS[@]}"}
while [ $# -gt 0 ]; do
    case $1 in
    --items) items=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --shapes) shapes=$2; shift 2 ;;
    --systems) systems=$2; shift 2 ;;
    --pause) pause=$2; shift 2 ;;
    --mdtest) mdtest=$2; shift 2 ;;
    --fs-size) fs_size=$2; shift 2 ;;
    --meta-mirror) meta_mirror=1; shift ;;
    -h|--help) sed -n '2,/^\. /p' "$0" | sed -e '/^\. /d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) bench_die "unknown option '$1' (see --help)" ;;
    esac
done
[ -z "$mdtest" ] || [ -x "$mdtest" ] || bench_die "--mdtest $mdtest: not an executable"

csv=$BENCH_OUT/md.csv
summary=$BENCH_OUT/md-summary.csv
batches=$BENCH_OUT/md-batches.csv
skipped=$BENCH_OUT/md-skipped.txt
md=$BENCH_BUILD/benchmarks/sfs_bench_md
: >"$skipped"
echo "label,system,shape,ranks,items_per_rank,bytes,phase,seconds,ops_s,errors,verify_errors,t_start,t_end" >"$csv"

# The file systems this script mounts are unmounted before the temp dir goes
# (rm -rf must never walk into a mounted file system).
md_mounts=()
md_cleanup() {
    local m
    for m in ${md_mounts[@]+"${md_mounts[@]}"}; do
        umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
        if mountpoint -q "$m"; then
            bench_log "cannot unmount $m: keeping $BENCH_TMP"
            BENCH_KEEP=1
        fi
    done
    bench_cleanup
}
trap md_cleanup EXIT

md_skip() { # SYSTEM REASON
    bench_log "skipping $1: $2"
    echo "$1: $2" >>"$skipped"
    systems=$(echo " $systems " | sed "s/ $1 / /g")
}

# Each prints why it failed on stderr.
md_mount_ext4() {
    bench_mount_ext4 "$BENCH_TMP/ext4.img" "$BENCH_TMP/ext4" "$fs_size" || return 1
    md_mounts+=("$BENCH_TMP/ext4")
}

md_mount_tmpfs() {
    local mnt=$BENCH_TMP/tmpfs
    mkdir -p "$mnt" && mount -t tmpfs -o size="$fs_size" tmpfs "$mnt" || return 1
    md_mounts+=("$mnt")
}

case " $systems " in *" ext4-fsync "*)
    [ -n "$mdtest" ] && md_skip ext4-fsync "mdtest makes no fsync per operation" ;;
esac
why=$BENCH_TMP/mount-errors
case " $systems " in *" ext4"*)
    if [ "$(id -u)" != 0 ]; then
        md_skip ext4 "needs root (mount -o loop)"; md_skip ext4-fsync "needs root (mount -o loop)"
    elif ! md_mount_ext4 2>"$why"; then
        md_skip ext4 "$(tr '\n' ' ' <"$why")"; md_skip ext4-fsync "no ext4 (above)"
    fi ;;
esac
case " $systems " in *" tmpfs "*)
    if [ "$(id -u)" != 0 ]; then
        md_skip tmpfs "needs root (mount -t tmpfs)"
    elif ! md_mount_tmpfs 2>"$why"; then
        md_skip tmpfs "$(tr '\n' ' ' <"$why")"
    fi ;;
esac
if mountpoint -q "$BENCH_TMP/ext4" 2>/dev/null; then
    bench_log "ext4: $(awk -v m="$BENCH_TMP/ext4" '$2 == m { print $1, $4 }' /proc/mounts)," \
        "features: $(dumpe2fs -h "$BENCH_TMP/ext4.img" 2>/dev/null | sed -n 's/^Filesystem features: *//p')"
fi

bench_log "machine: $(bench_machine)"
bench_log "$BENCH_RANKS ranks x $items items, shapes: $shapes; systems:$systems; $reps reps"
case " $systems " in *" stripefs "*)
    bench_write_config "$BENCH_TMP/state" 4 3
    [ "$meta_mirror" = 1 ] && bench_meta_mirror_config "$BENCH_TMP/state"
    bench_start_service "$BENCH_TMP/state" 3
    [ "$meta_mirror" = 1 ] && bench_wait_meta_mirror ;;
esac

# Wait for the background deletions of the last stripefs side, and the disk.
md_settle() {
    bench_wait_deletions
    bench_settle
}

md_dir() { # SYSTEM SHAPE REP: a fresh directory's path
    case $1 in
    stripefs) echo "/stripefs/md-$2-$3" ;;
    ext4 | ext4-fsync) echo "$BENCH_TMP/ext4/md-$2-$3-$1" ;;
    tmpfs) echo "$BENCH_TMP/tmpfs/md-$2-$3" ;;
    esac
}

# A real mdtest's SUMMARY rates as our CSV lines.
md_mdtest_csv() { # SYSTEM SHAPE REP BYTES < mdtest output
    awk -v s="$1" -v sh="$2" -v l="mdtest-rep$3" -v np="$BENCH_RANKS" -v n="$items" -v b="$4" '
        BEGIN { m["Directory creation"] = "dir_create"; m["Directory stat"] = "dir_stat"
            m["Directory removal"] = "dir_remove"; m["File creation"] = "file_create"
            m["File stat"] = "file_stat"; m["File read"] = "file_read"; m["File removal"] = "file_remove"
            m["Tree creation"] = "tree_create"; m["Tree removal"] = "tree_remove" }
        /^SUMMARY rate/ { on = 1; next }
        on && /^ *$/ && seen { on = 0 }
        on && /:/ { split($0, a, ":"); name = a[1]; gsub(/^ +| +$/, "", name); split(a[2], v, " "); seen = 1
            # max, min, mean, std dev: the mean
            if (name in m) printf "%s,%s,%s,%d,%d,%d,%s,,%s,0,,,\n", l, s, sh, np, n, b, m[name], v[3] }'
}

failed=0
run_side() { # SYSTEM SHAPE REP
    local system=$1 shape=$2 rep=$3 dir out args bytes=0
    local -a run
    dir=$(md_dir "$system" "$shape" "$rep")
    md_settle
    [ "$shape" = hard ] && bytes=3901
    if [ "$system" = stripefs ]; then
        run=(bench_mpi "$BENCH_RANKS")
    else
        run=("${BENCH_MPIRUN[@]}" -np "$BENCH_RANKS")
    fi
    if [ -n "$mdtest" ]; then
        args="-F -u -n $items"
        [ "$shape" = hard ] && args="-n $items -w 3901 -e 3901"
        if [ "$system" = stripefs ]; then
            bench_ctl mkdir "${dir#/stripefs}" >/dev/null
        else
            mkdir "$dir"
        fi
        # shellcheck disable=SC2086
        if ! out=$("${run[@]}" "$mdtest" -d "$dir" $args 2>&1); then
            failed=$((failed + 1))
            echo "$out" | tail -n 5 >&2
            bench_log "FAILED: mdtest $system $shape rep $rep"
        fi
        echo "$out" | md_mdtest_csv "$system" "$shape" "$rep" "$bytes" >>"$csv"
    else
        local -a flags=(-d "$dir" -n "$items" -s "$shape" -l "rep$rep" -B "$system")
        [ "$system" = ext4-fsync ] && flags+=(-D)
        [ "$system" = stripefs ] && flags+=(-P "$pause")
        if ! out=$("${run[@]}" "$md" "${flags[@]}" 2>&1); then
            failed=$((failed + 1))
            echo "$out" | grep -v '^csv,' | tail -n 8 >&2
            bench_log "FAILED: $system $shape rep $rep"
        fi
        echo "$out" | sed -n 's/^csv,//p' >>"$csv"
    fi
    tail -n +2 "$csv" | awk -F, -v s="$system" -v sh="$shape" -v l="rep$rep" '
        $2 == s && $3 == sh && ($1 == l || $1 == "mdtest-" l) { r = r sprintf(" %s %.0f", $7, $9) }
        END { printf "  %-10s %-4s %s:%s\n", s, sh, l, r }' >&2
}

for rep in $(seq "$reps"); do
    order=$systems
    [ $((rep % 2)) = 0 ] && order=$(echo "$systems" | tr ' ' '\n' | tac | tr '\n' ' ')
    for shape in $shapes; do
        for system in $order; do
            run_side "$system" "$shape" "$rep"
        done
    done
done
md_settle
bench_stop_service

# min / median / max per shape, phase and system
awk -F, 'function sort(k,   c, i, j, t) {
        c = cnt[k]
        for (i = 2; i <= c; i++) { t = v[k, i]; for (j = i - 1; j >= 1 && v[k, j] > t; j--) v[k, j + 1] = v[k, j]; v[k, j + 1] = t }
        return c }
    NR > 1 && $9 != "" { k = $3 SUBSEP $7 SUBSEP $2; v[k, ++cnt[k]] = $9 + 0;
        if (!(($3, $7) in seen)) { seen[$3, $7] = 1; order[n++] = $3 SUBSEP $7 } }
    END { print "shape,phase,system,reps,min,median,max";
        for (i = 0; i < n; i++) for (k in cnt) {
            split(k, f, SUBSEP); if (f[1] SUBSEP f[2] != order[i]) continue
            c = sort(k); med = c % 2 ? v[k, (c + 1) / 2] : (v[k, c / 2] + v[k, c / 2 + 1]) / 2
            printf "%s,%s,%s,%d,%.1f,%.1f,%.1f\n", f[1], f[2], f[3], c, v[k, 1], med, v[k, c] } }' \
    "$csv" >"$summary"

# group-commit batch sizes of each stripefs phase: the server's "last burst"
# lines, each given to the phase in whose time its first client batch fell
log=$BENCH_TMP/state/service.log
if [ -f "$log" ] && [ -z "$mdtest" ]; then
    {
        echo "rep,shape,phase,writes,commits,mean_writes,max_writes,c1,c2,c3_4,c5_8,c9_16,c17_32,c33_64,c65_,reads,read_batches,mean_reads,max_reads,reads_at_once"
        awk -F, 'FNR == NR { if (FNR > 1 && $2 == "stripefs") { n++; l[n] = $1; sh[n] = $3; p[n] = $7; t[n] = $12; e[n] = $13 } next }
            /group commit, last burst:/ {
                s = $0; sub(/.*last burst: /, "", s); gsub(/[(),;:]/, " ", s); split(s, w, " ")
                # w: W writes in C commits mean M max X commits by writes 1 a 2 b 3-4 c ... 65+ h R reads in B batches ...
                # ... clients batches from F to L  A reads answered on arrival
                ao = 0
                for (i = 1; i <= length(w); i++) if (w[i] == "from") { first = w[i + 1] + 0; ao = w[i + 4] + 0 }
                best = 0
                for (i = 1; i <= n; i++) if (t[i] - 0.05 <= first && (!best || t[i] > t[best])) best = i
                # a burst that began after its phase (and its verification) does not belong to the phase
                if (!best || first > e[best] + 0.5) next
                printf "%s,%s,%s,%s,%s,%s,%s", substr(l[best], 4), sh[best], p[best], w[1], w[4], w[7], w[9]
                for (j = 14; j <= 28; j += 2) printf ",%s", w[j]
                printf ",%s,%s,%s,%s,%s\n", w[29], w[32], w[38], w[40], ao }' "$csv" "$log"
    } >"$batches"
fi

echo
echo "metadata rates, ops/s: median (min-max) of $reps; $BENCH_RANKS ranks x $items items; stripefs $(bench_where); $(bench_machine)"
awk -F, 'NR > 1 { k = $1 SUBSEP $2; med[k, $3] = $6; cell[k, $3] = sprintf("%.0f (%.0f-%.0f)", $6, $5, $7)
        if (!(k in seen)) { seen[k] = 1; o[n++] = k } }
    function ratio(a, b) { return (a != "" && b + 0 > 0) ? sprintf(a / b < 0.1 ? "%.3f" : "%.2f", a / b) : "-" }
    END { print "shape,phase,stripefs,ext4,ext4-fsync,tmpfs,s/ext4,s/ext4-fsync,s/tmpfs"
        for (i = 0; i < n; i++) { k = o[i]; split(k, f, SUBSEP)
            printf "%s,%s", f[1], f[2]
            for (j = 1; j <= 4; j++) { s = j == 1 ? "stripefs" : j == 2 ? "ext4" : j == 3 ? "ext4-fsync" : "tmpfs"
                printf ",%s", ((k, s) in cell) ? cell[k, s] : "-" }
            printf ",%s,%s,%s\n", ratio(med[k, "stripefs"], med[k, "ext4"]),
                ratio(med[k, "stripefs"], med[k, "ext4-fsync"]), ratio(med[k, "stripefs"], med[k, "tmpfs"]) } }' \
    "$summary" | bench_table
if [ -s "$batches" ]; then
    echo
    echo "stripefs group commits per phase, all reps: the clients' writes per durable commit, reads per batch without a write, and reads answered on arrival (no batch: the metadata thread was idle)"
    awk -F, 'NR > 1 { k = $2 SUBSEP $3; if (!(k in w)) o[n++] = k; w[k] += $4; c[k] += $5; if ($7 > m[k]) m[k] = $7
            r[k] += $16; b[k] += $17; if ($19 > rm[k]) rm[k] = $19; ao[k] += $20 }
        END { print "shape,phase,writes,commits,writes/commit,max,reads,read batches,reads/batch,max,reads at once"
            for (i = 0; i < n; i++) { k = o[i]; split(k, f, SUBSEP)
                printf "%s,%s,%d,%d,%s,%d,%d,%d,%s,%d,%d\n", f[1], f[2], w[k], c[k], c[k] ? sprintf("%.2f", w[k] / c[k]) : "-",
                    m[k], r[k], b[k], b[k] ? sprintf("%.2f", r[k] / b[k]) : "-", rm[k], ao[k] } }' "$batches" | bench_table
fi
if [ -s "$skipped" ]; then
    echo
    echo "skipped:"; sed 's/^/  /' "$skipped"
fi
# the goal line of issue 12 (run-all.sh gathers it)
awk -F, '$2 == "file_create" && $1 == "easy" { if ($3 == "stripefs") s = $6; if ($3 == "ext4") e = $6 }
    END { if (s && e) printf "goal: mdtest-easy file creates >= 0.5 x journaled ext4: %.2f (%s)\n", s / e,
        (s / e >= 0.5 ? "met" : "NOT met") }' "$summary" | tee "$BENCH_OUT/md-goals.txt"
echo "results: $csv, $summary${batches:+, $batches}"
bad=$(awk -F, 'NR > 1 && ($10 + 0 > 0 || $11 + 0 > 0)' "$csv" | wc -l)
[ "$bad" = 0 ] || bench_die "$bad phases had errors or failed verification (md.csv columns errors, verify_errors)"
[ "$failed" = 0 ] || bench_die "$failed runs failed"
