#!/usr/bin/env bash
# Rebalancing a pool after a target was added (docs/migration.md,
# "Rebalancing a pool"; issue 13 item 4).
# Part 1: three targets of 24 MiB (`capacity:`) filled about 35% by files of
# 1 to 3 targets put by sfsalice, then a fourth (104, 24 MiB) joined empty
# with `stripefs-server --join`. A 3-target file whose chunk is the longest
# on each old target is held open for writing (sfs_size_writer, as
# sfsalice). `migrate --rebalance` (root):
# - is refused to sfsalice (EPERM);
# - moves files (> 0), counts the held file busy, and leaves every
#   target's fill, measured on disk (the bytes of its chunk files), within 5
#   points of the pool's fill;
# - every file equals its source, stripefs-fsck is clean;
# - a rerun exits 0 and moves nothing; --pool of no pool fails, --tolerance 0
#   is a usage error (exit 2).
# Part 2: a fresh service with pools p1 = 101+102 and p2 = 103+104, files
# of each pool put while 102 and 104 were draining (so 101 and 103 hold
# them all): `--rebalance --pool p1` evens 101 and 102 and leaves 103 and
# 104 as they were (no file of p2 changes its targets); while it runs, a
# drain of 102 is refused (the rebalance holds its targets' migrate leases).
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/lib/migrate_lib.sh"
WRITER="$SFS_BUILD/tests/progs/sfs_size_writer"
FSCK="$SFS_BUILD/stripefs-fsck"
[ -x "$WRITER" ] || sfs_fail "tests/progs are not built (make check TESTS=)"
sfs_test_users
as_alice() { sfs_as sfsalice "$SFS_CTL" "$@"; }
targets_of() { sfs_ctl getentryinfo "$1" | awk '/^  \+ [0-9]+ @/ {printf "%s ", $2}'; }
on_disk() { find "$SFS_STATE/targets/$1/chunks" -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}'; }
capacities() { # targets...: each gets capacity: 24M in the config
    local t
    for t in "$@"; do
        sed -i "s|\(- {id: $t, host: [^,]*, dir: [^}]*\)}|\1, capacity: 24M}|" "$SFS_STATE/stripefs.yaml"
    done
    [ "$(grep -c 'capacity: 24M' "$SFS_STATE/stripefs.yaml")" = $# ] || sfs_fail "could not set the capacities"
}
# every target of "$@" within 5 points of their pool's fill, on disk
check_fills() { # what targets...
    local what=$1 t sum=0 f
    shift
    for t in "$@"; do sum=$((sum + $(on_disk "$t"))); done
    for t in "$@"; do
        f=$(awk -v b="$(on_disk "$t")" -v s="$sum" -v n=$# 'BEGIN {
            pool = 100 * s / (n * 24 * 1048576); fill = 100 * b / (24 * 1048576)
            d = fill - pool; if (d < 0) d = -d
            printf "%.1f %.1f %s", fill, pool, (d <= 5 ? "ok" : "out")}')
        echo "  $what: target $t fill $f"
        case "$f" in *out) sfs_fail "$what: target $t is out of 5 points of the pool's fill: $f" ;; esac
    done
}
src=$SFS_TEST_TMP/src
mkdir -p "$src" && chmod 0755 "$src"
files=()
check_all() { # what
    local f
    for f in "${files[@]}"; do
        as_alice get "/r/$f" - >"$SFS_TEST_TMP/out" || sfs_fail "$1: get /r/$f"
        cmp -s "$SFS_TEST_TMP/out" "$src/${f//\//-}" || sfs_fail "$1: /r/$f differs from its source"
    done
    echo "ok: $1: all ${#files[@]} files cmp equal to their sources"
}
put() { # size path (under /r)
    head -c "$1" /dev/urandom >"$src/${2//\//-}" && chmod 0644 "$src/${2//\//-}"
    as_alice put "$src/${2//\//-}" "/r/$2" || sfs_fail "put /r/$2 as sfsalice"
    files+=("$2")
}

# --- part 1: three targets of 24 MiB, about 35% full ---
sfs_start_service 3 --targets 3
sfs_ctl mkdir /r && sfs_ctl chmod 1777 /r || sfs_fail "mkdir /r (1777)"
sfs_stop_service
capacities 101 102 103
sfs_start_service 3
for w in 1 2 3; do
    as_alice mkdir "/r/w$w" && as_alice setpattern --chunksize 256k --numtargets "$w" "/r/w$w" >/dev/null ||
        sfs_fail "mkdir/setpattern /r/w$w as sfsalice"
done
as_alice mkdir /r/big && as_alice setpattern --chunksize 1m --numtargets 3 /r/big >/dev/null ||
    sfs_fail "mkdir/setpattern /r/big"
