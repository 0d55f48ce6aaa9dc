#!/usr/bin/env bash
# `ls -l` through the preload takes its entries' attributes from the
# listing (docs/posix-preload.md, "Listings with attributes"): a page of
# 256 entries and their attributes in one round trip, where `ls -l` made
# one per entry (its stat). As sfsalice, on a
# directory of 300 files of different sizes and modes, two directories
# and one directory she may read but not search:
#  - ls -l shows the modes, owners, groups, sizes and names that the same
#    tree made by the same program on local ext4 shows; the directory
#    without search permission the same "?????????" lines and exit status,
#    and its listing with attributes, refused, is asked once, not per page;
#  - the whole output (times to the nanosecond, link counts) is the same
#    with the listing's attributes as with a stat per entry
#    (STRIPEFS_PRELOAD_LIST_ATTRS=0), in far fewer round trips: at most 10
#    STAT/LOOKUP calls against more than 300;
#  - a stat of a just-listed entry is still exact where the listing's
#    attributes may be old: a file another process writes (its size is
#    asked again), a mode another process changed 0.5 s after the listing
#    (past the 0.2 s the attributes are taken), and a change of this
#    process's own (chmod, an append) made after the listing;
#  - a plain ls of a directory with a file held open for writing asks
#    no target (sfs_readdir_stat, which stripefs-ctl ls -l uses, asks that
#    file's targets for its size), ls -l asks and shows its size.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/preload/preload_lib.sh"
W="$SFS_BUILD/tests/progs/sfs_size_writer"
[ -x "$W" ] || sfs_skip "make check TESTS= builds tests/progs/sfs_size_writer"
command -v python3 >/dev/null || sfs_skip "no python3"
sfs_test_users

sfs_start_service 2 --targets 2
sfs_ctl mkdir /ls && sfs_ctl chmod 1777 /ls || sfs_fail "mkdir /ls (1777)"
L="$SFS_TEST_TMP/local"
mkdir -p "$L" && chown sfsalice "$L" && chmod 0755 "$SFS_TEST_TMP" || sfs_fail "local directory $L"

MAKE="$SFS_TEST_TMP/make_tree.py"
cat >"$MAKE" <<'EOF'
import os, sys
top = sys.argv[1]
os.umask(0o022)
os.mkdir(top)
modes = [0o644, 0o600, 0o640, 0o755, 0o444, 0o700]
for i in range(300):
    path = "%s/f%03d" % (top, i)
    with open(path, "wb") as f:
        f.write(b"x" * (i * 37))
    os.chmod(path, modes[i % len(modes)])
os.mkdir(top + "/sub", 0o700)
os.mkdir(top + "/group", 0o750)
open(top + "/group/inner", "w").close()
os.mkdir(top + "/nox")
for i in range(600):
    open("%s/nox/n%03d" % (top, i), "w").close()
os.chmod(top + "/nox", 0o600)
EOF
sfs_as sfsalice python3 "$MAKE" "$L/t" || sfs_fail "the tree on local ext4"
sfs_as sfsalice env LD_PRELOAD="$SFS_PRELOAD" python3 "$MAKE" /stripefs/ls/t ||
    sfs_fail "the tree in stripefs through the preload"

# mode, owner, group, size (not of directories: ext4 says 4096), name
columns() { awk 'NR > 1 { if ($1 ~ /^d/) $5 = "-"; print $1, $3, $4, $5, $NF }'; }
here=$(sfs_as sfsalice ls -l "$L/t" | columns)
there=$(sfs_as sfsalice env LD_PRELOAD="$SFS_PRELOAD" ls -l /stripefs/ls/t | columns)
[ "$(echo "$here" | wc -l)" = 303 ] || sfs_fail "ls -l of the local tree: $(echo "$here" | wc -l) lines, not 303"
[ "$here" = "$there" ] || sfs_fail "ls -l differs from ext4's: $(diff <(echo "$here") <(echo "$there") | head)"
echo "ok: ls -l of 303 entries as sfsalice: modes, owners, groups, sizes and names as on ext4"

