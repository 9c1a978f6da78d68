#!/usr/bin/env bash
# Make $KSRC a git tree of Debian's pristine kernel source (tag untorn-base)
# with patches/series applied on top by git am.
#
# Idempotent: when the commits above the base already carry exactly the
# patches in patches/ (compared by patch-id), the tree is left untouched so
# that a kept build directory stays warm.
set -euo pipefail
. "$(dirname "$0")/common.sh"

tarball=/usr/src/$KERNEL_PKG.tar.xz
have=$(dpkg-query -W -f='${Version}' "$KERNEL_PKG" 2>/dev/null || true)
[ -n "$have" ] && [ -f "$tarball" ] ||
	die "$KERNEL_PKG is not installed; run scripts/install-deps.sh"
if [ "$have" != "$KERNEL_PKG_VERSION" ]; then
	cat >&2 <<MSG
################################################################
WARNING: $KERNEL_PKG $have is installed, but the series is tested
WARNING: on $KERNEL_PKG_VERSION (versions.env). Results may differ.
################################################################
MSG
fi

series_files() {
	local p
	[ -f "$UNTORN_TOP/patches/series" ] || return 0
	while read -r p; do
		case "$p" in ''|'#'*) continue ;; esac
		[ -f "$UNTORN_TOP/patches/$p" ] ||
			die "patches/series names $p, which does not exist"
		echo "$UNTORN_TOP/patches/$p"
	done < "$UNTORN_TOP/patches/series"
}

extract() {
	note "extracting $KERNEL_PKG $have into $KSRC"
	rm -rf "$KSRC.new"
	mkdir -p "$KSRC.new"
	tar -xf "$tarball" -C "$KSRC.new" --strip-components=1
	(
		cd "$KSRC.new"
		git init -q -b untorn
		git config user.name "untorn"
		git config user.email "untorn@localhost"
		git config gc.auto 0
		git add -A -f
		git commit -q -m "$KERNEL_PKG $have (pristine)"
		git tag "$BASE_TAG"
		echo "$have" > .git/untorn-pkg-version
	)
	rm -rf "$KSRC"
	mv "$KSRC.new" "$KSRC"
}

patch_ids() { git patch-id --stable | awk '{print $1}'; }

if [ ! -d "$KSRC/.git" ] ||
   [ "$(cat "$KSRC/.git/untorn-pkg-version" 2>/dev/null)" != "$have" ]; then
	extract
fi

cd "$KSRC"
mapfile -t files < <(series_files)
want=$( ( [ ${#files[@]} -eq 0 ] || cat "${files[@]}" ) | patch_ids)
got=$(git format-patch --stdout "$BASE_TAG..HEAD" | patch_ids)
if [ "$want" = "$got" ] && git diff --quiet HEAD; then
	note "kernel tree $KSRC is up to date with patches/ (${#files[@]} patches)"
	exit 0
fi

if ! git diff --quiet HEAD; then
	die "kernel tree $KSRC has uncommitted changes and differs from patches/.
Commit them and run kernel/export-patches.sh, or discard them."
fi
if [ "$(git rev-parse HEAD)" != "$(git rev-parse "$BASE_TAG")" ]; then
	backup="backup-$(date +%Y%m%d-%H%M%S)"
	git branch "$backup" HEAD
	note "the tree's commits differ from patches/; old HEAD kept as branch $backup"
fi
git checkout -q -B untorn "$BASE_TAG"
if [ ${#files[@]} -gt 0 ]; then
	note "applying ${#files[@]} patches with git am"
	if ! git am -q --keep-cr "${files[@]}"; then
		git am --abort || true
		echo "################################################################" >&2
		die "git am failed: patches/ does not apply to $KERNEL_PKG $have"
	fi
fi
note "kernel tree ready: $(git log --oneline "$BASE_TAG..HEAD" | wc -l) patches above $BASE_TAG"
