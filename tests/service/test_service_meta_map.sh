#!/usr/bin/env bash
# meta.map_size reaches the metadata store: LMDB maps its data file with the
# configured size (the default 16G first, then 64M after an edit of the
# state dir's config), as /proc/PID/maps of the metadata rank shows.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"

# The size in bytes of the mapping of the metadata store's data.mdb in any
# server rank (LMDB maps the whole map size at once).
meta_map_bytes() {
    local pid line range
    for pid in $(sfs_server_pids); do
        line=$(grep -m1 "$SFS_STATE/meta/data.mdb" "/proc/$pid/maps" 2>/dev/null) || continue
        range=${line%% *}
        echo $((0x${range#*-} - 0x${range%-*}))
        return 0
    done
    echo "none"
}

sfs_start_service 1 --targets 1
grep -q "map_size: 16G" "$SFS_STATE/stripefs.yaml" || sfs_fail "the one-host config lacks map_size: 16G"
sfs_expect_eq "$(meta_map_bytes)" $((16 << 30)) "metadata map size by default"
sfs_stop_service

sed -i 's/map_size: 16G/map_size: 64M/' "$SFS_STATE/stripefs.yaml"
sfs_start_service 1
sfs_expect_eq "$(meta_map_bytes)" $((64 << 20)) "metadata map size with meta.map_size: 64M"
sfs_ctl mkdir /after-resize >/dev/null || sfs_fail "mkdir on the resized store"
sfs_stop_service
