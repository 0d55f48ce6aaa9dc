# Shared helpers for the integration tests (sourced). A test runs with
# SFS_BUILD (build dir), SFS_SRC (source dir) and SFS_TEST_TMP (scratch).
set -u
: "${SFS_BUILD:?run through tests/run-suite.sh}"
: "${SFS_SRC:?}"
: "${SFS_TEST_TMP:?}"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Open MPI's own traffic stays on this host: shared memory and loopback TCP.
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
# Under the sanitizers, server ranks skip the leak check: the MPI runtime's
# own leaks sit in plugins it unloads, which no suppression can name.
# SFS_SERVER_ENV goes in front of every command that starts server ranks.
SFS_SERVER_ENV=()
if [ -n "${SFS_SERVER_ASAN_OPTIONS:-}" ]; then
    SFS_SERVER_ENV=(env "ASAN_OPTIONS=$SFS_SERVER_ASAN_OPTIONS")
fi
SFS_MPIRUN=("${SFS_SERVER_ENV[@]}" mpirun.openmpi --oversubscribe)
SFS_CTL="$SFS_BUILD/stripefs-ctl"
SFS_SERVER="$SFS_BUILD/stripefs-server"
SFS_STATE="$SFS_TEST_TMP/state"
SFS_SERVICE_LOG="$SFS_TEST_TMP/service.log"
SFS_SERVICE_PID=""
SFS_PORT=""

sfs_log() { echo "[$(date +%T)] $*"; }
sfs_fail() { echo "FAIL: $*" >&2; sfs_dump_service_log; exit 1; }
sfs_skip() { echo "SKIP: $*"; exit 77; }
# A known bug the test showed again: an expected failure, counted apart.
sfs_known_bug() { echo "KNOWN BUG: $*"; sfs_dump_service_log; exit 78; }
sfs_dump_service_log() {
    if [ -f "$SFS_SERVICE_LOG" ]; then
        echo "--- last lines of the service log ($SFS_SERVICE_LOG):" >&2
        tail -n 30 "$SFS_SERVICE_LOG" >&2
    fi
}

# Print every thread's stack of the given processes (for a test that found
# a hang: it shows where each one waits). Needs gdb; says so without it.
sfs_dump_stacks() { # pid...
    local pid
    command -v gdb >/dev/null || { echo "(gdb is not installed: no stacks)" >&2; return 0; }
    for pid in "$@"; do
        kill -0 "$pid" 2>/dev/null || continue
        echo "--- stacks of pid $pid ($(tr '\0' ' ' </proc/"$pid"/cmdline 2>/dev/null | cut -c1-120)):" >&2
        timeout 60 gdb -p "$pid" -batch -nx -ex "set pagination off" -ex "thread apply all bt 25" 2>&1 |
            grep -E '^(Thread|#)' | head -n 150 >&2
    done
}

sfs_expect_eq() { # actual expected what
    [ "$1" = "$2" ] || sfs_fail "$3: expected '$2', got '$1'"
    echo "ok: $3 = '$2'"
}

# Run a command that must fail; its stderr must match a pattern.
sfs_expect_fail() { # pattern command...
    local pattern=$1 out rc
    shift
    out=$("$@" 2>&1) && sfs_fail "'$*' succeeded but should have failed"
    rc=$?
    echo "$out" | grep -qiE -- "$pattern" || sfs_fail "'$*' failed (exit $rc) without saying '$pattern': $out"
    echo "ok: '$*' fails (exit $rc): $(echo "$out" | head -n 1)"
}

# A port for a test service (see ci/free-port.sh for the range and why).
sfs_free_port() {
    "$SFS_SRC/ci/free-port.sh" || sfs_fail "no free TCP port for the service"
}

