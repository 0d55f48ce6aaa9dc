#!/usr/bin/env bash
# The whole test suite, from a clean clone on a fresh Debian 12 machine:
# installs what is missing, builds, runs every test against the real
# service, then runs every test again (but the fuzz targets, which have
# their own sanitizers, and the formatting check) built with AddressSanitizer
# and UBSan: servers, tools, the MPI-IO libraries (driver and client library;
# ROMIO is not instrumented) and the POSIX preload library, with the ASan
# runtime preloaded into the MPI programs and coreutils that load them.
# The last line is "N passed, N failed".
#
#   bash ci/run-tests.sh            # everything
#   SFS_QUICK=1 bash ci/run-tests.sh  # skip the sanitizer pass
set -uo pipefail
cd "$(dirname "$0")/.."
src=$(pwd)
jobs=${SFS_JOBS:-$(nproc)}
counts=$(mktemp /tmp/sfs-counts.XXXXXX)
lists=$(mktemp /tmp/sfs-lists.XXXXXX)

# each step says when it started (minutes:seconds since the start), to keep
# an eye on CI's time limit
step() { echo; printf '=== %s (at %d:%02d)\n' "$*" $((SECONDS / 60)) $((SECONDS % 60)); }
die() { echo "run-tests: $*" >&2; echo "0 passed, 1 failed"; exit 1; }

step "dependencies"
bash ci/install-deps.sh || die "installing dependencies failed"

step "build (_build)"
autoreconf -fi >/tmp/sfs-autoreconf.log 2>&1 || { cat /tmp/sfs-autoreconf.log; die "autoreconf failed"; }
mkdir -p _build
(cd _build && { [ -f Makefile ] || ../configure --enable-werror >configure.log 2>&1 || { tail -n 30 configure.log; exit 1; }; }) \
    || die "configure failed"
(cd _build && make -j"$jobs" >make.log 2>&1 && make -j"$jobs" check TESTS= >>make.log 2>&1) \
    || { tail -n 40 _build/make.log; die "build failed (see _build/make.log)"; }
(cd _build && { make -j"$jobs" fuzzers >>make.log 2>&1 || true; })
echo "built: $(ls _build/stripefs-server _build/stripefs-ctl 2>/dev/null | tr '\n' ' ')"

# The sanitizer build runs in the background, at the lowest priority, while
# the first tests run (the benchmarks' quick checks, which judge no figure),
# instead of after them: a few minutes of CI's 90 (its output is looked at
# after the main tests).
asan_build() {
    mkdir -p _build-asan || return 1
    # ROMIO is not rebuilt: the main build's (not instrumented) is shared
    (cd _build-asan && { [ -f Makefile ] || ../configure --enable-werror --enable-sanitizers \
        --with-romio-build="$src/_build/_romio" >configure.log 2>&1 \
        || { tail -n 30 configure.log; exit 1; }; }) || { echo "configure (asan) failed"; return 1; }
    # everything the tests use: servers, tools, libstripefs, the MPI-IO
    # libraries (driver and client library instrumented), libstripefs-posix
    # and the test programs
    (cd _build-asan && make -j"$jobs" >make.log 2>&1 && make -j"$jobs" check TESTS= >>make.log 2>&1) \
        || { tail -n 40 _build-asan/make.log; echo "sanitizer build failed"; return 1; }
}
if [ -z "${SFS_QUICK:-}" ]; then
    asan_log=$(mktemp /tmp/sfs-asan-build.XXXXXX)
    (renice -n 19 -p "$BASHPID" >/dev/null && asan_build) >"$asan_log" 2>&1 &
    asan_pid=$!
fi

step "tests"
tests/run-suite.sh --build _build --label main --counts "$counts" --lists "$lists"

if [ -z "${SFS_QUICK:-}" ]; then
    step "sanitizer build (_build-asan: AddressSanitizer + UBSan; started with the tests)"
    wait "$asan_pid" || { cat "$asan_log"; rm -f "$asan_log"; die "the sanitizer build failed"; }
    rm -f "$asan_log"
    step "tests under the sanitizers"
    # Every test but the fuzz targets (built with clang's sanitizers in the
    # main pass already) and the formatting check. (The threaded ROMIO test
    # runs too, since ROMIO's critical sections are real: patch 0012; and
    # ROMIO's own test programs, the one library suite short enough for this
    # pass.) Server ranks and MPI
    # programs (stripefs-run) run without the leak check: the MPI runtime's
    # own leaks at exit sit in plugins it unloads, which no suppression can
    # name. --sanitizer-logs collects each test's reports (see run-suite.sh),
    # so that one from a process the test expected to fail still fails it.
    ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:halt_on_error=1" \
    SFS_SERVER_ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:halt_on_error=1" \
    LSAN_OPTIONS="suppressions=$src/ci/lsan.supp:print_suppressions=0" \
    UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
        tests/run-suite.sh --build _build-asan --label asan \
        --filter '^tests/((unit|service|faults|mpi|romio|preload|cluster)/|libsuites/test_libsuites_romio)' \
        --sanitizer-logs _build-asan/sanitizer-logs --counts "$counts" --lists "$lists"
fi

read -r passed failed skipped xfailed < <(awk '{p += $1; f += $2; s += $3; x += $4} END {print p+0, f+0, s+0, x+0}' "$counts")
rm -f "$counts"
echo
echo "run-tests: $((SECONDS / 60)):$(printf %02d $((SECONDS % 60))) in all"
# every failure, every skip with its reason and every expected failure with
# its bug, of both passes (CI shows only the output's tail); then their
# counts on their own lines, so that the last line keeps its fixed shape
if grep -q '^FAIL ' "$lists"; then
    echo "Failed:"
    sed -n 's/^FAIL /  /p' "$lists"
fi
if grep -q '^SKIP ' "$lists"; then
    echo "Skipped (why):"
    sed -n 's/^SKIP /  /p' "$lists"
fi
if grep -q '^XFAIL ' "$lists"; then
    echo "Expected failures (known bugs):"
    sed -n 's/^XFAIL /  /p' "$lists"
fi
rm -f "$lists"
echo "skipped: $skipped"
echo "expected failures: $xfailed"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
