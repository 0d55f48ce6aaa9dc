#!/usr/bin/env bash
# Run every stripefs test and print "N passed, N failed" last, after the
# lists of failures, skips (each with its reason) and expected failures, and
# the lines "skipped: N" and "expected failures: N".
#
#   tests/run-suite.sh --build DIR [--filter REGEX] [--exclude REGEX] [--label NAME]
#                      [--counts FILE] [--lists FILE] [--sanitizer-logs DIR]
#
# --counts FILE appends "passed failed skipped xfailed" to FILE (for combined totals);
# --lists FILE appends one line per failure, skip and expected failure, "FAIL name (why)", "SKIP name: reason"
# or "XFAIL name: reason" (with the label), for a combined summary.
# --sanitizer-logs DIR (a sanitizer build): a test with a sanitizer error
# report fails and shows it, even where the process that reported was
# expected to fail or its output was not looked at. Every process writes its
# AddressSanitizer/LeakSanitizer output to a file instead of its stderr
# (log_path added to ASAN_OPTIONS, SFS_SERVER_ASAN_OPTIONS and UBSAN_OPTIONS),
# collected into DIR/<test>/ afterwards. The files are named relative to each
# process's working directory (somewhere under the test's SFS_TEST_TMP): with
# a directory in log_path, the runtime would call mkdir() while it starts,
# and libstripefs-posix.so, instrumented and preloaded, would handle that
# call before the runtime is ready (a crash). UBSan ignores log_path when
# AddressSanitizer is loaded too (GCC's runtimes), so its reports are looked
# for in the test's output and in the text files under its SFS_TEST_TMP; one
# from a process whose stderr went to /dev/null is not seen.
# A test is a unit-test binary DIR/tests/unit/<dir>/test_* or a script
# tests/<group>/test_*.sh. Exit status 0 is a pass, 77 a skip (the test must
# print why as a line "SKIP: reason", sfs_skip; skips are listed at the end
# with it, and a skip without one is a failure), 78 an expected failure (a
# known bug the test showed again, with a line "KNOWN BUG: what", sfs_known_bug;
# counted apart, and also a failure without that line), anything else a
# failure. Each test
# gets SFS_BUILD, SFS_SRC and a fresh SFS_TEST_TMP, and a time limit
# (SFS_TEST_TIMEOUT seconds, default 900).
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
build=""
filter=""
exclude=""
label=""
counts=""
lists=""
san_root=""
while [ $# -gt 0 ]; do
    case "$1" in
    --build) build=$2; shift 2 ;;
    --filter) filter=$2; shift 2 ;;
    --exclude) exclude=$2; shift 2 ;;
    --label) label=$2; shift 2 ;;
    --counts) counts=$2; shift 2 ;;
    --lists) lists=$2; shift 2 ;;
    --sanitizer-logs) san_root=$2; shift 2 ;;
    *) echo "run-suite.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done
[ -n "$build" ] || { echo "run-suite.sh: --build DIR is required" >&2; exit 2; }
build=$(cd "$build" && pwd)
if [ -n "$san_root" ]; then
    mkdir -p "$san_root" && san_root=$(cd "$san_root" && pwd)
fi
timeout_s=${SFS_TEST_TIMEOUT:-900}
tmp_root=$(mktemp -d /tmp/sfs-suite.XXXXXX)
# searchable by all (not readable): munged refuses a socket below a directory
# without execute permission for all, and the multi-user tests run as others
chmod 0711 "$tmp_root"
log_dir=${SFS_TEST_LOGS:-$build/test-logs}
mkdir -p "$log_dir"

tests=()
# (tests/unit/test_*, the old layout, still runs: a test is never skipped
# for sitting in the wrong folder)
for t in "$build"/tests/unit/test_* "$build"/tests/unit/*/test_*; do
    [ -x "$t" ] && [ -f "$t" ] && case "$t" in *.o|*.c) ;; *) tests+=("$t") ;; esac
done
for t in "$src"/tests/*/test_*.sh; do
    [ -f "$t" ] && tests+=("$t")
done

# what a sanitizer writes when it finds an error (or cannot look: LeakSanitizer)
san_errors='ERROR: [A-Za-z]+Sanitizer|runtime error:|Sanitizer has encountered a fatal error'
# the reports' first lines, from the error to its summary (no shadow map)
san_excerpt() {
    awk -v re="$san_errors" '$0 ~ re {on = 1} on {print} /^SUMMARY:/ {on = 0}' "$@" |
        head -n 60 | sed 's/^/    /'
}

