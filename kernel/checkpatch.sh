#!/usr/bin/env bash
# Run the kernel's checkpatch.pl on every patch of the series.
set -euo pipefail
. "$(dirname "$0")/common.sh"

"$UNTORN_TOP/kernel/prepare-tree.sh" >/dev/null
bad=0 n=0
while read -r p; do
	case "$p" in ''|'#'*) continue ;; esac
	n=$((n + 1))
	if out=$("$KSRC/scripts/checkpatch.pl" --no-tree -q \
		--ignore FILE_PATH_CHANGES "$UNTORN_TOP/patches/$p" 2>&1); then
		echo "ok   $p"
	else
		echo "FAIL $p"
		printf '%s\n' "$out" | sed 's/^/     /'
		bad=1
	fi
done < "$UNTORN_TOP/patches/series"
note "checkpatch: $n patches checked"
exit $bad
