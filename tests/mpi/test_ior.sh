#!/usr/bin/env bash
# The real IOR against stripefs: -a MPIIO with write and read verification
# (-W -R): file-per-process, shared file, collective, several segments,
# transfer sizes 4 KiB to 4 MiB, files over 4 targets. IOR is not part of
# stripefs: give its binary as SFS_IOR=/path/to/ior (built against Open MPI);
# without it this test is skipped and says so.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
ior=${SFS_IOR:-}
if [ -z "$ior" ] && [ -n "${SFS_IOR_SRC:-}" ] && [ -x "$SFS_IOR_SRC/src/ior" ]; then
    ior=$SFS_IOR_SRC/src/ior
fi
[ -n "$ior" ] && [ -x "$ior" ] || sfs_skip "IOR is not available here (set SFS_IOR=/path/to/ior to run it)"
run_tool="$SFS_BUILD/tools/stripefs-run"

sfs_start_service 3 --targets 4
sfs_ctl mkdir /ior || sfs_fail "mkdir"
run_ior() { # label, ior options
    local label=$1 out="$SFS_TEST_TMP/ior.out"
    shift
    "${SFS_MPIRUN[@]}" -x STRIPEFS_CONFIG -np 4 "$run_tool" "$ior" -a MPIIO -w -r -W -R -k "$@" \
        -o stripefs:/ior/$label >"$out" 2>&1 || { cat "$out"; sfs_fail "IOR $label: exit status"; }
    grep -qiE "error|WARNING" "$out" && { cat "$out"; sfs_fail "IOR $label reported errors"; }
    echo "ok: IOR $label: $(awk '$1 == "write" && NF > 10 {w=$2} $1 == "read" && NF > 10 {r=$2} END {print "write " w " MiB/s, read " r " MiB/s"}' "$out")"
}
for t in 4k 64k 1m 4m; do
    run_ior "fpp-$t" -F -t "$t" -b 4m -s 3
    run_ior "shared-$t" -t "$t" -b 4m -s 3
    run_ior "coll-$t" -c -t "$t" -b 4m -s 3
done
info=$(sfs_ctl getentryinfo /ior/shared-1m)
sfs_expect_eq "$(echo "$info" | grep -c '^  + ')" 4 "targets of IOR's shared file"
sfs_stop_service
