#!/usr/bin/env bash
# Round trips of single POSIX calls through the preload (docs/metadata.md,
# "Round trips per call"), counted in the client's transport trace
# (STRIPEFS_LOG_MASK=ucx=trace) call by call: one Python process (as
# sfsalice) prints a marker before each call, and the RPCs between two
# markers are that call's. A whole path is one RPC however deep (the server
# walks it); create, unlink, rename, mkdir, rmdir one each; a reader's
# fstat is one STAT where the kept size is exact (it was CHUNK_STAT per
# target + LOOKUP), and a short read asks only the targets it did not read
# (it asked all of them); a stat while a writer is registered sends no
# SIZE STORE the server would refuse. The answers stay exact while another process
# writes: a reader's fstat and reads see a write past a hole made after
# its open, and while that writer holds the file open.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/preload/preload_lib.sh"
W="$SFS_BUILD/tests/progs/sfs_size_writer"
[ -x "$W" ] || sfs_skip "make check TESTS= builds tests/progs/sfs_size_writer"
command -v python3 >/dev/null || sfs_skip "no python3"
sfs_test_users

sfs_start_service 3 --targets 4
sfs_ctl mkdir /rt && sfs_ctl chmod 1777 /rt || sfs_fail "mkdir /rt (1777)"
# 64 KiB chunks over 4 targets: a 128 KiB read of offset 0 reaches 2 of them
sfs_ctl setpattern --chunksize 64k --numtargets 4 /rt || sfs_fail "setpattern /rt"
sfs_ctl mkdir -p /rt/a/b/c/d || sfs_fail "mkdir -p /rt/a/b/c/d"
sfs_ctl chmod 1777 /rt/a/b/c/d || sfs_fail "chmod /rt/a/b/c/d"
TRACE=$SFS_TEST_TMP/trace.log
PROBE=$SFS_TEST_TMP/probe.py
cp "$SFS_SRC/tests/lib/sfs_children.py" "$SFS_TEST_TMP/" || sfs_fail "copy tests/lib/sfs_children.py"
cat >"$PROBE" <<'EOF'
import os, sys
T, W = sys.argv[1], sys.argv[2]
# the writer: another process (tests/lib/sfs_children.py), which reports
# on a pipe and holds until its stdin closes
sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[0])))
from sfs_children import spawn, wait_for
def writer(*steps):
    return spawn([W, "/rt/f"] + list(steps))
def mark(name): os.write(2, ("MARK " + name + "\n").encode())
def check(what, got, want):
    if got != want:
        print("WRONG %s: %r, not %r" % (what, got, want)); sys.exit(1)
f = T + "/f"
mark("create"); fd = os.open(f, os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o644)
mark("write"); os.write(fd, b"hello\n")
mark("close"); os.close(fd)
mark("open"); fd = os.open(f, os.O_RDONLY)
mark("fstat"); check("fstat size", os.fstat(fd).st_size, 6)
mark("read"); check("read", os.read(fd, 131072), b"hello\n")
mark("read_eof"); check("read at the end", os.read(fd, 131072), b"")
mark("stat_deep"); os.stat(T + "/a/b/c/d")
mark("listdir"); check("listdir", sorted(os.listdir(T)), ["a", "f"])
mark("none"); os.lseek(fd, 0, os.SEEK_SET)
# another process writes 4 bytes at 192 KiB (the fourth target's first
# chunk) after this open: a hole from 6 on, which reads as zeros
pid, win, out = writer("write:196608:4")
os.close(win); out.read()
check("the writer's exit", os.waitpid(pid, 0)[1], 0)
mark("fstat_written"); check("fstat after another's write", os.fstat(fd).st_size, 196612)
mark("read_hole"); b = os.read(fd, 131072)
check("read over the hole", (len(b), b[:6], b[6:].count(0)), (131072, b"hello\n", 131066))
mark("none")
# while it holds the file open for writing (registered), after a write
# past the end: fstat and a read see the bytes written so far
pid, win, out = writer("write:300000:10", "hold")
wait_for(out, b"holding")
mark("fstat_held"); check("fstat while another writes", os.fstat(fd).st_size, 300010)
os.lseek(fd, 262144, os.SEEK_SET)
mark("read_held"); b = os.read(fd, 131072)
check("read while another writes", (len(b), b[-10:].count(0)), (300010 - 262144, 0))
mark("none"); os.close(win); out.read()
check("the holding writer's exit", os.waitpid(pid, 0)[1], 0)
mark("close_reader"); os.close(fd)
mark("rename"); os.rename(f, T + "/g")
mark("unlink"); os.unlink(T + "/g")
mark("mkdir"); os.mkdir(T + "/a/b/c/d/e")
mark("rmdir"); os.rmdir(T + "/a/b/c/d/e")
mark("end")
print("answers right")
EOF
sfs_as sfsalice env STRIPEFS_LOG_MASK=ucx=trace LD_PRELOAD="$SFS_PRELOAD" \
    python3 "$PROBE" /stripefs/rt "$W" >"$SFS_TEST_TMP/probe.out" 2>"$TRACE"
