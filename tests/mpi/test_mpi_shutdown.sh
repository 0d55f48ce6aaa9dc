#!/usr/bin/env bash
# Shutdown in any order (issue 16): MPI programs (tests/mpi/mpi_shutdown.c)
# run as sfsalice through stripefs-run, with Open MPI and (where the MPICH
# library is built) MPICH, leave with a stripefs file still open at
# MPI_Finalize; with a library's MPI_COMM_SELF hook, registered before the
# first MPI_File_open, that writes and closes the file inside MPI_Finalize
# (what HDF5 does: before the fix every rank died there with SIGSEGV in
# sfs_cluster_target_conn, the driver's hook having freed the client first);
# checking MPI_Finalized after MPI_Finalize; with atexit handlers, registered
# before and after the POSIX preload's first call, writing stdio streams on
# stripefs that nobody closes (before the fix the handler registered first
# found the connection gone: "cannot write"); and killed by SIGTERM, with a
# handler that calls exit and with the default action. Each run must end in
# its bounded time (no hang) with the exit status the order allows, and
# every byte the program had been told was written must be in the file
# (stripefs-ctl get, compared with what the program wrote). Last, a tiny
# HDF5 program that leaves its file open at MPI_Finalize, as HDF5's
# t_pshutdown does, and h5dump reading the file back; and the service
# stopped before SIGTERM'd ranks exit (the exit must be prompt, the bytes there
# after a restart). SFS_SHUTDOWN_MODES picks some of the orders.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
run_tool="$SFS_BUILD/tools/stripefs-run"
[ -f "$SFS_BUILD/adio/libstripefs-mpiio.so" ] || sfs_fail "the MPI-IO library is not built"
sfs_test_users
prog=$SFS_TEST_TMP/shutdown
mpicc.openmpi -O2 -Wall -o "${prog}_ompi" "$SFS_SRC/tests/mpi/mpi_shutdown.c" ||
    sfs_fail "compile (Open MPI)"
flavours=ompi
if command -v mpicc.mpich >/dev/null && [ -f "$SFS_BUILD/adio/libstripefs-mpiio-mpich.so" ]; then
    mpicc.mpich -O2 -Wall -o "${prog}_mpich" "$SFS_SRC/tests/mpi/mpi_shutdown.c" ||
        sfs_fail "compile (MPICH)"
    flavours="ompi mpich"
else
    echo "note: no MPICH build of the MPI-IO library: Open MPI only"
fi
chmod 0755 "$SFS_TEST_TMP"/shutdown_*
NP=3
"${prog}_ompi" expect $NP "$SFS_TEST_TMP/expected" || sfs_fail "the expected bytes"

sfs_start_service 2 --targets 4
sfs_ctl mkdir /sd && sfs_ctl chown sfsalice:sfsalice /sd || sfs_fail "mkdir /sd for sfsalice"
home=$(sfs_user_home sfsalice)

# the file's bytes must be what the ranks wrote
verify() { # stripefs-path what
    rm -f "$SFS_TEST_TMP/got"
    sfs_ctl get "$1" "$SFS_TEST_TMP/got" || sfs_fail "$2: stripefs-ctl get $1"
    cmp "$SFS_TEST_TMP/got" "$SFS_TEST_TMP/expected" ||
        sfs_fail "$2: $1 is not what the ranks wrote ($(stat -c %s "$SFS_TEST_TMP/got") bytes, want $(stat -c %s "$SFS_TEST_TMP/expected"))"
}

launcher() { # flavour
    if [ "$1" = ompi ]; then
        echo "mpirun.openmpi --oversubscribe -x STRIPEFS_CONFIG -np $NP"
    else
        echo "mpiexec.mpich -n $NP"
    fi
}

# run_mode FLAVOUR MODE WANT_RC [PIDFILE]: the program as sfsalice (killed
# after 120 s: a hang fails); its exit status must be WANT_RC, no rank may
# crash (a signal or a sanitizer report), and every rank must have said that
# its writes returned
run_mode() {
    local flavour=$1 mode=$2 want=$3 out=$SFS_TEST_TMP/$1-$2.out rc=0
    # shellcheck disable=SC2046
    sfs_as sfsalice timeout -k 5 120 $(launcher "$flavour") "$run_tool" "${prog}_$flavour" "$mode" \
        "stripefs:/sd/$flavour-$mode" ${4:+"$4"} >"$out" 2>&1 </dev/null || rc=$?
    cat "$out"
    [ $rc != 124 ] && [ $rc != 137 ] || sfs_fail "$flavour $mode: hung (killed after 120 s)"
    ! grep -qE 'Segmentation|signal 11|SIGSEGV|ERROR: AddressSanitizer|runtime error|cannot write' "$out" ||
        sfs_fail "$flavour $mode: a rank crashed or failed (above)"
    [ "$rc" = "$want" ] || sfs_fail "$flavour $mode: exit $rc, want $want"
    [ "$(grep -c '^acked' "$out")" = $NP ] || sfs_fail "$flavour $mode: not every rank's writes returned"
    verify "/sd/$flavour-$mode" "$flavour $mode"
    echo "ok: $flavour $mode: exit $rc, every acknowledged byte of /sd/$flavour-$mode kept"
}

