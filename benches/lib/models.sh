# shellcheck shell=bash disable=SC2154 # $out and $factor belong to the caller
# Device models (issue 19), sourced by benches/matrix and benches/db-bench.
# Under TCG the guest's CPU is many times slower than a real one while
# emulated I/O and flushes are nearly free, which judges a path that spends
# CPU to save I/O (software atomic writes) too harshly and one that spends
# I/O and flushes (doublewrite) too kindly. tearblk's timing model makes
# its commands cost what a real device's do, multiplied by the emulation's
# CPU slowdown (cpufactor in the guest over BENCH_HOST_CPU_NS, the same
# workload on the host), so that CPU and I/O keep their real proportions.
# Two classes, real figures in ns and MB/s (override with BENCH_MODEL_DC /
# BENCH_MODEL_CLIENT, "read write flush mb_s"); docs/device-models.md says
# where they come from:
#   dc      datacenter NVMe with power-loss protection: its cache is safe,
#           so a flush costs about a command
#   client  client NVMe with a volatile cache: a flush writes it back
# Callers set $out (the result directory: cpufactor.csv, models.csv).
model_dc=${BENCH_MODEL_DC:-"80000 15000 20000 3000"}
model_client=${BENCH_MODEL_CLIENT:-"80000 20000 1000000 2000"}

# measure_factor: sets $factor, the guest's time for cpufactor's kernel
# workload over the host's; writes cpufactor.csv and starts models.csv.
# Fails without BENCH_HOST_CPU_NS (the host's run, from the host script).
measure_factor() {
	local guest_ns guest_user_ns
	[ -n "${BENCH_HOST_CPU_NS:-}" ] || return 1
	# The kernel workload's ratio scales the models; the user loop's is
	# reported beside it (TCG slows kernel code far more).
	read -r guest_ns guest_user_ns _ < <(cpufactor) || return 1
	factor=$(awk -v g="$guest_ns" -v h="$BENCH_HOST_CPU_NS" 'BEGIN { printf "%.2f", g / h }')
	echo "# models: kernel workload guest $guest_ns ns, host $BENCH_HOST_CPU_NS ns: factor $factor" \
		"(user loop: guest $guest_user_ns ns, host ${BENCH_HOST_USER_NS:-?} ns)" >&2
	echo "$guest_ns,$BENCH_HOST_CPU_NS,$guest_user_ns,${BENCH_HOST_USER_NS:-}" >"$out/cpufactor.csv"
	echo "model,cpu_factor,read_ns,write_ns,flush_ns,mb_s" >"$out/models.csv"
}

# set_model DEV raw|dc|client: tearblk DEV's timing, scaled by $factor.
set_model() {
	local t=/sys/block/$1/tear spec r w f b
	case $2 in
	raw) spec="0 0 0 0" ;;
	dc) spec=$model_dc ;;
	client) spec=$model_client ;;
	*) echo "set_model: unknown model $2 (raw, dc, client)" >&2; return 2 ;;
	esac
	read -r r w f b <<<"$spec"
	awk -v r="$r" -v w="$w" -v f="$f" -v b="$b" -v x="$factor" 'BEGIN {
		printf "%.0f %.0f %.0f %.0f\n", r * x, w * x, f * x, b ? (b / x < 1 ? 1 : b / x) : 0 }' |
		{ read -r r w f b
		  echo "$r" >"$t/timing_read_ns" && echo "$w" >"$t/timing_write_ns" &&
		  echo "$f" >"$t/timing_flush_ns" && echo "$b" >"$t/timing_mb_s" &&
		  echo "$2,$factor,$r,$w,$f,$b" >>"$out/models.csv"; }
}