here=$(sfs_as sfsalice ls -l "$L/t/nox" 2>/dev/null)
here_rc=$?
there=$(sfs_as sfsalice env LD_PRELOAD="$SFS_PRELOAD" ls -l /stripefs/ls/t/nox 2>/dev/null)
there_rc=$?
[ "$here" = "$there" ] && [ "$here_rc" = "$there_rc" ] ||
    sfs_fail "ls -l of a directory without search permission: ext4 (exit $here_rc):
$here
stripefs (exit $there_rc):
$there"
echo "ok: ls -l of a directory sfsalice may read but not search: the same lines and exit $here_rc as ext4"
nox_stats() { # LIST_ATTRS: the STAT calls of one ls -l of nox (600 entries, 3 pages)
    sfs_as sfsalice env STRIPEFS_LOG_MASK=ucx=trace STRIPEFS_PRELOAD_LIST_ATTRS="$1" \
        LD_PRELOAD="$SFS_PRELOAD" ls -l /stripefs/ls/t/nox 2>&1 >/dev/null |
        grep -oE "rpc [0-9]+: [A-Z_]+" | awk '{print $3}' | grep -c '^STAT$'
}
with=$(nox_stats 1)
without=$(nox_stats 0)
[ "$with" = $((without + 1)) ] ||
    sfs_fail "ls -l of 600 entries without search permission: $with STAT calls asking for attributes, $without not: the refused listing with attributes is asked again"
echo "ok: ls -l of 600 entries without search permission asks for the listing's attributes once ($with STAT calls against $without)"

full() { # LIST_ATTRS
    sfs_as sfsalice env STRIPEFS_PRELOAD_LIST_ATTRS="$1" LD_PRELOAD="$SFS_PRELOAD" \
        ls -l --time-style=full-iso /stripefs/ls/t
}
with=$(full 1) || sfs_fail "ls -l with the listing's attributes"
without=$(full 0) || sfs_fail "ls -l with a stat per entry"
[ "$with" = "$without" ] ||
    sfs_fail "ls -l with the listing's attributes differs: $(diff <(echo "$without") <(echo "$with") | head)"
echo "ok: the same ls -l --time-style=full-iso with the listing's attributes as with a stat per entry"

calls() { # LIST_ATTRS COMMAND...: the STAT, LOOKUP and CHUNK_STAT calls of one COMMAND
    local attrs=$1
    shift
    sfs_as sfsalice env STRIPEFS_LOG_MASK=ucx=trace STRIPEFS_PRELOAD_LIST_ATTRS="$attrs" \
        LD_PRELOAD="$SFS_PRELOAD" "$@" 2>&1 >/dev/null |
        grep -oE "rpc [0-9]+: [A-Z_]+" | awk '{print $3}' | grep -cE '^(STAT|LOOKUP|CHUNK_STAT)$'
}
# (a run that stalls past 0.2 s within a page, on a loaded machine, stats
# the rest of that page with round trips: the least of 3 runs counts)
least_calls() { # BOUND COMMAND...: calls with attributes, the least of up to 3 runs
    local bound=$1 least again
    shift
    least=$(calls 1 "$@")
    for _ in 1 2; do
        [ "$least" -le "$bound" ] && break
        again=$(calls 1 "$@")
        [ "$again" -lt "$least" ] && least=$again
    done
    echo "$least"
}
with=$(least_calls 10 ls -l /stripefs/ls/t)
without=$(calls 0 ls -l /stripefs/ls/t)
[ "$with" -le 10 ] && [ "$without" -gt 300 ] ||
    sfs_fail "ls -l of 303 entries: $with STAT/LOOKUP/CHUNK_STAT calls with the listing's attributes, $without without"
echo "ok: ls -l of 303 entries: $with STAT/LOOKUP/CHUNK_STAT calls with the listing's attributes, $without with a stat per entry"

