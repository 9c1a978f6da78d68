#!/bin/bash
# Runs in the guest: every case under tests/cases but the db/ ones (they
# need the db image; tests/run.sh boots it for them), or those matching
# the globs given as arguments, e.g. 'blk/*', one after another (db/
# cases only for a glob that starts with db). Numbers the
# TAP lines and prefixes each with the case name. A case that exits non-zero
# without reporting a failure, or that times out, is reported as one.
top=$(cd "$(dirname "$0")/.." && pwd)
cases_dir=$top/tests/cases
timeout_s=${UNTORN_CASE_TIMEOUT:-900}
n=0

mapfile -t all < <(cd "$cases_dir" && find . -type f -perm -u+x | sed 's|^\./||' | sort)
selected=()
for c in "${all[@]}"; do
	if [ $# -eq 0 ]; then
		[[ $c == db/* ]] || selected+=("$c")
		continue
	fi
	for pat in "$@"; do
		# The db/ cases only when asked for by name (db/...).
		[[ $c == db/* && $pat != db* ]] && continue
		# shellcheck disable=SC2053
		[[ $c == $pat ]] && { selected+=("$c"); break; }
	done
done

echo "# untorn suite: ${#selected[@]} cases, kernel $(uname -r)"
for c in "${selected[@]}"; do
	echo "# case $c"
	start=$(date +%s)
	out=$(mktemp)
	UT_CASE=$c timeout -k 10 "$timeout_s" "$cases_dir/$c" >"$out" 2>&1
	rc=$?
	failed=0
	while IFS= read -r line; do
		case "$line" in
		"ok - "*) n=$((n + 1)); echo "ok $n - $c: ${line#ok - }" ;;
		"not ok - "*) n=$((n + 1)); failed=1; echo "not ok $n - $c: ${line#not ok - }" ;;
		*) echo "#   $line" ;;
		esac
	done <"$out"
	rm -f "$out"
	if [ $rc -ne 0 ] && [ $failed = 0 ]; then
		n=$((n + 1))
		if [ $rc = 124 ]; then
			echo "not ok $n - $c: timed out after ${timeout_s}s"
		else
			echo "not ok $n - $c: exited $rc"
		fi
	fi
	echo "# case $c: $(( $(date +%s) - start ))s"
done
echo "1..$n"
