#!/usr/bin/env bash
# One name for a file in both APIs (issue 16 item 1; the rule is in README.md
# "One name in both APIs" and adio/ad_stripefs/ad_stripefs_name.h). As the
# unprivileged user sfsalice, under stripefs-run, with Open MPI and MPICH:
# - a file written through MPI-IO as stripefs:/stripefs/d/f is the file POSIX
#   calls see as /stripefs/d/f (access, stat size, open+read, truncate), and
#   a file written with POSIX calls is read through MPI-IO by both names;
# - a plain /stripefs/d/g given to MPI_File_open reaches the stripefs driver
#   (romio patch 0013): the striping_factor hint reads back as asked, the
#   hint romio_filesystem_type is the driver's, the file is in
#   `stripefs-ctl ls`, and no local /stripefs appears; MPI_File_delete of the
#   plain name removes it;
# - stripefs:/x keeps naming /x;
# - PnetCDF's create: access(F_OK) on the stripped name sees an existing file
#   (NOCLOBBER refuses), and CLOBBER's truncate by name cuts an existing
#   larger file, so no stale bytes stay at its end;
# - access/open/stat of a missing file, and MPI_File_open of it, give the
#   errors they give on a local (ext4) directory;
# - the same with the real PnetCDF where it is installed (Open MPI);
# - another STRIPEFS_PREFIX, and STRIPEFS_PREFIX=none with a namespace
#   directory named like the prefix.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
run_tool="$SFS_BUILD/tools/stripefs-run"
[ -f "$SFS_BUILD/adio/libstripefs-mpiio.so" ] || sfs_fail "the MPI-IO library is not built"
[ -f "$SFS_BUILD/.libs/libstripefs-posix.so" ] || sfs_fail "the POSIX preload library is not built"
sfs_test_users
unset STRIPEFS_PREFIX # the default, /stripefs

prog=$SFS_TEST_TMP/one_name
mpicc.openmpi -O2 -Wall -o "$prog.ompi" "$SFS_SRC/tests/mpi/mpi_one_name.c" || sfs_fail "compile (Open MPI)"
flavours=ompi
if command -v mpicc.mpich >/dev/null && [ -f "$SFS_BUILD/adio/libstripefs-mpiio-mpich.so" ]; then
    mpicc.mpich -O2 -Wall -o "$prog.mpich" "$SFS_SRC/tests/mpi/mpi_one_name.c" || sfs_fail "compile (MPICH)"
    flavours="ompi mpich"
else
    echo "note: MPICH or libstripefs-mpiio-mpich.so missing: only Open MPI checked"
fi
chmod 0755 "$prog".*
local_top=$SFS_TEST_TMP/local
mkdir -p "$local_top" && chown sfsalice "$local_top" || sfs_fail "local directory"
had_local_stripefs=0
[ -e /stripefs ] && had_local_stripefs=1

sfs_start_service 2 --targets 3

# one FLAVOUR NP ARGS...: the program as sfsalice under stripefs-run; its
# output in $out (and the log)
one() {
    local flavour=$1 np=$2
    local -a launcher
    shift 2
    if [ "$flavour" = ompi ]; then
        launcher=(mpirun.openmpi --oversubscribe -x STRIPEFS_CONFIG -np "$np")
    else
        launcher=(mpiexec.mpich -n "$np")
    fi
    out=$(sfs_as sfsalice timeout 120 "${launcher[@]}" "$run_tool" "$prog.$flavour" "$@" 2>&1)
    rc=$?
    printf '%s\n' "--- $flavour: $*" "$out" >>"$SFS_TEST_TMP/one_name.log"
    [ $rc = 0 ] || { echo "$out"; sfs_fail "$flavour: mpi_one_name $* exited $rc"; }
}
# result KEY: the value of the line "RESULT KEY VALUE" in $out
result() {
    printf '%s\n' "$out" | sed -n "s/^RESULT $1 //p" | head -n 1
}
expect() { # key expected what
    sfs_expect_eq "$(result "$1")" "$2" "$3"
}

