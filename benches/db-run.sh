#!/usr/bin/env bash
# make db-bench: build the kernel without debug options, boot it on the db
# image (mariadb-server, sysbench; built on first use), run benches/db-bench
# in the guest and keep its CSV and a report in
# $UNTORN_CACHE/bench/db-<date>/ (report.md; `db-latest` links the newest).
#   DB_BENCH_PAIRS, DB_BENCH_SECONDS, DB_BENCH_WARMUP, DB_BENCH_THREADS,
#   DB_BENCH_TABLES, DB_BENCH_ROWS, DB_BENCH_PATHS: passed to the guest
#   (see benches/db-bench); paths with a device model (hw-dc, sw-client,
#   ...) are scaled by the CPU factor, for which cpufactor runs here first.
set -euo pipefail
export UNTORN_DEBUG=0 UNTORN_IMAGE=db
. "$(dirname "$0")/../kernel/common.sh"

"$UNTORN_TOP/kernel/build.sh"
out=$UNTORN_CACHE/bench/db-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
envs=()
# The emulation's CPU slowdown is the guest's time for this over the
# host's (benches/lib/models.sh).
read -r BENCH_HOST_CPU_NS BENCH_HOST_USER_NS _ < <("$UNTORN_TOP/build/bin/cpufactor")
export BENCH_HOST_CPU_NS BENCH_HOST_USER_NS
for v in BENCH_HOST_CPU_NS BENCH_HOST_USER_NS BENCH_MODEL_DC BENCH_MODEL_CLIENT \
	DB_BENCH_PAIRS DB_BENCH_SECONDS DB_BENCH_WARMUP DB_BENCH_THREADS DB_BENCH_TABLES DB_BENCH_ROWS DB_BENCH_PATHS; do
	[ -n "${!v:-}" ] && envs+=("$v='${!v}'")
done
pairs=${DB_BENCH_PAIRS:-5} secs=${DB_BENCH_SECONDS:-30}
npaths=$(wc -w <<<"${DB_BENCH_PATHS:-hw sw}")
# Per path: preparing (a few minutes), then 2 slots per pair of the
# measured time plus warm-up, start and shutdown (about a minute more);
# doubled for the timeout.
export UNTORN_VM_TIMEOUT=${UNTORN_VM_TIMEOUT:-$(( 600 + npaths * (300 + 2 * pairs * (secs + 90)) * 2 ))}
note "MariaDB benchmark in the guest: $pairs pairs of ${secs}s slots on each of $npaths paths"
log=$out/vm.log
start=$(date +%s)
{
	series_stamp
	"$UNTORN_TOP/vm/run.sh" "${envs[*]} BENCH_OUT=/run/untorn/bench benches/db-bench" 2>&1
} | tee "$log"
rundir=$(sed -n 's/^untorn-vm: kernel .*, console log \(.*\)\/console.log$/\1/p' "$log" | head -1)
[ -n "$rundir" ] && [ -s "$rundir/share/bench/db-summary.csv" ] &&
	[ "$(wc -l < "$rundir/share/bench/db-summary.csv")" -gt 1 ] ||
	die "the guest left no results (see $log)"
cp "$rundir"/share/bench/db*.csv "$out/"
for f in models.csv cpufactor.csv; do
	[ -f "$rundir/share/bench/$f" ] && cp "$rundir/share/bench/$f" "$out/"
done
{
	echo "# MariaDB without its doublewrite buffer: untorn against doublewrite"
	echo
	echo "$(head -n 1 "$log" | sed "s/^# //"), $(( ($(date +%s) - start) / 60 )) min."
	echo
	{ grep '^# models: ' "$log" || true; } | sed 's/^# /- /'
	grep '^# db-bench \|^# model ' "$log" | sed 's/^# /- /'
	echo
	grep '^# |' "$log" | sed 's/^# //'
	echo
	echo "dw-on: innodb_doublewrite=ON, plain page writes. untorn: innodb_doublewrite=OFF,"
	echo "16 KiB page writes made RWF_ATOMIC by untorn-preload. Ratios are untorn over"
	echo "dw-on per pair of adjacent slots (AB BA ...), geometric mean and 95 % bootstrap"
	echo "interval; TPS and p99 are medians over the slots. Per slot: db.csv."
} > "$out/report.md"
ln -sfn "$out" "$UNTORN_CACHE/bench/db-latest"
note "report: $out/report.md"
cat "$out/report.md"
