#!/usr/bin/env bash
# io500.sh: the phases of IO500 (ior-easy, ior-hard, mdtest-easy,
# mdtest-hard, find) in IO500's order, on stripefs and, in the same run, on a
# journaled ext4 on the same disk (and, with --peers, on GlusterFS and
# CephFS), with an IO500-shaped score per system: the geometric mean of the
# bandwidth phases (GiB/s), of the metadata phases (kIOPS), and of the two.
# It is an IO500-*shaped* score on one machine with our own programs (no IOR,
# no mdtest, no stonewalling, fixed sizes): not an IO500 submission, and not
# comparable with one.
#
#   bash benchmarks/io500.sh [--quick|--full] [--peers] [--reps 3] [--systems "stripefs ext4"]
#        [--easy-size 128M] [--hard-segments 2000] [--easy-items 2000] [--hard-items 1000]
#        [--fio-time 10] [--ranks 4] [--cluster] [--out DIR] [--build DIR] [--tmp DIR] [--keep]
#
# --cluster: the stripefs side across the four namespace hosts of
# ci/cluster.sh (benchmarks/lib_cluster.sh: servers on imaging-01..03, the
# client ranks on imaging-04, UCX over TCP); ext4 and the peers as without it.
#
# Phases (N = --ranks ranks; each timed from a barrier to the slowest rank):
#   ior-easy write/read  a file per rank, 2 MiB transfers, --easy-size per rank,
#                        MPI_File_sync before close (in the time)
#   ior-hard write/read  one shared file, 47008-byte transfers interleaved by
#                        rank (IOR -t 47008 -b 47008 -s S), --hard-segments per
#                        rank, MPI_File_sync before close
#   mdtest-easy create/stat/delete  a directory per rank, empty files
#   mdtest-hard create/stat/read/delete  one shared directory, 3901-byte files
#                        written at creation and read back
#   find                 every entry of the side's tree examined (readdir,
#                        lstat), counting files named *01* of 3901 bytes
# Reads are done by the next rank (IOR's -C). Systems: stripefs (its default,
# crash-safe settings: meta.sync; ior through its MPI-IO driver, the rest
# through the POSIX preload), ext4 (a journaled ext4 on a loop file, ior
# through ROMIO's ufs driver of the same library), and with --peers
# gluster-dist, gluster-rep, ceph-plain, ceph-rep (benchmarks/peers/*.sh;
# FUSE mounts, ior through ROMIO ufs on the mount), with stripefs-mirror
# beside the replica-2 peers: the same service with mirror groups (101+102,
# 103+104; every file mirrored, a write acknowledged when both copies hold
# it; also in --systems without --peers). The disk's own ceiling
# (fio, direct I/O, 1 MiB, sequential write and read) and one core's memcpy
# are measured in the same run. Needs root (loop mount; the peers).
. "$(dirname "$0")/lib.sh"
bench_setup io500 "$@"

reps=3
systems="stripefs ext4"
peers=0
full=0
easy_size=128M
hard_segments=2000
easy_items=2000
hard_items=1000
fio_time=10
fs_size=8G
set -- ${BENCH_ARGS[@]+"${BENCH_ARGS[@]}"}
for a in "$@"; do [ "$a" = --full ] && full=1; done
if [ "$BENCH_QUICK" = 1 ]; then
    easy_size=32M; hard_segments=400; easy_items=500; hard_items=250; fio_time=3; fs_size=2G
elif [ "$full" = 1 ]; then
    easy_size=1G; hard_segments=10000; easy_items=10000; hard_items=5000; fio_time=20; fs_size=16G
