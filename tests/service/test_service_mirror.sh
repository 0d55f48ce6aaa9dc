#!/usr/bin/env bash
# Buddy mirroring on the one-host service (docs/mirroring.md): config
# refusals, setpattern --mirror (owner only), mirrored write/read/fsync/
# truncate/unlink reaching both copies, and overlapping writers from
# several ranks leaving the two copies of every chunk file byte-identical.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
W="$SFS_BUILD/tests/progs/sfs_mirror_writers"
sfs_test_users

# --- config refusals (stripefs-ctl hosts-of loads and checks a config) ---
cfg="$SFS_TEST_TMP/refuse.yaml"
base() {
    cat <<YAML
connauth_file: /etc/stripefs/connauth
mgmt: {host: a}
meta: {host: a, dir: /var/lib/stripefs/meta}
storage:
  - {id: 101, host: a, dir: /t/101}
  - {id: 102, host: a, dir: /t/102}
  - {id: 201, host: b, dir: /t/201}
  - {id: 301, host: c, dir: /t/301}
YAML
}
{ base; echo "mirror: {groups: [{primary: 101, secondary: 102}]}"; } >"$cfg"
sfs_expect_fail "targets 101 and 102 are both on host a" sfs_ctl hosts-of "$cfg"
{ base; echo "mirror: {groups: [{primary: 101, secondary: 201}, {primary: 301, secondary: 201}]}"; } >"$cfg"
sfs_expect_fail "target 201 is already in mirror group 1" sfs_ctl hosts-of "$cfg"
{ base; echo "mirror: {groups: [{primary: 101, secondary: 999}]}"; } >"$cfg"
sfs_expect_fail "target 999 is not in storage" sfs_ctl hosts-of "$cfg"
{ base; echo "mirror: {groups: [{primary: 101, secondary: 201}, {primary: 301, secondary: 102}]}"; } >"$cfg"
sfs_ctl hosts-of "$cfg" >/dev/null || sfs_fail "a good mirror config was refused"
echo "ok: mirror groups on one host, a target in two groups and unknown targets are refused"

# --- the service: 7 targets over storage ranks 1 (101 103 105 107) and
# 2 (102 104 106); groups 101+102 (rank 1 forwards to 2), 104+103 (2 to 1:
# primaries forwarding to each other) and 105+107 (a buddy on the same
# rank); 106 is in no group. Allowed on one host for the test only.
sfs_start_service 3 --targets 7
sfs_stop_service
# writes on the disk threads finish out of order (without the primary's
# ordering of overlapping writes the copies then differ: seen with it off)
export STRIPEFS_TEST_WRITE_JITTER_US=3000
cat >>"$SFS_STATE/stripefs.yaml" <<YAML
mirror:
  groups:
    - {primary: 101, secondary: 102}
    - {primary: 104, secondary: 103}
    - {primary: 105, secondary: 107}
  same_host: true
YAML
sfs_start_service 3
grep -q "writes are delayed at random" "$SFS_SERVICE_LOG" || sfs_fail "the servers did not take STRIPEFS_TEST_WRITE_JITTER_US"
sfs_ctl listtargets
sfs_ctl mirror list | tee "$SFS_TEST_TMP/mirror.txt"
grep -Eq "^1 +101 @ rank 1 .* good +102 @ rank 2 .* good" "$SFS_TEST_TMP/mirror.txt" || sfs_fail "mirror list: group 1"
grep -Eq "^2 +104 @ rank 2 .* good +103 @ rank 1 .* good" "$SFS_TEST_TMP/mirror.txt" || sfs_fail "mirror list: group 2"
grep -Eq "^3 +105 @ rank 1 .* good +107 @ rank 1 .* good" "$SFS_TEST_TMP/mirror.txt" || sfs_fail "mirror list: group 3"

user=sfsalice
sfs_ctl mkdir -m 0777 /m || sfs_fail "mkdir"
sfs_as "$user" "$SFS_CTL" mkdir /m/mine || sfs_fail "mkdir as $user"
sfs_ctl mkdir /m/roots || sfs_fail "mkdir roots"
sfs_expect_fail "only its owner" sfs_as "$user" "$SFS_CTL" setpattern --mirror /m/roots
sfs_as "$user" "$SFS_CTL" setpattern --mirror --chunksize 64k /m/mine | grep -q "Mirrored: yes" ||
    sfs_fail "setpattern --mirror by the owner"
sfs_ctl getentryinfo /m/mine | grep -q "Type: Buddy Mirror" || sfs_fail "getentryinfo of a mirrored dir"
echo "ok: setpattern --mirror by the owner works, by another user is refused as setpattern is"

