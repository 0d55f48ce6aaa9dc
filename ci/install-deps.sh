#!/usr/bin/env bash
# Install every Debian 12 package stripefs needs to build, test and benchmark,
# and fetch the ROMIO source. Idempotent and quiet when all is there already.
# Run as root (it calls apt-get); as another user it only checks.
set -euo pipefail

packages=(
    # build
    gcc make autoconf automake libtool pkg-config dpkg-dev
    # MPI: Open MPI (default) and MPICH (the second library)
    openmpi-bin libopenmpi-dev mpich libmpich-dev
    # transport, config, metadata store, crypto, tests
    libucx-dev ucx-utils libyaml-dev liblmdb-dev libsodium-dev libcmocka-dev
    # mdb_dump: the metadata mirror test compares the two stores with it
    lmdb-utils
    # management's replication (Raft, docs/management-raft.md): libraft-dev is a
    # static library; its event loop (libuv) and snapshot compression (lz4) link too
    libraft-dev libuv1-dev liblz4-dev
    # user identities: MUNGE (munged is started by the service scripts and tests)
    munge libmunge-dev
    # parallel HDF5 for the HDF5 tests, and MPICH's (the two install side by side)
    # for the HDF5 library suite's MPICH runs (tests/libsuites)
    libhdf5-openmpi-dev hdf5-tools libhdf5-mpich-dev
    # the library suites (tests/libsuites): PnetCDF (Debian builds it for Open MPI
    # only) with its tools (ncvalidator), and the compilers of its C++ and
    # Fortran test programs
    libpnetcdf-dev pnetcdf-bin g++ gfortran m4
    # fuzzing and sanitizers (clang's libFuzzer and runtimes)
    clang clang-format libclang-rt-14-dev
    # test and benchmark tools: network namespaces, process tools, plots
    iproute2 procps gnuplot-nox iperf3 fio jq
    # the power-cut test's FUSE file system
    libfuse3-dev fuse3
    # stacks of a hung process in a failed test
    gdb
)

missing=()
for pkg in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$pkg")
    fi
done

if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" != 0 ]; then
        echo "install-deps: missing packages (run as root to install): ${missing[*]}" >&2
        exit 1
    fi
    echo "install-deps: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    log=$(mktemp /tmp/sfs-apt.XXXXXX)
    if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}"; } \
        >"$log" 2>&1; then
        tail -n 30 "$log" >&2
        echo "install-deps: apt-get failed (full log: $log)" >&2
        exit 1
    fi
    rm -f "$log"
fi

# ROMIO comes from Debian's mpich source package (see docs/romio.md)
bash "$(dirname "$0")/fetch-romio.sh"
