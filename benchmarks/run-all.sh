#!/usr/bin/env bash
# run-all.sh: every benchmark, one after the other, with --quick sizes (a
# few minutes on 2 cores), or full sizes with --full: bw, ucx, md, ls (ls -l, then
# ls.sh --find), scaling, mirror, failover, and as root io500 and create_latency
# (they mount a journaled ext4). Other
# options (--out, --build, --ranks, --tmp) are passed on. Without a build
# it installs what it needs and builds _build/ first (as root; lib.sh).
# Everything each one prints goes to OUT/run-all.log too; the goal lines are
# gathered at the end. peers.sh (GlusterFS, CephFS) is a command of its own.
#
#   bash benchmarks/run-all.sh [--full] [--out DIR] [--build DIR] [--ranks N]
set -u -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
quick=(--quick)
args=()
out=$here/results
while [ $# -gt 0 ]; do
    case $1 in
    --full) quick=(); shift ;;
    --out) out=$2; args+=(--out "$2"); shift 2 ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) args+=("$1"); shift ;;
    esac
done
mkdir -p "$out"
log=$out/run-all.log
: >"$log"
failed=()
start=$(date +%s)
benches="bw ucx md ls find scaling mirror failover" # find: ls.sh --find
[ "$(id -u)" = 0 ] && benches="$benches io500 create_latency"
for bench in $benches; do
    rm -f "$out/$bench-goals.txt"
    echo "=== $bench" | tee -a "$log"
    script=$bench extra=()
    [ "$bench" = find ] && script=ls extra=(--find)
    if ! bash "$here/$script.sh" ${extra[@]+"${extra[@]}"} ${quick[@]+"${quick[@]}"} ${args[@]+"${args[@]}"} 2>&1 | tee -a "$log"; then
        failed+=("$bench")
    fi
done
echo
echo "=== goals ($(( $(date +%s) - start )) s in all; details in $log)"
for bench in bw ucx md scaling; do
    cat "$out/$bench-goals.txt" 2>/dev/null || echo "$bench: no results"
done
for bench in ls find mirror failover io500 create_latency; do
    case " $benches " in *" $bench "*) echo "$bench: see its table in $log (no goal line)" ;; esac
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "FAILED: ${failed[*]}"
    exit 1
fi
