#!/usr/bin/env bash
# The permission matrix against the local kernel as the oracle. As root:
# make the users sfsalice and sfsbob (sfs_test_users); build the same tree
# (tests/progs/sfs_perm_probe.c setup) on a local directory under
# $SFS_TEST_TMP (ext4 here) and on stripefs through libstripefs-posix.so;
# run the fixed list of operations (sfs_perm_probe probe) as sfsalice,
# sfsbob and nobody, as sfsalice with umask 027, and as root (trusted on the
# one-host service: root stays root), on both; any answer that
# differs fails the test, printed one line per operation with both answers.
# Then the same questions through stripefs-ctl and MPI-IO, as users: another
# user's 0600 file cannot be read, a directory without write permission
# cannot be changed, and the error names the path (stripefs-ctl) or is
# MPI_ERR_ACCESS (MPI-IO, where the same open on the local tree is the oracle).
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/preload/preload_lib.sh"
sfs_pl_need tests/progs/sfs_perm_probe
sfs_pl_need tests/progs/sfs_mpi_open
PROBE="$SFS_BUILD/tests/progs/sfs_perm_probe"
MPI_OPEN="$SFS_BUILD/tests/progs/sfs_mpi_open"
RUN_TOOL="$SFS_BUILD/tools/stripefs-run"
sfs_test_users

findings=0
finding() { echo "FINDING: $*"; findings=$((findings + 1)); }

# probe runs: name, user, umask (root on the one-host service stays root)
runs=("sfsalice sfsalice 022" "sfsbob sfsbob 022" "nobody nobody 022" "sfsalice-u027 sfsalice 027"
    "root root 022")
ids=("$SFS_ALICE_UID" "$SFS_BOB_UID" "$SFS_TEAM_GID")

