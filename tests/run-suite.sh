#!/usr/bin/env bash
# Run every stripefs test and print "N passed, N failed[, N skipped]" last.
#
#   tests/run-suite.sh --build DIR [--filter REGEX] [--label NAME] [--counts FILE]
#
# --counts FILE appends "passed failed skipped" to FILE (for combined totals).
# A test is a unit-test binary DIR/tests/unit/test_* or a script
# tests/<group>/test_*.sh. Exit status 0 is a pass, 77 a skip (the test must
# print why; skips are listed at the end), anything else a failure. Each test
# gets SFS_BUILD, SFS_SRC and a fresh SFS_TEST_TMP, and a time limit
# (SFS_TEST_TIMEOUT seconds, default 900).
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
build=""
filter=""
label=""
counts=""
while [ $# -gt 0 ]; do
    case "$1" in
    --build) build=$2; shift 2 ;;
    --filter) filter=$2; shift 2 ;;
    --label) label=$2; shift 2 ;;
    --counts) counts=$2; shift 2 ;;
    *) echo "run-suite.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done
[ -n "$build" ] || { echo "run-suite.sh: --build DIR is required" >&2; exit 2; }
build=$(cd "$build" && pwd)
timeout_s=${SFS_TEST_TIMEOUT:-900}
tmp_root=$(mktemp -d /tmp/sfs-suite.XXXXXX)
log_dir=${SFS_TEST_LOGS:-$build/test-logs}
mkdir -p "$log_dir"

tests=()
for t in "$build"/tests/unit/test_*; do
    [ -x "$t" ] && [ -f "$t" ] && case "$t" in *.o|*.c) ;; *) tests+=("$t") ;; esac
done
for t in "$src"/tests/*/test_*.sh; do
    [ -f "$t" ] && tests+=("$t")
done

passed=0 failed=0 skipped=0
failures=() skips=()
for t in "${tests[@]}"; do
    name=${t#"$build"/}
    name=${name#"$src"/}
    if [ -n "$filter" ] && ! [[ $name =~ $filter ]]; then
        continue
    fi
    work="$tmp_root/$(echo "$name" | tr '/' '_')"
    mkdir -p "$work"
    log="$log_dir/$(echo "$name" | tr '/' '_').log"
    start=$(date +%s)
    echo "=== ${label:+[$label] }$name"
    ( cd "$work" && SFS_BUILD=$build SFS_SRC=$src SFS_TEST_TMP=$work \
        timeout --kill-after=20 "$timeout_s" bash -c 'case "$0" in *.sh) exec bash "$0";; *) exec "$0";; esac' "$t" ) \
        >"$log" 2>&1 </dev/null
    rc=$?
    secs=$(( $(date +%s) - start ))
    case $rc in
    0)  passed=$((passed + 1)); echo "PASS $name (${secs}s)"; tail -n 3 "$log" | sed 's/^/    /' ;;
    77) skipped=$((skipped + 1)); why=$(grep -i 'skip' "$log" | tail -n 1)
        skips+=("$name: ${why:-no reason printed}"); echo "SKIP $name: ${why:-no reason printed}" ;;
    124|137) failed=$((failed + 1)); failures+=("$name (timed out after ${timeout_s}s)")
        echo "FAIL $name: timed out after ${timeout_s}s"; tail -n 40 "$log" | sed 's/^/    /' ;;
    *)  failed=$((failed + 1)); failures+=("$name (exit $rc)")
        echo "FAIL $name (exit $rc, ${secs}s)"; tail -n 40 "$log" | sed 's/^/    /' ;;
    esac
done
rm -rf "$tmp_root"

echo
[ ${#failures[@]} -gt 0 ] && { echo "Failed:"; printf '  %s\n' "${failures[@]}"; }
[ ${#skips[@]} -gt 0 ] && { echo "Skipped:"; printf '  %s\n' "${skips[@]}"; }
echo "Logs: $log_dir"
[ -n "$counts" ] && echo "$passed $failed $skipped" >>"$counts"
if [ $skipped -gt 0 ]; then
    echo "$passed passed, $failed failed, $skipped skipped"
else
    echo "$passed passed, $failed failed"
fi
[ $failed -eq 0 ]
