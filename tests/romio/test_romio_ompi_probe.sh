#!/bin/bash
# (a) An unmodified MPI-IO program built with mpicc.openmpi, run under
# stripefs-run (LD_PRELOAD): ROMIO handles plain paths (ufs), and a stripefs:
# path with no service configured fails with MPI_ERR_IO and a message that
# says what to configure, and with a service that is down, one that names it.
. "$SFS_SRC/tests/romio/lib.sh"
need_ompi
cd "$SFS_TEST_TMP"
prog=$(build_prog openmpi romio_probe)

ompi_run 2 "$prog" plain-a stripefs:/x >without.out 2>&1 || { cat without.out; fail "probe without the library"; }
expect_line without.out '^romio_filesystem_type: NONE$' "without the library, Open MPI's OMPIO handles plain paths (no ROMIO hint)"

unset STRIPEFS_CONFIG STRIPEFS_MGMT STRIPEFS_CONNAUTH
ompi_run 2 "$RUN_TOOL" "$prog" plain-b stripefs:/x >with.out 2>&1 || { cat with.out; fail "probe with the library"; }
cat with.out
expect_line with.out '^romio_filesystem_type: UFS' "with the library, ROMIO's ufs driver handles plain paths"
expect_line with.out '^open stripefs:/x: failed: class=MPI_ERR_IO' "stripefs: open fails with error class MPI_ERR_IO"
expect_line with.out "^error string: stripefs:/x: no stripefs service configured: set STRIPEFS_CONFIG=" \
    "MPI_Error_string names the path and what to configure"
expect_line with.out "^delete error string: stripefs: no stripefs service configured" "MPI_File_delete of a stripefs: path fails clearly too"
# a configured service that is not running: the error names where it looked
head -c 64 /dev/urandom >connauth && chmod 0400 connauth
STRIPEFS_MGMT=localhost:1 STRIPEFS_CONNAUTH=$PWD/connauth \
    ompi_run 1 "$RUN_TOOL" "$prog" plain-c stripefs:/x >down.out 2>&1 || { cat down.out; fail "probe with the service down"; }
cat down.out
expect_line down.out "^error string: stripefs:/x: cannot reach the stripefs management service at localhost:1" \
    "a service that is down is named in the error"
if grep -q 'ADIOI_STRIPEFS\|line [0-9]' with.out; then
    fail "ROMIO printed its error to stderr (it must not by default)"
fi
ok "no ROMIO error printed to stderr by default"

# The driver's fsname (what romio_filesystem_type reports for stripefs files)
# is in the library, next to ROMIO's own.
grep -aq 'stripefs: the stripefs parallel file system (ad_stripefs)' "$LIB_OMPI" ||
    fail "the stripefs driver's fsname string is not in $LIB_OMPI"
ok "the library carries the stripefs fsname 'stripefs: the stripefs parallel file system (ad_stripefs)'"
