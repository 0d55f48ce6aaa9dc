#!/usr/bin/env bash
# Modes, owners and times: stripefs-ctl chmod and chown (octal modes, user
# and group names or numbers, usage errors exit 2, failures name the path),
# stat and ls -l showing rwx strings with setuid/setgid/sticky and owner
# names; coreutils through libstripefs-posix.so (touch, mkdir, chmod, chown,
# chgrp, touch -d, cp -p both ways) giving what the same commands give on a
# local directory. The one-host service runs as root here, and root may
# chown (the metadata server decides who may; this test only checks that
# the calls reach it).
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/preload/preload_lib.sh"
[ "$(id -u)" = 0 ] || sfs_skip "chown to other ids needs root (the service trusts root only)"

sfs_start_service 2 --targets 2
L="$SFS_TEST_TMP/local"
mkdir -p "$L"
sfs_ctl mkdir /at || sfs_fail "mkdir /at"
T=/stripefs/at

# Checks that need the server to keep SFS_ID_UNCHANGED (chown with one id
# alone) or to know SFS_SETATTR_*_NOW fail at the end, not at once, so that
# the others still run.
later_failures=0
expect_eq_later() { # actual expected what
    if [ "$1" = "$2" ]; then
        echo "ok: $3 = '$1'"
    else
        echo "FAIL (continuing): $3: expected '$2', got '$1'"
        later_failures=$((later_failures + 1))
    fi
}

# mode/owner fields of stripefs-ctl stat: "4755/-rwsr-xr-x 0/root 0/root"
ctl_attrs() {
    sfs_ctl stat "$1" |
        sed -n 's/.*Mode: (\([^)]*\))  Uid: (\([^)]*\))  Gid: (\([^)]*\)).*/\1 \2 \3/p'
}

# --- stripefs-ctl chmod / chown: usage errors before any connection
for bad in "chmod" "chmod 644" "chmod 9 /at" "chmod 8 /at" "chmod abc /at" "chmod -1 /at" \
    "chmod 10000 /at" "chmod '' /at" "chown" "chown root" "chown nosuchuser-x /at" \
    "chown :nosuchgroup-x /at" "chown : /at" "chown root:+x /at" "chown 4294967295 /at"; do
    out=$(eval "STRIPEFS_CONFIG=/nonexistent '$SFS_CTL' $bad" 2>&1)
    rc=$?
    [ $rc = 2 ] || sfs_fail "stripefs-ctl $bad: exit $rc, not 2 (usage): $out"
    [ -n "$out" ] || sfs_fail "stripefs-ctl $bad: exit 2 without a message"
done
echo "ok: 15 malformed chmod/chown command lines exit 2 with a message"
for verb in chmod chown stat ls; do
    out=$(sfs_ctl $verb --help) || sfs_fail "stripefs-ctl $verb --help"
    echo "$out" | grep -q "^usage: stripefs-ctl $verb" || sfs_fail "$verb --help: $out"
done
echo "ok: chmod, chown, stat, ls have --help"
sfs_expect_fail "no such file.*/at/nothing" sfs_ctl chmod 600 /at/nothing
sfs_expect_fail "no such file.*/at/nothing" sfs_ctl chown 12:34 /at/nothing

# --- chmod: octal in, rwx strings out (stat and ls -l)
sfs_pl touch $T/f || sfs_fail "touch $T/f"
sfs_pl mkdir $T/d || sfs_fail "mkdir $T/d"
for m in 4755:-rwsr-xr-x 2640:-rw-r-S--- 6711:-rws--s--x 4644:-rwSr--r-- 0:---------- \
    7777:-rwsrwsrwt 640:-rw-r-----; do
    sfs_ctl chmod "${m%%:*}" /at/f || sfs_fail "stripefs-ctl chmod ${m%%:*}"
    want=$(printf '%04o/%s' $((0${m%%:*})) "${m#*:}")
    sfs_expect_eq "$(ctl_attrs /at/f | cut -d' ' -f1)" "$want" "stripefs-ctl stat after chmod ${m%%:*}"
    sfs_expect_eq "$(sfs_pl stat -c %A $T/f)" "${m#*:}" "stat(1) through the preload, chmod ${m%%:*}"
    sfs_expect_eq "$(sfs_ctl ls -l /at | awk '$NF == "f" {print $1}')" "${m#*:}" \
        "stripefs-ctl ls -l, chmod ${m%%:*}"
done
for m in 1777:drwxrwxrwt 1776:drwxrwxrwT 2755:drwxr-sr-x 755:drwxr-xr-x; do
    sfs_ctl chmod "${m%%:*}" /at/d || sfs_fail "stripefs-ctl chmod ${m%%:*} /at/d"
    sfs_expect_eq "$(sfs_ctl ls -l /at | awk '$NF == "d" {print $1}')" "${m#*:}" \
        "stripefs-ctl ls -l of a directory, chmod ${m%%:*}"
    sfs_expect_eq "$(sfs_pl stat -c %A $T/d)" "${m#*:}" "stat(1) of the directory"
