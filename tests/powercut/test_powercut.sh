#!/usr/bin/env bash
# Power loss: the one-host service's metadata store and targets live on
# sfs_powercut_fs, a FUSE file system that keeps only what was fsync'ed
# (tests/powercut/README.md has the model). A workload of mkdir, synced
# writes, rename, create and unlink runs through the preload and journals
# each step that succeeded; the power is cut (the FUSE fs writes out its
# durable state and fails all later I/O), then every server rank is killed
# with SIGKILL. The durable state is mounted again, the service restarted,
# and every acknowledged step must be there, every synced byte as written.
# The file system keeps names POSIX's way (--strict): a new name survives
# only through an fsync of its directory, as the servers make them
# (SFS_POWERCUT_STRICT=0: the ext4-like model, where a file's fsync also
# keeps its name). Two negative controls show the harness can fail: with meta.sync false
# (LMDB without its fsync) and with the workload's fsyncs left out, it must
# find something lost; if it does not, this test fails.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/preload/preload_lib.sh"

PCFS="$SFS_BUILD/tests/powercut/sfs_powercut_fs"
LOAD="$SFS_BUILD/tests/powercut/sfs_powercut_load"
[ -x "$PCFS" ] || sfs_skip "tests/powercut/sfs_powercut_fs is not built (configure found no fuse3: install libfuse3-dev and fuse3, see ci/install-deps.sh)"
[ -x "$LOAD" ] || sfs_skip "tests/powercut/sfs_powercut_load is not built (make check TESTS=)"
[ -c /dev/fuse ] || sfs_skip "/dev/fuse does not exist (no FUSE in this kernel or container)"
command -v fusermount3 >/dev/null || sfs_skip "fusermount3 is not installed (Debian package fuse3)"
[ "$(id -u)" = 0 ] || sfs_skip "the power-cut test mounts FUSE file systems with allow_other: needs root"

PC_FS_PID=""
PC_MOUNT=""
# seconds the workload runs before the cut
PC_LOAD_S=${SFS_POWERCUT_LOAD_S:-4}
# workloads running at once
PC_CLIENTS=${SFS_POWERCUT_CLIENTS:-3}

pc_mount() { # backing image mountpoint [--strict]
    local backing=$1 image=$2 mnt=$3 strict=${4:-}
    mkdir -p "$mnt"
    # shellcheck disable=SC2086
    "$PCFS" $strict "$backing" "$image" "$mnt" -o allow_other,default_permissions \
        >>"$SFS_TEST_TMP/powercut-fs.log" 2>&1 &
    PC_FS_PID=$!
    PC_MOUNT=$mnt
    for _ in $(seq 100); do
        mountpoint -q "$mnt" && return 0
        kill -0 $PC_FS_PID 2>/dev/null || break
        sleep 0.1
    done
    tail -n 5 "$SFS_TEST_TMP/powercut-fs.log" >&2
    sfs_fail "sfs_powercut_fs did not mount $backing on $mnt"
}

pc_umount() {
    [ -n "$PC_MOUNT" ] || return 0
    if ! fusermount3 -u "$PC_MOUNT" 2>"$SFS_TEST_TMP/umount.err"; then
        sfs_log "unmount of $PC_MOUNT: $(cat "$SFS_TEST_TMP/umount.err"); users: $(fuser -vm "$PC_MOUNT" 2>&1 | tr '\n' ' ')"
        fusermount3 -uz "$PC_MOUNT" || sfs_fail "cannot unmount $PC_MOUNT"
    fi
    # A mount namespace made while it was mounted (another test's
    # unshare or netns) keeps a copy, and the daemon serves that copy until
    # it goes (65 s was seen). The image is complete at the cut: stop it.
    for _ in $(seq 30); do
        kill -0 "$PC_FS_PID" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$PC_FS_PID" 2>/dev/null; then
        sfs_log "sfs_powercut_fs still runs 3 s after the unmount (a copy of the mount in another mount namespace?): stopping it"
        kill -TERM "$PC_FS_PID"
    fi
    wait "$PC_FS_PID" 2>/dev/null
    PC_FS_PID="" PC_MOUNT=""
}

pc_cleanup() {
    sfs_cleanup
    [ -n "$PC_MOUNT" ] && fusermount3 -uz "$PC_MOUNT" 2>/dev/null
    [ -n "$PC_FS_PID" ] && kill "$PC_FS_PID" 2>/dev/null
    return 0
}
trap pc_cleanup EXIT

