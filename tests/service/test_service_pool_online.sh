#!/usr/bin/env bash
# Storage pools changed while the service runs (docs/pools.md, "Changing
# pools while the service runs"): stripefs-ctl pool create|add|remove|delete
# refused to sfsalice (EPERM); every bad input refused naming the problem
# with pool list unchanged; new files in a pool directory (sfsalice's) use
# exactly the pool's current targets after add and after remove, files on
# a removed target stay readable; df per pool; kill -9 and a restart keep
# the membership; delete; the store's pools over the config's at a start.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
sfs_test_users

# 4 targets, ranks 1 (101 103) and 2 (102 104); the config's pool big =
# 101 102, a mirror group 101+102
sfs_start_service 3 --targets 4
sfs_stop_service
cat >>"$SFS_STATE/stripefs.yaml" <<YAML
pools:
  - {id: 2, name: big, targets: [101, 102]}
mirror:
  groups:
    - {primary: 101, secondary: 102}
  same_host: true
YAML
sfs_start_service 3

list() { sfs_ctl pool list | awk 'NR > 1 {printf "%s %s:", $1, $2; for (i = 6; i <= NF; i++) printf " %s", $i; print ""}'; }
list | tee "$SFS_TEST_TMP/list0.txt"
grep -qx "2 big: 101 102" "$SFS_TEST_TMP/list0.txt" || sfs_fail "pool list: big from the config"
grep -qx "1 default: 103 104" "$SFS_TEST_TMP/list0.txt" || sfs_fail "pool list: default"

# --- not an administrator: all four refused, nothing changed ---
for cmd in "create x 103" "add big 103" "remove big 101" "delete big"; do
    # shellcheck disable=SC2086
    sfs_expect_fail "changing storage pools is for administrators" sfs_as sfsalice "$SFS_CTL" pool $cmd
done
sfs_expect_eq "$(list)" "$(cat "$SFS_TEST_TMP/list0.txt")" "pool list after sfsalice's attempts"

# --- bad inputs, each named; nothing changed ---
long=$(printf 'p%.0s' $(seq 70))
sfs_expect_fail "'default' is a reserved pool name" sfs_ctl pool create default 103
sfs_expect_fail "'none' is a reserved pool name" sfs_ctl pool create none
sfs_expect_fail "'bad!name' is not a storage pool name" sfs_ctl pool create 'bad!name'
sfs_expect_fail "is not a storage pool name \(1..63 bytes\)" sfs_ctl pool create "$long"
sfs_expect_fail "storage pool 'big' exists already \(id 2\)" sfs_ctl pool create big
sfs_expect_fail "target 999 is not a storage target of the cluster" sfs_ctl pool create x 999
sfs_expect_fail "target 101 is in storage pool 'big' already: a target is in one pool" sfs_ctl pool create x 103 101
sfs_expect_fail "no storage pool 'nosuch'" sfs_ctl pool add nosuch 103
sfs_expect_fail "'default' cannot be changed" sfs_ctl pool add default 103
sfs_expect_fail "target 103 is not in storage pool 'big'" sfs_ctl pool remove big 103
sfs_expect_fail "mirror group 1's targets 101 \(pool big\) and 102 \(pool default\)" sfs_ctl pool remove big 102
sfs_expect_fail "storage pool 'big' still has targets \(101, 102\)" sfs_ctl pool delete big
sfs_expect_fail "'abc' is not a target id" sfs_ctl pool add big abc
sfs_expect_eq "$(list)" "$(cat "$SFS_TEST_TMP/list0.txt")" "pool list after the refusals"

# --- create, add, remove: new files follow the pool's current targets ---
targets_of() { sfs_ctl getentryinfo "$1" | awk '/^  \+ [0-9]+ @/ {print $2}' | sort | tr '\n' ' '; }
home=$(sfs_user_home sfsalice)
head -c 3000000 /dev/urandom >"$home/blob" && chown sfsalice "$home/blob" || sfs_fail "blob"
sfs_ctl pool create small 103 || sfs_fail "pool create small 103"
list | grep -qx "3 small: 103" || sfs_fail "pool list: small after create: $(list)"
sfs_ctl mkdir -m 0777 /p || sfs_fail "mkdir /p"
sfs_as sfsalice "$SFS_CTL" mkdir /p/s || sfs_fail "mkdir /p/s"
sfs_as sfsalice "$SFS_CTL" setpattern --pool small --chunksize 64k /p/s >/dev/null || sfs_fail "setpattern --pool small"
sfs_as sfsalice "$SFS_CTL" put "$home/blob" /p/s/f1 || sfs_fail "put f1"
sfs_expect_eq "$(targets_of /p/s/f1)" "103 " "targets of a file in the new pool"
sfs_ctl pool add small 104 || sfs_fail "pool add small 104"
sfs_as sfsalice "$SFS_CTL" put "$home/blob" /p/s/f2 || sfs_fail "put f2"
sfs_expect_eq "$(targets_of /p/s/f2)" "103 104 " "targets of a file after pool add"
sfs_ctl pool remove small 103 || sfs_fail "pool remove small 103 (it holds f1 and f2)"
sfs_as sfsalice "$SFS_CTL" put "$home/blob" /p/s/f3 || sfs_fail "put f3"
sfs_expect_eq "$(targets_of /p/s/f3)" "104 " "targets of a file after pool remove"
sfs_expect_eq "$(targets_of /p/s/f1)" "103 " "an existing file keeps its targets"
for f in f1 f2 f3; do
    rm -f "$home/back"
    sfs_as sfsalice "$SFS_CTL" get "/p/s/$f" "$home/back" || sfs_fail "get $f"
    cmp "$home/blob" "$home/back" || sfs_fail "$f's bytes differ"
