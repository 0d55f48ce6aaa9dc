# shellcheck shell=bash
# Shared helpers of benchmarks/peers/{gluster,ceph}.sh (sourced): package
# installs from Debian, "is a previous instance still up", waiting, and
# stopping the daemons we started by their pid files.
set -u -o pipefail

peer_log() { echo "[$(date +%T)] $PEER_NAME: $*" >&2; }
peer_die() { echo "$PEER_NAME: $*" >&2; exit 1; }

# peer_install PKG...: apt-get install the Debian 12 packages that are missing
# (no recommends; quiet unless it fails).
peer_install() {
    local missing=() pkg log
    for pkg in "$@"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" ||
            missing+=("$pkg")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    [ "$(id -u)" = 0 ] || peer_die "missing packages (run as root to install): ${missing[*]}"
    peer_log "installing ${missing[*]}"
    log=$(mktemp /tmp/sfs-peer-apt.XXXXXX)
    if ! { DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
        --no-install-recommends "${missing[@]}" ||
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 \
            install -y -qq --no-install-recommends "${missing[@]}"; }; } >"$log" 2>&1; then
        tail -n 20 "$log" >&2
        peer_die "apt-get failed (full log: $log)"
    fi
    rm -f "$log"
}

# peer_refuse_running NAME...: die naming any running process of these names
# (a previous instance that was not torn down).
peer_refuse_running() {
    local name pids
    for name in "$@"; do
        pids=$(pgrep -x "$name" || true)
        [ -z "$pids" ] && continue
        echo "$PEER_NAME: a previous instance is still up: $name" >&2
        # shellcheck disable=SC2086
        ps -o pid=,args= -p "$(echo $pids | tr ' ' ,)" | sed 's/^/    /' >&2
        peer_die "stop it first ($0 down DIR of that run), or end those processes"
    done
}

# peer_wait SECONDS COMMAND...: retry COMMAND every second until it succeeds.
peer_wait() {
    local t=$1 i
    shift
    for i in $(seq "$t"); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 1
    done
    return 1
}

# peer_kill_pids PID...: TERM, wait up to 20 s, then KILL what is left.
peer_kill_pids() {
    local p left i
    [ $# -eq 0 ] && return 0
    kill -TERM "$@" 2>/dev/null
    for i in $(seq 40); do
        left=()
        for p in "$@"; do kill -0 "$p" 2>/dev/null && left+=("$p"); done
        [ ${#left[@]} -eq 0 ] && return 0
        sleep 0.5
    done
    peer_log "killing ${left[*]} (did not stop in 20 s)"
    kill -KILL "${left[@]}" 2>/dev/null
    return 0
}

# peer_umount MNT: unmount a FUSE mount (lazily when busy); quiet if not mounted.
peer_umount() {
    local m=$1
    mountpoint -q "$m" 2>/dev/null || return 0
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null ||
        peer_log "could not unmount $m"
}