fi
while [ $# -gt 0 ]; do
    case $1 in
    --full) shift ;;
    --peers) peers=1; shift ;;
    --reps) reps=$2; shift 2 ;;
    --systems) systems=$2; shift 2 ;;
    --easy-size) easy_size=$2; shift 2 ;;
    --hard-segments) hard_segments=$2; shift 2 ;;
    --easy-items) easy_items=$2; shift 2 ;;
    --hard-items) hard_items=$2; shift 2 ;;
    --fio-time) fio_time=$2; shift 2 ;;
    --fs-size) fs_size=$2; shift 2 ;;
    -h|--help) sed -n '2,/^\. /p' "$0" | sed -e '/^\. /d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) bench_die "unknown option '$1' (see --help)" ;;
    esac
done
[ "$peers" = 1 ] && systems="$systems stripefs-mirror gluster ceph"
[ "$(id -u)" = 0 ] || bench_die "io500.sh mounts a journaled ext4 on a loop file (and the peers): run it as root"
easy_xfer=2097152
hard_xfer=47008
easy_bytes=$(numfmt --from=iec "$easy_size") || bench_die "bad --easy-size '$easy_size'"
[ $((easy_bytes % easy_xfer)) = 0 ] || bench_die "--easy-size must be a multiple of 2 MiB"
hard_bytes=$((hard_segments * hard_xfer))
N=$BENCH_RANKS

io=$BENCH_BUILD/benchmarks/sfs_bench_io
md=$BENCH_BUILD/benchmarks/sfs_bench_md
find_prog=$BENCH_BUILD/benchmarks/sfs_bench_find
run=$BENCH_BUILD/tools/stripefs-run
for p in "$io" "$md" "$find_prog" "$run"; do [ -x "$p" ] || bench_die "$p is missing (make -C $BENCH_BUILD bench)"; done
command -v fio >/dev/null && command -v jq >/dev/null || bench_die "fio or jq is missing (apt-get install fio jq)"
csv=$BENCH_OUT/io500.csv
summary=$BENCH_OUT/io500-summary.csv
scores=$BENCH_OUT/io500-score.csv
ceilings=$BENCH_OUT/io500-ceilings.csv
echo "rep,system,phase,unit,value,seconds,amount,verified" >"$csv"

# --- the ceilings: the disk under the test directories and one core's memcpy
bench_log "machine: $(bench_machine)"
bench_ceilings "$ceilings" "$fio_time"
ceiling_of() { awk -F, -v w="$1" '$1 == w { print $2 }' "$ceilings"; }
fio_w=$(ceiling_of disk-direct-write)
fio_r=$(ceiling_of disk-direct-read)
memcpy=$(ceiling_of memcpy-one-core)
disk=$(df -P "$BENCH_TMP" | awk 'NR == 2 { print $1 " (" $6 ")" }')

# --- the sides
why=$BENCH_TMP/mount-errors
case " $systems " in *" ext4 "*)
    bench_mount_ext4 "$BENCH_TMP/ext4.img" "$BENCH_TMP/ext4" "$fs_size" 2>"$why" ||
        bench_die "cannot make the journaled ext4: $(tr '\n' ' ' <"$why")"
    bench_log "ext4: $(awk -v m="$BENCH_TMP/ext4" '$2 == m { print $1, $4 }' /proc/mounts)" ;;
esac
if [ "$peers" = 1 ]; then
    PEER_NAME=io500
    . "$BENCH_SRC/benchmarks/peers/common.sh"
    peer_install fio
fi
PEER_UP=""
PEER_DIR=""
peer_down() {
    [ -n "$PEER_UP" ] || return 0
    bash "$BENCH_SRC/benchmarks/peers/$PEER_UP.sh" down "$PEER_DIR" || bench_log "$PEER_UP.sh down failed"
    PEER_UP=""
}
trap 'rc=$?; peer_down; bench_cleanup; exit $rc' EXIT

# find's expectations: every entry below a side's root, and the hard files
# whose name has "01" (their size is 3901; nothing else is)
find_entries=$((4 + N + 1 + N + N * easy_items + 1 + N * hard_items))
find_matches=$(awk -v n="$N" -v h="$hard_items" 'BEGIN { for (r = 0; r < n; r++) for (i = 0; i < h; i++)
    if (index("file.mdtest." r "." i, "01")) c++; print c + 0 }')

