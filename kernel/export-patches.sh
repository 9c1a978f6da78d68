#!/usr/bin/env bash
# Export the kernel tree's commits above the pristine base into patches/
# (git format-patch) and rewrite patches/series. Run before every commit of
# the checkout: what is not in patches/ is lost with the cache.
set -euo pipefail
. "$(dirname "$0")/common.sh"

cd "$KSRC"
git diff --quiet HEAD || die "kernel tree $KSRC has uncommitted changes; commit them first"
out=$UNTORN_TOP/patches
rm -f "$out"/*.patch
git format-patch -q --no-signature --zero-commit --no-numbered \
	-o "$out" "$BASE_TAG..HEAD"
(
	echo "# untorn series for $KERNEL_PKG $KERNEL_PKG_VERSION; applied in order by git am"
	cd "$out" && ls -1 -- *.patch 2>/dev/null || true
) > "$out/series"
# Tree and patches/ agree again: remember it (see prepare-tree.sh).
git format-patch --stdout "$BASE_TAG..HEAD" | git patch-id --stable |
	awk '{print $1}' > .git/untorn-synced
note "exported $(grep -c '\.patch$' "$out/series") patches to $out"