# sfs_start_service NP [server args...]: one-host service in $SFS_STATE.
sfs_start_service() {
    local np=$1
    shift
    local attempt rc chosen_port=0
    if [ -z "$SFS_PORT" ]; then
        SFS_PORT=$(sfs_free_port) || sfs_fail "no free TCP port for the service"
        chosen_port=1
    fi
    for attempt in 1 2 3; do
        rm -f "$SFS_TEST_TMP/ready"
        # SFS_SERVICE_MPI_ARGS: extra mpirun options for the service job
        "${SFS_MPIRUN[@]}" ${SFS_SERVICE_MPI_ARGS:-} -np "$np" "$SFS_SERVER" --one-host --state "$SFS_STATE" \
            --port "$SFS_PORT" --ready-file "$SFS_TEST_TMP/ready" "$@" >>"$SFS_SERVICE_LOG" 2>&1 &
        SFS_SERVICE_PID=$!
        rc=""
        for _ in $(seq 600); do
            [ -f "$SFS_TEST_TMP/ready" ] && break
            if ! kill -0 "$SFS_SERVICE_PID" 2>/dev/null; then
                wait "$SFS_SERVICE_PID"
                rc=$?
                break
            fi
            sleep 0.1
        done
        [ -z "$rc" ] && break
        # Another program took the port between the pick and the bind: pick again,
        # unless the test asked for this port.
        if [ $chosen_port = 1 ] && [ $attempt -lt 3 ] && tail -n 40 "$SFS_SERVICE_LOG" | grep -q "port $SFS_PORT: Address already in use"; then
            sfs_log "port $SFS_PORT was taken by another program; starting again on another port"
            SFS_PORT=$(sfs_free_port) || sfs_fail "no free TCP port for the service"
            continue
        fi
        sfs_fail "the service exited while starting (exit $rc)"
    done
    [ -f "$SFS_TEST_TMP/ready" ] || sfs_fail "the service did not become ready in 60 s"
    export STRIPEFS_CONFIG="$SFS_STATE/stripefs.yaml"
    sfs_log "service up: $np ranks, port $SFS_PORT, state $SFS_STATE"
}

# sfs_short_timeouts OFFLINE_SECONDS: the one-host service's config (stop it
# first) gets rpc 6 s, connect 2 s, heartbeat 500 ms and this offline
# timeout, so that a lost rank is found quickly.
sfs_short_timeouts() {
    sed -i "s/^timeouts:.*/timeouts: {rpc: 6s, connect: 2s, heartbeat: 500ms, offline: ${1}s}/" \
        "$SFS_STATE/stripefs.yaml"
    grep -q "^timeouts: {rpc: 6s, connect: 2s, heartbeat: 500ms, offline: ${1}s}" "$SFS_STATE/stripefs.yaml" ||
        sfs_fail "timeouts not set: $(grep timeouts "$SFS_STATE/stripefs.yaml")"
}

# Clean stop through stripefs-ctl; the job must exit 0.
sfs_stop_service() {
    [ -n "$SFS_SERVICE_PID" ] || return 0
    "$SFS_CTL" shutdown >/dev/null || sfs_fail "stripefs-ctl shutdown failed"
    sfs_wait_service_exit
}