done

# --- chown: names and numbers, resolved on this host
sfs_ctl chown 4242:4343 /at/f || sfs_fail "stripefs-ctl chown 4242:4343"
user4242=$(getent passwd 4242 | cut -d: -f1) group4343=$(getent group 4343 | cut -d: -f1)
sfs_expect_eq "$(ctl_attrs /at/f | cut -d' ' -f2-)" "4242/${user4242:-4242} 4343/${group4343:-4343}" \
    "numeric chown (names shown where this host has them)"
sfs_expect_eq "$(sfs_pl stat -c '%u %g' $T/f)" "4242 4343" "stat(1) after stripefs-ctl chown"
if getent passwd nobody >/dev/null && getent group nogroup >/dev/null; then
    nobody=$(id -u nobody) nogroup=$(getent group nogroup | cut -d: -f3)
    sfs_ctl chown nobody:nogroup /at/f || sfs_fail "stripefs-ctl chown nobody:nogroup"
    sfs_expect_eq "$(ctl_attrs /at/f | cut -d' ' -f2-)" "$nobody/nobody $nogroup/nogroup" \
        "chown by names"
    sfs_expect_eq "$(sfs_ctl ls -l /at | awk '$NF == "f" {print $3, $4}')" "nobody nogroup" \
        "ls -l shows the names"
fi
sfs_ctl chown root: /at/f || sfs_fail "stripefs-ctl chown root:"
sfs_expect_eq "$(ctl_attrs /at/f | cut -d' ' -f2-)" "0/root 0/root" "chown USER: (the login group)"
sfs_ctl chown +77:+88 /at/f || sfs_fail "stripefs-ctl chown +77:+88"
sfs_expect_eq "$(sfs_pl stat -c '%u %g' $T/f)" "77 88" "chown +N:+N is numeric"
# one id only: the other one stays (SFS_ID_UNCHANGED, kept by the server)
sfs_ctl chown :99 /at/f || sfs_fail "stripefs-ctl chown :99"
expect_eq_later "$(sfs_pl stat -c '%u %g' $T/f)" "77 99" "chown :GROUP keeps the owner"
sfs_ctl chown 66:99 /at/f || sfs_fail "stripefs-ctl chown 66:99"
sfs_ctl chown 55 /at/f || sfs_fail "stripefs-ctl chown 55"
expect_eq_later "$(sfs_pl stat -c '%u %g' $T/f)" "55 99" "chown USER keeps the group"
echo "ok: stripefs-ctl chown with numbers, names, USER:, +N, one id only"

# --- coreutils through the preload, compared with a local directory
for mask in 022 027 077 002; do
    for side in "$T" "$L"; do
        (umask $mask && sfs_pl touch "$side/t$mask" && sfs_pl mkdir "$side/d$mask" &&
            sfs_pl mkdir -m 1777 "$side/s$mask" && sfs_pl sh -c "echo x >'$side/r$mask'" &&
            sfs_pl cp "$SFS_SRC/README.md" "$side/c$mask") ||
            sfs_fail "coreutils creates in $side under umask $mask"
    done
    for f in t d s r c; do
        sfs_expect_eq "$(sfs_pl stat -c %A "$T/$f$mask")" "$(stat -c %A "$L/$f$mask")" \
            "mode of $f$mask (umask $mask) on stripefs and locally"
    done
done
echo "ok: touch, mkdir, mkdir -m, shell redirection and cp give the local modes under 4 umasks"

sfs_pl chmod 0604 $T/t022 || sfs_fail "chmod(1)"
sfs_expect_eq "$(ctl_attrs /at/t022 | cut -d' ' -f1)" "0604/-rw----r--" "chmod(1) reaches the server"
sfs_pl chmod u+s,g+s,o+t $T/t022 || sfs_fail "chmod u+s,g+s,o+t"
sfs_expect_eq "$(sfs_pl stat -c %a $T/t022)" "7604" "symbolic chmod(1)"
sfs_pl chown 1234:5678 $T/t022 || sfs_fail "chown(1) 1234:5678"
sfs_expect_eq "$(ctl_attrs /at/t022 | cut -d' ' -f2- | sed 's|/[^ ]*||g')" "1234 5678" \
    "chown(1) reaches the server"