put $((9 << 20)) big/held # 3 MiB on each old target: the longest chunk of each
n=0
for w in 1 2 3; do
    for i in 1 2 3 4 5; do
        n=$((n + 1))
        put $(((n * 7919) % 1100 * 1024 + 400 * 1024)) "w$w/f$i"
    done
done
echo "ok: ${#files[@]} files put by sfsalice: $(for t in 101 102 103; do printf '%s=%s ' $t "$(on_disk $t)"; done)"

# the administrator adds target 104 (24 MiB) to the config and joins it
host=$(sed -n 's/^- {name: \([^,]*\),.*/\1/p' "$SFS_STATE/stripefs.yaml" | head -n 1)
sed -i "/^- {id: 103,/a - {id: 104, host: $host, dir: $SFS_STATE/targets/104, capacity: 24M}" \
    "$SFS_STATE/stripefs.yaml" && grep -q "id: 104" "$SFS_STATE/stripefs.yaml" || sfs_fail "add 104 to the config"
"${SFS_MPIRUN[@]}" -np 1 "$SFS_SERVER" --one-host --state "$SFS_STATE" --join \
    --ready-file "$SFS_TEST_TMP/joined" >"$SFS_TEST_TMP/join.log" 2>&1 &
joined=$!
for _ in $(seq 600); do
    [ -f "$SFS_TEST_TMP/joined" ] && break
    kill -0 $joined 2>/dev/null || break
    sleep 0.1
done
[ -f "$SFS_TEST_TMP/joined" ] || { cat "$SFS_TEST_TMP/join.log"; sfs_fail "target 104 did not join"; }
sfs_expect_eq "$(on_disk 104)" 0 "bytes on the joined target 104"

# a registered writer holds big/held (its 10 bytes replace the start)
mkfifo "$SFS_TEST_TMP/in" && chmod 0666 "$SFS_TEST_TMP/in"
sfs_as sfsalice "$WRITER" /r/big/held "write:0:10" hold <"$SFS_TEST_TMP/in" >"$SFS_TEST_TMP/w.out" 2>&1 &
wp=$!
exec 8>"$SFS_TEST_TMP/in"
for _ in $(seq 300); do grep -q '^holding' "$SFS_TEST_TMP/w.out" && break; sleep 0.1; done
grep -q '^holding' "$SFS_TEST_TMP/w.out" || sfs_fail "the writer did not start: $(cat "$SFS_TEST_TMP/w.out")"
printf 'wwwwwwwwww' | dd of="$src/big-held" conv=notrunc status=none

sfs_expect_fail "(for servers and administrators|MIGRATE_LEASE is for administrators).*\((Operation not permitted|EPERM)" \
    sfs_as sfsalice "$SFS_CTL" migrate --rebalance
sfs_expect_eq "$(on_disk 104)" 0 "bytes on 104 after sfsalice's rebalance"
sfs_ctl migrate --rebalance >"$SFS_TEST_TMP/rb1.txt" 2>&1
rc=$?
cat "$SFS_TEST_TMP/rb1.txt"
moves=$(sed -n 's/^rebalance: \([0-9]*\) moves, .*/\1/p' "$SFS_TEST_TMP/rb1.txt")
[ -n "$moves" ] && [ "$moves" -gt 0 ] || sfs_fail "rebalance moved no file"
grep -q " 1 busy (open for writing, not moved)" "$SFS_TEST_TMP/rb1.txt" ||
    sfs_fail "rebalance did not count the file held open for writing as busy"
grep -q "every target within 5.0 points" "$SFS_TEST_TMP/rb1.txt" || sfs_fail "rebalance says the pool is out of tolerance"
[ $rc = 0 ] || sfs_fail "rebalance within the tolerance exited $rc"
echo "ok: rebalance: $moves files moved, the held file busy, exit 0"
case " $(targets_of /r/big/held)" in *" 104 "*) sfs_fail "the held file was moved" ;; esac
check_fills "after the rebalance (on disk)" 101 102 103 104
echo "ok: every target's fill on disk is within 5 points of the pool's"
exec 8>&-
wait $wp || sfs_fail "the registered writer failed: $(cat "$SFS_TEST_TMP/w.out")"
check_all "after the rebalance"
"$FSCK" >"$SFS_TEST_TMP/fsck1.txt" 2>&1 || sfs_fail "stripefs-fsck after the rebalance: $(cat "$SFS_TEST_TMP/fsck1.txt")"
echo "ok: stripefs-fsck: $(tail -n 1 "$SFS_TEST_TMP/fsck1.txt")"
sfs_ctl migrate --rebalance >"$SFS_TEST_TMP/rb2.txt" 2>&1 || { cat "$SFS_TEST_TMP/rb2.txt"; sfs_fail "the rerun failed"; }
grep -q "^rebalance: 0 moves, 0 bytes" "$SFS_TEST_TMP/rb2.txt" || { cat "$SFS_TEST_TMP/rb2.txt"; sfs_fail "the rerun moved files"; }
echo "ok: a rerun exits 0 and moves nothing"
sfs_ctl shutdown >/dev/null || sfs_fail "shutdown"
wait $joined || sfs_fail "the joined rank did not stop cleanly"
sfs_wait_service_exit

