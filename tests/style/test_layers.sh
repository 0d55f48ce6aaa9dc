#!/usr/bin/env bash
# The layers of the tree (Makefile.am): layout < common < ucx_transport <
# cluster < {client, service} < {tools, adio, preload}. Three checks:
#  1. every project header a component's file includes lives in its own
#     layer or one below (a static reading of the #include lines);
#  2. every library and program of a component names its layer's include
#     paths (`_CPPFLAGS = $(SFS_CPPFLAGS_<LAYER>)`) in its local.mk;
#  3. the compiler agrees: with each layer's include paths, a header of the
#     layer above does not compile and one of its own does (make check-layers).
set -u
cd "$SFS_SRC" || exit 1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# folder -> the folders whose headers it may include
declare -A allowed=(
    [layout]="layout"
    [common]="layout common"
    [ucx_transport]="layout common ucx_transport"
    [cluster]="layout common ucx_transport cluster"
    [client]="layout common ucx_transport cluster client client/include client/include/sfs"
    [service]="layout common ucx_transport cluster service"
    [tools]="layout common ucx_transport cluster client client/include service preload tools"
    [preload]="layout common client/include preload"
    [adio]="client/include adio/ad_stripefs"
)
# single files allowed more than their folder: the driver's name rule is
# common's sfs_name_prefix.h, the one the POSIX preload applies too (the
# preload compiles it in rather than link the client library)
declare -A file_allowed=(
    [adio/ad_stripefs/ad_stripefs_name.c]="common"
)
declare -A layer_var=([layout]=LAYOUT [common]=COMMON [ucx_transport]=TRANSPORT [cluster]=CLUSTER
    [client]=CLIENT [service]=SERVICE [tools]=TOOLS [preload]=PRELOAD)

# where each project header lives
declare -A home
while read -r header; do
    home[$(basename "$header")]+="$(dirname "$header") "
    case "$header" in client/include/sfs/*) home["sfs/$(basename "$header")"]+="client/include ";; esac
done < <(find layout common ucx_transport cluster client service tools preload adio -name '*.h' | sort)

checked=0
for folder in "${!allowed[@]}"; do
    while read -r file; do
        while read -r included; do
            [ -n "$included" ] || continue
            [ -n "${home[$included]:-}" ] || continue # not ours (ROMIO's adio.h, config.h)
            ok=0
            for where in ${home[$included]}; do
                for may in ${allowed[$folder]} ${file_allowed[$file]:-}; do [ "$where" = "$may" ] && ok=1; done
            done
            checked=$((checked + 1))
            [ $ok = 1 ] || fail "$file includes \"$included\" (from ${home[$included]% }), a layer above $folder"
        done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file")
    done < <(find "$folder" -name '*.c' -o -name '*.h')
done
echo "ok: $checked includes of project headers read"

for folder in "${!layer_var[@]}"; do
    mk="$folder/local.mk"
    # targets: the names given _SOURCES in this fragment
    # (the test programs a fragment builds are of the top layer: skipped)
    for target in $(sed -n 's/^\([A-Za-z0-9_]*\)_SOURCES[[:space:]]*=.*/\1/p' "$mk" | grep -v '^tests_' | sort -u); do
        grep -q "^${target}_CPPFLAGS[[:space:]]*=[[:space:]]*\$(SFS_CPPFLAGS_${layer_var[$folder]})" "$mk" ||
            [ "$(sed -n "s/^${target}_SOURCES[[:space:]]*=[[:space:]]*//p" "$mk")" = "" ] ||
            fail "$mk: $target does not name its include paths (${target}_CPPFLAGS = \$(SFS_CPPFLAGS_${layer_var[$folder]}))"
    done
done
[ $fails = 0 ] && echo "ok: component targets name their layer's include paths"

make -s -C "$SFS_BUILD" check-layers >"$SFS_TEST_TMP/layers.out" 2>&1 ||
    { cat "$SFS_TEST_TMP/layers.out"; fail "make check-layers"; }
grep "^ok" "$SFS_TEST_TMP/layers.out"
[ $fails = 0 ] || exit 1
