#!/usr/bin/env bash
# The operation tester's ledger: what `make fsx-soak` and `make fsx-kasan`
# ran, added up per filesystem configuration.
#
#   tests/fsx/ledger.sh REPORT...       a markdown row per configuration of
#                                       each report ($UNTORN_CACHE/fsx/*.txt)
#   tests/fsx/ledger.sh --totals [LEDGER]
#                                       sum docs/fsx-ledger.md per series
#                                       and configuration
#   tests/fsx/ledger.sh --add REPORT... append the rows to docs/fsx-ledger.md
#                                       and rewrite its totals
#
# A row: date | series | kernel | configuration | sequence seed | sequence
# operations | threads seed | rounds | threaded operations | operations.
# Only a configuration whose sequence, threads and fsck all passed gives a
# row, and only from a report whose VM run ended clean (vm/run.sh fails a
# run on any WARNING, BUG, lockdep or KASAN report in the guest log).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib/ledger.sh"
default=$top/docs/fsx-ledger.md

if [ "${1:-}" = --totals ]; then
	awk -F'|' '
		# | date | series | kernel | config | seed | ops | seed | rounds | threaded | total |
		$2 ~ /^ *20[0-9][0-9]-/ {
			k = $3 "|" $5
			if (!(k in total)) order[n++] = k
			total[k] += $11; seq[k] += $7; thr[k] += $10; runs[k]++
			kn = $4; gsub(/ /, "", kn)
			if (index(" " kern[k] ",", " " kn ",") == 0)
				kern[k] = kern[k] (kern[k] ? ", " : " ") kn
		}
		END {
			print "| series | configuration | runs | kernels | sequence operations | threaded operations | operations |"
			print "|---|---|---|---|---|---|---|"
			for (i = 0; i < n; i++) {
				split(order[i], p, "|")
				k = order[i]
				printf "|%s|%s| %d |%s | %d | %d | %d |\n", p[1], p[2], runs[k], kern[k], seq[k], thr[k], total[k]
			}
		}' "${2:-$default}"
	exit 0
fi

if [ "${1:-}" = --add ]; then
	shift
	rows=$("$0" "$@")
	ledger_add "$default" "$0" 3 6 5 4 <<<"$rows"
	exit
fi

[ $# -gt 0 ] || { echo "usage: $0 REPORT... | --totals [LEDGER] | --add REPORT..." >&2; exit 2; }
for r in "$@"; do
	head=$(grep -m1 '^# series ' "$r") || { echo "error: $r has no series line" >&2; exit 1; }
	series=$(awk '{print $3}' <<<"$head")
	date=$(awk '{print $6}' <<<"$head" | tr -d ,)
	kernel=$(awk '{print $NF}' <<<"$head")
	if ! grep -q '^# vm exit 0$' "$r"; then
		echo "error: $r: the VM run did not end clean (a kernel report, a hang, or unfinished)" >&2
		exit 1
	fi
	p='^ok [0-9]* - fs/atomic-fsx: '
	for label in $(sed -n "s%${p}\([a-z0-9-]*\): [0-9]* operations matched.*%\1%p" "$r"); do
		seq=$(grep -m1 "${p}${label}: [0-9]* operations matched" "$r") || continue
		thr=$(grep -m1 "${p}${label}: [0-9]* rounds of" "$r") || { echo "# $r: $label threads failed, no row" >&2; continue; }
		grep -q "${p}${label}: .* check is clean" "$r" || { echo "# $r: $label fsck failed, no row" >&2; continue; }
		ops=$(sed 's/.*: \([0-9]*\) operations matched.*/\1/' <<<"$seq")
		sseed=$(sed 's/.*seed \(0x[0-9a-f]*\).*/\1/' <<<"$seq")
		rounds=$(sed 's/.*: \([0-9]*\) rounds of.*/\1/' <<<"$thr")
		tw=$(sed 's/.*; \([0-9]*\) atomic writes by.*/\1/' <<<"$thr")
		to=$(sed 's/.* \([0-9]*\) other operations.*/\1/' <<<"$thr")
		tseed=$(sed 's/.*seed \(0x[0-9a-f]*\).*/\1/' <<<"$thr")
		echo "| $date | $series | $kernel | $label | $sseed | $ops | $tseed | $rounds | $((tw + to)) | $((ops + tw + to)) |"
	done
done
