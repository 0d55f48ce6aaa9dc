#!/usr/bin/env bash
# A process of sfsalice's exits through libstripefs-posix.so with stripefs
# files open and stdio streams on them never flushed (tests/progs/
# sfs_exit_writer.c), in three ways: returning from main, with an atexit
# handler registered before the preload's first call and one after, both
# writing streams (before the fix the earlier one found the connection gone:
# "before: cannot write"); exit(0) from a SIGTERM handler; and SIGTERM's
# default action. Each must end at once with its status (0, 0, 143), and the
# files must hold what was written: every write(2) that returned, every
# stream that exit flushed, nothing of a buffer that was never flushed. Under
# the sanitizers the program runs with the leak check (the destructor frees
# the client).
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/preload/preload_lib.sh"
sfs_pl_need tests/progs/sfs_exit_writer
WRITER="$SFS_BUILD/tests/progs/sfs_exit_writer"
sfs_test_users
sfs_start_service 2 --targets 2
sfs_ctl mkdir /ex && sfs_ctl chown sfsalice:sfsalice /ex || sfs_fail "mkdir /ex for sfsalice"
sfs_user_home sfsalice >/dev/null

text() { rm -f "$SFS_TEST_TMP/text" && sfs_ctl get "$1" "$SFS_TEST_TMP/text" && tr '\n' ' ' <"$SFS_TEST_TMP/text"; }

run() { # mode want-rc file=content...
    local mode=$1 want=$2 rc=0 spec
    shift 2
    sfs_ctl mkdir "/ex/$mode" || sfs_fail "mkdir /ex/$mode"
    sfs_ctl chown sfsalice:sfsalice "/ex/$mode" || sfs_fail "chown /ex/$mode"
    SECONDS=0
    # only the program preloaded, and with the leak check as the suite set it
    sfs_as sfsalice timeout -k 5 60 env ASAN_OPTIONS="$sfs_leak_options" LD_PRELOAD="$SFS_PRELOAD" \
        "$WRITER" "$mode" "/stripefs/ex/$mode" >"$SFS_TEST_TMP/$mode.out" 2>&1 || rc=$?
    cat "$SFS_TEST_TMP/$mode.out"
    [ $rc != 124 ] && [ $rc != 137 ] || sfs_fail "$mode: hung (killed after 60 s)"
    [ $rc = "$want" ] || sfs_fail "$mode: exit $rc, want $want"
    for spec in "$@"; do
        sfs_expect_eq "$(text "/ex/$mode/${spec%%=*}")" "${spec#*=}" "$mode: /ex/$mode/${spec%%=*}"
    done
    echo "ok: $mode: exit $rc after ${SECONDS} s, the files hold what was written"
}
run atexit 0 "fd=fd " "before=before " "after=main after "
run sigterm-exit 0 "fd=fd " "after=term "
run sigterm-default 143 "fd=fd " "after="
sfs_stop_service
