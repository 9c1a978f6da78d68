#!/usr/bin/env bash
# Host side of `make crash`: boots the VM, runs tests/crash/crash.sh in it
# with the given arguments, keeps the report, prints the table last.
#
#   tests/crash/run.sh [--jobs J] [--cuts N] [--control-cuts M] [--seed S] [CONFIG...]
#
# The report goes to $UNTORN_CACHE/crash/DATE.txt. The VM timeout grows
# with the number of cuts (about 2 s per cut and configuration, tripled).
#
# --jobs J (make crash CRASH_JOBS=J) runs the configurations in J VMs at
# once, one VM per configuration, and joins their reports into one. One
# VM leaves part of the host idle (a cut is mostly mount, log recovery,
# the check and fsck, one after the other), but not much: on the 2-core
# machine, xfs-sw and xfs-hw at 60 cuts took 162 s in two VMs against
# 187 s in one (2026-12-06), and each VM boots in about 25 s, so it pays
# for long runs only. Every job gets the same seed, so a configuration's
# cuts are drawn alike with or without --jobs.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/kernel/common.sh"

cuts=100 jobs=1 seed=
args=()
while [ $# -gt 0 ]; do
	case "$1" in
	--jobs) jobs=$2; shift 2 ;;
	--cuts) cuts=$2; args+=("$1" "$2"); shift 2 ;;
	--seed) seed=$2; shift 2 ;;
	--control-cuts) args+=("$1" "$2"); shift 2 ;;
	-*) echo "usage: $0 [--jobs J] [--cuts N] [--control-cuts M] [--seed S] [CONFIG...]" >&2; exit 2 ;;
	*) break ;;
	esac
done
[[ $jobs =~ ^[1-9][0-9]*$ ]] || die "--jobs takes a whole number from 1: $jobs"
# Chosen here, not in the guest, so that every job has the same one.
[ -n "$seed" ] || seed=0x$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')
args+=(--seed "$seed")
mkdir -p "$UNTORN_CACHE/crash"
stamp=$(date +%Y%m%d-%H%M%S)
report=$UNTORN_CACHE/crash/$stamp.txt
export UNTORN_VM_TIMEOUT=${UNTORN_VM_TIMEOUT:-$(( 600 + cuts * 7 * 2 * 3 ))}

# crash_vm CONFIG...: crash.sh in a VM, as a report of its own: the
# series line first, the VM's exit status last. A part of a --jobs run is
# such a report, so when a long run is cut short, the parts that finished
# can still go into the ledger.
crash_vm() {
	local rc
	series_stamp
	"$top/vm/run.sh" "tests/crash/crash.sh$(printf ' %q' "${args[@]}" "$@")" 2>&1
	rc=$?
	echo "# vm exit $rc"
	return $rc
}

if [ "$jobs" = 1 ]; then
	crash_vm "$@" | tee "$report"
	rc=${PIPESTATUS[0]}
else
	configs=("$@")
	if [ ${#configs[@]} = 0 ]; then
		# Every configuration crash.sh has, and its self-checks.
		mapfile -t configs < <(sed -n '/^CONFIGS="/,/^"/p' "$top/tests/crash/crash.sh" |
			sed -n 's/^\([a-z0-9-]*\)|.*/\1/p')
		configs=(self-check "${configs[@]}")
	fi
	declare -A names
	parts=$UNTORN_CACHE/crash/$stamp.d
	mkdir -p "$parts"
	echo "# crash: ${#configs[@]} VMs (${configs[*]}), $jobs at a time, seed $seed; parts in $parts" >&2
	# finished NAME: a VM is done; show its result lines now, so that a
	# run of hours is not silent until its end.
	finished() {
		grep -E '^(ok|not ok)|^untorn-vm: (FAIL|exit)' "$parts/$1.txt" | sed "s/^/[$1] /" >&2
	}
	running=0 done_name=
	for c in "${configs[@]}"; do
		if [ "$running" -ge "$jobs" ]; then
			wait -n -p done_name
			running=$((running - 1))
			finished "${names[$done_name]}"
		fi
		crash_vm "$c" >"$parts/$c.txt" &
		names[$!]=$c
		running=$((running + 1))
	done
	while [ "$running" -gt 0 ]; do
		wait -n -p done_name
		running=$((running - 1))
		finished "${names[$done_name]}"
	done
	rc=0
	failed=()
	for c in "${configs[@]}"; do
		if ! grep -qx '# vm exit 0' "$parts/$c.txt"; then
			rc=1
			failed+=("$c")
		fi
	done
	# One report as a single VM would have written it: the series, each
	# part's lines, then one table of every configuration.
	{
		series_stamp
		for c in "${configs[@]}"; do
			grep -v '^# |\|^# series ' "$parts/$c.txt"
		done
		# A VM that failed (a kernel report, a hang) fails its
		# configuration, whatever its own lines said: no ledger row.
		for c in "${failed[@]}"; do
			echo "not ok - crash/power-cut: $c: its VM failed ($(grep -m1 '^# vm exit' "$parts/$c.txt"))"
		done
		echo "# crash torture, seed $seed, $jobs jobs; replay: make crash CRASH_SEED=$seed CRASH_CUTS=$cuts"
		grep -h -m1 '^# | configuration |' "$parts"/*.txt | head -n 1
		grep -h -m1 '^# |---' "$parts"/*.txt | head -n 1
		for c in "${configs[@]}"; do
			grep '^# | [a-z0-9-]* | [0-9]' "$parts/$c.txt"
		done
	} >"$report"
	cat "$report"
fi
echo "# report: $report"
fail=$(grep -c '^not ok' "$report")
[ "$rc" = 0 ] && [ "$fail" = 0 ]
