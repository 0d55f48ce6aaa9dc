#!/usr/bin/env bash
# The quick start's main job: build stripefs, start a one-host service
# (management, metadata and 4 storage targets in 3 ranks), run an MPI job on
# stripefs: paths (an IOR-like collective and file-per-process workload,
# every byte verified), show what the service did, and stop it cleanly.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$(pwd)
jobs=${SFS_JOBS:-$(nproc)}
ranks=${SFS_DEMO_RANKS:-4}
mib=${SFS_DEMO_MIB:-64}

say() { echo; echo "=== $*"; }

say "dependencies (Debian packages, ROMIO source)"
bash ci/install-deps.sh

say "build"
autoreconf -fi >/tmp/sfs-autoreconf.log 2>&1 || { cat /tmp/sfs-autoreconf.log; exit 1; }
mkdir -p _build
cd _build
[ -f Makefile ] || ../configure --enable-werror >configure.log 2>&1 || { tail -n 30 configure.log; exit 1; }
make -j"$jobs" >make.log 2>&1 || { tail -n 40 make.log; echo "build failed: see _build/make.log"; exit 1; }
mpicc.openmpi -O2 -o mpi_demo "$src/examples/mpi_demo.c"
echo "built stripefs-server, stripefs-ctl, libstripefs.so and libstripefs-mpiio.so in _build/"

say "start a one-host service (3 ranks: mgmt+meta, and 2 ranks with 2 targets each)"
state=$(pwd)/demo-state
rm -rf "$state" demo.ready
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
port=$("$src/ci/free-port.sh") || exit 1
./stripefs-service -n 3 --one-host --state "$state" --targets 4 --port "$port" \
    --ready-file demo.ready >service.log 2>&1 &
service=$!
trap 'kill -TERM $service 2>/dev/null; wait $service 2>/dev/null' EXIT
for _ in $(seq 600); do [ -f demo.ready ] && break; sleep 0.1; done
[ -f demo.ready ] || { cat service.log; echo "the service did not start"; exit 1; }
export STRIPEFS_CONFIG="$state/stripefs.yaml"
./stripefs-ctl listnodes
./stripefs-ctl listtargets

say "an MPI job on stripefs:/demo ($ranks ranks, $mib MiB each)"
./stripefs-ctl mkdir /demo
mpirun.openmpi --oversubscribe -x STRIPEFS_CONFIG -np "$ranks" \
    tools/stripefs-run ./mpi_demo stripefs:/demo "$mib"

say "what the service holds now"
./stripefs-ctl ls -l /demo
./stripefs-ctl getentryinfo /demo/shared
./stripefs-ctl df

say "stop the service (every rank flushes and exits)"
./stripefs-ctl shutdown
wait $service
trap - EXIT
tail -n 3 service.log
echo
echo "demo finished: the service ran, the job's data was verified, the service stopped cleanly"
