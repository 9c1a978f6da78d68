#!/usr/bin/env bash
# Host-side checks of the VM runner itself: a run must fail on a kernel
# panic, on a hang and on a WARNING in the guest log, and pass the command's
# own exit status through. Without these, a green suite would mean little.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
run="$top/vm/run.sh"

# On a mismatch the runner's own messages (why it failed the run, the
# kernel reports it found, the console log's path) go out as comments: a
# harness check that fails once in CI must say why in CI's log.
expect_rc() {
	local what=$1 want=$2 got err
	shift 2
	err=$(mktemp)
	"$@" >/dev/null 2>"$err"
	got=$?
	if [ "$got" = "$want" ]; then
		echo "ok - harness: $what (exit $got)"
	else
		echo "not ok - harness: $what (exit $got, expected $want)"
		sed 's/^/#   /' "$err"
		tail_console "$err"
	fi
	rm -f "$err"
}

# The last lines of the console log the runner named, for a failed check.
tail_console() {
	local log
	log=$(sed -n 's/.*console log \([^ ;]*\).*/\1/p' "$1" | tail -n 1)
	[ -n "$log" ] && [ -f "$log" ] || return 0
	echo "#   last 40 lines of $log:"
	tail -n 40 "$log" | sed 's/^/#   | /'
}

expect_rc "the command's exit status comes back" 3 "$run" 'exit 3'
expect_rc "a WARNING in the guest log fails the run" 125 \
	"$run" 'echo "<4>WARNING: CPU: 0 PID: 1 at untorn/harness-test" >/dev/kmsg'
expect_rc "a guest kernel panic fails the run" 127 \
	"$run" 'echo c >/proc/sysrq-trigger'
expect_rc "a hung guest fails the run" 126 \
	env UNTORN_VM_TIMEOUT=25 "$run" 'sleep 600'
