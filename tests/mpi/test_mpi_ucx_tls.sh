#!/usr/bin/env bash
# The one-host service and its clients under each UCX transport a one-host
# suite can get: UCX_TLS=tcp, =posix and =sysv (shared memory), each with
# "self" for a process's own endpoints. Servers, stripefs-ctl, an MPI-IO job
# (mpi_io_check: collective strided and list I/O, every byte read back, 2
# ranks) and the POSIX preload (a 3 MB file copied in and read back) all run
# with that UCX_TLS. A transport UCX does not offer here (ucx_info -d) is
# left out, saying so; with none left the test is a skip.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/preload/preload_lib.sh"
run_tool="$SFS_BUILD/tools/stripefs-run"
[ -f "$SFS_BUILD/adio/libstripefs-mpiio.so" ] || sfs_fail "the MPI-IO library is not built"
command -v ucx_info >/dev/null || sfs_skip "ucx_info is not installed (it says which transports UCX offers)"
mpicc.openmpi -O2 -o "$SFS_TEST_TMP/check" "$SFS_SRC/tests/mpi/mpi_io_check.c" || sfs_fail "compile"
offered=$(ucx_info -d | awk '/Transport:/ {print $3}' | sort -u | tr '\n' ' ')
echo "UCX offers: $offered"

head -c 3000000 /dev/urandom >"$SFS_TEST_TMP/blob"
ran=()
for tl in tcp posix sysv; do
    if ! echo " $offered" | grep -q " $tl "; then
        echo "note: UCX_TLS=$tl left out: UCX offers no '$tl' transport here (ucx_info -d: $offered)"
        continue
    fi
    sfs_log "--- UCX_TLS=$tl,self"
    export UCX_TLS="$tl,self"
    SFS_STATE="$SFS_TEST_TMP/state-$tl" SFS_PORT=""
    SFS_SERVICE_MPI_ARGS="-x UCX_TLS"
    sfs_start_service 3 --targets 4
    sfs_ctl check-servers || sfs_fail "UCX_TLS=$UCX_TLS: check-servers"
    # the servers themselves run with it
    for pid in $(sfs_server_pids); do
        tr '\0' '\n' </proc/"$pid"/environ | grep -qx "UCX_TLS=$UCX_TLS" ||
            sfs_fail "server pid $pid does not run with UCX_TLS=$UCX_TLS"
    done
    echo "ok: UCX_TLS=$UCX_TLS: $(sfs_server_pids | wc -w) server processes run with it"
    # and a client reaches each of the 3 ranks over that transport
    sfs_ctl net >"$SFS_TEST_TMP/net-$tl.out" || sfs_fail "UCX_TLS=$UCX_TLS: stripefs-ctl net"
    over=$(grep -c "reaches it over: $tl/" "$SFS_TEST_TMP/net-$tl.out")
    [ "$over" = 3 ] || { cat "$SFS_TEST_TMP/net-$tl.out"; sfs_fail "UCX_TLS=$UCX_TLS: $over of 3 ranks reached over $tl"; }
    echo "ok: UCX_TLS=$UCX_TLS: stripefs-ctl reaches all 3 ranks over $tl ($(grep -m1 -o "over: $tl/[^ ]*" "$SFS_TEST_TMP/net-$tl.out"))"
    sfs_ctl mkdir /io /pl || sfs_fail "UCX_TLS=$UCX_TLS: mkdir"

    "${SFS_MPIRUN[@]}" -x STRIPEFS_CONFIG -x UCX_TLS -np 2 "$run_tool" "$SFS_TEST_TMP/check" stripefs:/io \
        >"$SFS_TEST_TMP/check-$tl.out" 2>&1
    rc=$?
    grep -v '^ok:' "$SFS_TEST_TMP/check-$tl.out" | head -n 20
    [ $rc -eq 0 ] || { cat "$SFS_TEST_TMP/check-$tl.out"; sfs_fail "UCX_TLS=$UCX_TLS: MPI-IO job exited with $rc"; }
    nok=$(grep -c '^ok:' "$SFS_TEST_TMP/check-$tl.out")
    [ "$nok" -ge 3 ] && ! grep -q FAILED "$SFS_TEST_TMP/check-$tl.out" ||
        { cat "$SFS_TEST_TMP/check-$tl.out"; sfs_fail "UCX_TLS=$UCX_TLS: MPI-IO checks"; }
    echo "ok: UCX_TLS=$UCX_TLS: MPI-IO job, $nok checks passed (every byte read back)"

    sfs_pl cp "$SFS_TEST_TMP/blob" /stripefs/pl/blob || sfs_fail "UCX_TLS=$UCX_TLS: cp in through the preload"
    sfs_pl cat /stripefs/pl/blob >"$SFS_TEST_TMP/blob.pl" || sfs_fail "UCX_TLS=$UCX_TLS: read through the preload"
    cmp "$SFS_TEST_TMP/blob" "$SFS_TEST_TMP/blob.pl" || sfs_fail "UCX_TLS=$UCX_TLS: the preload read other bytes"
    sfs_ctl get /pl/blob "$SFS_TEST_TMP/blob.ctl" && cmp "$SFS_TEST_TMP/blob" "$SFS_TEST_TMP/blob.ctl" ||
        sfs_fail "UCX_TLS=$UCX_TLS: stripefs-ctl get read other bytes"
    echo "ok: UCX_TLS=$UCX_TLS: 3 MB through the preload read back identical (preload and stripefs-ctl)"
    sfs_stop_service
    unset UCX_TLS
    ran+=("$tl")
done
[ ${#ran[@]} -gt 0 ] || sfs_skip "UCX offers none of tcp, posix, sysv here (ucx_info -d: $offered)"
echo "ok: transports run: ${ran[*]}"
