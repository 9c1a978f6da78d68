#!/usr/bin/env bash
# Host side of `make fsx-soak` and `make fsx-kasan`: boots the VM (the
# KASAN kernel with UNTORN_KASAN=1), runs the fs/atomic-fsx case with
# OPS operations and ROUNDS threaded rounds per filesystem configuration,
# and keeps the report for tests/fsx/ledger.sh.
#
#   tests/fsx/run.sh OPS ROUNDS
#
# The report goes to $UNTORN_CACHE/fsx/DATE.txt; its first line names the
# series (series_stamp in kernel/common.sh) and the kernel.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/kernel/common.sh"

[ $# = 2 ] || { echo "usage: $0 OPS ROUNDS" >&2; exit 2; }
ops=$1 rounds=$2
kernel=debug
[ "${UNTORN_KASAN:-0}" = 1 ] && kernel=kasan
mkdir -p "$UNTORN_CACHE/fsx"
report=$UNTORN_CACHE/fsx/$(date +%Y%m%d-%H%M%S).txt
export UNTORN_VM_TIMEOUT=172800
{
	series_stamp ", kernel $kernel"
	"$top/vm/run.sh" "UNTORN_FSX_OPS=$ops UNTORN_FSX_ROUNDS=$rounds UNTORN_CASE_TIMEOUT=172800 tests/guest-run.sh fs/atomic-fsx" 2>&1
	echo "# vm exit $?"
} | tee "$report"
echo "# report: $report"
grep -q '^# vm exit 0$' "$report" && ! grep -q '^not ok' "$report"
