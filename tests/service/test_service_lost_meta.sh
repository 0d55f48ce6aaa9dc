#!/usr/bin/env bash
# A service never starts a new, empty file system over the chunks of an old
# one. The metadata store keeps a file system id from its first start and
# every target records it (<target>/filesystem.id). One-host service, 3
# ranks, 4 targets, files of sfsalice; then, with the service stopped:
# - the metadata store moved away (lost): the start is refused, naming the
#   targets, the id and the missing store, and nothing is changed (no store
#   made, every target's files as before); an empty meta dir the same;
# - a target recording another file system's id: refused, naming both ids;
# - a damaged filesystem.id: refused, naming the file;
# - every refused start was given a new --port: the config keeps the old one;
# - the store put back: the service starts and sfsalice's files read back;
# - a target without the record (made before ids were kept) takes the id.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"

sfs_test_users
sfs_start_service 3 --targets 4
fs_id=$(grep -m1 -oE "file system id [0-9a-f]{16}" "$SFS_SERVICE_LOG" | awk '{print $4}')
[ -n "$fs_id" ] || sfs_fail "the first start did not log its file system id"
for t in 101 102 103 104; do
    sfs_expect_eq "$(cat "$SFS_STATE/targets/$t/filesystem.id")" "stripefs file system $fs_id" \
        "target $t's filesystem.id"
done

as_alice() { sfs_as sfsalice "$SFS_CTL" "$@"; }
sfs_ctl mkdir /d && sfs_ctl chmod 1777 /d || sfs_fail "mkdir /d (1777)"
as_alice mkdir /d/a && as_alice setpattern --chunksize 64k --numtargets 4 /d/a >/dev/null ||
    sfs_fail "mkdir, setpattern /d/a as sfsalice"
src=$SFS_TEST_TMP/src
head -c $((512 * 1024)) /dev/urandom >"$src" && chmod 0644 "$src" || sfs_fail "make $src"
for i in 1 2 3; do
    as_alice put "$src" "/d/a/f$i" || sfs_fail "put /d/a/f$i as sfsalice"
done
sfs_stop_service

# every file under the targets, with its checksum, mode and owner
targets_now() {
    (cd "$SFS_STATE/targets" && find . -type f ! -name .stripefs.lock -print0 | sort -z |
        xargs -0 -r stat -c '%n %a %U %s' && find . -type f -path '*/chunks/*' -print0 |
        sort -z | xargs -0 -r md5sum)
}
targets_now >"$SFS_TEST_TMP/targets.before"
grep -q "/chunks/" "$SFS_TEST_TMP/targets.before" || sfs_fail "no chunk file on the targets"

cp "$SFS_STATE/stripefs.yaml" "$SFS_TEST_TMP/config.before"
start_refused() { # pattern what
    local out port
    # on another port than the saved one: a refused start saves no port either
    port=$(sfs_free_port) || sfs_fail "no free port"
    out=$(timeout 120 "${SFS_MPIRUN[@]}" -np 3 "$SFS_SERVER" --one-host --state "$SFS_STATE" \
        --port "$port" 2>&1) && sfs_fail "$2: the service started: $out"
    echo "$out" | grep -qE -- "$1" || sfs_fail "$2: the refusal does not say '$1': $out"
    cmp -s "$SFS_STATE/stripefs.yaml" "$SFS_TEST_TMP/config.before" ||
        sfs_fail "$2: the refused start changed the config: $(diff "$SFS_TEST_TMP/config.before" "$SFS_STATE/stripefs.yaml")"
    [ ! -e "$SFS_STATE/stripefs.yaml.new" ] || sfs_fail "$2: the refused start left stripefs.yaml.new"
    echo "ok: $2: refused: $(echo "$out" | grep -m1 -E -- "$1" | head -c 400)"
    REFUSAL=$out
}

# 1. the metadata store lost
mv "$SFS_STATE/meta" "$SFS_STATE/meta.lost" || sfs_fail "move the metadata store away"
start_refused "target 10[1-4] \($SFS_STATE/targets/10[1-4] on [^)]*\) holds chunk files of file system $fs_id, but there is no metadata store in $SFS_STATE/meta" \
    "no metadata store"
for t in 101 102 103 104; do
    echo "$REFUSAL" | grep -q "target $t (" || sfs_fail "the refusal does not name target $t: $REFUSAL"
done
echo "$REFUSAL" | grep -q "nothing was changed" || sfs_fail "the refusal does not say that nothing changed: $REFUSAL"
[ ! -e "$SFS_STATE/meta" ] || sfs_fail "the refused start made $SFS_STATE/meta: $(ls -la "$SFS_STATE/meta")"
targets_now | diff "$SFS_TEST_TMP/targets.before" - ||
    sfs_fail "the refused start changed the targets' files (above)"
echo "ok: no metadata store made, the targets' files unchanged"
mkdir "$SFS_STATE/meta" || sfs_fail "mkdir $SFS_STATE/meta"
start_refused "holds chunk files of file system $fs_id, but there is no metadata store in $SFS_STATE/meta" \
    "an empty meta dir"
[ -z "$(ls -A "$SFS_STATE/meta" | grep -v '^\.stripefs\.lock$')" ] ||
    sfs_fail "the refused start wrote into the empty meta dir: $(ls -A "$SFS_STATE/meta")"
rm -rf "$SFS_STATE/meta" && mv "$SFS_STATE/meta.lost" "$SFS_STATE/meta" || sfs_fail "put the store back"

# 2. a target of another file system
cp "$SFS_STATE/targets/104/filesystem.id" "$SFS_TEST_TMP/fsid.104"
echo "stripefs file system 0123456789abcdef" >"$SFS_STATE/targets/104/filesystem.id"
start_refused "target 104 \($SFS_STATE/targets/104 on [^)]*\) belongs to file system 0123456789abcdef, but the metadata store in $SFS_STATE/meta is file system $fs_id" \
    "a target of another file system"
# 3. a damaged record
echo "stripefs file system nothex" >"$SFS_STATE/targets/104/filesystem.id"
start_refused "target 104: $SFS_STATE/targets/104/filesystem.id is damaged" "a damaged filesystem.id"
cp "$SFS_TEST_TMP/fsid.104" "$SFS_STATE/targets/104/filesystem.id"
targets_now | diff "$SFS_TEST_TMP/targets.before" - ||
    sfs_fail "the refused starts changed the targets' files (above)"

# 4. the store back, and a target without the record (as made before ids were kept)
rm "$SFS_STATE/targets/101/filesystem.id"
sfs_start_service 3
back=$SFS_TEST_TMP/alice
mkdir "$back" && chown sfsalice: "$back" || sfs_fail "mkdir $back for sfsalice"
for i in 1 2 3; do
    as_alice get "/d/a/f$i" "$back/f$i" && cmp -s "$src" "$back/f$i" ||
        sfs_fail "sfsalice's /d/a/f$i does not read back identical after the refusals"
done
echo "ok: with its store back the service starts, and sfsalice's 3 files read back"
sfs_expect_eq "$(cat "$SFS_STATE/targets/101/filesystem.id")" "stripefs file system $fs_id" \
    "target 101's filesystem.id after a start without it"
sfs_stop_service