# --- find reads a whole directory, closes it, then stats each entry (by
# fstatat on its parent's descriptor): a page's attributes are kept past
# the stream, and a plain page's are fetched on the first stat of one of
# its names
found() { # DIR [ENV...]: find's sorted output (DIR's part cut) and exit status
    local top=$1
    shift
    sfs_as sfsalice env "$@" find "$top" -type f -size +100c 2>/dev/null | sed "s|^$top||" | sort
    echo "exit ${PIPESTATUS[0]}"
}
here=$(found "$L/t")
there=$(found /stripefs/ls/t LD_PRELOAD="$SFS_PRELOAD")
[ "$(echo "$here" | wc -l)" -gt 290 ] && [ "$here" = "$there" ] ||
    sfs_fail "find -type f -size +100c differs from ext4's: $(diff <(echo "$here") <(echo "$there") | head)"
pruned=(find /stripefs/ls/t -name nox -prune -o -type f -size +100c -print)
with=$(least_calls 30 "${pruned[@]}")
without=$(calls 0 "${pruned[@]}")
[ "$with" -le 30 ] && [ "$without" -gt 300 ] ||
    sfs_fail "find -size over 306 entries: $with STAT/LOOKUP/CHUNK_STAT calls with the listings' attributes, $without without"
echo "ok: find -type f -size +100c as sfsalice: the same files and exit status as on ext4, in $with STAT/LOOKUP/CHUNK_STAT calls against $without with a stat per entry"

# --- stat-ahead is for stats that follow a listing: a stat of a name of a
# plain page (the second of /ls/t: f255..f299) within 1 s of the listing
# fetches that page's attributes once, and a stat 1.2 s after it is a round
# trip of its own, as without a listing
AHEAD="$SFS_TEST_TMP/ahead.py"
cat >"$AHEAD" <<'EOF'
import os, sys, time
T, pause = sys.argv[1], float(sys.argv[2])
os.listdir(T)
time.sleep(pause)
sys.stderr.write("MARK\n"); sys.stderr.flush()
for i in range(290, 300):
    os.stat("%s/f%03d" % (T, i))
EOF
ahead_stats() { # PAUSE: the STAT calls of the 10 stats PAUSE s after the listing
    sfs_as sfsalice env STRIPEFS_LOG_MASK=ucx=trace LD_PRELOAD="$SFS_PRELOAD" \
        python3 "$AHEAD" /stripefs/ls/t "$1" 2>&1 >/dev/null |
        sed -n '/^MARK$/,$p' | grep -oE "rpc [0-9]+: STAT " | wc -l
}
# (a stall past 0.2 s between the stats, on a loaded machine, makes the
# rest round trips: the least of 3 runs counts)
soon=$(ahead_stats 0)
for _ in 1 2; do
    [ "$soon" = 1 ] && break
    again=$(ahead_stats 0)
    [ "$again" -lt "$soon" ] && soon=$again
done
late=$(ahead_stats 1.2)
[ "$soon" = 1 ] && [ "$late" = 10 ] ||
    sfs_fail "10 stats of a plain page's names: $soon STAT calls right after the listing (want 1: its attributes fetched once), $late 1.2 s after it (want 10: no stat-ahead)"
echo "ok: 10 stats of a plain page's names: 1 STAT call right after the listing, 10 when 1.2 s after it"

# --- a stat right after the listing, where its attributes may be old
sfs_ctl mkdir /ls/live && sfs_ctl chown sfsalice /ls/live || sfs_fail "mkdir /ls/live"
LIVE="$SFS_TEST_TMP/live.py"
cp "$SFS_SRC/tests/lib/sfs_children.py" "$SFS_TEST_TMP/" || sfs_fail "copy tests/lib/sfs_children.py"
cat >"$LIVE" <<'EOF'
import os, sys, time
T, W, CTL = sys.argv[1:4]
def check(what, got, want):
    if got != want:
        print("WRONG %s: %r, not %r" % (what, got, want)); sys.exit(1)
    print("ok: %s: %r" % (what, got))
