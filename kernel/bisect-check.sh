#!/usr/bin/env bash
# Check that the series bisects: build the kernel after each patch, in a
# separate worktree and build directory (so the main build stays warm);
# checkpatch is `make checkpatch`. Slow: not part of CI. A patch whose tree
# already built with the same configuration (recorded by tree hash in
# $UNTORN_CACHE/bisect/built) is not built again, so a run cut short
# resumes where it stopped and an unchanged series costs nothing.
set -euo pipefail
. "$(dirname "$0")/common.sh"

"$UNTORN_TOP/kernel/prepare-tree.sh"
# The same relative layout as $KSRC and $KBUILD (../linux-6.12 seen from
# the build directory), so that ccache, with the source tree as its base
# directory, reuses objects the main build already compiled.
wt=$UNTORN_CACHE/bisect/$(basename "$KSRC")
bdir=$UNTORN_CACHE/bisect/$(basename "$KBUILD")
cd "$KSRC"
commits=$(git rev-list --reverse "$BASE_TAG..HEAD")
[ -n "$commits" ] || { note "no patches above $BASE_TAG"; exit 0; }
# The worktree stays between runs: a fresh checkout would give every
# file a new time stamp and the build directory would rebuild it all.
if [ "$(git -C "$wt" rev-parse --git-common-dir 2>/dev/null)" != "$(git rev-parse --absolute-git-dir)" ]; then
	rm -rf "$wt"
	git worktree prune
	mkdir -p "$(dirname "$wt")"
	git worktree add -q --detach "$wt" "$BASE_TAG"
fi
mkdir -p "$bdir"
cp "$KBUILD/.config" "$bdir/.config"
export CCACHE_DIR=$UNTORN_CACHE/ccache CCACHE_BASEDIR=$wt
export KBUILD_BUILD_TIMESTAMP=untorn KBUILD_BUILD_USER=untorn KBUILD_BUILD_HOST=untorn
built=$UNTORN_CACHE/bisect/built
touch "$built"
config=$(sha256sum <"$bdir/.config" | cut -c1-16)
n=0 bad=0
for c in $commits; do
	n=$((n + 1))
	subject=$(git log -1 --format=%s "$c")
	key="$(git rev-parse "$c^{tree}") $config"
	if grep -qxF "$key" "$built"; then
		echo "ok   $n $subject (built before: tree ${key%% *})"
		continue
	fi
	git -C "$wt" checkout -q --detach "$c"
	# Afresh for every patch: olddefconfig at a patch before the one that
	# adds a Kconfig symbol (tearblk) would drop it for all later ones.
	cp "$KBUILD/.config" "$bdir/.config"
	if make -s -C "$wt" O="$bdir" CC="ccache gcc" -j"$(nproc)" olddefconfig bzImage modules \
		>"$bdir/build-$n.log" 2>&1; then
		echo "ok   $n $subject"
		echo "$key" >>"$built"
	else
		echo "FAIL $n $subject (log: $bdir/build-$n.log)"
		bad=1
	fi
done
[ $bad = 0 ] && note "the series builds after each of its $n patches"
exit $bad
