#!/usr/bin/env bash
# Print a TCP port for a throw-away stripefs service (tests, benchmarks, demo).
# It lies below the kernel's ephemeral range: UCX's TCP listeners (the
# service's own ranks start theirs before rank 0 binds its port) and outgoing
# connections take ports there, and such a clash once failed a CI run. A port
# used by a socket in any state is passed over.
low=32768
read -r low _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || low=32768
[ "$low" -gt 12000 ] 2>/dev/null || low=32768
span=$((low - 11000))
for _ in $(seq 50); do
    port=$(((RANDOM * 32768 + RANDOM) % span + 10000))
    if ! ss -tanuH 2>/dev/null | awk '{print $5}' | grep -q ":$port\$"; then
        echo "$port"
        exit 0
    fi
done
echo "free-port.sh: no free port found below $low" >&2
exit 1