for fl in $flavours; do
    d=/one-$fl
    sfs_ctl mkdir "$d" && sfs_ctl chown sfsalice "$d" || sfs_fail "mkdir $d"

    # MPI-IO writes by the prefixed name, POSIX reads by the stripped one
    one $fl 3 write "stripefs:/stripefs$d/f" 100000
    one $fl 1 posix "/stripefs$d/f" 100000
    expect "access F_OK" OK "$fl: access(F_OK) of /stripefs$d/f written as stripefs:/stripefs$d/f"
    expect "access R_OK" OK "$fl: access(R_OK) of /stripefs$d/f"
    expect "stat size" 100000 "$fl: POSIX stat size of /stripefs$d/f"
    expect "posix read" "100000 bad 0" "$fl: POSIX read of /stripefs$d/f"
    expect "truncated size" 50000 "$fl: truncate by the POSIX name"
    sfs_ctl stat "$d/f" | grep -q "Size: *50000\b" ||
        { sfs_ctl stat "$d/f"; sfs_fail "$fl: stripefs-ctl stat $d/f does not show the truncated size"; }
    one $fl 2 read "/stripefs$d/f" 50000
    expect "mpi size" "50000 read 50000 bad 0" "$fl: MPI-IO read of the truncated file by its plain name"

    # POSIX writes, MPI-IO reads by all three names
    one $fl 1 posix-write "/stripefs$d/p" 70000
    for name in "stripefs:/stripefs$d/p" "/stripefs$d/p" "stripefs:$d/p"; do
        one $fl 2 read "$name" 70000
        expect "mpi size" "70000 read 70000 bad 0" "$fl: MPI-IO read of a POSIX-written file as $name"
    done

    # a plain name reaches the driver: a stripefs-only fact reads back (a
    # stripe count other than the one f got by default)
    targets() { sfs_ctl stat "$1" | sed -n 's/.*Targets: \([0-9]*\)$/\1/p'; }
    default=$(targets "$d/f")
    factor=2
    [ "$default" = 2 ] && factor=1
    one $fl 3 write "/stripefs$d/g" 30000 $factor
    expect striping_factor $factor "$fl: striping_factor hint of a plain /stripefs$d/g"
    sfs_expect_eq "$(targets "$d/g")" $factor "$fl: stripe count of $d/g (default $default)"
    case $(result fstype) in
    *ad_stripefs*) echo "ok: $fl: romio_filesystem_type of /stripefs$d/g: $(result fstype)" ;;
    *) sfs_fail "$fl: /stripefs$d/g was not opened by the stripefs driver (fstype '$(result fstype)')" ;;
    esac
    sfs_ctl ls "$d" | grep -qw g || { sfs_ctl ls "$d"; sfs_fail "$fl: $d/g is not in stripefs-ctl ls"; }
    if [ $had_local_stripefs = 0 ] && [ -e /stripefs ]; then
        sfs_fail "$fl: a local /stripefs appeared"
    fi
    one $fl 1 delete "/stripefs$d/g"
    sfs_ctl ls "$d" | grep -qw g && sfs_fail "$fl: MPI_File_delete(/stripefs$d/g) left $d/g"
    echo "ok: $fl: MPI_File_delete of the plain name removed $d/g"

    # a ':' inside a plain name is part of it, no "xxx:" prefix (patch 0013)
    one $fl 2 write "/stripefs$d/a:b" 2000
    sfs_ctl ls "$d" | grep -qx "a:b" || { sfs_ctl ls "$d"; sfs_fail "$fl: /stripefs$d/a:b is not $d/a:b"; }
    one $fl 1 delete "/stripefs$d/a:b"
    sfs_ctl ls "$d" | grep -qx "a:b" && sfs_fail "$fl: MPI_File_delete(/stripefs$d/a:b) left it"
    echo "ok: $fl: /stripefs$d/a:b created and deleted through MPI-IO as $d/a:b"

    # stripefs:/x still names /x
    one $fl 2 write "stripefs:$d/h" 4096
    sfs_ctl ls "$d" | grep -qw h || sfs_fail "$fl: stripefs:$d/h is not $d/h"
    one $fl 1 posix "/stripefs$d/h" 4096
    expect "posix read" "4096 bad 0" "$fl: stripefs:$d/h read as /stripefs$d/h"
    # the POSIX preload applies the same rule to a stripefs: name
    # (truncated to 2048 by the check above)
    one $fl 1 posix "stripefs:/stripefs$d/h" 2048
    expect "stat size" 2048 "$fl: POSIX stat of stripefs:/stripefs$d/h is $d/h"
    expect "posix read" "2048 bad 0" "$fl: POSIX read of stripefs:/stripefs$d/h"

    # PnetCDF's create on an existing larger file, by the prefixed name
    one $fl 2 write "stripefs:/stripefs$d/nc" 528
    one $fl 2 pnetcdf "stripefs:/stripefs$d/nc" noclobber 520
    expect exists 1 "$fl: access(F_OK) of the stripped name sees the existing file"
    expect noclobber refused "$fl: NOCLOBBER refuses an existing file"
    one $fl 2 pnetcdf "stripefs:/stripefs$d/nc" clobber 520
    expect size 520 "$fl: CLOBBER of a larger file leaves no stale bytes (size by the stripped name)"
    one $fl 2 pnetcdf "stripefs:/stripefs$d/new" noclobber 520
    expect exists 0 "$fl: access(F_OK) of a new name"
    expect size 520 "$fl: NOCLOBBER creates a new file"

    # a missing file: the errors local ext4 gives
    mkdir -p "$local_top/$fl" && chown sfsalice "$local_top/$fl" || sfs_fail "local dir"
    for rel in nofile nodir/f; do
        one $fl 2 missing "$local_top/$fl/$rel"
        want=$(printf '%s\n' "$out" | grep '^RESULT')
        for name in "stripefs:/stripefs$d/$rel" "/stripefs$d/$rel"; do
            one $fl 2 missing "$name"
            got=$(printf '%s\n' "$out" | grep '^RESULT')
            sfs_expect_eq "$(echo $got)" "$(echo $want)" "$fl: errors for the missing $name as on ext4"
        done
    done
    echo "ok: $fl: missing files: $(echo $want)"
