#!/usr/bin/env bash
# make bench: build the kernel without debug options, boot it, run
# benches/matrix in the guest, and write the report with benches/report.sh
# into $UNTORN_CACHE/bench/<date>/ (report.md, CSV, PNG plots); the last
# report is also linked as $UNTORN_CACHE/bench/latest.
#   BENCH_SECONDS (per cell, default 2), BENCH_SIZES, BENCH_PAGES, BENCH_NVME_SIZES,
#   BENCH_HW_MAX, BENCH_PAIRED_SECONDS, BENCH_PHASES, BENCH_DEVICES: passed
#   to the guest (see benches/matrix).
set -euo pipefail
export UNTORN_DEBUG=0
. "$(dirname "$0")/../kernel/common.sh"

"$UNTORN_TOP/kernel/build.sh"
out=$UNTORN_CACHE/bench/$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
envs=()
# The emulation's CPU slowdown is the guest's time for this over the
# host's (the device models in benches/matrix).
read -r BENCH_HOST_CPU_NS BENCH_HOST_USER_NS _ < <("$UNTORN_TOP/build/bin/cpufactor")
export BENCH_HOST_CPU_NS BENCH_HOST_USER_NS
for v in BENCH_HOST_CPU_NS BENCH_HOST_USER_NS BENCH_MODEL_DC BENCH_MODEL_CLIENT BENCH_MODEL_SECONDS BENCH_SECONDS BENCH_SIZES BENCH_PAGES BENCH_NVME_SIZES BENCH_HW_MAX BENCH_PAIRED_SECONDS BENCH_PHASES BENCH_DEVICES; do
	[ -n "${!v:-}" ] && envs+=("$v='${!v}'")
done
note "benchmark matrix in the guest (about an hour at the defaults: 57 minutes measured)"
# The VM runner's default hang timeout is an hour; the matrix is close to it.
export UNTORN_VM_TIMEOUT=${UNTORN_VM_TIMEOUT:-7200}
log=$out/vm.log
"$UNTORN_TOP/vm/run.sh" "${envs[*]} BENCH_OUT=/run/untorn/bench benches/matrix" 2>&1 | tee "$log"
rundir=$(sed -n 's/^untorn-vm: kernel .*, console log \(.*\)\/console.log$/\1/p' "$log" | head -1)
[ -n "$rundir" ] && [ -f "$rundir/share/bench/matrix.csv" ] ||
	die "the guest left no results (see $log)"
cp "$rundir"/share/bench/*.csv "$out/"
cp "$rundir/console.log" "$out/console.log"
"$UNTORN_TOP/benches/report.sh" "$out"
ln -sfn "$out" "$UNTORN_CACHE/bench/latest"
note "report: $out/report.md"
