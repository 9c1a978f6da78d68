#!/usr/bin/env bash
# Host-side checks of the VM runner itself: a run must fail on a kernel
# panic, on a hang and on a WARNING in the guest log, and pass the command's
# own exit status through. Without these, a green suite would mean little.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
run="$top/vm/run.sh"

expect_rc() {
	local what=$1 want=$2 got
	shift 2
	"$@" >/dev/null 2>&1
	got=$?
	if [ "$got" = "$want" ]; then
		echo "ok - harness: $what (exit $got)"
	else
		echo "not ok - harness: $what (exit $got, expected $want)"
	fi
}

expect_rc "the command's exit status comes back" 3 "$run" 'exit 3'
expect_rc "a WARNING in the guest log fails the run" 125 \
	"$run" 'echo "<4>WARNING: CPU: 0 PID: 1 at untorn/harness-test" >/dev/kmsg'
expect_rc "a guest kernel panic fails the run" 127 \
	"$run" 'echo c >/proc/sysrq-trigger'
expect_rc "a hung guest fails the run" 126 \
	env UNTORN_VM_TIMEOUT=25 "$run" 'sleep 600'
