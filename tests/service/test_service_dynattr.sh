#!/usr/bin/env bash
# The size the metadata server keeps (docs/metadata.md): a stat of a file no
# one writes is one STAT round trip and exact; while another process holds
# the file open for writing the stat asks the targets and sees the bytes
# written so far, also after a truncate by a second process; a writer killed
# with SIGKILL keeps stats on the targets until its registration's lease is
# over, then one stat asks them and keeps the size; after a restart and for
# a record written before the kept size existed the size stays exact. A
# lone writer's close tells the size; overlapping writers leave it to the
# targets, once. Sizes,
# modes and whether mtime moved are compared with the same coreutils
# sequence on this host's local file system (ext4 here). stripefs-ctl ls -l
# gets a page of entries with their attributes in one round trip. Runs as sfsalice
# and sfsbob; the round trips are counted in the client's transport trace.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/preload/preload_lib.sh"
W="$SFS_BUILD/tests/progs/sfs_size_writer"
CORRUPT="$SFS_BUILD/tests/progs/sfs_meta_corrupt"
[ -x "$W" ] && [ -x "$CORRUPT" ] || sfs_skip "make check TESTS= builds tests/progs/sfs_size_writer"
sfs_test_users

sfs_start_service 3 --targets 4
sfs_ctl mkdir /dyn && sfs_ctl chmod 1777 /dyn || sfs_fail "mkdir /dyn (1777)"
sfs_ctl setpattern --chunksize 64k --numtargets 4 /dyn || sfs_fail "setpattern /dyn"
sfs_stop_service
# the shortest capability (10 s): a writer's registration lasts 20 s
sed -i 's/capability_lifetime: 1h/capability_lifetime: 10s/' "$SFS_STATE/stripefs.yaml"
sfs_start_service 3 --targets 4
T=/stripefs/dyn
ALICE_HOME=$(sfs_user_home sfsalice)
BOB_HOME=$(sfs_user_home sfsbob)
TRACE=$SFS_TEST_TMP/trace.log

# stat USER PATH: "SIZE" through the preload; the round trips of that one
# stat(1) land in $TRACE
st() {
    sfs_as "$1" env STRIPEFS_LOG_MASK=ucx=trace LD_PRELOAD="$SFS_PRELOAD" stat -c %s "$2" 2>"$TRACE"
}
# the RPCs of the last st: "STAT=1 CHUNK_STAT=0 SIZE=0 LOOKUP=0"
rpcs() {
    local op out=""
    for op in STAT CHUNK_STAT SIZE LOOKUP; do
        out="$out${out:+ }$op=$(grep -c ": $op to " "$TRACE")"
    done
    echo "$out"
}
expect_stat() { # user path size rpcs what
    sfs_expect_eq "$(st "$1" "$2")" "$3" "$5: size"
    sfs_expect_eq "$(rpcs)" "$4" "$5: round trips"
}
ONE="STAT=1 CHUNK_STAT=0 SIZE=0 LOOKUP=0"
ASK_KEEP="STAT=1 CHUNK_STAT=4 SIZE=1 LOOKUP=0"
ASK="STAT=1 CHUNK_STAT=4 SIZE=0 LOOKUP=0"

# --- write and close by a lone writer: its close tells the size
sfs_as sfsalice "$W" /dyn/f write:0:3145728 >/dev/null || sfs_fail "write /dyn/f"
expect_stat sfsalice $T/f 3145728 "$ONE" "first stat after write+close"
expect_stat sfsalice $T/f 3145728 "$ONE" "second stat after write+close"
expect_stat sfsbob $T/f 3145728 "$ONE" "another user's stat"

# --- the create registers its writer: no SIZE BEGIN before the first write,
# only the END at close (and an empty create the same)
sfs_as sfsalice env STRIPEFS_LOG_MASK=ucx=trace "$W" /dyn/c write:0:3901 >/dev/null 2>"$TRACE" ||
    sfs_fail "write /dyn/c"
sfs_expect_eq "CREATE=$(grep -c ": CREATE to " "$TRACE") SIZE=$(grep -c ": SIZE to " "$TRACE")" \
    "CREATE=1 SIZE=1" "a create and write of 3901 bytes: round trips to the metadata server"
expect_stat sfsbob $T/c 3901 "$ONE" "stat after a create, a write and the close"
sfs_as sfsalice env STRIPEFS_LOG_MASK=ucx=trace "$W" /dyn/e >/dev/null 2>"$TRACE" ||
    sfs_fail "create /dyn/e"
sfs_expect_eq "CREATE=$(grep -c ": CREATE to " "$TRACE") SIZE=$(grep -c ": SIZE to " "$TRACE")" \
    "CREATE=1 SIZE=1" "an empty create: round trips to the metadata server"
