#!/usr/bin/env bash
# Host side of the test suite: the host unit tests and tests/host/ cases,
# then the in-guest suite in one VM boot; sums the TAP lines of all. The last line of output is
# "N passed, N failed"; the exit status is non-zero on any failure.
#
#   tests/run.sh [--unit-only] [CASE-GLOB...]     e.g. tests/run.sh 'blk/*'
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/kernel/common.sh"

unit_only=0
if [ "${1:-}" = --unit-only ]; then
	unit_only=1
	shift
fi
logdir=$UNTORN_CACHE/test-logs
mkdir -p "$logdir"
log=$logdir/$(date +%Y%m%d-%H%M%S).tap
start=$(date +%s)

{
	echo "# host unit tests"
	"$top/build/unit/unit"
	echo "# unit exit $?"
	# Host cases (tests/host/): TAP lines named after the case.
	for t in "$top"/tests/host/*; do
		echo "# host case ${t#"$top"/tests/}"
		"$t" 2>&1 | sed "s%^\(not \)\{0,1\}ok - %&${t#"$top"/tests/}: %"
	done
	if [ $unit_only = 0 ] && [ $# -eq 0 ]; then
		echo "# VM runner checks"
		"$top/tests/harness.sh"
		# The series in distribution configurations (make config-check):
		# kept build directories, so minutes once they are warm.
		if [ "${UNTORN_CONFIG_CHECK:-1}" = 1 ]; then
			echo "# config check"
			"$top/kernel/config-check.sh" 2>&1 | tee "$log.config-check"
			rc=${PIPESTATUS[0]}
			if [ "$rc" != 0 ] && ! grep -q '^not ok' "$log.config-check"; then
				echo "not ok - config-check: exited $rc"
			fi
			rm -f "$log.config-check"
		fi
	fi
	# The db/ cases boot the db image (MariaDB, sysbench), built on
	# first use, in a second VM; the other cases the default image.
	db_globs=() globs=()
	[ $# -gt 0 ] || db_globs=('db/*')
	for g in "$@"; do
		case $g in
		db*) db_globs+=("$g") ;;
		'*') db_globs+=('db/*'); globs+=("$g") ;;
		*) globs+=("$g") ;;
		esac
	done
	if [ $unit_only = 0 ] && { [ $# -eq 0 ] || [ ${#globs[@]} -gt 0 ]; }; then
		echo "# VM suite"
		args=""
		[ ${#globs[@]} -eq 0 ] || args=$(printf ' %q' "${globs[@]}")
		"$top/vm/run.sh" "tests/guest-run.sh$args"
		rc=$?
		if [ $rc != 0 ]; then
			echo "not ok - vm: the guest run failed (exit $rc; see the console log named above)"
		fi
	fi
	if [ $unit_only = 0 ]; then
		if [ ${#db_globs[@]} -gt 0 ]; then
			echo "# VM suite, db image"
			UNTORN_IMAGE=db UNTORN_VM_TIMEOUT=5400 "$top/vm/run.sh" \
				"UNTORN_CASE_TIMEOUT=3600 tests/guest-run.sh$(printf ' %q' "${db_globs[@]}")"
			rc=$?
			if [ $rc != 0 ]; then
				echo "not ok - vm: the db image's guest run failed (exit $rc; see the console log named above)"
			fi
		fi
	fi
} 2>&1 | tee "$log"

pass=$(grep -Ec '^ok [0-9]* ?- ' "$log")
skip=$(grep -Ec '^ok [0-9]* ?- .*# SKIP' "$log")
fail=$(grep -Ec '^not ok' "$log")
pass=$((pass - skip))
if [ $unit_only = 0 ] && ! grep -Eq '^1\.\.[1-9]' "$log"; then
	echo "not ok - the VM suite ran no checks"
	fail=$((fail + 1))
fi
if ! grep -q '^# unit exit 0' "$log" && [ "$fail" = 0 ]; then
	fail=1
fi
echo "# log: $log ($(( $(date +%s) - start ))s)"
echo "# $skip skipped"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