done
echo "ok: files on a removed target stay readable, bytes equal"
list | tee "$SFS_TEST_TMP/list1.txt"
grep -qx "1 default: 103" "$SFS_TEST_TMP/list1.txt" || sfs_fail "pool list: 103 back in default"
sfs_ctl df | tee "$SFS_TEST_TMP/df.txt" | grep "^POOL"
grep -q "^POOL small: .* (1 of 1 targets online)" "$SFS_TEST_TMP/df.txt" || sfs_fail "df: pool small"
grep -q "^POOL big: .* (2 of 2 targets online)" "$SFS_TEST_TMP/df.txt" || sfs_fail "df: pool big"
sfs_as sfsalice "$SFS_CTL" pool list | grep -q "small" || sfs_fail "sfsalice's pool list"

# --- delete ---
sfs_ctl pool create scratch || sfs_fail "pool create scratch (no targets)"
list | grep -qx "4 scratch: (none)" || sfs_fail "pool list: an empty pool: $(list)"
sfs_ctl pool delete scratch || sfs_fail "pool delete scratch"
list | grep -q scratch && sfs_fail "pool list: scratch still there after delete"
echo "ok: an empty pool is deleted"

# --- kill -9, restart: the membership stays ---
sfs_kill9_service
sfs_start_service 3
sfs_expect_eq "$(list)" "$(cat "$SFS_TEST_TMP/list1.txt")" "pool list after kill -9 and a restart"
sfs_as sfsalice "$SFS_CTL" put "$home/blob" /p/s/f4 || sfs_fail "put f4"
sfs_expect_eq "$(targets_of /p/s/f4)" "104 " "targets of a file after the restart"

# --- the store's pools over the config's: big emptied online (its record
# replaces the config's pool of id 2); a config pool that names a target a
# stored pool holds loses it, said once ---
sfs_ctl pool remove big 101 102 || sfs_fail "pool remove big 101 102 (the whole mirror group)"
sfs_stop_service
sed -i "s|^  - {id: 2, name: big, targets: \[101, 102\]}|&\n  - {id: 7, name: extra, targets: [104, 103]}|" "$SFS_STATE/stripefs.yaml"
grep -q "name: extra" "$SFS_STATE/stripefs.yaml" || sfs_fail "could not add a pool to the config"
cp "$SFS_SERVICE_LOG" "$SFS_SERVICE_LOG.before"
sfs_start_service 3
list | tee "$SFS_TEST_TMP/list2.txt"
grep -qx "2 big: (none)" "$SFS_TEST_TMP/list2.txt" || sfs_fail "big: the store's record (no targets) wins over the config"
grep -qx "7 extra: 103" "$SFS_TEST_TMP/list2.txt" || sfs_fail "extra: the config's pool keeps 103 only"
grep -qx "3 small: 104" "$SFS_TEST_TMP/list2.txt" || sfs_fail "small keeps 104"
grep -qx "1 default: 101 102" "$SFS_TEST_TMP/list2.txt" || sfs_fail "default"
said=$(diff "$SFS_SERVICE_LOG.before" "$SFS_SERVICE_LOG" | grep -c "storage pool 'extra' (config): target 104 is in pool 'small' (store) too")
sfs_expect_eq "$said" "1" "the conflict is logged once"
sfs_ctl pool remove extra 103 || sfs_fail "pool remove extra 103 (a config pool, changed online)"
sfs_ctl pool add big 101 102 || sfs_fail "pool add big 101 102"
list | grep -qx "2 big: 101 102" || sfs_fail "big back: $(list)"
sfs_stop_service
echo "ok: pools changed online, kept across kill -9, combined with the config"
