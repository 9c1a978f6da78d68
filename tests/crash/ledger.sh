#!/usr/bin/env bash
# The long-run ledger: what `make crash` runs added up, per configuration.
#
#   tests/crash/ledger.sh REPORT...   print a markdown row per configuration
#                                     of each report ($UNTORN_CACHE/crash/*.txt)
#   tests/crash/ledger.sh --totals [LEDGER]
#                                     sum the rows of docs/crash-ledger.md (or
#                                     LEDGER) per series and configuration
#   tests/crash/ledger.sh --add REPORT...
#                                     append the reports' rows to
#                                     docs/crash-ledger.md and rewrite its totals
#
# A row: date | series | seed | configuration | cuts | atomic writes |
# torn | stale | fsck failures | errors | controls. A configuration that
# failed in a report (its own case or one of its controls "not ok") gives
# no row: a ledger counts only what passed, and a failure is a bug to fix,
# not a row. Reports that did not finish (no table) are refused.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib/ledger.sh"

if [ "${1:-}" = --totals ]; then
	ledger=${2:-$top/docs/crash-ledger.md}
	awk -F'|' '
		# | date | series | seed | config | cuts | writes | torn | stale | fsck | errors | controls |
		$2 ~ /^ *20[0-9][0-9]-/ {
			k = $3 "|" $5
			if (!(k in cuts)) order[n++] = k
			cuts[k] += $6; writes[k] += $7; bad[k] += $8 + $9 + $10 + $11
			seeds[k] = seeds[k] (seeds[k] ? "," : "") $4
			runs[k]++
		}
		END {
			print "| series | configuration | runs | cuts | atomic writes | torn + stale + fsck + errors |"
			print "|---|---|---|---|---|---|"
			for (i = 0; i < n; i++) {
				split(order[i], p, "|")
				printf "|%s|%s| %d | %d | %d | %d |\n", p[1], p[2], runs[order[i]], cuts[order[i]], writes[order[i]], bad[order[i]]
			}
		}' "$ledger"
	exit 0
fi

if [ "${1:-}" = --add ]; then
	shift
	rows=$("$0" "$@")
	ledger_add "$top/docs/crash-ledger.md" "$0" 3 4 5 <<<"$rows"
	exit
fi

[ $# -gt 0 ] || { echo "usage: $0 REPORT... | --totals [LEDGER] | --add REPORT..." >&2; exit 2; }
for r in "$@"; do
	head=$(grep -m1 '^# series ' "$r") || { echo "error: $r has no series line (made before ledger.sh)" >&2; exit 1; }
	series=$(awk '{print $3}' <<<"$head")
	date=$(awk '{print $NF}' <<<"$head")
	seed=$(grep -m1 '# crash torture, seed ' "$r" | sed 's/.*seed \(0x[0-9a-f]*\).*/\1/')
	if ! grep -q '^# | configuration |' "$r"; then
		echo "error: $r did not finish: no table" >&2
		exit 1
	fi
	# A VM that failed (vm/run.sh: 125 a kernel report in its log or no
	# exit status, 126 a hang, 127 a panic) fails the report, whatever its
	# cases said. Exit 1 is a case that failed: that configuration gives
	# no row (below), the others do.
	if grep -q '^# vm exit 12[5-7]$' "$r"; then
		echo "error: $r: a VM run did not end clean ($(grep -m1 '^# vm exit 12[5-7]$' "$r"))" >&2
		exit 1
	fi
	# | name | cuts | writes | paths | recovery | torn | stale | fsck | errors | controls | time |
	grep '^# | [a-z0-9-]* | [0-9]' "$r" | sed 's/^# //' |
		while IFS= read -r row; do
			name=$(awk -F'|' '{gsub(/ /, "", $2); print $2}' <<<"$row")
			if grep -q "^not ok[0-9 ]*- \(crash/power-cut: \)\?${name}[: ]" "$r"; then
				echo "# $r: $name failed, no row" >&2
				continue
			fi
			awk -F'|' -v d="$date" -v s="$series" -v seed="$seed" '{
				printf "| %s | %s | %s |%s|%s|%s|%s|%s|%s|%s|%s|\n", d, s, seed, $2, $3, $4, $7, $8, $9, $10, $11
			}' <<<"$row"
		done
done
