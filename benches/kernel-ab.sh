#!/usr/bin/env bash
# Host side: one guest measurement on two kernels, booted in turn (A B A B
# ...) so that drift of the host hits both alike. A is the kernel tree at
# REV (built in a worktree with the same config), B the current build,
# both without debug options. Each boot runs CMD (default benches/sw-ratio,
# the software path against plain writes) and its output lines are kept
# per kernel and round; for sw-ratio a table of the ratios follows.
#
#   benches/kernel-ab.sh REV [ROUNDS]     (default 2; e.g. REV=HEAD~1)
#   KERNEL_AB_CMD='SW_RATIO_SIZES=16k benches/sw-ratio' benches/kernel-ab.sh HEAD~2
set -euo pipefail
export UNTORN_DEBUG=0
. "$(dirname "$0")/../kernel/common.sh"
[ $# -ge 1 ] || die "usage: benches/kernel-ab.sh REV [ROUNDS]"
rounds=${2:-2} cmd=${KERNEL_AB_CMD:-benches/sw-ratio}
# Resolve REV now: a branch name committed to while B builds would
# otherwise make A the same kernel as B.
rev=$(git -C "$KSRC" rev-parse --verify "$1^{commit}") || die "no commit $1 in $KSRC"

"$UNTORN_TOP/kernel/build.sh"
build_at_rev "$rev" "$UNTORN_CACHE/kernel-ab"
a_desc=$(git -C "$KSRC" log -1 --format='%h %s' "$rev")
b_desc="current build ($(git -C "$KSRC" log -1 --format='%h %s' HEAD)$(git -C "$KSRC" diff --quiet HEAD || echo ', plus uncommitted changes'))"

out=$UNTORN_CACHE/bench/kernel-ab-$(date +%Y%m%d-%H%M%S)
boot_in_turn "$out" "$rounds" "$cmd" A "$REV_BUILD" "$REV_MODS" B "$KBUILD" "$KMODS"

echo
echo "A: $a_desc"
echo "B: $b_desc"
echo "$cmd, $rounds rounds, QEMU TCG, $(nproc) host cores. Raw: $out/raw.txt"
[[ $cmd == *sw-ratio* ]] || exit 0
echo
echo "| size | round | A: atomic/plain [95 %] | B: atomic/plain [95 %] | B/A |"
echo "|---|---|---|---|---|"
awk '$1 ~ /^[AB]$/ && NF == 7 { v[$1, $2, $3] = sprintf("%.3f [%.3f, %.3f]", $4, $5, $6); x[$1, $2, $3] = $4; s[$3] = 1; if ($2 > R) R = $2 }
END {
	for (z in s) for (i = 1; i <= R; i++)
		printf "| %s | %d | %s | %s | %.3f |\n", z, i, v["A", i, z], v["B", i, z],
			x["A", i, z] ? x["B", i, z] / x["A", i, z] : 0
}' "$out/raw.txt" | sort
