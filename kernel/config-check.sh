#!/usr/bin/env bash
# make config-check: the series must build in the configurations that
# distributions use, not only in the one the tests boot. Each variant is
# allnoconfig + base.config + kernel/config/check/VARIANT.config, in its own
# build directory under $UNTORN_CACHE/config-check/ (kept, with ccache, so
# that a second run costs little):
#
#   modules   XFS, ext4, dm, md, NVMe, scsi_debug and tearblk as modules
#             (modpost fails on a symbol the core does not export), FS_DAX
#   i386      a 32-bit kernel with the touched filesystems and drivers as
#             modules (a bare 64-bit division fails to link there), and
#             CONFIG_XFS_RT=n, CONFIG_QUOTA=n, CONFIG_XFS_QUOTA=n (the test
#             kernel has them, so each value of each option is built; one
#             variant fewer is one cold kernel build less in CI)
#
# Then, with the modules variant's configuration (in a directory of its
# own), every C file the series touches is compiled again with W=1 and
# with sparse (C=2), and a warning fails the
# check when it points at a line the series added or changed (the kernel's
# own W=1 and sparse warnings elsewhere are not ours to fix).
#
#   kernel/config-check.sh [VARIANT...]     default: all, then W=1/sparse
set -euo pipefail
. "$(dirname "$0")/common.sh"

"$UNTORN_TOP/kernel/prepare-tree.sh"
variants=("$@")
[ ${#variants[@]} -gt 0 ] || variants=(modules i386 warnings)
export CCACHE_DIR=${UNTORN_CCACHE:-$UNTORN_CACHE/ccache} CCACHE_DEPEND=1 CCACHE_BASEDIR=$KSRC
export CCACHE_MAXSIZE=5G
export KBUILD_BUILD_TIMESTAMP="untorn" KBUILD_BUILD_USER=untorn KBUILD_BUILD_HOST=untorn
top=$UNTORN_CACHE/config-check
mkdir -p "$top"
fail=0

# configure VARIANT DIR ARCH: allnoconfig from the merged fragment; every
# line of it must stick (fragment_check: a variant's line overrides base's).
configure() {
	local v=$1 dir=$2 arch=$3 frag
	frag=$dir/untorn.fragment
	cat "$UNTORN_TOP/kernel/config/base.config" \
		"$UNTORN_TOP/kernel/config/check/$v.config" >"$frag.new"
	if cmp -s "$frag.new" "$frag" && [ -f "$dir/.config" ]; then
		rm -f "$frag.new"
		return 0
	fi
	make -s -C "$KSRC" O="$dir" ARCH="$arch" KCONFIG_ALLCONFIG="$frag.new" \
		allnoconfig >/dev/null 2>&1
	fragment_check "$frag.new" "$dir/.config" || return 1
	mv "$frag.new" "$frag"
}

# build VARIANT ARCH TARGETS...: configure and make; ok or not ok.
build() {
	local v=$1 arch=$2 dir=$top/$1 start secs
	shift 2
	mkdir -p "$dir"
	start=$(date +%s)
	if ! configure "$v" "$dir" "$arch"; then
		echo "not ok - config-check $v: the configuration does not apply"
		fail=1
		return
	fi
	if make -s -C "$KSRC" O="$dir" ARCH="$arch" CC="ccache gcc" -j"$(nproc)" \
		"$@" >"$dir/build.log" 2>&1; then
		secs=$(( $(date +%s) - start ))
		echo "ok - config-check $v ($arch): $* built (${secs}s)"
	else
		echo "not ok - config-check $v ($arch): build failed (log: $dir/build.log)"
		# (|| true: under pipefail, head closing early fails the pipeline)
		grep -E 'error|undefined|ERROR' "$dir/build.log" | head -n 20 | sed 's/^/#   /' || true
		fail=1
	fi
}

# The lines the series added or changed: "file:line" per line, for the
# warnings check.
series_lines() {
	git -C "$KSRC" diff -U0 "$BASE_TAG" HEAD -- '*.c' '*.h' |
		awk '/^\+\+\+ b\// { f = substr($2, 3) }
		     /^@@/ { split($3, a, ","); s = substr(a[1], 2); n = (a[2] == "" ? 1 : a[2])
			     for (i = 0; i < n; i++) print f ":" s + i }'
}

# In a directory of its own with the modules variant's configuration:
# objects built one by one with other flags must not end up in a kernel.
warnings() {
	local built=$top/modules dir=$top/warnings files objs=() f w ours
	[ -f "$built/vmlinux" ] || { echo "not ok - config-check warnings: needs the modules variant built first"; fail=1; return; }
	mkdir -p "$dir"
	cmp -s "$built/.config" "$dir/.config" || cp "$built/.config" "$dir/.config"
	mapfile -t files < <(git -C "$KSRC" diff --name-only "$BASE_TAG" HEAD -- '*.c')
	for f in "${files[@]}"; do
		# Only objects this configuration builds.
		[ -f "$built/${f%.c}.o" ] && objs+=("${f%.c}.o")
	done
	# Out of date, so that they are compiled (and checked) again.
	for f in "${objs[@]}"; do rm -f "$dir/$f"; done
	if ! make -s -C "$KSRC" O="$dir" CC="ccache gcc" -j"$(nproc)" olddefconfig prepare \
		>"$dir/warnings.log" 2>&1 ||
	   ! make -s -C "$KSRC" O="$dir" CC="ccache gcc" -j"$(nproc)" W=1 C=2 \
		CHECK=sparse "${objs[@]}" >>"$dir/warnings.log" 2>&1; then
		echo "not ok - config-check warnings: W=1/sparse build of the touched files failed (log: $dir/warnings.log)"
		fail=1
		return
	fi
	series_lines | sort -u >"$dir/series-lines"
	# "path:line:col: warning: ..." from gcc and sparse, relative to the tree.
	ours=$(grep -E '^[^ :]+:[0-9]+:([0-9]+:)? (warning|error)' "$dir/warnings.log" |
		sed "s|^$KSRC/||; s|^\.\./[^/]*/||" |
		awk -F: 'NR == FNR { mine[$0] = 1; next } ($1 ":" $2) in mine' "$dir/series-lines" - || true)
	w=$(grep -cE ': (warning|error)' "$dir/warnings.log" || true)
	if [ -z "$ours" ]; then
		echo "ok - config-check warnings: W=1 and sparse on the ${#objs[@]} C files the series touches: none on its lines ($w elsewhere in those files, not ours)"
	else
		echo "not ok - config-check warnings: W=1 or sparse warn on lines of the series"
		sed 's/^/#   /' <<<"$ours" | head -n 30 || true
		fail=1
	fi
}

command -v sparse >/dev/null || die "sparse missing: apt-get install sparse (scripts/install-deps.sh)"
for v in "${variants[@]}"; do
	case $v in
	modules) build modules x86_64 vmlinux modules ;;
	i386) build i386 i386 vmlinux modules ;;
	warnings) warnings ;;
	*) die "unknown variant $v (modules, i386, warnings)" ;;
	esac
done
exit $fail
