#!/usr/bin/env bash
# Code for tests stays out of what is installed and run: no test hook
# (sfs_ns_test_*: damage to the metadata store) and no in-memory chunk
# backend (sfs_chunk_mem_*, sfs_chunk_backend_mem) in the libraries and
# programs the build makes for production. They are compiled into the test
# programs that use them (tests/local.mk), which is checked too, so that a
# broken nm cannot pass this test.
set -u
cd "$SFS_BUILD" || exit 1
command -v nm >/dev/null || { echo "FAIL: nm is not installed (binutils)"; exit 1; }
hooks='sfs_ns_test_|sfs_chunk_mem_|sfs_chunk_backend_mem'

symbols() { # file: every symbol name, defined or not, static ones too
    { nm -A "$1" 2>/dev/null; nm -A -D "$1" 2>/dev/null; } | awk '{print $NF}'
}

# every library the build makes (by glob: folders and names change), and the
# programs; the service's library and server must be among them
production=()
for f in .libs/lib*.a .libs/lib*.so adio/*.so stripefs-server stripefs-ctl stripefs-fsck; do
    [ -f "$f" ] && production+=("$f")
done
bad=0
for f in .libs/libsfs_service.a stripefs-server; do
    [ -f "$f" ] || { echo "FAIL: $SFS_BUILD/$f is not built"; bad=1; }
done
for f in "${production[@]}"; do
    found=$(symbols "$f" | grep -E "^($hooks)" | sort -u | tr '\n' ' ')
    if [ -n "$found" ]; then
        echo "FAIL: $f holds test code: $found"
        bad=1
    fi
done
# the check sees symbols where they are meant to be
for want in "tests/progs/sfs_meta_corrupt:sfs_ns_test_drop_inode" \
    "tests/unit/service/test_chunk_store:sfs_chunk_backend_mem"; do
    f=${want%%:*} sym=${want#*:}
    if [ ! -f "$f" ]; then
        echo "FAIL: $SFS_BUILD/$f is not built (make check TESTS=)"
        bad=1
    elif ! symbols "$f" | grep -qx "$sym"; then
        echo "FAIL: nm finds no $sym in $f, where it belongs: this check cannot see symbols"
        bad=1
    fi
done
[ "$bad" = 0 ] || exit 1
echo "ok: ${#production[@]} production libraries and programs hold no test hooks ($hooks)"
