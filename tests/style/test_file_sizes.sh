#!/usr/bin/env bash
# One concern per file: no C source of the project over 800 lines, except
# those listed in tests/style/long-files.txt with the one concern that needs
# the length. A listed file that has come under the limit must leave the list.
set -u
cd "$SFS_SRC" || exit 1
limit=800
list=tests/style/long-files.txt
fails=0
if [ -d .git ]; then
    files=$(git ls-files '*.c' '*.h')
else
    files=$(find . -name '*.c' -o -name '*.h' | grep -v '^./_build' | sed 's|^\./||')
fi
for file in $files; do
    lines=$(wc -l <"$file")
    listed=$(awk -v f="$file" '$1 == f' "$list")
    if [ "$lines" -gt $limit ] && [ -z "$listed" ]; then
        echo "FAIL: $file has $lines lines (over $limit): split it along its seams, or list it in $list with the concern that needs it"
        fails=$((fails + 1))
    elif [ "$lines" -le $limit ] && [ -n "$listed" ]; then
        echo "FAIL: $file has $lines lines and is still listed in $list: take it off"
        fails=$((fails + 1))
    elif [ -n "$listed" ]; then
        echo "ok (listed): $file $lines lines: ${listed#* }"
    fi
done
while read -r listed _; do
    case "$listed" in '#'* | '') continue ;; esac
    [ -f "$listed" ] || { echo "FAIL: $list names $listed, which does not exist"; fails=$((fails + 1)); }
done <"$list"
[ $fails = 0 ] || exit 1
echo "ok: $(echo "$files" | wc -w) C files, none over $limit lines but those listed"
