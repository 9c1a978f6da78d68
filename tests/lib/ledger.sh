# shellcheck shell=bash
# What the three long-run ledgers (tests/crash, tests/fsx, tests/db
# ledger.sh) share: adding rows to a markdown ledger.
#
#   ledger_add LEDGER SCRIPT KEY_COL... <<<"$rows"
#
# The rows (markdown, one per configuration of a report) are refused when
# one has the key (series, seed and configuration: the columns KEY_COL,
# counted as awk -F'|' does) of a row already in LEDGER, or when there
# are none; otherwise they are appended, and the block between
# <!-- totals --> and <!-- /totals --> is rewritten from
# `SCRIPT --totals LEDGER`. The configuration is part of the key because
# `make crash CRASH_JOBS=J` runs one seed in several VMs, one per
# configuration, whose parts may be added one at a time.
ledger_add() {
	local ledger=$1 script=$2 rows totals
	shift 2
	rows=$(cat)
	[ -n "$rows" ] || { echo "error: no passing configuration to add" >&2; return 1; }
	awk -F'|' -v cols="$*" '
		function t(x) { gsub(/ /, "", x); return x }
		function key(   i, k) { k = ""; for (i = 1; i <= n; i++) k = k (i > 1 ? " " : "") t($c[i]); return k }
		BEGIN { n = split(cols, c, " ") }
		FNR == NR { if ($2 ~ /^ *20[0-9][0-9]-/) seen[key()] = 1; next }
		key() in seen {
			printf "error: %s (series, seed, configuration) is in the ledger already\n", key() > "/dev/stderr"
			bad = 1
		}
		END { exit bad }' "$ledger" - <<<"$rows" || return 1
	printf '%s\n' "$rows" >> "$ledger"
	totals=$("$script" --totals "$ledger") || return 1
	awk -v t="$totals" '
		/^<!-- totals -->/ { print; print t; skip = 1; next }
		/^<!-- \/totals -->/ { skip = 0 }
		!skip' "$ledger" > "$ledger.new" && mv "$ledger.new" "$ledger"
}
