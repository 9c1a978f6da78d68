# shellcheck shell=bash
# What the three long-run ledgers (tests/crash, tests/fsx, tests/db
# ledger.sh) share: adding rows to a markdown ledger.
#
#   ledger_add LEDGER SERIES_COL SEED_COL SCRIPT <<<"$rows"
#
# The rows (markdown, one per configuration of a report) are refused when
# one has the series and seed (columns SERIES_COL and SEED_COL, counted
# as awk -F'|' does) of a row already in LEDGER, or when there are none;
# otherwise they are appended, and the block between <!-- totals --> and
# <!-- /totals --> is rewritten from `SCRIPT --totals LEDGER`.
ledger_add() {
	local ledger=$1 scol=$2 dcol=$3 script=$4 rows totals
	rows=$(cat)
	[ -n "$rows" ] || { echo "error: no passing configuration to add" >&2; return 1; }
	awk -F'|' -v s="$scol" -v d="$dcol" '
		function t(x) { gsub(/ /, "", x); return x }
		FNR == NR { if ($2 ~ /^ *20[0-9][0-9]-/) seen[t($s) "|" t($d)] = 1; next }
		(t($s) "|" t($d)) in seen {
			printf "error: seed %s of series %s is in the ledger already\n", t($d), t($s) > "/dev/stderr"
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