# pc_run NAME META_SYNC(true|false) LOAD_ARGS: one cut; prints the check's
# report to $SFS_TEST_TMP/NAME.check and returns the check's status.
pc_run() {
    local name=$1 meta_sync=$2 load_args=$3 dir=$SFS_TEST_TMP/$1 rc
    mkdir -p "$dir/backing/meta" "$dir/backing/targets" "$dir/state"
    SFS_STATE=$dir/state SFS_SERVICE_LOG=$dir/service.log SFS_PORT=""
    # the state dir holds the config, connauth and munge socket (not part of
    # the test); its metadata store and targets are on the FUSE fs
    ln -s ../disk/meta "$SFS_STATE/meta"
    ln -s ../disk/targets "$SFS_STATE/targets"
    # names durable by directory fsyncs only, unless SFS_POWERCUT_STRICT=0
    local strict=--strict
    [ "${SFS_POWERCUT_STRICT:-1}" = 0 ] && strict=
    pc_mount "$dir/backing" "$dir/image" "$dir/disk" $strict
    sfs_start_service 3 --targets 2
    sfs_stop_service
    if [ "$meta_sync" = false ]; then
        sed -i 's/sync: true/sync: false/' "$SFS_STATE/stripefs.yaml"
        grep -q "sync: false" "$SFS_STATE/stripefs.yaml" || sfs_fail "cannot set meta.sync false"
    fi
    sfs_start_service 3
    # several clients at once, so that group commits hold several operations
    local c load_pids=()
    for c in $(seq "$PC_CLIENTS"); do
        # shellcheck disable=SC2086
        sfs_pl "$LOAD" run /stripefs/pc$c "$dir/journal$c" 100000 $load_args 2>"$dir/load$c.err" &
        load_pids+=($!)
    done
    sleep "$PC_LOAD_S"
    for c in $(seq "$PC_CLIENTS"); do
        kill -0 "${load_pids[c - 1]}" 2>/dev/null ||
            sfs_fail "$name: workload $c ended before the cut: $(cat "$dir/load$c.err")"
    done
    # the cut first (nothing after it is durable), then every rank dies
    echo cut >"$dir/disk/.powercut" || sfs_fail "$name: the power cut failed"
    sfs_kill9_service
    kill -9 "${load_pids[@]}" 2>/dev/null
    wait "${load_pids[@]}" 2>/dev/null
    sfs_log "$name: power cut after $(cat "$dir"/journal* | wc -l) acknowledged steps of $PC_CLIENTS clients;" \
        "$(grep 'power cut' "$SFS_TEST_TMP/powercut-fs.log" | tail -n 1)"
    pc_umount
    sfs_log "$name: unmounted"
    [ -d "$dir/image" ] || sfs_fail "$name: the FUSE fs wrote no durable image"
    # power back: the durable image is the disk now
    pc_mount "$dir/image" "$dir/image2" "$dir/disk"
    sfs_log "$name: the durable image is mounted"
    sfs_start_service 3
    rc=0
    for c in $(seq "$PC_CLIENTS"); do
        sfs_pl "$LOAD" check /stripefs/pc$c "$dir/journal$c" >"$dir/check$c" 2>&1
        case $? in
        0) ;;
        1) rc=1 ;;
        *) sfs_fail "$name: the check of client $c failed: $(tail -n 3 "$dir/check$c")" ;;
        esac
    done
    # the sum over the clients
    awk '/acknowledged .*found after the cut/ {
             k = substr($0, 1, index($0, "acknowledged") - 1); sub(/ +$/, "", k)
             if (!(k in a)) keys[n++] = k
             a[k] += $(NF - 5); f[k] += $NF }
         /^synced bytes/ {ba += $4; bf += $6}
         /^steps acknowledged/ {s += $3; c += $5; p += $7; l += $9}
         END {for (i = 0; i < n; i++)
                  printf "%-12s acknowledged %6d, found after the cut %6d\n", keys[i], a[keys[i]], f[keys[i]]
              printf "synced bytes acknowledged %d, found %d\n", ba, bf
              printf "steps acknowledged %d; checks %d, passed %d, lost %d\n", s, c, p, l}' \
        "$dir"/check[0-9]* >"$dir/check"
    grep -h '^lost' "$dir"/check[0-9]* >>"$dir/check"
    sed "s/^/    $name: /" "$dir/check" | grep -v '^ *[a-z-]*: lost' 
    grep -c '^lost' "$dir/check" | sed "s/^/    $name: lines 'lost': /"
    grep '^lost' "$dir/check" | head -n 5 | sed "s/^/    $name: /"
    sfs_stop_service
    pc_umount
    return $rc
}

# SFS_POWERCUT_ONLY=NAME runs one of the three (for debugging)
pc_phase() { [ -z "${SFS_POWERCUT_ONLY:-}" ] || [ "$SFS_POWERCUT_ONLY" = "$1" ]; }

if pc_phase synced; then
pc_run synced true ""
rc=$?
[ $rc -eq 0 ] || sfs_fail "an acknowledged operation or a synced byte was lost at the power cut (see above; $SFS_TEST_TMP/synced/check)"
echo "ok: every acknowledged operation and synced byte survived the power cut"
fi

if pc_phase nometasync; then
pc_run nometasync false ""
rc=$?
[ $rc -eq 1 ] || sfs_fail "negative control meta.sync false: the harness found no loss (check exit $rc): it cannot see a missing metadata fsync"
echo "ok: with meta.sync false the harness finds lost metadata"
fi

if pc_phase nofsync; then
pc_run nofsync true "--nosync"
rc=$?
[ $rc -eq 1 ] || sfs_fail "negative control without the workload's fsyncs: the harness found no loss (check exit $rc): it cannot see missing data fsyncs"
echo "ok: without the workload's fsyncs the harness finds lost data"
fi