rc=$?
cat "$SFS_TEST_TMP/probe.out"
[ "$rc" = 0 ] && grep -q "answers right" "$SFS_TEST_TMP/probe.out" ||
    sfs_fail "the probe failed (exit $rc): $(grep -v ': [A-Z_]* to ' "$TRACE" | tail -5)"

# "call: OP=N ..." for each marked call, OPs sorted (HELLO, AUTH, GET_MAP:
# connecting; "none": steps between the calls counted)
per_call() {
    awk 'function emit(   k, s, i, m, keys) { m = 0; for (k in n) keys[++m] = k
            for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (keys[j] < keys[i]) { t = keys[i]; keys[i] = keys[j]; keys[j] = t }
            s = ""; for (i = 1; i <= m; i++) s = s " " keys[i] "=" n[keys[i]]
            if (call != "" && call != "none") print call ":" s }
        /MARK / { emit(); call = $NF; delete n; next }
        match($0, /: [A-Z_]+ to /) { op = substr($0, RSTART + 2, RLENGTH - 6)
            if (op != "HELLO" && op != "AUTH" && op != "GET_MAP") n[op]++ }
' "$TRACE"
}
per_call >"$SFS_TEST_TMP/per-call.txt"
cat "$SFS_TEST_TMP/per-call.txt"
expect_call() { # call "OP=N ..." what
    sfs_expect_eq "$(sed -n "s/^$1: //p" "$SFS_TEST_TMP/per-call.txt")" "$2" "$3"
}
expect_call create "CREATE=1" "open(O_CREAT|O_EXCL): the CREATE only"
expect_call write "WRITE=1" "the created file's first write (registered by its CREATE: no BEGIN)"
expect_call close "SIZE=1" "close: its SIZE END (posted, not waited for)"
expect_call open "LOOKUP=1" "open(O_RDONLY): one LOOKUP"
expect_call fstat "STAT=1" "a reader's fstat of a file no one writes (was CHUNK_STAT=4 LOOKUP=1)"
expect_call read "CHUNK_STAT=2 READ=2" \
    "a short 128 KiB read of 2 targets asks only the other 2 for their lengths (was CHUNK_STAT=4)"
expect_call read_eof "CHUNK_STAT=1 READ=3" "a read at the end over 3 targets asks the fourth (was CHUNK_STAT=4)"
grep -qx "close_reader:" "$SFS_TEST_TMP/per-call.txt" ||
    sfs_fail "close of a reader: RPCs or no marker: $(grep close_reader "$SFS_TEST_TMP/per-call.txt")"
expect_call stat_deep "STAT=1" "stat of a path 5 directories deep: one RPC for the whole path"
expect_call listdir "LOOKUP=2 STAT=1" \
    "listdir: the open's LOOKUP, the LOOKUP of .. and one page with its entries' attributes (a STAT with entries: a stat may follow; . is the open's entry: was LOOKUP=3)"
expect_call rename "RENAME=1" "rename: one RPC"
expect_call unlink "UNLINK=1" "unlink: one RPC"
expect_call mkdir "MKDIR=1" "mkdir: one RPC"
expect_call rmdir "RMDIR=1" "rmdir: one RPC"
# readdir's "." carries the directory's own entry id (the open's), as
# stat says: ls -ai prints it from readdir's d_ino
dot=$(sfs_as sfsalice env LD_PRELOAD="$SFS_PRELOAD" ls -ai /stripefs/rt/a | awk '$2 == "." {print $1}')
sfs_expect_eq "$dot" "$(sfs_as sfsalice env LD_PRELOAD="$SFS_PRELOAD" stat -c %i /stripefs/rt/a)" \
    "readdir's . inode is the directory's"
# with a writer registered the kept size is not trusted: the targets
# answer, and no SIZE STORE is sent (the server would refuse it)
expect_call fstat_held "CHUNK_STAT=4 STAT=1" \
    "a reader's fstat while another process writes: STAT, the targets, no SIZE STORE"
expect_call fstat_written "STAT=1" "a reader's fstat after another process's write and close"
sfs_stop_service
