#!/usr/bin/env bash
# Host side of `make crash`: boots the VM, runs tests/crash/crash.sh in it
# with the given arguments, keeps the report, prints the table last.
#
#   tests/crash/run.sh [--cuts N] [--control-cuts M] [--seed S] [CONFIG...]
#
# The report goes to $UNTORN_CACHE/crash/DATE.txt. The VM timeout grows
# with the number of cuts (about 2 s per cut and configuration, tripled).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/kernel/common.sh"

cuts=100
args=("$@")
while [ $# -gt 0 ]; do
	case "$1" in --cuts) cuts=$2; shift 2 ;; *) shift ;; esac
done
mkdir -p "$UNTORN_CACHE/crash"
report=$UNTORN_CACHE/crash/$(date +%Y%m%d-%H%M%S).txt
export UNTORN_VM_TIMEOUT=${UNTORN_VM_TIMEOUT:-$(( 600 + cuts * 7 * 2 * 3 ))}
{
	series_stamp
	"$top/vm/run.sh" "tests/crash/crash.sh$(printf ' %q' "${args[@]}")" 2>&1
} | tee "$report"
rc=${PIPESTATUS[0]}
echo "# report: $report"
fail=$(grep -c '^not ok' "$report")
[ "$rc" = 0 ] && [ "$fail" = 0 ]
