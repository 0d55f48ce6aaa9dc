#!/usr/bin/env bash
# Storage pools (docs/pools.md) on the one-host service, as unprivileged
# users: config refusals naming file and line; setpattern --pool (owner
# only, unknown pools refused) and getentryinfo; subdirectories inherit the
# pool; files in a pool's directory land on its targets only (mirrored files
# on the primaries of the pool's mirror groups; through the preload too); a
# full pool refuses new files with ENOSPC naming it (the preload's cp: "No
# space left on device") and nothing spills onto the other pool's targets;
# the MPI-IO hint stripefs_pool puts a create in another pool; pool list and
# df per pool; the service refuses a bad pools config.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/preload/preload_lib.sh"
run_tool="$SFS_BUILD/tools/stripefs-run"
MPI_OPEN="$SFS_BUILD/tests/progs/sfs_mpi_open"
[ -x "$MPI_OPEN" ] || sfs_fail "tests/progs/sfs_mpi_open is not built (make check TESTS=)"
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
  - {id: 201, host: b, dir: /t/201}
  - {id: 301, host: c, dir: /t/301}
pools:
YAML
}
{ base; echo "  - {name: hdd, targets: [101, 999]}"; } >"$cfg"
sfs_expect_fail "refuse.yaml:9: pools\[0\].targets\[1\]: pool 'hdd': target 999 is not in storage" \
    sfs_ctl hosts-of "$cfg"
{ base; echo "  - {name: hdd, targets: [101, 201]}"; echo "  - {name: nvme, targets: [301, 201]}"; } >"$cfg"
sfs_expect_fail "refuse.yaml:10: .*target 201 is already in pool 'hdd' \(line 9\)" sfs_ctl hosts-of "$cfg"
{ base; echo "  - {name: hdd, targets: []}"; } >"$cfg"
sfs_expect_fail "refuse.yaml:9: pools\[0\].targets: pool 'hdd' has no targets" sfs_ctl hosts-of "$cfg"
{ base; echo "  - {name: hdd, targets: [101, 201]}"; } >"$cfg"
sfs_ctl hosts-of "$cfg" >/dev/null || sfs_fail "a good pools config was refused"
echo "ok: unknown targets, a target in two pools and empty pools are refused naming file and line"

# --- the service: 4 targets, ranks 1 (101 103) and 2 (102 104); pools
# big = 101 102 and small = 103 104, the small ones limited to 6 MiB; one
# mirror group in each pool ---
sfs_start_service 3 --targets 4
sfs_stop_service
for t in 103 104; do
    sed -i "s|\(- {id: $t, host: [^,]*, dir: [^}]*\)}|\1, capacity: 6M}|" "$SFS_STATE/stripefs.yaml"
done
cat >>"$SFS_STATE/stripefs.yaml" <<YAML
pools:
  - {name: big, targets: [101, 102]}
  - {name: small, targets: [103, 104]}
mirror:
  groups:
    - {primary: 101, secondary: 102}
    - {primary: 103, secondary: 104}
  same_host: true
YAML
sfs_start_service 3
sfs_ctl pool list | tee "$SFS_TEST_TMP/pools.txt"
grep -Eq "^1 +default .*every target is in a named pool" "$SFS_TEST_TMP/pools.txt" || sfs_fail "pool list: default"
grep -Eq "^2 +big .* 101 102$" "$SFS_TEST_TMP/pools.txt" || sfs_fail "pool list: big"
grep -Eq "^3 +small +12\.0M .* 103 104$" "$SFS_TEST_TMP/pools.txt" || sfs_fail "pool list: small (2 x 6 MiB)"
echo "ok: pool list shows both pools and their targets (changing them: test_service_pool_online.sh)"

sfs_ctl mkdir -m 0777 /p || sfs_fail "mkdir /p"
sfs_as sfsalice "$SFS_CTL" mkdir /p/a /p/b || sfs_fail "mkdir as sfsalice"
sfs_as sfsalice "$SFS_CTL" setpattern --pool small /p/a | tee "$SFS_TEST_TMP/set.txt" ||
    sfs_fail "setpattern --pool by the owner"