# What a failed program said: its own messages first, then MPI's last lines.
io_show_failure() {
    { echo "$1" | grep '^sfs_bench_' | head -n 6; echo "$1" | grep -v '^csv,' | tail -n 3; } >&2
}

failed=0
record() { # REP SYSTEM PHASE UNIT VALUE SECONDS AMOUNT VERIFIED
    local IFS=,
    echo "$*" >>"$csv"
    printf '  %-13s %-19s %10s %-6s (%s s)%s\n' "$2" "$3" "$5" "$4" "$6" \
        "$([ "$8" = ok ] || echo " $8")" >&2
    [ "$8" = ok ] || failed=$((failed + 1))
}

# One ior phase: sfs_bench_io's write or read line -> GiB/s.
ior_phase() { # REP SYSTEM PHASE MPI-IO-PATH FLAGS...
    local rep=$1 system=$2 phase=$3 path=$4 out line v
    shift 4
    local -a mpi=("${BENCH_MPIRUN[@]}" -np "$N" "$run" --no-posix)
    [[ $system == stripefs* ]] && mpi=(bench_mpi "$N")
    out=$("${mpi[@]}" "$io" -o "$path" -k -l "io500-$rep" "$@" </dev/null 2>&1)
    local rc=$?
    line=$(echo "$out" | grep '^csv,' | tail -n 1)
    # csv,label,api,layout,access,ranks,xfer,per_rank,op,seconds,MiB_s,...,verified
    v=$(echo "$line" | awk -F, '{ v = $NF; if (v == "-") v = "ok"; print v }')
    [ $rc = 0 ] || { io_show_failure "$out"; v=FAILED; }
    record "$rep" "$system" "$phase" GiB_s \
        "$(echo "$line" | awk -F, '{ printf "%.3f", $11 / 1024 }')" \
        "$(echo "$line" | awk -F, '{ print $10 }')" \
        "$(echo "$line" | awk -F, '{ print $6 * $8 }')" "${v:-FAILED}"
}