# make_tree WHERE DIR: the tree at DIR, made by root with chown; where that
# fails (a finding), made again at DIR.owners by the owners themselves
# (setup --as-owners), so that the matrix still compares what it can. Sets
# tree to the directory made.
make_tree() {
    local where=$1 dir=$2 log=$SFS_TEST_TMP/setup.$1.${2##*/}
    tree=$dir
    timeout 300 "$PROBE" setup "$dir" "${ids[@]}" >"$log" 2>&1 && return 0
    finding "$where: setup of $dir as root failed: $(grep -c '^setup: ' "$log") errors, first ones:
$(grep '^setup: ' "$log" | head -n 6)"
    tree=$dir.owners
    timeout 300 "$PROBE" setup --as-owners "$tree" "${ids[@]}" >"$log.owners" 2>&1 && return 0
    finding "$where: setup --as-owners of $tree failed too: $(grep -c '^setup: ' "$log.owners") errors:
$(grep '^setup: ' "$log.owners" | head -n 6)"
}

# probe_all WHERE BASE [preload]: a tree per run under BASE, probed as its user
probe_all() {
    local where=$1 top=$2 name user mask r tree
    local LD_PRELOAD=${LD_PRELOAD:-}
    [ -n "${3:-}" ] && export LD_PRELOAD=$SFS_PRELOAD
    for r in "${runs[@]}"; do
        read -r name user mask <<<"$r"
        make_tree "$where" "$top/$name"
        (umask "$mask" && sfs_as "$user" timeout 300 "$PROBE" probe "$tree") \
            >"$SFS_TEST_TMP/probe.$where.$name" 2>"$SFS_TEST_TMP/probe.$where.$name.err" ||
            finding "$where: probe as $name exited $?: $(head -n 3 "$SFS_TEST_TMP/probe.$where.$name.err")"
        sfs_log "$where: $name (umask $mask) on $tree: $(grep -c ': OK' "$SFS_TEST_TMP/probe.$where.$name") OK," \
            "$(grep -c ': E[A-Z]*$' "$SFS_TEST_TMP/probe.$where.$name") errors," \
            "$(tail -n 1 "$SFS_TEST_TMP/probe.$where.$name")"
    done
}

# --- the oracle: the local kernel --------------------------------------
local_top="$SFS_TEST_TMP/local"
mkdir -p "$local_top" && chmod 0755 "$local_top"
sfs_log "oracle: $local_top on $(stat -f -c %T "$local_top") ($(findmnt -n -o FSTYPE -T "$local_top" 2>/dev/null))"
probe_all local "$local_top"
for r in "${runs[@]}"; do
    read -r name _ <<<"$r"
    grep -q '^operations: [0-9]' "$SFS_TEST_TMP/probe.local.$name" ||
        sfs_fail "the probe did not finish on the local file system as $name"
done
# the oracle itself must say what Linux says (spot checks, one per kind)
sfs_expect_eq "$(grep '^open f/600 O_RDONLY:' "$SFS_TEST_TMP/probe.local.sfsbob")" \
    "open f/600 O_RDONLY: EACCES" "oracle: bob opens alice's 0600 file"
sfs_expect_eq "$(grep '^unlink d1777/rm_a:' "$SFS_TEST_TMP/probe.local.sfsbob")" \
    "unlink d1777/rm_a: EPERM" "oracle: bob unlinks alice's file in a sticky directory"
sfs_expect_eq "$(grep '^mkdir d2775t/new_d:' "$SFS_TEST_TMP/probe.local.sfsbob")" \
    "mkdir d2775t/new_d: OK dir mode=2755 owner=self group=team" "oracle: mkdir in a setgid directory"
sfs_expect_eq "$(grep '^open d750t/new_f ' "$SFS_TEST_TMP/probe.local.sfsalice-u027")" \
    "open d750t/new_f O_WRONLY|O_CREAT: OK write=6 file mode=0640 owner=self group=primary size=6" \
    "oracle: create with umask 027"

# --- stripefs, through the preload --------------------------------------
sfs_start_service 2 --targets 2
mode_of() { stat -c '%a %U:%G' "$1"; }
sfs_log "config $STRIPEFS_CONFIG: $(mode_of "$STRIPEFS_CONFIG"); state dir: $(mode_of "$SFS_STATE")"
connauth=$(awk '/^connauth_file:/ {print $2}' "$STRIPEFS_CONFIG")
[ -n "$connauth" ] && sfs_log "connauth $connauth: $(mode_of "$connauth")"
[ "$(stat -c %a "$STRIPEFS_CONFIG")" = 644 ] ||
    finding "the configuration $STRIPEFS_CONFIG is $(mode_of "$STRIPEFS_CONFIG"), not 0644"
[ -z "$connauth" ] || [ "$(stat -c %a "$connauth")" = 400 ] ||
    finding "the connauth secret $connauth is $(mode_of "$connauth"), not 0400"
if ! sfs_as sfsalice test -r "$STRIPEFS_CONFIG"; then
    sfs_fail "sfsalice cannot read the configuration $STRIPEFS_CONFIG (state dir $(mode_of "$SFS_STATE")): the users cannot reach the service"
fi
sfs_ctl mkdir /perm || sfs_fail "stripefs-ctl mkdir /perm (as root)"
# nothing of the service's on disk is readable by a user but the configuration
# (and munged's pid file); checked again at the end, with data in it
state_readable() {
    sfs_as nobody find "$SFS_STATE" -type f -readable 2>/dev/null |
        grep -vxF -e "$STRIPEFS_CONFIG" -e "$SFS_STATE/munge/munged.pid"
}
probe_all stripefs /stripefs/perm preload

# one line per operation whose answers differ: OP: ext4=... stripefs=...
differing=0
for r in "${runs[@]}"; do
    read -r name _ <<<"$r"
    out=$(awk -v who="$name" '
        { i = index($0, ": "); op = (i ? substr($0, 1, i - 1) : $0); val = (i ? substr($0, i + 2) : "") }
        FNR == NR { if (!(op in want)) order[++n] = op; want[op] = val; next }
        { got[op] = val; if (!(op in want)) order[++n] = op }
        END {
            for (k = 1; k <= n; k++) {
                op = order[k]
                a = (op in want) ? want[op] : "(missing)"; b = (op in got) ? got[op] : "(missing)"
                if (a != b) printf "%s: %s: ext4=%s stripefs=%s\n", who, op, a, b
            }
        }' "$SFS_TEST_TMP/probe.local.$name" "$SFS_TEST_TMP/probe.stripefs.$name")
    if [ -n "$out" ]; then
        echo "$out"
        differing=$((differing + $(echo "$out" | wc -l)))
        finding "$name: $(echo "$out" | wc -l) of $(wc -l <"$SFS_TEST_TMP/probe.local.$name") answers differ from the local file system"
    else
        echo "ok: $name: all $(wc -l <"$SFS_TEST_TMP/probe.local.$name") answers as on the local file system"
    fi
done

# --- stripefs-ctl, as users ---------------------------------------------
# A fresh tree for these (same layout; bob and alice as in the probe).
LD_PRELOAD="$SFS_PRELOAD" make_tree stripefs /stripefs/perm/ctl
c=${tree#/stripefs}
printf 'from a user\n' >"$SFS_TEST_TMP/put.src" && chmod 0644 "$SFS_TEST_TMP/put.src"
# ctl_ok USER VERB ARGS...: must succeed; ctl_denied USER PATH VERB ARGS...:
# must exit 1 with an error that names PATH
ctl_ok() {
    local user=$1 out
    shift
    if out=$(sfs_as "$user" timeout 120 "$SFS_CTL" "$@" 2>&1 >/dev/null); then
        echo "ok: $user: stripefs-ctl $* succeeds"
    else
        finding "$user: stripefs-ctl $* failed (exit $?): $out"
    fi
}
ctl_denied() {
    local user=$1 path=$2 out rc
    shift 2
    out=$(sfs_as "$user" timeout 120 "$SFS_CTL" "$@" 2>&1 >/dev/null)
    rc=$?
    if [ $rc -ne 1 ]; then
        finding "$user: stripefs-ctl $* exited $rc, not 1 (denied): ${out:-no message}"
    elif ! echo "$out" | grep -qF -- "$path"; then
        finding "$user: stripefs-ctl $* was refused, but the error does not name $path: $out"
    else
        echo "ok: $user: stripefs-ctl $* refused: $out"
    fi
}
home_of() { echo "$SFS_TEST_TMP/as-$1"; }
ctl_denied sfsalice $c/f/b600 get $c/f/b600 "$(home_of sfsalice)/b600"
ctl_denied nobody $c/f/600 get $c/f/600 "$(home_of nobody)/600"
ctl_denied nobody $c/f/640t get $c/f/640t "$(home_of nobody)/640t"
ctl_ok sfsalice get $c/f/600 "$(home_of sfsalice)/600"
[ "$(cat "$(home_of sfsalice)/600" 2>/dev/null)" = 0123456789 ] ||
    finding "sfsalice: stripefs-ctl get of her own 0600 file did not give its content"
ctl_ok sfsbob get $c/f/640t "$(home_of sfsbob)/640t"
ctl_denied sfsbob $c/d755/rm_a rm $c/d755/rm_a
ctl_denied sfsbob $c/d1777/rm_a rm $c/d1777/rm_a
ctl_ok sfsbob rm $c/d1777/rm_b
ctl_ok sfsalice rm $c/d755/rm_b
ctl_denied sfsbob $c/d755/new put "$SFS_TEST_TMP/put.src" $c/d755/new
ctl_denied sfsbob $c/f/644 put "$SFS_TEST_TMP/put.src" $c/f/644
ctl_ok sfsbob put "$SFS_TEST_TMP/put.src" $c/d777/new
ctl_denied sfsbob $c/d755/newdir mkdir $c/d755/newdir
ctl_ok sfsbob mkdir $c/d770t/newdir
ctl_denied nobody $c/d770t/newdir2 mkdir $c/d770t/newdir2
ctl_denied sfsalice $c/db700 ls $c/db700
ctl_denied sfsbob $c/d711 ls $c/d711
ctl_ok sfsbob ls $c/db700
ctl_ok nobody ls $c/d755
# what bob made is bob's
owner=$(env LD_PRELOAD="$SFS_PRELOAD" stat -c '%U:%G %a' /stripefs$c/d777/new 2>&1)
[ "$owner" = "sfsbob:sfsbob 644" ] || finding "a file bob put into stripefs is '$owner', not 'sfsbob:sfsbob 644'"

# --- MPI-IO, as users (2 ranks); the local tree is the oracle ------------
# mpi_open USER CLASS REL AMODE [read|write]: what the program prints on
# stripefs (through stripefs-run) must be what Open MPI's own MPI-IO prints on
# the local tree (a fresh setup of both), whose open must give CLASS
LD_PRELOAD="$SFS_PRELOAD" make_tree stripefs /stripefs/perm/mpi
mpi_tree=${tree#/stripefs}
"$PROBE" setup "$local_top/mpi" "${ids[@]}" >/dev/null || sfs_fail "local setup for the MPI-IO checks"
mpi_open() { # user expected-open-class rel amode [op]
    local user=$1 want=$2 rel=$3 amode=$4 op=${5:-} here there
    local -a mpi=(timeout 180 mpirun.openmpi --oversubscribe -np 2 -x STRIPEFS_CONFIG)
    # (the oracle without the stripefs library: Open MPI's own MPI-IO)
    # (the program's own lines; everything goes to mpi.log)
    here=$(sfs_as "$user" "${mpi[@]}" "$MPI_OPEN" "$local_top/mpi/$rel" "$amode" $op 2>&1 |
        tee -a "$SFS_TEST_TMP/mpi.log" | grep -E '^(open|read|write|close): ')
    there=$(sfs_as "$user" "${mpi[@]}" "$RUN_TOOL" "$MPI_OPEN" "stripefs:$mpi_tree/$rel" "$amode" $op 2>&1 |
        tee -a "$SFS_TEST_TMP/mpi.log" | grep -E '^(open|read|write|close): ')
    if [ "$(echo "$here" | grep '^open:')" != "open: $want" ]; then
        finding "MPI-IO oracle: $user opening $rel $amode on the local tree: '$(echo $here)', not 'open: $want'"
    fi
    if [ "$here" != "$there" ]; then
        finding "MPI-IO: $user $rel $amode $op: local '$(echo $here)', stripefs '$(echo $there)'"
    else
        echo "ok: MPI-IO: $user opens $rel $amode $op: $(echo $there)"
    fi
}
mpi_open sfsalice MPI_ERR_ACCESS f/b600 rdonly read
mpi_open sfsalice MPI_SUCCESS f/600 rdonly read
mpi_open sfsalice MPI_SUCCESS f/600.wr wronly write
# A write-only file (0200) opened MPI_MODE_WRONLY: the one answer that
# differs on purpose. Open MPI's own MPI-IO (OMPIO) opens read-write
# underneath and refuses; ROMIO's generic open tries read-write, then
# write-only with data sieving of writes off (adio/common/ad_opencoll.c), and
# the kernel lets the owner open it O_WRONLY: stripefs follows ROMIO and the
# kernel, and the write succeeds.
here=$(sfs_as sfsalice timeout 180 mpirun.openmpi --oversubscribe -np 2 "$MPI_OPEN" \
    "$local_top/mpi/f/200.wr" wronly write 2>&1 | grep -E '^(open|read|write|close): ')
there=$(sfs_as sfsalice timeout 180 mpirun.openmpi --oversubscribe -np 2 -x STRIPEFS_CONFIG \
    "$RUN_TOOL" "$MPI_OPEN" "stripefs:$mpi_tree/f/200.wr" wronly write 2>&1 |
    grep -E '^(open|read|write|close): ')
echo "$here" | grep -q "^open: MPI_ERR_ACCESS" ||
    finding "MPI-IO oracle: OMPIO opened a 0200 file MPI_MODE_WRONLY: '$(echo $here)'"
[ "$(echo $there)" = "open: MPI_SUCCESS write: MPI_SUCCESS close: MPI_SUCCESS" ] ||
    finding "MPI-IO: sfsalice f/200.wr wronly write on stripefs: '$(echo $there)', not a successful write-only open"
echo "ok: MPI-IO: a 0200 file opened MPI_MODE_WRONLY: OMPIO '$(echo $here)', stripefs (as ROMIO's generic open and the kernel) '$(echo $there)'"
mpi_open sfsbob MPI_ERR_ACCESS f/644 rdwr write
mpi_open sfsbob MPI_SUCCESS f/640t rdonly read
mpi_open nobody MPI_ERR_ACCESS f/640t rdonly read
mpi_open nobody MPI_SUCCESS f/644 rdonly read
mpi_open sfsbob MPI_ERR_ACCESS f/644.wr wronly write
mpi_open sfsbob MPI_ERR_ACCESS d755/new_mpi "create|wronly" write
mpi_open sfsbob MPI_SUCCESS d777/new_mpi "create|wronly" write
mpi_open sfsalice MPI_ERR_ACCESS db700/afile rdonly read
mpi_open sfsalice MPI_ERR_NO_SUCH_FILE f/missing rdonly

readable=$(state_readable)
[ -z "$readable" ] || finding "files of the service's state that the user nobody can read: $(echo $readable)"

# Plain paths keep working through stripefs-run (ROMIO's ufs driver inside
# libstripefs-mpiio.so): a collective create the kernel refuses must give
# every rank MPI_ERR_ACCESS, as Open MPI's own MPI-IO does.
out=$(sfs_as sfsbob timeout 180 mpirun.openmpi --oversubscribe -np 2 "$RUN_TOOL" "$MPI_OPEN" \
    "$local_top/mpi/d755/new_ufs" "create|wronly" 2>&1 | tee -a "$SFS_TEST_TMP/mpi.log" |
    grep -E '^(open|read|write|close): ')
if [ "$out" = "open: MPI_ERR_ACCESS" ]; then
    echo "ok: MPI-IO: through stripefs-run, sfsbob creating in a local 0755 directory of alice's: $out"
else
    finding "MPI-IO through stripefs-run on a local path: sfsbob creating $local_top/mpi/d755/new_ufs: '$(echo $out)', not 'open: MPI_ERR_ACCESS' on every rank"
fi

sfs_stop_service
[ $findings -eq 0 ] || sfs_fail "$findings finding(s) above ($differing differing answers of the matrix)"
echo "ok: the permission matrix, stripefs-ctl and MPI-IO answer as the local file system"