passed=0 failed=0 skipped=0 xfailed=0
failures=() skips=() xfails=()
for t in "${tests[@]}"; do
    name=${t#"$build"/}
    name=${name#"$src"/}
    if [ -n "$filter" ] && ! [[ $name =~ $filter ]]; then
        continue
    fi
    if [ -n "$exclude" ] && [[ $name =~ $exclude ]]; then
        continue
    fi
    work="$tmp_root/$(echo "$name" | tr '/' '_')"
    mkdir -p "$work" && chmod 0755 "$work"
    log="$log_dir/$(echo "$name" | tr '/' '_').log"
    start=$(date +%s)
    echo "=== ${label:+[$label] }$name"
    san_env=()
    if [ -n "$san_root" ]; then
        san_dir="$san_root/$(echo "$name" | tr '/' '_')"
        rm -rf "$san_dir" "$log.san" && mkdir -p "$san_dir"
        san_env=("ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=asan-report"
            "UBSAN_OPTIONS=${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}log_path=ubsan-report")
        [ -n "${SFS_SERVER_ASAN_OPTIONS:-}" ] &&
            san_env+=("SFS_SERVER_ASAN_OPTIONS=$SFS_SERVER_ASAN_OPTIONS:log_path=asan-report")
    fi
    ( cd "$work" && env "${san_env[@]}" SFS_BUILD=$build SFS_SRC=$src SFS_TEST_TMP=$work \
        timeout --kill-after=20 "$timeout_s" bash -c 'case "$0" in *.sh) exec bash "$0";; *) exec "$0";; esac' "$t" ) \
        >"$log" 2>&1 </dev/null
    rc=$?
    secs=$(( $(date +%s) - start ))
    reports=""
    if [ -n "$san_root" ]; then
        # reports of errors fail the test even where it passed; what the
        # runtimes wrote is added to the test's log
        find "$work" -type f \( -name 'asan-report.[0-9]*' -o -name 'ubsan-report.[0-9]*' \) \
            -exec mv -f {} "$san_dir/" \;
        # (a report in the test's files is kept next to the others)
        for f in $(grep -rlIE "$san_errors" "$work" 2>/dev/null); do
            cp "$f" "$san_dir/output-of-test-$(basename "$f")"
        done
        reports=$(grep -lE "$san_errors" "$san_dir"/* "$log" 2>/dev/null)
        for f in "$san_dir"/*; do
            [ -f "$f" ] && { echo "--- sanitizer output $f:"; cat "$f"; } >>"$log.san"
        done
        if [ -z "$reports" ] && compgen -G "$san_dir/*" >/dev/null; then
            echo "NOTE $name: the sanitizer runtimes wrote (no error report): $(ls "$san_dir" | tr '\n' ' ')"
        fi
    fi
    if [ -n "$reports" ] && { [ $rc -eq 0 ] || [ $rc -eq 77 ]; }; then
        failed=$((failed + 1)); failures+=("$name (sanitizer report)")
        echo "FAIL $name: sanitizer report(s), although the test passed: $(echo $reports)"
        san_excerpt $reports
        [ -f "$log.san" ] && cat "$log.san" >>"$log" && rm -f "$log.san"
        continue
    fi
    case $rc in
    0)  passed=$((passed + 1)); echo "PASS $name (${secs}s)"; tail -n 3 "$log" | sed 's/^/    /' ;;
    77) why=$(grep -E '^SKIP: ' "$log" | tail -n 1 | sed 's/^SKIP: //')
        if [ -z "$why" ]; then
            failed=$((failed + 1)); failures+=("$name (skipped without saying why)")
            echo "FAIL $name: exit 77 (skip) without a line 'SKIP: reason'"; tail -n 10 "$log" | sed 's/^/    /'
        else
            skipped=$((skipped + 1)); skips+=("${label:+[$label] }$name: $why"); echo "SKIP $name: $why"
        fi ;;
    78) # a known bug that the test showed again: an expected failure, with its reason
        why=$(grep -E '^KNOWN BUG: ' "$log" | tail -n 1 | sed 's/^KNOWN BUG: //')
        if [ -z "$why" ]; then
            failed=$((failed + 1)); failures+=("$name (exit 78 without naming the known bug)")
            echo "FAIL $name: exit 78 (expected failure) without a line 'KNOWN BUG: what'"
            tail -n 10 "$log" | sed 's/^/    /'
        else
            xfailed=$((xfailed + 1)); xfails+=("${label:+[$label] }$name: $why")
            echo "XFAIL $name: $why"; tail -n 3 "$log" | sed 's/^/    /'
        fi ;;
    124|137) failed=$((failed + 1)); failures+=("$name (timed out after ${timeout_s}s)")
        echo "FAIL $name: timed out after ${timeout_s}s"; tail -n 40 "$log" | sed 's/^/    /' ;;
    *)  failed=$((failed + 1)); failures+=("$name (exit $rc)")
        echo "FAIL $name (exit $rc, ${secs}s)"; tail -n 40 "$log" | sed 's/^/    /' ;;
    esac
    reports=$(echo "$reports" | grep -vxF "$log")   # (its tail is above)
    if [ -n "$reports" ]; then
        echo "    sanitizer report(s): $(echo $reports)"
        san_excerpt $reports
    fi
    [ -f "$log.san" ] && cat "$log.san" >>"$log" && rm -f "$log.san"
done
rm -rf "$tmp_root"

echo
[ ${#failures[@]} -gt 0 ] && { echo "Failed:"; printf '  %s\n' "${failures[@]}"; }
[ ${#skips[@]} -gt 0 ] && { echo "Skipped (why):"; printf '  %s\n' "${skips[@]}"; }
[ ${#xfails[@]} -gt 0 ] && { echo "Expected failures (known bugs):"; printf '  %s\n' "${xfails[@]}"; }
echo "Logs: $log_dir"
[ -n "$counts" ] && echo "$passed $failed $skipped $xfailed" >>"$counts"
if [ -n "$lists" ]; then
    for line in "${failures[@]}"; do echo "FAIL ${label:+[$label] }$line"; done >>"$lists"
    for line in "${skips[@]}"; do echo "SKIP $line"; done >>"$lists"
    for line in "${xfails[@]}"; do echo "XFAIL $line"; done >>"$lists"
fi
# skips and expected failures counted apart, on their own lines, so that the
# last line keeps its fixed shape
echo "skipped: $skipped"
echo "expected failures: $xfailed"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
