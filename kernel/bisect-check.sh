#!/usr/bin/env bash
# Check that the series bisects: build the kernel after each patch, in a
# separate worktree and build directory (so the main build stays warm), and
# run checkpatch on each patch. Slow: not part of CI.
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
git worktree remove --force "$wt" 2>/dev/null || rm -rf "$wt"
git worktree prune
mkdir -p "$(dirname "$wt")"
git worktree add -q --detach "$wt" "$BASE_TAG"
mkdir -p "$bdir"
cp "$KBUILD/.config" "$bdir/.config"
export CCACHE_DIR=$UNTORN_CACHE/ccache CCACHE_BASEDIR=$wt
export KBUILD_BUILD_TIMESTAMP=untorn KBUILD_BUILD_USER=untorn KBUILD_BUILD_HOST=untorn
n=0 bad=0
for c in $commits; do
	n=$((n + 1))
	subject=$(git log -1 --format=%s "$c")
	git -C "$wt" checkout -q --detach "$c"
	if make -s -C "$wt" O="$bdir" CC="ccache gcc" -j"$(nproc)" olddefconfig bzImage modules \
		>"$bdir/build-$n.log" 2>&1; then
		echo "ok   $n $subject"
	else
		echo "FAIL $n $subject (log: $bdir/build-$n.log)"
		bad=1
	fi
done
git worktree remove --force "$wt"
[ $bad = 0 ] && note "the series builds after each of its $n patches"
exit $bad
