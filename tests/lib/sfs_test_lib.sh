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

# Clean stop through stripefs-ctl; the job must exit 0.
sfs_stop_service() {
    local rc
    [ -n "$SFS_SERVICE_PID" ] || return 0
    "$SFS_CTL" shutdown >/dev/null || sfs_fail "stripefs-ctl shutdown failed"
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
    # the one-host service's own munged (a killed service leaves it behind)
    pkill -f -- "munged --foreground --socket=$SFS_TEST_TMP/" 2>/dev/null
    return 0
}
trap sfs_cleanup EXIT

sfs_ctl() { "$SFS_CTL" "$@"; }
