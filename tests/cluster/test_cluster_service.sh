#!/usr/bin/env bash
# The service across the four hosts of ci/cluster.sh (network namespaces
# imaging-01..04 on a bridge): one rank per host from an Imaging config
# (targets 101/201/301/401, management and metadata on imaging-01), launched
# with mpirun from imaging-01. Seen from imaging-03, stripefs-ctl lists 4
# nodes and 4 online targets on the right hosts, check-servers reaches every
# rank, and net shows that everything goes over TCP (no shared memory).
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/cluster/cluster_lib.sh"
cluster_begin

# the cluster itself: ranks land on the right hosts with the UCX settings
# shellcheck disable=SC2016
out=$(timeout 120 "$CLUSTER" mpirun -np 4 --host "$CLUSTER_ALL" \
    sh -c 'echo "$(hostname) $(ip -o -4 addr show eth0 | awk "{print \$4}") $UCX_TLS $UCX_NET_DEVICES"') ||
    sfs_fail "mpirun across the hosts failed: $out"
echo "$out"
for i in 1 2 3 4; do
    echo "$out" | grep -qx "imaging-0$i 10.199.0.$i/24 tcp,self eth0" ||
        sfs_fail "no rank on imaging-0$i with its address and UCX_TLS=tcp,self UCX_NET_DEVICES=eth0"
done
echo "ok: mpirun -np 4 --host $CLUSTER_ALL puts one rank on each host, each with UCX_TLS=tcp,self UCX_NET_DEVICES=eth0"

cfg="$SFS_TEST_TMP/imaging.yaml"
cluster_write_config "$cfg"
cluster_start_service

nodes=$(ctl_on imaging-03 listnodes) || sfs_fail "listnodes on imaging-03"
echo "$nodes"
sfs_expect_eq "$(echo "$nodes" | tail -n +2 | wc -l)" 4 "server ranks listed by listnodes on imaging-03"
sfs_expect_eq "$(echo "$nodes" | tail -n +2 | awk '{print $2}' | sort | paste -sd,)" "$CLUSTER_ALL" \
    "hosts of the server ranks"
echo "$nodes" | grep -E '^[0-9]+ +imaging-01 ' | grep -q mgmt || sfs_fail "management is not on imaging-01"
echo "$nodes" | grep -E '^[0-9]+ +imaging-01 ' | grep -q meta || sfs_fail "metadata is not on imaging-01"
echo "ok: management and metadata on imaging-01"

targets=$(ctl_on imaging-03 listtargets) || sfs_fail "listtargets on imaging-03"
echo "$targets"
for t in 101:imaging-01 201:imaging-02 301:imaging-03 401:imaging-04; do
    echo "$targets" | grep -qE "^${t%%:*} +[0-9]+ +${t#*:} +online " ||
        sfs_fail "target ${t%%:*} is not listed online on ${t#*:}"
done
sfs_expect_eq "$(echo "$targets" | grep -c ' online ')" 4 "online targets"
echo "ok: targets 101/201/301/401 online on imaging-01/02/03/04"

check=$(ctl_on imaging-03 check-servers) || sfs_fail "check-servers on imaging-03: $check"
echo "$check"
echo "$check" | grep -q "4 server ranks checked, 0 unreachable" || sfs_fail "check-servers did not reach all 4 ranks"
echo "ok: check-servers on imaging-03 reaches all 4 ranks"

net=$(ctl_on imaging-03 net) || sfs_fail "net on imaging-03: $net"
echo "$net"
reach=$(echo "$net" | grep -c "this process reaches it over: .*tcp")
sfs_expect_eq "$reach" 4 "ranks imaging-03 reaches over tcp"
if echo "$net" | grep -Eiq 'sysv|posix|cma|knem|xpmem'; then
    sfs_fail "net shows a shared-memory transport between hosts"
fi
echo "ok: net shows tcp only (no sysv/posix/cma)"
# the servers' own connections cross hosts too: peers on other hosts
echo "$net" | grep -E '^ +server +imaging-0[2-4] ' | grep -q tcp ||
    sfs_fail "no server-to-server connection from another host over tcp"
echo "ok: server-to-server connections between hosts go over tcp"
# connections between hosts came through the servers' UCX listeners (TCP
# endpoint to endpoint: docs/protocol.md, "Connections"); those within a
# host by worker address
wrong=$(echo "$net" | awk '
    /^rank [0-9]+ on / { host = $4; next }
    /^ +(server|client|admin|tool) +[^ ]+ +pid / {
        cross = ($2 != host); listener = ($0 ~ / \+listener/)
        if (cross != listener) print
    }')
[ -z "$wrong" ] || sfs_fail "sessions not connected as expected (between hosts: +listener; same host: none): $wrong"
[ "$(echo "$net" | grep -c ' +listener')" -gt 0 ] || sfs_fail "no session came through a UCX listener"
echo "ok: sessions between hosts came through the servers' UCX listeners ($(echo "$net" | grep -c ' +listener') of them), none within a host"

cluster_stop_service imaging-03