# chunk file of entry $1 on target $2
chunk_of() { find "$SFS_STATE/targets/$2/chunks" -name "$1" 2>/dev/null | head -n 1; }
# both copies of every chunk file of entry $1 identical (and present where the primary has one)
compare_copies() {
    local id=$1 what=$2 p s pf sf n=0
    for pair in 101:102 104:103 105:107; do
        p=${pair%:*}
        s=${pair#*:}
        pf=$(chunk_of "$id" "$p")
        sf=$(chunk_of "$id" "$s")
        [ -n "$pf" ] || continue
        [ -n "$sf" ] || sfs_fail "$what: target $p has chunk file $id, its buddy $s has none"
        cmp "$pf" "$sf" || sfs_fail "$what: the copies of $id on $p and $s differ"
        n=$((n + 1))
    done
    [ $n -gt 0 ] || sfs_fail "$what: no chunk file of $id on any primary"
    echo "ok: $what: $n chunk files identical on both members"
}

# --- write/read/fsync/truncate/unlink as the user ---
home=$(sfs_user_home "$user")
head -c 3000000 /dev/urandom >"$SFS_TEST_TMP/blob"
cp "$SFS_TEST_TMP/blob" "$home/blob" && chown "$user" "$home/blob" || sfs_fail "copy the blob"
sfs_as "$user" "$SFS_CTL" put "$home/blob" /m/mine/blob || sfs_fail "put into the mirrored dir"
sfs_as "$user" "$SFS_CTL" get /m/mine/blob - >"$SFS_TEST_TMP/blob.back" || sfs_fail "get"
cmp "$SFS_TEST_TMP/blob" "$SFS_TEST_TMP/blob.back" || sfs_fail "mirrored file read back differs"
sfs_ctl getentryinfo /m/mine/blob | tee "$SFS_TEST_TMP/info.txt"
grep -q "Type: Buddy Mirror" "$SFS_TEST_TMP/info.txt" || sfs_fail "a file in a mirrored dir is not mirrored"
grep -q "Mirror group 1: primary 101 (good), secondary 102 (good)" "$SFS_TEST_TMP/info.txt" ||
    sfs_fail "getentryinfo does not show the file's mirror groups"
id=$(awk '/EntryID/ {print $2}' "$SFS_TEST_TMP/info.txt")
compare_copies "$id" "put"
sfs_expect_eq "$(sfs_ctl getentryinfo /m/mine/blob | awk '/Number of storage targets/ {print $6}')" 3 "targets (groups) of a mirrored file"
for t in 102 103 107; do
    [ -n "$(chunk_of "$id" $t)" ] || sfs_fail "secondary $t holds no copy of $id"
done
[ -z "$(chunk_of "$id" 106)" ] || sfs_fail "target 106 (in no group) holds a chunk of a mirrored file"
sfs_as "$user" "$W" truncate /m/mine/blob 100000 || sfs_fail "truncate"
compare_copies "$id" "truncate to 100000"
sz=$(( $(stat -c %s "$(chunk_of "$id" 101)") + $(stat -c %s "$(chunk_of "$id" 104)") + $(stat -c %s "$(chunk_of "$id" 105)") ))
sfs_expect_eq "$sz" 100000 "primaries' bytes after truncate"
sfs_as "$user" "$W" truncate /m/mine/blob 0 || sfs_fail "truncate to 0"
compare_copies "$id" "truncate to 0" 2>/dev/null || true
for t in 101 102 103 104 105 107; do
    f=$(chunk_of "$id" $t)
    [ -z "$f" ] || [ "$(stat -c %s "$f")" = 0 ] || sfs_fail "target $t: chunk $id not cut to 0"
done
echo "ok: truncate reaches both copies"
sfs_as "$user" "$SFS_CTL" rm /m/mine/blob || sfs_fail "rm"
for _ in $(seq 100); do
    [ "$(find "$SFS_STATE"/targets/*/chunks -name "$id" | wc -l)" = 0 ] && break
    sleep 0.1
done
sfs_expect_eq "$(find "$SFS_STATE"/targets/*/chunks -name "$id" | wc -l)" 0 "chunk files (both copies) left after unlink"

# --- overlapping writers: 4 ranks writing random pieces over one region,
# then fsync. Small pieces (64 KiB chunks: served on the progress thread)
# and large ones (1 MiB chunks, pieces up to 2 MiB: on the disk threads,
# which reorder them unless the primary orders overlapping writes).
sfs_as "$user" "$SFS_CTL" mkdir /m/mine/big || sfs_fail "mkdir big"
sfs_as "$user" "$SFS_CTL" setpattern --chunksize 1m /m/mine/big >/dev/null || sfs_fail "setpattern big"
for run in "small /m/mine/race 300 1048576 196608" "large /m/mine/big/race 60 8388608 2097152"; do
    set -- $run
    sfs_as "$user" "${SFS_MPIRUN[@]}" -np 4 bash -c "exec '$W' $2 \$OMPI_COMM_WORLD_RANK $3 $4 $5 sync" ||
        sfs_fail "overlapping writers ($1 pieces)"
    sfs_ctl getentryinfo "$2" | grep -q "Type: Buddy Mirror" || sfs_fail "$2 is not mirrored"
    id=$(sfs_ctl getentryinfo "$2" | awk '/EntryID/ {print $2}')
    compare_copies "$id" "4 overlapping writers, $1 pieces"
    sfs_ctl get "$2" "$SFS_TEST_TMP/race.back" || sfs_fail "get $2"
    sfs_expect_eq "$(stat -c %s "$SFS_TEST_TMP/race.back")" "$(sfs_ctl stat "$2" | awk '/Size:/ {print $2}')" "$2 size"
done

# fsck knows the secondaries hold mirrored files' copies: nothing to repair,
# and --repair leaves both copies
"$SFS_BUILD/stripefs-fsck" --repair >"$SFS_TEST_TMP/fsck.txt" 2>&1 ||
    { cat "$SFS_TEST_TMP/fsck.txt"; sfs_fail "stripefs-fsck found problems in mirrored files"; }
grep -q "not in its pattern" "$SFS_TEST_TMP/fsck.txt" && { cat "$SFS_TEST_TMP/fsck.txt"; sfs_fail "fsck calls a copy misplaced"; }
compare_copies "$id" "after stripefs-fsck --repair"
echo "ok: stripefs-fsck --repair finds the mirrored files consistent"

# an unmirrored file next to it is on one target per chunk, as before
sfs_ctl mkdir /m/plain || sfs_fail "mkdir plain"
sfs_ctl put "$SFS_TEST_TMP/blob" /m/plain/blob || sfs_fail "put plain"
sfs_ctl getentryinfo /m/plain/blob | grep -q "Type: RAID0" || sfs_fail "plain file is not RAID0"
pid=$(sfs_ctl getentryinfo /m/plain/blob | awk '/EntryID/ {print $2}')
sfs_expect_eq "$(find "$SFS_STATE"/targets/*/chunks -name "$pid" | wc -l)" "$(sfs_ctl getentryinfo /m/plain/blob | awk '/Number of storage targets/ {print $6}')" "chunk files of an unmirrored file (one per target)"

# --- the ROMIO hint: stripefs_mirror=enable in an unmirrored directory,
# disable in a mirrored one (mpi_fault_writer creates DIR/f<rank>) ---
if [ -f "$SFS_BUILD/adio/libstripefs-mpiio.so" ]; then
    mpicc.openmpi -O2 -o "$home/writer" "$SFS_SRC/tests/mpi/mpi_fault_writer.c" || sfs_fail "compile"
    chown "$user" "$home/writer"
    sfs_as "$user" "$SFS_CTL" mkdir /m/mine/hint-off || sfs_fail "mkdir"
    sfs_ctl chmod 0777 /m/plain || sfs_fail "chmod"
    sfs_as "$user" "$SFS_CTL" mkdir /m/plain/hint-on || sfs_fail "mkdir"
    for case in "enable:/m/plain/hint-on:Buddy Mirror" "disable:/m/mine/hint-off:RAID0"; do
        IFS=: read -r value dir type <<<"$case"
        printf 'stripefs_mirror %s\n' "$value" >"$home/hints"
        sfs_as "$user" env ROMIO_HINTS="$home/hints" "${SFS_MPIRUN[@]}" -x STRIPEFS_CONFIG -x ROMIO_HINTS \
            -np 1 "$SFS_BUILD/tools/stripefs-run" "$home/writer" "stripefs:$dir" 1 >"$SFS_TEST_TMP/writer.out" 2>&1 ||
            { cat "$SFS_TEST_TMP/writer.out"; sfs_fail "MPI-IO writer with stripefs_mirror=$value"; }
        sfs_ctl getentryinfo "$dir/f0" | grep -q "Type: $type" ||
            sfs_fail "stripefs_mirror=$value: $dir/f0 is not $type"
        echo "ok: the ROMIO hint stripefs_mirror=$value makes $dir/f0 $type"
    done
    id=$(sfs_ctl getentryinfo /m/plain/hint-on/f0 | awk '/EntryID/ {print $2}')
    compare_copies "$id" "the MPI-IO writer's mirrored file"
else
    echo "the MPI-IO library is not built: the ROMIO hint is not checked here"
fi
sfs_stop_service

# --- a service without groups refuses --mirror; mirror.default: true makes
# a new store's root mirror new files ---
SFS_STATE="$SFS_TEST_TMP/state2"
unset STRIPEFS_TEST_WRITE_JITTER_US
sfs_start_service 3 --targets 4
sfs_expect_fail "no mirror groups in the config" sfs_ctl setpattern --mirror /
sfs_ctl mirror list | grep -q "No mirror groups" || sfs_fail "mirror list without groups"
sfs_stop_service
rm -rf "$SFS_STATE/meta"
cat >>"$SFS_STATE/stripefs.yaml" <<YAML
mirror:
  groups:
    - {primary: 101, secondary: 102}
  default: true
  same_host: true
YAML
sfs_start_service 3
sfs_ctl getentryinfo / | grep -q "Type: Buddy Mirror" || sfs_fail "mirror.default: the new root is not mirrored"
sfs_ctl put "$SFS_TEST_TMP/blob" /blob || sfs_fail "put"
id=$(sfs_ctl getentryinfo /blob | awk '/EntryID/ {print $2}')
cmp "$(chunk_of "$id" 101)" "$(chunk_of "$id" 102)" || sfs_fail "mirror.default: the copies differ"
sfs_expect_eq "$(stat -c %s "$(chunk_of "$id" 101)")" 3000000 "the one group's chunk file"
echo "ok: mirror.default: true mirrors the new root's files"
sfs_stop_service
