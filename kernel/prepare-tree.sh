#!/usr/bin/env bash
# Make $KSRC a git tree of Debian's pristine kernel source (tag untorn-base)
# with patches/series applied on top by git am.
#
# Idempotent: when the commits above the base already carry exactly the
# patches in patches/ (compared by patch-id), the tree is left untouched so
# that a kept build directory stays warm. Both sides remember what they
# were last synced with (.git/untorn-synced, written on apply and export):
# when only the tree moved (new or amended commits, uncommitted changes) it
# is work in progress and is built as it is; when only patches/ moved (a
# pull), the branch is rebuilt from patches/ with the old head kept as a
# backup-* branch; when both moved, it stops. UNTORN_KERNEL_RESET=1 always
# rebuilds from patches/.
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
		git config user.name "untorn developers"
		git config user.email "dev@untorn.example.org"
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
synced_file=.git/untorn-synced
synced=$(cat "$synced_file" 2>/dev/null || true)
if [ "$want" = "$got" ]; then
	printf '%s\n' "$want" > "$synced_file"
	if git diff --quiet HEAD; then
		note "kernel tree $KSRC is up to date with patches/ (${#files[@]} patches)"
	else
		note "kernel tree $KSRC: patches/ applied, plus uncommitted changes (kept)"
	fi
	exit 0
fi
# patches/ is what the tree was last synced with (applied or exported), so
# the tree itself moved: new, amended or uncommitted work. Build it as it
# is; export before committing the checkout.
if [ "$want" = "$synced" ] && [ "${UNTORN_KERNEL_RESET:-0}" != 1 ]; then
	note "kernel tree $KSRC has work not yet in patches/$(git diff --quiet HEAD || echo ' (and uncommitted changes)'); building it as is (run kernel/export-patches.sh)"
	exit 0
fi
# Both moved: patches/ changed (a pull) and so did the tree. Refuse to
# guess which one wins.
if [ "$got" != "$synced" ] && [ -n "$synced" ] && [ "${UNTORN_KERNEL_RESET:-0}" != 1 ]; then
	die "both patches/ and the kernel tree $KSRC changed since they were last synced.
Export the tree (kernel/export-patches.sh) or set UNTORN_KERNEL_RESET=1 to rebuild
it from patches/ (its head is kept on a backup branch)."
fi

if ! git diff --quiet HEAD; then
	die "kernel tree $KSRC has uncommitted changes and lacks patches from patches/.
Commit them (they will be kept on a backup branch) or discard them."
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
printf '%s\n' "$want" > "$synced_file"
note "kernel tree ready: $(git log --oneline "$BASE_TAG..HEAD" | wc -l) patches above $BASE_TAG"