done

# the real PnetCDF (Debian builds it for Open MPI only): NOCLOBBER, CLOBBER of
# a larger file and ncmpi_open's POSIX header check, by the prefixed name;
# the file's size must be what the same program leaves on a local directory
if [ -f /usr/include/pnetcdf.h ] && ldd /usr/lib/x86_64-linux-gnu/libpnetcdf.so 2>/dev/null |
    grep -q 'libmpi\.so\.40'; then
    mpicc.openmpi -O2 -Wall -o "$prog.pnetcdf" "$SFS_SRC/tests/mpi/pnetcdf_one_name.c" -lpnetcdf ||
        sfs_fail "compile pnetcdf_one_name.c"
    chmod 0755 "$prog.pnetcdf"
    for name in "$local_top/nc" "stripefs:/stripefs/one-ompi/nc4"; do
        out=$(sfs_as sfsalice timeout 120 mpirun.openmpi --oversubscribe -x STRIPEFS_CONFIG -np 2 \
            "$run_tool" "$prog.pnetcdf" "$name" 2>&1)
        rc=$?
        printf '%s\n' "--- pnetcdf: $name" "$out" >>"$SFS_TEST_TMP/one_name.log"
        [ $rc = 0 ] || { echo "$out"; sfs_fail "pnetcdf_one_name $name exited $rc"; }
        for key in create clobber open; do
            expect $key OK "PnetCDF on $name: $key"
        done
        expect noclobber NC_EEXIST "PnetCDF on $name: NC_NOCLOBBER of an existing file"
        expect length 10 "PnetCDF on $name: the variable read back after CLOBBER"
    done
    sfs_expect_eq "$(sfs_ctl stat /one-ompi/nc4 | sed -n 's/^ *Size: //p')" "$(stat -c %s "$local_top/nc")" \
        "size of the PnetCDF file after CLOBBER of a larger one, as on the local directory"
else
    echo "note: PnetCDF for Open MPI not installed: the real-library check is left out"
fi

# another prefix, and the corner case of a namespace directory named like
# the prefix: with STRIPEFS_PREFIX=none, stripefs:/stripefs/lit is the
# namespace path /stripefs/lit, which the default prefix reaches as
# /stripefs/stripefs/lit
STRIPEFS_PREFIX=/sfsroot one ompi 2 write "/sfsroot/one-ompi/q" 3000
expect fstype "stripefs: the stripefs parallel file system (ad_stripefs)" \
    "STRIPEFS_PREFIX=/sfsroot: /sfsroot/one-ompi/q opened by the stripefs driver"
sfs_ctl ls /one-ompi | grep -qw q || sfs_fail "STRIPEFS_PREFIX=/sfsroot: /sfsroot/one-ompi/q is not /one-ompi/q"
sfs_ctl mkdir /stripefs && sfs_ctl chown sfsalice /stripefs || sfs_fail "mkdir /stripefs"
STRIPEFS_PREFIX=none one ompi 2 write "stripefs:/stripefs/lit" 3000
sfs_ctl ls /stripefs | grep -qw lit || sfs_fail "STRIPEFS_PREFIX=none: stripefs:/stripefs/lit is not /stripefs/lit"
one ompi 1 posix "/stripefs/stripefs/lit" 3000
expect "posix read" "3000 bad 0" "the namespace's /stripefs/lit read as /stripefs/stripefs/lit"
one ompi 2 read "stripefs:/stripefs/stripefs/lit" 1500
expect "mpi size" "1500 read 1500 bad 0" "the namespace's /stripefs/lit read as stripefs:/stripefs/stripefs/lit"

sfs_stop_service
echo "ok: one name for a file in MPI-IO and POSIX ($flavours)"
