#!/usr/bin/env bash
# Host side of `make db-crash`: builds (or reuses) the db image, boots it,
# runs tests/db/db-crash.sh with the given arguments and keeps the report
# in $UNTORN_CACHE/db/DATE.txt (first line: the series, series_stamp in kernel/common.sh).
#
#   tests/db/run.sh [--cuts N] [--seed S] [CONFIG...]
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/kernel/common.sh"

cuts=5
args=("$@")
while [ $# -gt 0 ]; do
	case "$1" in --cuts) cuts=$2; shift 2 ;; *) shift ;; esac
done
export UNTORN_IMAGE=db
# About a minute per cut and configuration under emulation, doubled.
export UNTORN_VM_TIMEOUT=${UNTORN_VM_TIMEOUT:-$(( 900 + cuts * 5 * 120 ))}
mkdir -p "$UNTORN_CACHE/db"
report=$UNTORN_CACHE/db/$(date +%Y%m%d-%H%M%S).txt
{
	series_stamp
	"$top/vm/run.sh" "tests/db/db-crash.sh$(printf ' %q' "${args[@]}")" 2>&1
	echo "# vm exit $?"
} | tee "$report"
echo "# report: $report"
grep -q '^# vm exit 0$' "$report" && ! grep -q '^not ok' "$report"