# sfs_wait_for FILE PATTERN SECONDS: wait until FILE has a line matching
# PATTERN (grep's); 1 if it has none after SECONDS.
sfs_wait_for() {
    local i
    for ((i = 0; i < $3 * 10; i++)); do
        grep -q "$2" "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

# After a shutdown: the job must exit 0 within 60 s.
sfs_wait_service_exit() {
    local rc
    for _ in $(seq 600); do
        kill -0 "$SFS_SERVICE_PID" 2>/dev/null || break
        sleep 0.1
    done
    kill -0 "$SFS_SERVICE_PID" 2>/dev/null && sfs_fail "the service did not stop in 60 s"
    wait "$SFS_SERVICE_PID"
    rc=$?
    SFS_SERVICE_PID=""
    [ $rc -eq 0 ] || sfs_fail "the service exited with $rc on shutdown"
    sfs_log "service stopped cleanly"
}

# The server processes of this test's service.
sfs_server_pids() {
    pgrep -f -- "stripefs-server --one-host --state $SFS_STATE" || true
}

# kill -9 every server rank (and the launcher) at once.
sfs_kill9_service() {
    local pids
    pids=$(sfs_server_pids)
    [ -n "$pids" ] && kill -9 $pids 2>/dev/null
    [ -n "$SFS_SERVICE_PID" ] && kill -9 "$SFS_SERVICE_PID" 2>/dev/null
    wait "$SFS_SERVICE_PID" 2>/dev/null
    SFS_SERVICE_PID=""
    for _ in $(seq 100); do
        [ -z "$(sfs_server_pids)" ] && break
        sleep 0.1
    done
    sfs_log "service killed with SIGKILL"
}

sfs_cleanup() {
    local pids
    pids=$(sfs_server_pids)
    [ -n "$pids" ] && kill -9 $pids 2>/dev/null
    [ -n "$SFS_SERVICE_PID" ] && kill -9 "$SFS_SERVICE_PID" 2>/dev/null
    # other services the test started on state of its own (another user's,
    # a second one), and their launchers, when the test failed before it
    # stopped them
    pids=$(pgrep -f -- "stripefs-server .*$SFS_TEST_TMP/" || true)
    [ -n "$pids" ] && kill -9 $pids 2>/dev/null
    # the one-host service's own munged (a killed service leaves it behind)
    pkill -f -- "munged --foreground --socket=$SFS_TEST_TMP/" 2>/dev/null
    # client jobs the test started on files of its own, when it failed
    # before it stopped them (a writer job waiting for ever on a killed
    # service); never this shell
    case "${SFS_TEST_TMP:-}" in
    /tmp/?*)
        pids=$(pgrep -f -- "$SFS_TEST_TMP/" | grep -vx -e "$$" -e "$BASHPID" || true)
        [ -n "$pids" ] && kill -9 $pids 2>/dev/null
        ;;
    esac
    return 0
}
trap sfs_cleanup EXIT

sfs_ctl() { "$SFS_CTL" "$@"; }

# --- Several users ------------------------------------------------------
# sfs_test_users (as root): the users sfsalice (group sfsalice) and sfsbob
# (group sfsbob), both also in the group sfsteam, with home directories;
# made if missing, left alone otherwise. nobody (65534) is the "other" user.
# Exports SFS_ALICE_UID/GID, SFS_BOB_UID/GID, SFS_TEAM_GID, SFS_NOBODY_UID/GID
# and makes $SFS_TEST_TMP reachable for them (sfs_test_traversable). Skips
# the test (exit 77) when not root or without useradd/groupadd/setpriv.
sfs_test_users() {
    local u
    [ "$(id -u)" = 0 ] || sfs_skip "the multi-user tests need root (to make users and run as them)"
    for u in useradd groupadd usermod setpriv; do
        command -v "$u" >/dev/null || PATH=$PATH:/usr/sbin:/sbin command -v "$u" >/dev/null ||
            sfs_skip "$u is not installed (the multi-user tests make users)"
    done
    getent passwd nobody >/dev/null || sfs_skip "there is no user nobody"
    # one at a time, should two suites start at once
    (
        command -v flock >/dev/null && flock -w 60 9
        export PATH=$PATH:/usr/sbin:/sbin
        getent group sfsteam >/dev/null || groupadd sfsteam || getent group sfsteam >/dev/null ||
            exit 1
        for u in sfsalice sfsbob; do
            getent group "$u" >/dev/null || groupadd "$u" || getent group "$u" >/dev/null || exit 1
            if ! getent passwd "$u" >/dev/null; then
                useradd -m -d "/home/$u" -s /bin/sh -g "$u" -G sfsteam "$u" ||
                    getent passwd "$u" >/dev/null || exit 1
            fi
            id -nG "$u" | tr ' ' '\n' | grep -qx sfsteam || usermod -a -G sfsteam "$u" || exit 1
            [ -d "/home/$u" ] || { mkdir -p "/home/$u" && chown "$u:$u" "/home/$u" && chmod 0750 "/home/$u"; } ||
                exit 1
        done
    ) 9>/tmp/.sfs-test-users.lock || sfs_fail "could not make the users sfsalice and sfsbob"
    SFS_ALICE_UID=$(id -u sfsalice) SFS_ALICE_GID=$(id -g sfsalice)
    SFS_BOB_UID=$(id -u sfsbob) SFS_BOB_GID=$(id -g sfsbob)
    SFS_TEAM_GID=$(getent group sfsteam | cut -d: -f3)
    SFS_NOBODY_UID=$(id -u nobody) SFS_NOBODY_GID=$(id -g nobody)
    export SFS_ALICE_UID SFS_ALICE_GID SFS_BOB_UID SFS_BOB_GID SFS_TEAM_GID SFS_NOBODY_UID SFS_NOBODY_GID
    [ "$SFS_ALICE_GID" != "$SFS_BOB_GID" ] || sfs_fail "sfsalice and sfsbob share their primary group"
    sfs_log "users: sfsalice $SFS_ALICE_UID:$SFS_ALICE_GID, sfsbob $SFS_BOB_UID:$SFS_BOB_GID," \
        "team sfsteam $SFS_TEAM_GID, nobody $SFS_NOBODY_UID:$SFS_NOBODY_GID"
    sfs_test_traversable
}

