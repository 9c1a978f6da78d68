#!/usr/bin/env bash
# Host side: what the always-on atomic write counters cost on the hardware
# path. Builds, next to the test kernels, a kernel of the series without
# its counter and policy patches (everything before "xfs: count atomic
# writes by path"), both without debug options, and runs benches/hw-path
# on each in turn, ROUNDS times (A B A B ...), so that drift of the host
# hits both alike. Prints a markdown table of median IOPS and the ratio
# with/without per cell. Only the ratios mean anything (QEMU TCG).
#
#   benches/counters-overhead.sh [ROUNDS]      (default 3; BENCH_SECONDS=10)
set -euo pipefail
export UNTORN_DEBUG=0
. "$(dirname "$0")/../kernel/common.sh"
rounds=${1:-3}

"$UNTORN_TOP/kernel/build.sh"
with_build=$KBUILD with_mods=$KMODS

# The baseline: same config, the series up to the patch before the counters.
base=$(git -C "$KSRC" log --format=%H --grep='^xfs: count atomic writes' -1)
[ -n "$base" ] || die "no counter patch in $KSRC"
base=$(git -C "$KSRC" rev-parse "$base^")
build_at_rev "$base" "$UNTORN_CACHE/nocounters"
bdir=$REV_BUILD mods=$REV_MODS

out=$UNTORN_CACHE/bench/counters-overhead-$(date +%Y%m%d-%H%M%S)
boot_in_turn "$out" "$rounds" benches/hw-path with "$with_build" "$with_mods" \
	without "$bdir" "$mods" >/dev/null

echo "Counter overhead on the hardware path: median IOPS over $rounds rounds" \
	"of ${BENCH_SECONDS:-10} s per cell, fio pvsync2 QD1, QEMU TCG," \
	"$(nproc) host cores. Raw: $out/raw.txt"
echo
echo "| cell | with counters | without | with/without | per-round ratios |"
echo "|---|---|---|---|---|"
awk '
	NF == 4 && $4 ~ /^[0-9]+$/ { v[$1, $3, $2] = $4; cells[$3] = 1; if ($2 > R) R = $2 }
	function median(k, c,   a, i, n, t, j) {
		n = 0
		for (i = 1; i <= R; i++) if ((k, c, i) in v) a[++n] = v[k, c, i]
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
			if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return n ? (n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2) : 0
	}
	END {
		for (c in cells) {
			w = median("with", c); o = median("without", c); rs = ""
			for (i = 1; i <= R; i++)
				if (v["without", c, i] > 0)
					rs = rs sprintf("%s%.3f", rs == "" ? "" : " ", v["with", c, i] / v["without", c, i])
			printf "| %s | %d | %d | %.3f | %s |\n", c, w, o, o ? w / o : 0, rs
		}
	}' "$out/raw.txt" | sort