# a stripefs file's text
text() { rm -f "$SFS_TEST_TMP/text" && sfs_ctl get "$1" "$SFS_TEST_TMP/text" && cat "$SFS_TEST_TMP/text"; }

# start_waiting FLAVOUR MODE [NAME]: the program as sfsalice in the
# background ($job) on /sd/FLAVOUR-NAME (default MODE), until every rank has
# written its pid to $pids
start_waiting() {
    local flavour=$1 mode=$2 name=$1-${3:-$2}
    pids=$home/$name.pids
    rm -f "$pids"
    # shellcheck disable=SC2046
    sfs_as sfsalice timeout -k 5 120 $(launcher "$flavour") "$run_tool" "${prog}_$flavour" "$mode" \
        "stripefs:/sd/$name" "$pids" >"$SFS_TEST_TMP/$name.out" 2>&1 </dev/null &
    job=$!
    for _ in $(seq 600); do
        [ -f "$pids" ] && [ "$(wc -l <"$pids")" = $NP ] && break
        kill -0 $job 2>/dev/null || break
        sleep 0.1
    done
    [ "$(wc -l <"$pids" 2>/dev/null)" = $NP ] ||
        { cat "$SFS_TEST_TMP/$name.out"; sfs_fail "$name: the ranks did not start"; }
}

# SFS_SHUTDOWN_MODES: the orders to run (default all)
modes=${SFS_SHUTDOWN_MODES:-finalize-open hook-close after-finalize atexit sigterm-exit sigterm-default hdf5 service-gone}
has() { case " $modes " in *" $1 "*) return 0 ;; esac; return 1; }
for flavour in $flavours; do
    for mode in finalize-open hook-close after-finalize atexit; do
        has $mode && run_mode "$flavour" $mode 0
    done
    has atexit && for r in $(seq 0 $((NP - 1))); do
        got=$(text "/sd/$flavour-atexit.before.$r")
        sfs_expect_eq "$got" "before $r" "the stream of the handler registered before the preload (rank $r, $flavour)"
        got=$(text "/sd/$flavour-atexit.after.$r" | tr '\n' ' ')
        sfs_expect_eq "$got" "main $r after $r " "the stream written in main and by the later handler (rank $r, $flavour)"
    done
    has atexit && echo "ok: $flavour atexit: the stdio streams nobody closed were flushed at exit, by whichever handler order"
    for mode in sigterm-exit sigterm-default; do
        has $mode || continue
        start_waiting "$flavour" $mode
        kill -TERM $(cat "$pids") || sfs_fail "$flavour $mode: kill"
        killed=$SECONDS rc=0
        wait $job || rc=$?
        out=$SFS_TEST_TMP/$flavour-$mode.out
        cat "$out"
        [ $rc != 124 ] && [ $rc != 137 ] || sfs_fail "$flavour $mode: hung (killed after 120 s)"
        ! grep -qE 'Segmentation|signal 11|SIGSEGV|ERROR: AddressSanitizer|runtime error' "$out" ||
            sfs_fail "$flavour $mode: a rank crashed (above)"
        # killed ranks: never success; ranks that exit(0) from the handler
        # without MPI_Finalize: the MPI library's verdict (Open MPI's mpirun
        # says 1, MPICH's mpiexec 0)
        [ $mode = sigterm-exit ] || [ $rc != 0 ] || sfs_fail "$flavour $mode: exit 0, although SIGTERM killed every rank"
        [ "$(grep -c '^acked' "$out")" = $NP ] || sfs_fail "$flavour $mode: not every rank's writes returned"
        verify "/sd/$flavour-$mode" "$flavour $mode"
        # a rank's unflushed stream: exit() flushes it, the default action
        # loses it; but once one rank has left without MPI_Finalize the
        # launcher may SIGKILL the others before their exit() is through
        # (MPICH's hydra does: "Killed (signal 9)"; test_preload_exit.sh
        # checks the flush without a launcher)
        for r in $(seq 0 $((NP - 1))); do
            got=$(text "/sd/$flavour-$mode.after.$r")
            if [ $mode = sigterm-exit ] && [ "$got" = "" ] && grep -q 'signal 9' "$out"; then
                echo "note: rank $r of $flavour $mode was killed by the launcher before its exit flushed"
                continue
            fi
            [ $mode = sigterm-exit ] && want="term $r" || want=""
            sfs_expect_eq "$got" "$want" "the unflushed stdio stream of rank $r after $flavour $mode"
        done
        echo "ok: $flavour $mode: ended $((SECONDS - killed)) s after SIGTERM (exit $rc), every acknowledged byte kept"
    done
