#!/usr/bin/env bash
# The long-run ledger: what `make crash` runs added up, per configuration.
#
#   tests/crash/ledger.sh REPORT...   print a markdown row per configuration
#                                     of each report ($UNTORN_CACHE/crash/*.txt)
#   tests/crash/ledger.sh --totals [LEDGER]
#                                     sum the rows of docs/crash-ledger.md (or
#                                     LEDGER) per series and configuration
#
# A row: date | series | seed | configuration | cuts | atomic writes |
# torn | stale | fsck failures | errors | controls. Reports that did not
# finish (no table) or that failed a case are refused: a ledger counts only
# runs that passed, and a failed one is a bug to fix, not a row.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)

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

[ $# -gt 0 ] || { echo "usage: $0 REPORT... | --totals [LEDGER]" >&2; exit 2; }
for r in "$@"; do
	head=$(grep -m1 '^# series ' "$r") || { echo "error: $r has no series line (made before ledger.sh)" >&2; exit 1; }
	series=$(awk '{print $3}' <<<"$head")
	date=$(awk '{print $NF}' <<<"$head")
	seed=$(grep -m1 '# crash torture, seed ' "$r" | sed 's/.*seed \(0x[0-9a-f]*\).*/\1/')
	if grep -q '^not ok' "$r" || ! grep -q '^# | configuration |' "$r"; then
		echo "error: $r failed or did not finish: not a ledger row" >&2
		exit 1
	fi
	# | name | cuts | writes | paths | recovery | torn | stale | fsck | errors | controls | time |
	grep '^# | [a-z0-9-]* | [0-9]' "$r" | sed 's/^# //' |
		awk -F'|' -v d="$date" -v s="$series" -v seed="$seed" '{
			printf "| %s | %s | %s |%s|%s|%s|%s|%s|%s|%s|%s|\n", d, s, seed, $2, $3, $4, $7, $8, $9, $10, $11
		}'
done