expect_stat sfsbob $T/e 0 "$ONE" "stat of the empty create"

# --- the same coreutils sequence here and on the local disk: size, mode,
# whether mtime moved
L=$ALICE_HOME/local
sfs_as sfsalice mkdir -p "$L" || sfs_fail "mkdir $L"
echo "local file system: $(stat -f -c %T "$L")"
step() { # dir command... (the file is DIR/s); prints "size mode moved"
    local d=$1 before after
    shift
    before=$(sfs_as sfsalice env LD_PRELOAD="$SFS_PRELOAD" stat -c %Y "$d/s" 2>/dev/null || echo 0)
    sleep 1.1
    sfs_as sfsalice env LD_PRELOAD="$SFS_PRELOAD" "$@" || sfs_fail "$* in $d"
    after=$(sfs_as sfsalice env LD_PRELOAD="$SFS_PRELOAD" stat -c '%s %a %Y' "$d/s") ||
        sfs_fail "stat $d/s"
    echo "${after% *} $([ "${after##* }" -gt "$before" ] && echo moved || echo same)"
}
for s in "dd if=/dev/zero of=@ bs=64k count=48 conv=notrunc status=none" \
    "dd if=/dev/zero of=@ bs=4096 count=1 seek=1221 conv=notrunc status=none" \
    "truncate -s 1000 @" "truncate -s 300000 @" "dd if=/dev/null of=@ bs=4096 status=none" \
    "dd if=/dev/zero of=@ bs=4096 count=3 conv=notrunc status=none"; do
    # (block sizes are multiples of the page: dd asks aligned_alloc for its
    # buffer, which AddressSanitizer refuses for a size that is not one)
    # shellcheck disable=SC2086
    here=$(step "$L" ${s//@/$L/s}) || sfs_fail "'$s' failed on the local disk"
    # shellcheck disable=SC2086
    there=$(step "$T" ${s//@/$T/s}) || sfs_fail "'$s' failed on stripefs"
    sfs_expect_eq "$there" "$here" "size, mode, mtime moved after '${s%% status=none}' (as local)"
    expect_stat sfsalice $T/s "${here%% *}" "$ONE" "a second stat after '${s%% status=none}'" >/dev/null
done
echo "ok: the kept size is exact after each step, in one round trip"

# --- another process writes: its bytes are seen while it holds the file
FIFO=$SFS_TEST_TMP/hold.fifo
OUT=$SFS_TEST_TMP/writer.out
hold_writer() { # path steps... (runs as sfsalice, holds until the fifo closes)
    rm -f "$FIFO" "$OUT"
    mkfifo -m 0666 "$FIFO" || sfs_fail "mkfifo"
    sfs_as sfsalice "$W" "$@" hold <"$FIFO" >"$OUT" 2>&1 &
    WRITER=$!
    exec 9>"$FIFO"
    for _ in $(seq 300); do
        if grep -q holding "$OUT" 2>/dev/null; then
            # the writer itself (sfs_as runs it in a subshell of its own)
            WRITER_PID=$(pgrep -u sfsalice -f -- "^$W $1 ") || sfs_fail "no writer process"
            return 0
        fi
        sleep 0.1
    done
    sfs_fail "the writer did not start: $(cat "$OUT")"
}
hold_writer /dyn/g write:0:2097152
expect_stat sfsbob $T/g 2097152 "$ASK" "stat by another user while a writer holds it"
expect_stat sfsalice $T/g 2097152 "$ASK" \
    "the owner's stat while the writer holds it (no SIZE STORE: the STAT reply says a writer is registered)"
expect_stat sfsbob $T/g 2097152 "$ASK" "and still asks the targets"
# a second process truncates while the first holds the file
sfs_as sfsalice env LD_PRELOAD="$SFS_PRELOAD" truncate -s 1000 $T/g || sfs_fail "truncate $T/g"
expect_stat sfsbob $T/g 1000 "$ASK" "stat after another process's truncate, writer still open"
exec 9>&-
wait $WRITER || sfs_fail "the writer failed: $(cat "$OUT")"
expect_stat sfsalice $T/g 1000 "$ASK_KEEP" "first stat after the writer closed"
expect_stat sfsbob $T/g 1000 "$ONE" "second stat after the writer closed"

# --- two writers overlap: the one that closes last knows only its own
# writes, so the targets are asked once after it
hold_writer /dyn/two write:0:1048576
sfs_as sfsalice "$W" /dyn/two write:2097152:1048576 >/dev/null || sfs_fail "second writer"
expect_stat sfsbob $T/two 3145728 "$ASK" "stat while the first writer still holds it"
exec 9>&-
wait $WRITER || sfs_fail "the writer failed: $(cat "$OUT")"
expect_stat sfsalice $T/two 3145728 "$ASK_KEEP" "first stat after both closed (the last knew 1 MiB)"
expect_stat sfsbob $T/two 3145728 "$ONE" "second stat after both closed"

# --- a writer killed mid-file: the targets answer until its lease is over
hold_writer /dyn/k write:0:1048576 write:1048576:524288
killed_at=$(date +%s)
kill -9 "$WRITER_PID" || sfs_fail "kill -9 the writer"
wait $WRITER 2>/dev/null
exec 9>&-
expect_stat sfsalice $T/k 1572864 "$ASK" \
    "stat after the writer was killed (its registration still counts: no SIZE STORE)"
expect_stat sfsbob $T/k 1572864 "$ASK" "again"
sleep $((killed_at + 21 - $(date +%s)))
expect_stat sfsalice $T/k 1572864 "$ASK_KEEP" "first stat after the killed writer's lease"
expect_stat sfsbob $T/k 1572864 "$ONE" "second stat after the killed writer's lease"

# --- restart: the kept sizes survive
sfs_stop_service
sfs_start_service 3 --targets 4
expect_stat sfsbob $T/f 3145728 "$ONE" "stat after a restart"
expect_stat sfsbob $T/k 1572864 "$ONE" "stat of the killed writer's file after a restart"

# --- a record from before the kept size: the targets once, then kept
sfs_stop_service
"$CORRUPT" "$SFS_STATE/meta" old-record /dyn/f || sfs_fail "write an old-format record"
sfs_start_service 3 --targets 4
expect_stat sfsalice $T/f 3145728 "$ASK_KEEP" "first stat of an old record"
expect_stat sfsalice $T/f 3145728 "$ONE" "second stat of an old record"

# --- ls -l: the round trips per entry (no batched listing with attributes yet)
for i in $(seq 10); do sfs_as sfsalice "$W" /dyn/many.$i write:0:$((i * 1000)) >/dev/null; done
sfs_as sfsalice env STRIPEFS_LOG_MASK=ucx=trace LD_PRELOAD="$SFS_PRELOAD" ls -l $T 2>"$TRACE" >/dev/null ||
    sfs_fail "ls -l $T"
echo "ls -l of $(sfs_as sfsalice env LD_PRELOAD="$SFS_PRELOAD" ls $T | wc -l) entries: $(rpcs)" \
    "READDIR=$(grep -c ': READDIR to ' "$TRACE")"
[ "$(grep -c ': CHUNK_STAT to ' "$TRACE")" = 0 ] || sfs_fail "ls -l asked the targets: $(rpcs)"

# --- stripefs-ctl ls -l: a page of entries with their attributes in one
# STAT; an entry someone writes is stat'ed on its own (its targets)
hold_writer /dyn/held write:0:5000
sfs_as sfsalice env STRIPEFS_LOG_MASK=ucx=trace "$SFS_CTL" ls -l /dyn >"$SFS_TEST_TMP/ctl-ls.out" 2>"$TRACE" ||
    sfs_fail "stripefs-ctl ls -l /dyn: $(cat "$SFS_TEST_TMP/ctl-ls.out" "$TRACE")"
entries=$(wc -l <"$SFS_TEST_TMP/ctl-ls.out")
echo "stripefs-ctl ls -l of $entries entries: $(rpcs) READDIR=$(grep -c ': READDIR to ' "$TRACE")"
sfs_expect_eq "$(rpcs) $(grep -c ': READDIR to ' "$TRACE")" "STAT=2 CHUNK_STAT=4 SIZE=0 LOOKUP=1 0" \
    "stripefs-ctl ls -l round trips: the directory, one page, the held file's STAT and targets (no keep: a writer holds it)"
for f in f many.3 many.10 two held; do
    sfs_expect_eq "$(awk -v f=$f '$NF == f {print $5}' "$SFS_TEST_TMP/ctl-ls.out")" \
        "$(sfs_as sfsalice env LD_PRELOAD="$SFS_PRELOAD" stat -c %s $T/$f)" "ctl ls -l size of $f as stat(1)"
done
sfs_expect_eq "$(awk '$NF == "f" {print $1}' "$SFS_TEST_TMP/ctl-ls.out")" \
    "$(sfs_as sfsalice env LD_PRELOAD="$SFS_PRELOAD" stat -c %A $T/f)" "ctl ls -l mode of f as stat(1)"
exec 9>&-
wait $WRITER || sfs_fail "the writer failed: $(cat "$OUT")"
sfs_stop_service