# One or more mdtest phases: sfs_bench_md's lines -> kIOPS, one record per
# phase named in NAMES (tree phases are run but not recorded, as in IO500).
md_phase() { # REP SYSTEM DIR SHAPE ITEMS PHASES "ourphase=io500name ..."
    local rep=$1 system=$2 dir=$3 shape=$4 items=$5 phases=$6 names=$7 out rc p name v s a ok
    local -a mpi=("${BENCH_MPIRUN[@]}" -np "$N")
    [[ $system == stripefs* ]] && mpi=(bench_mpi "$N")
    out=$("${mpi[@]}" "$md" -d "$dir" -s "$shape" -n "$items" -z 0 -p "$phases" \
        -l "io500-$rep" -B "$system" </dev/null 2>&1)
    rc=$?
    [ $rc = 0 ] || io_show_failure "$out"
    for p in $names; do
        name=${p#*=}
        p=${p%%=*}
        # csv,label,system,shape,ranks,items,bytes,phase,seconds,ops_s,errors,verify_errors,...
        read -r v s a ok < <(echo "$out" | awk -F, -v p="$p" -v rc="$rc" '$1 == "csv" && $8 == p {
            printf "%.3f %s %d %s\n", $10 / 1000, $9, $5 * $6, ($11 + $12 == 0 && rc == 0) ? "ok" : "FAILED"
            found = 1 }
            END { if (!found) print "0 - 0 FAILED" }')
        record "$rep" "$system" "$name" kIOPS "$v" "$s" "$a" "$ok"
    done
}

find_phase() { # REP SYSTEM DIR
    local rep=$1 system=$2 dir=$3 out rc line
    local -a mpi=("${BENCH_MPIRUN[@]}" -np "$N")
    [[ $system == stripefs* ]] && mpi=(bench_mpi "$N")
    out=$("${mpi[@]}" "$find_prog" -d "$dir" -n 01 -S 3901 -e "$find_matches" -E "$find_entries" \
        -l "io500-$rep" -B "$system" </dev/null 2>&1)
    rc=$?
    [ $rc = 0 ] || io_show_failure "$out"
    # csv,label,system,ranks,entries,files,matches,seconds,ops_s,errors,verify_errors
    line=$(echo "$out" | grep '^csv,' | tail -n 1)
    record "$rep" "$system" find kIOPS "$(echo "$line" | awk -F, '{ printf "%.3f", $9 / 1000 }')" \
        "$(echo "$line" | awk -F, '{ print $8 }')" "$(echo "$line" | awk -F, '{ print $5 }')" \
        "$([ $rc = 0 ] && [ -n "$line" ] && echo ok || echo FAILED)"
}

# All phases of one side in IO500's order. ROOT: its tree as the POSIX
# programs see it; IOROOT: the same as an MPI-IO name.
run_phases() { # REP SYSTEM ROOT IOROOT
    local rep=$1 sys=$2 root=$3 ioroot=$4
    local e=(-F -t "$easy_xfer" -s "$easy_bytes") h=(-t "$hard_xfer" -s "$hard_bytes")
    bench_log "rep $rep: $sys"
    ior_phase "$rep" "$sys" ior-easy-write "$ioroot/ior-easy/file" "${e[@]}" -e -w
    md_phase "$rep" "$sys" "$root/mdt-easy" easy "$easy_items" tree_create,file_create \
        "file_create=mdtest-easy-write"
    ior_phase "$rep" "$sys" ior-hard-write "$ioroot/ior-hard/file" "${h[@]}" -e -w
    md_phase "$rep" "$sys" "$root/mdt-hard" hard "$hard_items" tree_create,file_create \
        "file_create=mdtest-hard-write"
    find_phase "$rep" "$sys" "$root"
    ior_phase "$rep" "$sys" ior-easy-read "$ioroot/ior-easy/file" "${e[@]}" -r -R
    md_phase "$rep" "$sys" "$root/mdt-easy" easy "$easy_items" file_stat "file_stat=mdtest-easy-stat"
    ior_phase "$rep" "$sys" ior-hard-read "$ioroot/ior-hard/file" "${h[@]}" -r -R
    md_phase "$rep" "$sys" "$root/mdt-hard" hard "$hard_items" file_stat "file_stat=mdtest-hard-stat"
    md_phase "$rep" "$sys" "$root/mdt-easy" easy "$easy_items" file_remove,tree_remove \
        "file_remove=mdtest-easy-delete"
    md_phase "$rep" "$sys" "$root/mdt-hard" hard "$hard_items" file_read "file_read=mdtest-hard-read"
    md_phase "$rep" "$sys" "$root/mdt-hard" hard "$hard_items" file_remove,tree_remove \
        "file_remove=mdtest-hard-delete"
}

run_system() { # REP SYSTEM
    local rep=$1 system=$2 state root name mnt out
    bench_settle
    case $system in
    stripefs|stripefs-mirror)
        state=$BENCH_TMP/state-$rep
        bench_write_config "$state" 4 3
        [ "$system" = stripefs-mirror ] && bench_mirror_config "$state"
        bench_start_service "$state" 3
        root=/io500-r$rep
        bench_ctl mkdir "$root" >/dev/null || bench_die "stripefs-ctl mkdir $root failed"
        # mirrored: every file below over both groups, each chunk on both
        # members (a write is acknowledged when both copies hold it)
        if [ "$system" = stripefs-mirror ]; then
            bench_ctl setpattern --mirror --numtargets 2 "$root" >/dev/null ||
                bench_die "stripefs-ctl setpattern --mirror $root failed"
        fi
        for d in "$root/ior-easy" "$root/ior-hard"; do
            bench_ctl mkdir "$d" >/dev/null || bench_die "stripefs-ctl mkdir $d failed"
        done
        run_phases "$rep" "$system" "/stripefs$root" "stripefs:$root"
        # the ior files go after the timed phases, as in IO500, and their
        # chunk files before the next side
        bench_ctl rm -r "$root" >/dev/null || bench_log "stripefs-ctl rm -r $root failed"
        bench_wait_deletions
        bench_stop_service
        rm -rf "$state"
        ;;
    ext4)
        root=$BENCH_TMP/ext4/io500-r$rep
        mkdir -p "$root/ior-easy" "$root/ior-hard" || bench_die "cannot create $root"
        run_phases "$rep" ext4 "$root" "$root"
        rm -rf "$root"
        ;;
    gluster|ceph)
        PEER_DIR=$BENCH_TMP/$system-$rep
        bench_log "rep $rep: bringing $system up"
        PEER_UP=$system
        out=$(bash "$BENCH_SRC/benchmarks/peers/$system.sh" up "$PEER_DIR") || {
            PEER_UP=""
            failed=$((failed + 1))
            bench_log "FAILED: $system did not come up (skipped in rep $rep)"
            return 0
        }
        while read -r name mnt; do
            root=$mnt/io500-r$rep
            mkdir -p "$root/ior-easy" "$root/ior-hard" || bench_die "cannot create $root"
            run_phases "$rep" "$system-$name" "$root" "$root"
            rm -rf "$root"
            bench_settle 2
        done <<<"$out"
        peer_down
        ;;
    *) bench_die "unknown system '$system' (stripefs, stripefs-mirror, ext4, gluster, ceph)" ;;
    esac
}

