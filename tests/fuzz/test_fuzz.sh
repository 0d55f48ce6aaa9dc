#!/usr/bin/env bash
# Run every libFuzzer target of the build for a while (see tests/fuzz/README.md).
#
# Expects `make fuzzers` to have been run in $SFS_BUILD; builds nothing. Each
# $SFS_BUILD/tests/fuzz/fuzz_<name> runs ${SFS_FUZZ_SECONDS:-20} seconds on a
# copy of tests/fuzz/corpus/<name> (the repository's corpus never grows here),
# with the dictionary tests/fuzz/<name>.dict when there is one.
# Fails on any crash, leak, sanitizer report, timeout or out-of-memory.
set -u
build=${SFS_BUILD:?SFS_BUILD is not set; run this through tests/run-suite.sh}
src=${SFS_SRC:?SFS_SRC is not set; run this through tests/run-suite.sh}
seconds=${SFS_FUZZ_SECONDS:-20}
tmp=${SFS_TEST_TMP:-}
if [ -z "$tmp" ]; then
    tmp=$(mktemp -d /tmp/sfs-fuzz.XXXXXX)
    trap 'rm -rf "$tmp"' EXIT
fi

if grep -q '^CLANG = no$' "$build/Makefile" 2>/dev/null; then
    echo "SKIP: configure found no clang, so no fuzz targets can be built"
    exit 77
fi

# Every corpus directory names a target that must have been built.
missing=0
for corpus in "$src"/tests/fuzz/corpus/*/; do
    [ -d "$corpus" ] || continue
    name=$(basename "$corpus")
    if [ ! -x "$build/tests/fuzz/fuzz_$name" ]; then
        echo "missing $build/tests/fuzz/fuzz_$name: run 'make fuzzers' in $build first" >&2
        missing=1
    fi
done
targets=()
for t in "$build"/tests/fuzz/fuzz_*; do
    [ -f "$t" ] && [ -x "$t" ] && targets+=("$t")
done
if [ $missing -ne 0 ] || [ ${#targets[@]} -eq 0 ]; then
    echo "no fuzz targets to run (or some are missing): run 'make fuzzers' in $build" >&2
    exit 1
fi

failed=0
for t in "${targets[@]}"; do
    name=${t##*/fuzz_}
    work="$tmp/fuzz-$name"
    rm -rf "$work"
    mkdir -p "$work/corpus" "$work/artifacts"
    if [ -d "$src/tests/fuzz/corpus/$name" ]; then
        cp -R "$src/tests/fuzz/corpus/$name/." "$work/corpus/"
    else
        echo "note: no seed corpus in tests/fuzz/corpus/$name; starting empty"
    fi
    seeds=$(find "$work/corpus" -type f | wc -l)
    log="$work/fuzz.log"
    echo "=== fuzz_$name: ${seconds}s from $seeds seeds"
    dict=()
    [ -f "$src/tests/fuzz/$name.dict" ] && dict=(-dict="$src/tests/fuzz/$name.dict")
    "$t" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
        "${dict[@]}" -artifact_prefix="$work/artifacts/" "$work/corpus" >"$log" 2>&1
    rc=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    cov=$(grep -Eo 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -n 1)
    grown=$(find "$work/corpus" -type f | wc -l)
    # libFuzzer exits 77 on a leak by default, which would read as a skip.
    if [ $rc -ne 0 ] ||
        grep -qE 'ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer)|runtime error:' "$log"; then
        failed=1
        echo "FAIL fuzz_$name (exit $rc) after ${runs:-?} runs; last lines of $log:"
        grep -E 'ERROR:|SUMMARY:|runtime error:|Test unit written' "$log" | head -n 20
        tail -n 40 "$log"
        # Keep the failing inputs where the suite's cleanup will not remove them.
        keep="$build/tests/fuzz/artifacts/$name"
        mkdir -p "$keep"
        for a in "$work"/artifacts/*; do
            [ -f "$a" ] || continue
            cp "$a" "$keep/"
            echo "input: $keep/$(basename "$a") ($(wc -c <"$a") bytes);" \
                "reproduce with: $t $keep/$(basename "$a")"
        done
        continue
    fi
    echo "ok fuzz_$name: ${runs:-?} runs in ${seconds}s, ${cov:-no coverage line}," \
        "corpus $seeds -> $grown inputs"
done
[ $failed -eq 0 ] || exit 1