sfs_pl chgrp 8765 $T/t022 || sfs_fail "chgrp(1)"
expect_eq_later "$(sfs_pl stat -c '%u %g' $T/t022)" "1234 8765" "chgrp(1) keeps the owner"
sfs_pl chown 1234:8765 $T/t022 || sfs_fail "chown(1) 1234:8765"
sfs_pl touch -d '2003-04-05 06:07:08.5 UTC' $T/t022 || sfs_fail "touch -d"
sfs_expect_eq "$(sfs_pl stat -c '%X %Y' $T/t022)" "1049522828 1049522828" "touch -d sets both"
sfs_pl touch -m -d '2004-01-01 UTC' $T/t022 || sfs_fail "touch -m -d"
sfs_expect_eq "$(sfs_pl stat -c '%X %Y' $T/t022)" "1049522828 1072915200" "touch -m keeps atime"
sfs_pl touch -a $T/t022 || sfs_fail "touch -a (atime now, mtime omitted)"
atime=$(sfs_pl stat -c %X $T/t022)
now=$(date +%s)
expect_eq_later "$([ $((atime - now)) -le 5 ] && [ $((now - atime)) -le 5 ] && echo now ||
    echo "$atime")" now "touch -a sets atime to now (the server must know SFS_SETATTR_ATIME_NOW)"
sfs_expect_eq "$(sfs_pl stat -c %Y $T/t022)" 1072915200 "touch -a keeps mtime"
echo "ok: chmod(1), chown(1), chgrp(1), touch -d/-m/-a reach the server"

# --- cp -p: a stripefs file's attributes onto a local copy, and back
sfs_pl chmod 2751 $T/t022 || sfs_fail "chmod 2751"
sfs_pl cp -p $T/t022 "$L/copied" || sfs_fail "cp -p out of stripefs"
sfs_expect_eq "$(stat -c '%a %u %g %Y' "$L/copied")" "2751 1234 8765 1072915200" \
    "cp -p gives the local copy the stripefs file's mode, owner and mtime"
touch -d '2005-06-07 UTC' "$L/src"
chmod 0460 "$L/src"
chown 4321:8765 "$L/src"
sfs_pl cp -p "$L/src" $T/back || sfs_fail "cp -p into stripefs"
sfs_expect_eq "$(sfs_pl stat -c '%a %u %g %Y' $T/back)" "$(stat -c '%a %u %g %Y' "$L/src")" \
    "cp -p into stripefs keeps mode, owner and mtime"
echo "ok: cp -p both ways keeps mode, owner and times"

# --- another user (nobody): times set to now need only write permission,
# explicit times, chmod and chown the owner (the server decides; this shows
# that touch's NULL times reach it as "now", not as an explicit time). Needs
# a service that admits non-root clients, and setpriv.
nb_dir="$SFS_TEST_TMP/nobody"
mkdir -p "$nb_dir" && chmod 1777 "$nb_dir"
as_nobody() {
    (cd "$nb_dir" && setpriv --reuid=65534 --regid=65534 --clear-groups \
        env LD_PRELOAD="$SFS_PRELOAD" STRIPEFS_CONFIG="$STRIPEFS_CONFIG" "$@")
}
if command -v setpriv >/dev/null && as_nobody "$SFS_CTL" stat / >/dev/null 2>&1; then
    sfs_ctl mkdir /at/shared && sfs_ctl chmod 777 /at/shared || sfs_fail "mkdir /at/shared"
    sfs_pl touch $T/shared/w && sfs_pl chmod 666 $T/shared/w &&
        sfs_pl touch -d '2001-01-01 UTC' $T/shared/w || sfs_fail "make $T/shared/w"
    as_nobody touch $T/shared/w ||
        sfs_fail "touch of root's 0666 file by nobody (times to now need only write permission)"
    mtime=$(sfs_pl stat -c %Y $T/shared/w)
    now=$(date +%s)
    [ $((now - mtime)) -le 5 ] && [ $((mtime - now)) -le 5 ] ||
        sfs_fail "touch by nobody: mtime $mtime is not now"
    sfs_expect_fail "not permitted" as_nobody touch -d '2002-02-02 UTC' $T/shared/w
    sfs_expect_fail "not permitted" as_nobody chmod 600 $T/shared/w
    sfs_expect_fail "not permitted" as_nobody chown 65534 $T/shared/w
    sfs_expect_fail "/at/shared/w.*(owner|not permitted)" as_nobody "$SFS_CTL" chmod 600 /at/shared/w
    sfs_pl chmod 644 $T/shared/w || sfs_fail "chmod 644"
    sfs_expect_fail "permission denied" as_nobody touch $T/shared/w
    (umask 027 && as_nobody touch $T/shared/mine) || sfs_fail "nobody creates a file"
    sfs_expect_eq "$(sfs_pl stat -c '%a %u %g' $T/shared/mine)" "640 65534 65534" \
        "nobody's file under umask 027"
    echo "ok: as nobody: touch of a writable file sets now; touch -d, chmod, chown need the owner"
else
    echo "note: no non-root client can connect to this service (or no setpriv): the checks as" \
        "another user are left out"
fi
sfs_ctl ls -l /at
sfs_stop_service
[ $later_failures = 0 ] ||
    sfs_fail "$later_failures check(s) of chown with one id alone or of times set to now failed"