bench_log "$N ranks; ior-easy $easy_size/rank in 2 MiB, ior-hard $hard_segments x 47008 B/rank;" \
    "mdtest-easy $easy_items, mdtest-hard $hard_items files/rank; systems: $systems; $reps reps"
start_time=$(date +%s)
read -r -a sys <<<"$systems"
for rep in $(seq "$reps"); do
    order=("${sys[@]}")
    if [ $((rep % 2)) = 0 ]; then # backward in even reps
        order=()
        for ((k = ${#sys[@]} - 1; k >= 0; k--)); do order+=("${sys[$k]}"); done
    fi
    for system in "${order[@]}"; do
        run_system "$rep" "$system"
    done
done

# --- summary: min / median / max per system and phase (failed phases left out)
awk -F, 'NR > 1 && $8 == "ok" { k = $2 SUBSEP $3; v[k, ++c[k]] = $5 + 0; u[k] = $4
        if (!(k in seen)) { seen[k] = 1; o[n++] = k } }
    END { print "system,phase,unit,reps,min,median,max"
        for (i = 0; i < n; i++) { k = o[i]; m = c[k]
            for (a = 1; a <= m; a++) x[a] = v[k, a]
            for (a = 2; a <= m; a++) { t = x[a]; for (b = a - 1; b >= 1 && x[b] > t; b--) x[b + 1] = x[b]; x[b + 1] = t }
            med = m % 2 ? x[(m + 1) / 2] : (x[m / 2] + x[m / 2 + 1]) / 2
            split(k, p, SUBSEP)
            printf "%s,%s,%s,%d,%.3f,%.3f,%.3f\n", p[1], p[2], u[k], m, x[1], med, x[m] } }' \
    "$csv" >"$summary"

# --- scores: IO500's geometric means, of the medians, and per rep (min-max)
awk -F, 'function gm(s, n) { return n ? exp(s / n) : 0 }
    FNR == NR { if (FNR > 1) { s = $1; if (!(s in seen)) { seen[s] = 1; o[n++] = s }
            if ($3 == "GiB_s") { bs[s] += log($6 > 0 ? $6 : 1e-9); bn[s]++ }
            else { ms[s] += log($6 > 0 ? $6 : 1e-9); mn[s]++ } } next }
    FNR > 1 { k = $1 SUBSEP $2; if ($8 != "ok" || $5 <= 0) { bad[k] = 1; next }
        if ($4 == "GiB_s") { rb[k] += log($5); rbn[k]++ } else { rm[k] += log($5); rmn[k]++ }
        if (!(k in rk)) { rk[k] = 1; reps[$2] = reps[$2] " " $1 } }
    END { print "system,bw_GiB_s,md_kIOPS,score,reps,score_min,score_max"
        for (i = 0; i < n; i++) { s = o[i]; b = gm(bs[s], bn[s]); m = gm(ms[s], mn[s])
            lo = ""; hi = ""; c = 0; split(reps[s], rr, " ")
            for (j in rr) { k = rr[j] SUBSEP s
                if (bad[k] || rbn[k] != 4 || rmn[k] != 8) continue
                sc = sqrt(gm(rb[k], rbn[k]) * gm(rm[k], rmn[k])); c++
                if (lo == "" || sc < lo) lo = sc; if (hi == "" || sc > hi) hi = sc }
            printf "%s,%.3f,%.3f,%.3f,%d,%s,%s\n", s, b, m, sqrt(b * m), c,
                lo == "" ? "-" : sprintf("%.3f", lo), hi == "" ? "-" : sprintf("%.3f", hi) } }' \
    "$summary" "$csv" >"$scores"

echo
echo "IO500-shaped phases: median [min-max] of $reps reps, $N ranks, stripefs $(bench_where) ($(bench_machine)," \
    "$(($(date +%s) - start_time)) s)"
echo "sizes: ior-easy $N x $easy_size (2 MiB transfers), ior-hard $N x $hard_segments x 47008 B," \
    "mdtest-easy $N x $easy_items, mdtest-hard $N x $hard_items files"
awk -F, 'NR > 1 { s = $1; if (!(s in seen)) { seen[s] = 1; o[n++] = s }
        if (!($2 in ps)) { ps[$2] = 1; ph[m++] = $2 }
        cell[$2, s] = sprintf($6 < 10 ? "%.3g [%.3g-%.3g]" : "%.0f [%.0f-%.0f]", $6, $5, $7); unit[$2] = $3 }
    END { printf "phase"; for (i = 0; i < n; i++) printf ",%s", o[i]; printf "\n"
        for (j = 0; j < m; j++) { p = ph[j]; printf "%s (%s)", p, unit[p] == "GiB_s" ? "GiB/s" : "kIOPS"
            for (i = 0; i < n; i++) printf ",%s", ((p, o[i]) in cell) ? cell[p, o[i]] : "-"; printf "\n" } }' \
    "$summary" | bench_table -o ' | '
echo
echo "IO500-shaped score (geometric means, as IO500 computes them; one machine, our programs:"
echo "not an IO500 submission). Of the phase medians; in brackets the range of per-rep scores:"
awk -F, 'NR == 1 { print "system,bandwidth GiB/s,metadata kIOPS,score"; next }
    { printf "%s,%.3f,%.3f,%.3f [%s-%s of %d reps]\n", $1, $2, $3, $4, $6, $7, $5 }' "$scores" |
    bench_table -o ' | '
echo
echo "ceilings, same run: disk direct I/O (fio, 1 MiB, $fio_time s) write ${fio_w:--} MiB/s," \
    "read ${fio_r:--} MiB/s on $disk; one core memcpy ${memcpy:--} MiB/s"
bash "$BENCH_SRC/benchmarks/plot.sh" io500 "$summary" "$BENCH_OUT/io500.png" ||
    bench_log "plotting failed (is gnuplot installed?)"
echo "results: $csv, $summary, $scores, $ceilings, $BENCH_OUT/io500.png"
[ "$failed" = 0 ] || bench_die "$failed phases failed or did not verify (io500.csv column verified)"