grep -q "Storage pool: small (id 3)" "$SFS_TEST_TMP/set.txt" || sfs_fail "setpattern does not show the pool"
sfs_as sfsalice "$SFS_CTL" setpattern --pool big --chunksize 64k /p/b >/dev/null || sfs_fail "setpattern /p/b"
sfs_expect_fail "only its owner" sfs_as sfsbob "$SFS_CTL" setpattern --pool big /p/a
sfs_expect_fail "'/p/a': no storage pool 'ssd' in the config" sfs_as sfsalice "$SFS_CTL" setpattern --pool ssd /p/a
sfs_ctl getentryinfo /p/a | grep -q "+ Storage pool: small (id 3)" || sfs_fail "getentryinfo: pool of /p/a"
sfs_ctl getentryinfo /p | grep -q "+ Storage pool: none (any target)" || sfs_fail "getentryinfo: no pool on /p"
echo "ok: setpattern --pool by the owner, refused for another user and for an unknown pool"

# inherited by new subdirectories, two levels down
sfs_as sfsalice "$SFS_CTL" mkdir -p /p/a/sub/deeper || sfs_fail "mkdir -p"
sfs_ctl getentryinfo /p/a/sub/deeper | grep -q "+ Storage pool: small (id 3)" ||
    sfs_fail "a new subdirectory did not inherit the pool"
echo "ok: new subdirectories inherit the pool"

# targets of the file $1 (getentryinfo's list)
targets_of() { sfs_ctl getentryinfo "$1" | awk '/^  \+ [0-9]+ @/ {print $2}' | sort | tr '\n' ' '; }
home=$(sfs_user_home sfsalice)
head -c 1000000 /dev/urandom >"$home/one" && chown sfsalice "$home/one" || sfs_fail "blob"
for f in /p/a/f1 /p/a/sub/deeper/f2 /p/b/f3; do
    sfs_as sfsalice "$SFS_CTL" put "$home/one" "$f" || sfs_fail "put $f"
done
sfs_expect_eq "$(targets_of /p/a/f1)" "103 104 " "targets of a file in the small pool (pattern asks 4)"
sfs_expect_eq "$(targets_of /p/a/sub/deeper/f2)" "103 104 " "targets of a file two directories down"
sfs_expect_eq "$(targets_of /p/b/f3)" "101 102 " "targets of a file in the big pool"
sfs_ctl getentryinfo /p/a/f1 | grep -q "+ Storage pool: small" || sfs_fail "getentryinfo: a file's pool"
# through the POSIX preload too (its creates take the directory's pool)
sfs_as sfsalice env LD_PRELOAD="$SFS_PRELOAD" cp "$home/one" /stripefs/p/a/sub/viapl || sfs_fail "cp through the preload"
sfs_expect_eq "$(targets_of /p/a/sub/viapl)" "103 104 " "targets of a file made through the preload"
# mirrored files: the primaries of the pool's groups only
sfs_as sfsalice "$SFS_CTL" mkdir /p/a/m /p/b/m || sfs_fail "mkdir m"
for d in /p/a/m /p/b/m; do
    sfs_as sfsalice "$SFS_CTL" setpattern --mirror "$d" >/dev/null || sfs_fail "setpattern --mirror $d"
    sfs_as sfsalice "$SFS_CTL" put "$home/one" "$d/f" || sfs_fail "put $d/f"
done
sfs_expect_eq "$(targets_of /p/a/m/f)" "103 " "the primary of a mirrored file in the small pool"
sfs_expect_eq "$(targets_of /p/b/m/f)" "101 " "the primary of a mirrored file in the big pool"

# --- fill the small pool: nothing may land on 101 or 102 meanwhile ---
chunks_big() { find "$SFS_STATE/targets/101" "$SFS_STATE/targets/102" -type f -path '*chunks*' | sort; }
chunks_big >"$SFS_TEST_TMP/big-before.txt"
full=""
for i in $(seq 1 20); do
    if ! sfs_as sfsalice "$SFS_CTL" put "$home/one" "/p/a/fill$i" 2>"$SFS_TEST_TMP/fill.err"; then
        full=$i
        break
    fi
done
[ -n "$full" ] || sfs_fail "20 MB went into a pool of 12 MiB"
echo "ok: the small pool is full after $full files: $(head -n 1 "$SFS_TEST_TMP/fill.err")"
grep -qiE "no space|full|ENOSPC" "$SFS_TEST_TMP/fill.err" || sfs_fail "the write that filled the pool: $(cat "$SFS_TEST_TMP/fill.err")"
# the chooser sees the targets full once their heartbeats said so (every
# 2 s; later under load): until then a create may still land on them and
# fail on its first write, naming the target
said=""
for i in $(seq 1 15); do
    sleep 2
    if sfs_as sfsalice "$SFS_CTL" put "$home/one" "/p/a/sub/after$i" 2>"$SFS_TEST_TMP/after.err"; then
        echo "one target still had room: /p/a/sub/after$i went in" # still in the pool (checked below)
        continue
    fi
    if grep -q "storage pool 'small' is full (targets 103, 104): its files do not spill" "$SFS_TEST_TMP/after.err"; then
        said=$i
        break
    fi
    echo "not yet: $(head -n 1 "$SFS_TEST_TMP/after.err")"