# $SFS_TEST_TMP and the directories above it get search permission for
# others where they lack it (run-suite.sh makes /tmp/sfs-suite.XXXXXX 0700);
# no read or write permission is added anywhere.
sfs_test_traversable() {
    local d
    d=$(cd "$SFS_TEST_TMP" && pwd -P)
    while [ -n "$d" ] && [ "$d" != / ]; do
        if [ -z "$(find "$d" -maxdepth 0 -perm -o+x)" ]; then
            chmod o+x "$d" || sfs_fail "chmod o+x $d"
        fi
        d=${d%/*}
    done
}

# sfs_user_home USER: make (once) and print USER's scratch directory
# $SFS_TEST_TMP/as-USER (mode 0700, USER's; with tmp/ in it).
sfs_user_home() {
    local home=$SFS_TEST_TMP/as-$1
    if [ ! -d "$home" ]; then
        mkdir -p "$home/tmp" && chown -R "$1:$(id -g "$1")" "$home" && chmod 0700 "$home" ||
            sfs_fail "cannot make $home for $1"
    fi
    echo "$home"
}

# sfs_as USER COMMAND...: run COMMAND as USER (uid, primary and supplementary
# groups from the user database), in a clean environment that keeps what
# the tests need: PATH, LD_PRELOAD, LD_LIBRARY_PATH, STRIPEFS_*, OMPI_*,
# PMIX_*, UCX_*, the sanitizers' options. HOME and TMPDIR are a scratch
# directory of the user's, $SFS_TEST_TMP/as-USER, which is also the working
# directory (the sanitizers write their reports there, where run-suite.sh
# looks for them). The exit status is COMMAND's.
sfs_as() { # user command...
    local user=$1 home var
    local -a keep=()
    shift
    home=$(sfs_user_home "$user") || exit 1
    for var in $(compgen -e); do
        case $var in
        PATH | LD_PRELOAD | LD_LIBRARY_PATH | STRIPEFS_* | OMPI_* | PMIX_* | UCX_* | ASAN_OPTIONS | \
            UBSAN_OPTIONS | LSAN_OPTIONS | TERM | LANG | LC_*)
            keep+=("$var=${!var}") ;;
        esac
    done
    (cd "$home" && exec setpriv --reuid="$user" --regid="$(id -g "$user")" --init-groups \
        env -i "${keep[@]}" HOME="$home" TMPDIR="$home/tmp" USER="$user" LOGNAME="$user" "$@")
}
