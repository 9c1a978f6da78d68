#!/usr/bin/env bash
# The database power-cut ledger: what `make db-crash` runs added up, per
# configuration.
#
#   tests/db/ledger.sh REPORT...        a markdown row per configuration of
#                                       each report ($UNTORN_CACHE/db/*.txt)
#   tests/db/ledger.sh --totals [LEDGER]
#                                       sum docs/db-ledger.md per series and
#                                       configuration
#   tests/db/ledger.sh --add REPORT...  append the rows to docs/db-ledger.md
#                                       and rewrite its totals
#
# A row: date | series | seed | configuration | doublewrite | preload |
# cuts | commits acknowledged | torn pages before recovery (cuts) | failed
# recoveries | corrupted pages after recovery | lost commits | errors.
# Only a configuration that passed gives a row (for the controls: that
# showed what they must), and only from a report that finished (its table).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib/ledger.sh"
default=$top/docs/db-ledger.md

if [ "${1:-}" = --totals ]; then
	awk -F'|' '
		# | date | series | seed | config | dw | preload | cuts | commits | torn | failed | bad | lost | errors |
		$2 ~ /^ *20[0-9][0-9]-/ {
			k = $3 "|" $5
			if (!(k in cuts)) { order[n++] = k; dw[k] = $6; pre[k] = $7 }
			runs[k]++; cuts[k] += $8; commits[k] += $9
			split($10, t, "("); torn[k] += t[1]; tc = t[2]; sub(/ *cuts\).*/, "", tc); torncuts[k] += tc
			failed[k] += $11; bad[k] += $12; lost[k] += $13; errs[k] += $14
		}
		END {
			print "| series | configuration | doublewrite | preload | runs | cuts | commits acknowledged | torn pages (cuts) | failed recoveries | corrupted after recovery | lost commits | errors |"
			print "|---|---|---|---|---|---|---|---|---|---|---|---|"
			for (i = 0; i < n; i++) {
				k = order[i]; split(k, p, "|")
				printf "|%s|%s|%s|%s| %d | %d | %d | %d (%d) | %d | %d | %d | %d |\n", p[1], p[2], dw[k], pre[k], runs[k], cuts[k], commits[k], torn[k], torncuts[k], failed[k], bad[k], lost[k], errs[k]
			}
		}' "${2:-$default}"
	exit 0
fi

if [ "${1:-}" = --add ]; then
	shift
	rows=$("$0" "$@")
	ledger_add "$default" "$0" 3 4 5 6 7 <<<"$rows"
	exit
fi

[ $# -gt 0 ] || { echo "usage: $0 REPORT... | --totals [LEDGER] | --add REPORT..." >&2; exit 2; }
for r in "$@"; do
	head=$(grep -m1 '^# series ' "$r") || { echo "error: $r has no series line" >&2; exit 1; }
	series=$(awk '{print $3}' <<<"$head")
	date=$(awk '{print $NF}' <<<"$head")
	seed=$(grep -m1 '^# database power cuts: seed ' "$r" | sed 's/.*seed \(0x[0-9a-f]*\).*/\1/')
	if ! grep -q '^# | configuration |' "$r" || ! grep -q '^# vm exit 0$' "$r"; then
		echo "error: $r did not finish: no table or the VM failed" >&2
		exit 1
	fi
	# | name | dw | preload | cuts | commits | torn (n cuts) | failed | bad | lost | errors | atomic | time |
	grep '^# | [a-z0-9-]* | O[NF]' "$r" | sed 's/^# //' |
		while IFS= read -r row; do
			name=$(awk -F'|' '{gsub(/ /, "", $2); print $2}' <<<"$row")
			if grep -q "^not ok[0-9 ]*- \(db/power-cut: \)\?${name}[: ]" "$r"; then
				echo "# $r: $name failed, no row" >&2
				continue
			fi
			awk -F'|' -v d="$date" -v s="$series" -v seed="$seed" '{
				printf "| %s | %s | %s |%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|\n", d, s, seed, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11
			}' <<<"$row"
		done
done
