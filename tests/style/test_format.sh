#!/usr/bin/env bash
# The C sources follow the repository's .clang-format (clang-format 14).
set -u
cd "$SFS_SRC" || exit 1
command -v clang-format >/dev/null || { echo "FAIL: clang-format is not installed (ci/install-deps.sh installs it)"; exit 1; }
if [ -d .git ]; then
    files=$(git ls-files '*.c' '*.h')
else
    files=$(find . -name '*.c' -o -name '*.h' | grep -v '^./_build')
fi
count=$(echo "$files" | wc -w)
if ! clang-format --dry-run -Werror $files 2>"$SFS_TEST_TMP/format.out"; then
    grep -m 20 "error:" "$SFS_TEST_TMP/format.out"
    echo "FAIL: $(grep -c 'error:' "$SFS_TEST_TMP/format.out") lines need clang-format -i (of $count files)"
    exit 1
fi
echo "ok: $count C files follow .clang-format"
