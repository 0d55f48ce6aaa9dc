# shellcheck shell=bash
# Helpers for the preload tests (sourced after tests/lib/sfs_test_lib.sh).
# SFS_PRELOAD is what LD_PRELOAD must hold to run a program through
# libstripefs-posix.so; sfs_pl runs one command that way.
SFS_PRELOAD_LIB="$SFS_BUILD/.libs/libstripefs-posix.so"
[ -f "$SFS_PRELOAD_LIB" ] ||
    sfs_skip "libstripefs-posix.so is not built in $SFS_BUILD (make libstripefs-posix.la)"
[ -f "$SFS_BUILD/.libs/libstripefs.so.0" ] ||
    sfs_skip "libstripefs.so.0 is not built in $SFS_BUILD (make libstripefs.la)"
SFS_PRELOAD="$SFS_PRELOAD_LIB"
# In a sanitizer build the library needs the ASan runtime loaded first,
# also in programs that are not instrumented (ls, cp, mdtest).
sfs_asan_runtime=$(ldd "$SFS_PRELOAD_LIB" | awk '/libasan/ {print $3; exit}')
# Those programs run without the leak check (detect_leaks=0 last, so that it
# wins over the suite's options): their own leaks at exit are not ours, the
# MPI runtime's cannot be suppressed, and LeakSanitizer's tracer crashes in
# uninstrumented programs that dlopen libraries with thread-local storage (it
# misreads glibc's dynamic TLS: google/sanitizers#1322). sfs_pl_checked runs
# a test program built here with the leak check as the suite set it.
sfs_leak_options=${ASAN_OPTIONS:-}
if [ -n "$sfs_asan_runtime" ]; then
    SFS_PRELOAD="$sfs_asan_runtime $SFS_PRELOAD_LIB"
    export ASAN_OPTIONS="verify_asan_link_order=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}:detect_leaks=0"
fi
export STRIPEFS_PREFIX=/stripefs

sfs_pl() { LD_PRELOAD="$SFS_PRELOAD" "$@"; }
sfs_pl_checked() { ASAN_OPTIONS=$sfs_leak_options LD_PRELOAD="$SFS_PRELOAD" "$@"; }

# A program the tests build (make check); skip with the make command if not.
sfs_pl_need() { # path relative to the build tree
    [ -x "$SFS_BUILD/$1" ] || sfs_skip "$1 is not built (make -C $SFS_BUILD $1)"
}