for name in ("a", "b", "c"):
    with open(T + "/" + name, "wb") as f:
        f.write(b"x" * 10)
# the other processes: tests/lib/sfs_children.py
sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[0])))
from sfs_children import spawn, wait_for
path = T[len("/stripefs"):]
pid, win, out = spawn([W, path + "/g", "write:0:1000", "wait", "write:1000:500", "hold"])
wait_for(out, b"waiting")
with os.scandir(T) as it:
    next(it)  # the page and its attributes: g's size unknown (someone writes it)
    os.write(win, b"\n")
    wait_for(out, b"holding")
    check("the size of a file another process writes, 500 bytes after the listing",
          os.stat(T + "/g").st_size, 1500)
os.close(win); out.read()
check("the writer's exit", os.waitpid(pid, 0)[1], 0)
with os.scandir(T) as it:
    next(it)
    pid, win, out = spawn([CTL, "chmod", "640", path + "/c"])
    os.close(win); out.read()
    check("stripefs-ctl chmod's exit", os.waitpid(pid, 0)[1], 0)
    time.sleep(0.5)
    check("the mode another process changed after the listing", os.stat(T + "/c").st_mode & 0o777, 0o640)
with os.scandir(T) as it:
    next(it)
    os.chmod(T + "/a", 0o600)
    check("the mode after this process's chmod", os.stat(T + "/a").st_mode & 0o777, 0o600)
with os.scandir(T) as it:
    next(it)
    with open(T + "/b", "ab") as f:
        f.write(b"y" * 5)
    check("the size after this process's append", os.stat(T + "/b").st_size, 15)
print("answers right")
EOF
out=$(sfs_as sfsalice env LD_PRELOAD="$SFS_PRELOAD" timeout 120 python3 "$LIVE" /stripefs/ls/live "$W" "$SFS_CTL" 2>&1)
rc=$?
echo "$out"
[ $rc = 0 ] && echo "$out" | grep -q "^answers right$" || sfs_fail "stats after a listing (exit $rc)"

# --- a file someone holds open for writing: a plain ls asks no target for
# its size, ls -l asks (only its targets know the size)
fifo=$SFS_TEST_TMP/h.in
mkfifo "$fifo" || sfs_fail "mkfifo $fifo"
sfs_as sfsalice "$W" /ls/live/h write:0:10 hold <"$fifo" >"$SFS_TEST_TMP/h.out" 2>&1 &
writer=$!
exec 7>"$fifo" # its input, held open until the checks are done
sfs_wait_for "$SFS_TEST_TMP/h.out" "holding" 30 || sfs_fail "the writer of /ls/live/h: $(cat "$SFS_TEST_TMP/h.out")"
chunk_stats() { # LS-OPTIONS...
    sfs_as sfsalice env STRIPEFS_LOG_MASK=ucx=trace LD_PRELOAD="$SFS_PRELOAD" ls "$@" /stripefs/ls/live \
        2>&1 >/dev/null | grep -cE "rpc [0-9]+: CHUNK_STAT "
}
plain=$(chunk_stats) long=$(chunk_stats -l)
size=$(sfs_as sfsalice env LD_PRELOAD="$SFS_PRELOAD" ls -l /stripefs/ls/live | awk '$NF == "h" { print $5 }')
exec 7>&-
wait "$writer" || sfs_fail "the writer of /ls/live/h failed: $(cat "$SFS_TEST_TMP/h.out")"
[ "$plain" = 0 ] && [ "$long" -ge 1 ] && [ "$size" = 10 ] ||
    sfs_fail "a file held open for writing: ls asked its targets $plain times (want 0), ls -l $long times (want 1 or more) and showed size '$size' (want 10)"
echo "ok: a file held open for writing: a plain ls asks no target, ls -l asks $long and shows its size, 10"
sfs_stop_service