done
sfs_ctl listtargets
[ -n "$said" ] || sfs_fail "a create in the full pool never said the pool is full: $(cat "$SFS_TEST_TMP/after.err")"
echo "ok: $(head -n 1 "$SFS_TEST_TMP/after.err")"
chunks_big >"$SFS_TEST_TMP/big-after.txt"
cmp -s "$SFS_TEST_TMP/big-before.txt" "$SFS_TEST_TMP/big-after.txt" ||
    sfs_fail "chunk files appeared on the big pool's targets while the small pool filled: $(diff "$SFS_TEST_TMP/big-before.txt" "$SFS_TEST_TMP/big-after.txt" | head -n 5)"
sfs_as sfsalice "$SFS_CTL" put "$home/one" /p/b/still || sfs_fail "the big pool stopped taking files"
sfs_expect_fail "No space left on device" sfs_as sfsalice env LD_PRELOAD="$SFS_PRELOAD" cp "$home/one" /stripefs/p/a/viapl2
echo "ok: a full pool refuses new files naming itself; nothing spilled onto 101 and 102"
sfs_ctl df | tee "$SFS_TEST_TMP/df.txt" | grep "^POOL"
grep -q "^POOL big: " "$SFS_TEST_TMP/df.txt" || sfs_fail "df: no line for pool big"
grep -q "^POOL small: 12.0M capacity" "$SFS_TEST_TMP/df.txt" || sfs_fail "df: no line for pool small"

# --- MPI-IO: stripefs_pool puts a create in the pool it names, even in
# the full pool's directory; an unknown pool fails the open ---
printf 'stripefs_pool big\n' >"$SFS_TEST_TMP/hints"
chmod 0644 "$SFS_TEST_TMP/hints"
mpi_open() { # hints path
    sfs_as sfsalice env ROMIO_HINTS="$1" timeout 120 "${SFS_MPIRUN[@]}" -x STRIPEFS_CONFIG -x ROMIO_HINTS \
        -np 2 "$run_tool" "$MPI_OPEN" "stripefs:$2" "create|wronly" write 2>&1
}
out=$(mpi_open "$SFS_TEST_TMP/hints" /p/a/hinted)
echo "$out"
echo "$out" | grep -q "write: MPI_SUCCESS" || sfs_fail "MPI-IO create with stripefs_pool=big in the full pool's dir"
sfs_ctl getentryinfo /p/a/hinted | grep -q "+ Storage pool: big (id 2)" || sfs_fail "the hint's pool is not the file's"
t=$(targets_of /p/a/hinted)
case $t in
"101 " | "102 " | "101 102 ") ;;
*) sfs_fail "the hinted file's targets are $t, not the big pool's" ;;
esac
echo "ok: the stripefs_pool hint put the file on $t"
printf 'stripefs_pool ssd\n' >"$SFS_TEST_TMP/hints-bad"
chmod 0644 "$SFS_TEST_TMP/hints-bad"
out=$(mpi_open "$SFS_TEST_TMP/hints-bad" /p/b/nopool)
echo "$out"
echo "$out" | grep -q "open: MPI_SUCCESS" && sfs_fail "an unknown pool in the hint was accepted"
echo "$out" | grep -q "open: MPI_ERR_NO_SUCH_FILE" && sfs_fail "an unknown pool reads as a missing file"
sfs_expect_fail "no such file" sfs_ctl stat /p/b/nopool
echo "ok: an unknown pool in the hint fails the open"
sfs_stop_service

# the service itself refuses a bad pools config, naming file and line
sed -i "s|^  - {name: small, targets: \[103, 104\]}|&\n  - {name: third, targets: [101]}|" "$SFS_STATE/stripefs.yaml"
grep -q "name: third" "$SFS_STATE/stripefs.yaml" || sfs_fail "could not add a bad pool to the config"
out=$(timeout 120 "${SFS_MPIRUN[@]}" -np 1 "$SFS_SERVER" --one-host --state "$SFS_STATE" --port "$SFS_PORT" 2>&1) &&
    sfs_fail "the service started with target 101 in two pools"
echo "$out" | grep -E "stripefs.yaml:[0-9]+: pools\[2\].targets\[0\]: target 101 is already in pool 'big'" ||
    sfs_fail "the service refused the config without naming the pool's line: $(echo "$out" | head -n 5)"
echo "ok: the service refuses a target in two pools"
