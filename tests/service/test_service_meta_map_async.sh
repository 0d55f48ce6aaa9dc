#!/usr/bin/env bash
# The metadata server's cluster-map refresh does not block: against a fake
# management that holds GET_MAP (a slow or SIGSTOPped management on another
# host), the request is sent at once, the thread goes on progressing, a late
# reply installs the map, an unanswered one fails at its deadline and the
# last map is kept. (On one host management and metadata share rank 0, so a
# SIGSTOP of management would stop metadata too: hence the fake.)
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
"$SFS_BUILD/tests/progs/sfs_map_async" || sfs_fail "the map refresh blocked or misbehaved"