done

# HDF5 leaving its file open at MPI_Finalize (t_pshutdown)
if ! has hdf5; then
    :
elif command -v h5pcc.openmpi >/dev/null && command -v h5dump >/dev/null; then
    h5pcc.openmpi -O2 -o "$SFS_TEST_TMP/hdf5_shutdown" "$SFS_SRC/tests/mpi/hdf5_shutdown.c" ||
        sfs_fail "compile the HDF5 program"
    chmod 0755 "$SFS_TEST_TMP/hdf5_shutdown"
    out=$SFS_TEST_TMP/hdf5.out rc=0
    sfs_as sfsalice timeout -k 5 120 mpirun.openmpi --oversubscribe -x STRIPEFS_CONFIG -np 4 \
        "$run_tool" "$SFS_TEST_TMP/hdf5_shutdown" stripefs:/sd/pshutdown.h5 >"$out" 2>&1 </dev/null || rc=$?
    cat "$out"
    ! grep -qE 'Segmentation|signal 11|SIGSEGV|ERROR: AddressSanitizer|runtime error' "$out" ||
        sfs_fail "HDF5 with its file open at MPI_Finalize: a rank crashed (above)"
    [ $rc = 0 ] || sfs_fail "HDF5 with its file open at MPI_Finalize: exit $rc"
    sfs_ctl get /sd/pshutdown.h5 "$SFS_TEST_TMP/pshutdown.h5" || sfs_fail "copy out pshutdown.h5"
    h5dump -d /data -y -o "$SFS_TEST_TMP/values.txt" "$SFS_TEST_TMP/pshutdown.h5" >/dev/null ||
        sfs_fail "h5dump cannot read the dataset of pshutdown.h5"
    values=$(tr -cs '0-9' '\n' <"$SFS_TEST_TMP/values.txt" | sed '/^$/d')
    want=$(seq 0 $((4 * 4096 - 1)))
    [ "$values" = "$want" ] || sfs_fail "h5dump does not read back the 16384 values the ranks wrote"
    echo "ok: HDF5 closed its file inside MPI_Finalize (t_pshutdown's order): exit 0, h5dump reads all 16384 values"
else
    echo "note: no h5pcc.openmpi/h5dump: the HDF5 case is left out"
fi

# The service gone before the program exits (SIGTERM, exit() in the
# handler: the preload flushes a stream and disconnects, the driver's client
# is left): the exit must still be prompt, never a hang. Then the service
# starts again on its state and the acknowledged bytes are there.
if has service-gone; then
    start_waiting ompi sigterm-exit gone
    sfs_stop_service
    kill -TERM $(cat "$pids") || sfs_fail "service-gone: kill"
    killed=$SECONDS rc=0
    wait $job || rc=$?
    cat "$SFS_TEST_TMP/ompi-gone.out"
    [ $rc != 124 ] && [ $rc != 137 ] || sfs_fail "service-gone: hung (killed after 120 s)"
    ! grep -qE 'Segmentation|signal 11|SIGSEGV|ERROR: AddressSanitizer|runtime error' \
        "$SFS_TEST_TMP/ompi-gone.out" || sfs_fail "service-gone: a rank crashed (above)"
    took=$((SECONDS - killed))
    [ $took -le 60 ] || sfs_fail "service-gone: the ranks took $took s to exit"
    SFS_SERVICE_PID=""
    sfs_start_service 2 --targets 4
    verify /sd/ompi-gone "service-gone"
    echo "ok: service gone before the ranks exited: they exited $took s after SIGTERM (exit $rc), and after a restart every acknowledged byte is there"
fi
sfs_stop_service