# --- part 2: --pool p1 moves files within p1 only ---
export SFS_STATE=$SFS_TEST_TMP/state2
files=()
sfs_start_service 3 --targets 4
sfs_ctl mkdir /r && sfs_ctl chmod 1777 /r || sfs_fail "mkdir /r (1777)"
sfs_stop_service
capacities 101 102 103 104
printf 'pools:\n  - {name: p1, targets: [101, 102]}\n  - {name: p2, targets: [103, 104]}\n' >>"$SFS_STATE/stripefs.yaml"
sfs_start_service 3
for p in p1 p2; do
    as_alice mkdir "/r/$p" && as_alice setpattern --pool "$p" --chunksize 256k --numtargets 1 "/r/$p" >/dev/null ||
        sfs_fail "mkdir/setpattern --pool $p /r/$p as sfsalice"
done
for t in 102 104; do sfs_ctl migrate --from $t >/dev/null || sfs_fail "drain the empty $t"; done
for i in 1 2 3 4 5 6; do
    put $((i * 200 * 1024 + 300 * 1024)) "p1/f$i"
    put $((i * 200 * 1024 + 300 * 1024)) "p2/f$i"
done
for t in 102 104; do sfs_ctl migrate --from $t --cancel >/dev/null || sfs_fail "migrate --from $t --cancel"; done
[ "$(on_disk 102)" = 0 ] && [ "$(on_disk 104)" = 0 ] || sfs_fail "files went to the draining 102 or 104"
sfs_expect_fail "no storage pool 'nosuch'" sfs_ctl migrate --rebalance --pool nosuch
sfs_ctl migrate --rebalance --tolerance 0 >/dev/null 2>&1
sfs_expect_eq "$?" 2 "the exit status of --tolerance 0 (a usage error)"
before103=$(on_disk 103) p2_before="" p2_after=""
for i in 1 2 3 4 5 6; do p2_before+="$(targets_of "/r/p2/f$i")/"; done
# slowed (3 s a move), so that a drain of one of its targets meets its lease
STRIPEFS_TEST_MIGRATE_DELAY_MS=3000 sfs_ctl migrate --rebalance --pool p1 >"$SFS_TEST_TMP/rb3.txt" 2>&1 &
rbp=$!
sfs_wait_line "$SFS_TEST_TMP/rb3.txt" "^rebalance: pool 'p1' at the start" $rbp 30
grep -q "^rebalance: pool 'p1' at the start" "$SFS_TEST_TMP/rb3.txt" || { cat "$SFS_TEST_TMP/rb3.txt"; sfs_fail "rebalance --pool p1 did not start"; }
sfs_expect_fail "storage target 102: another migrate runs on it \\(uid 0, pid [0-9]+ " sfs_ctl migrate --from 102
sfs_ctl listtargets | grep -Eq "^102 .*draining" && sfs_fail "the refused drain marked 102 draining"
wait $rbp || { cat "$SFS_TEST_TMP/rb3.txt"; sfs_fail "rebalance --pool p1"; }
cat "$SFS_TEST_TMP/rb3.txt"
echo "ok: a drain of 102 is refused while the rebalance of its pool runs (the rebalance holds its targets' leases)"
grep -q "pool 'p2'" "$SFS_TEST_TMP/rb3.txt" && sfs_fail "rebalance --pool p1 worked on p2"
moves=$(sed -n 's/^rebalance: \([0-9]*\) moves, .*/\1/p' "$SFS_TEST_TMP/rb3.txt")
[ -n "$moves" ] && [ "$moves" -gt 0 ] || sfs_fail "rebalance --pool p1 moved no file"
check_fills "p1 after --pool p1" 101 102
sfs_expect_eq "$(on_disk 103)/$(on_disk 104)" "$before103/0" "bytes on 103/104 (pool p2) after --pool p1"
for i in 1 2 3 4 5 6; do p2_after+="$(targets_of "/r/p2/f$i")/"; done
sfs_expect_eq "$p2_after" "$p2_before" "the targets of p2's files"
for i in 1 2 3 4 5 6; do
    case " $(targets_of "/r/p1/f$i")" in *" 101 "* | *" 102 "*) ;; *) sfs_fail "/r/p1/f$i left pool p1" ;; esac
done
echo "ok: --pool p1 moved $moves files between 101 and 102 only"
check_all "after --pool p1"
"$FSCK" >"$SFS_TEST_TMP/fsck2.txt" 2>&1 || sfs_fail "stripefs-fsck after --pool p1: $(cat "$SFS_TEST_TMP/fsck2.txt")"
sfs_stop_service
