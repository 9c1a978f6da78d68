# Shared settings for the kernel and VM scripts; sourced, not run.
# UNTORN_CACHE moves every build output and cache out of the checkout.

UNTORN_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=../versions.env
. "$UNTORN_TOP/versions.env"

UNTORN_CACHE=${UNTORN_CACHE:-/var/tmp/untorn-cache}
KSRC=${KSRC:-$UNTORN_CACHE/linux-$KERNEL_SERIES}
# UNTORN_DEBUG=0 selects a kernel without kernel/config/debug.config, and
# UNTORN_KASAN=1 the debug kernel plus kernel/config/kasan.config; each is
# built and used side by side with the default debug kernel.
if [ "${UNTORN_KASAN:-0}" = 1 ]; then
	kvariant=-kasan
elif [ "${UNTORN_DEBUG:-1}" = 1 ]; then
	kvariant=""
else
	kvariant=-nodebug
fi
KBUILD=${KBUILD:-$UNTORN_CACHE/build-$KERNEL_SERIES$kvariant}
KMODS=${KMODS:-$UNTORN_CACHE/modules-$KERNEL_SERIES$kvariant}
KIMAGE=$KBUILD/arch/x86/boot/bzImage
BASE_TAG=untorn-base

die() { echo "error: $*" >&2; exit 1; }
note() { echo "==> $*" >&2; }

# The first line of a long-run report (tests/crash, tests/fsx, tests/db):
# which series it ran on, by the patches' content (not the tree's commit
# ids, which git am dates), for the ledgers.
series_stamp() {
	local patches
	patches=$(grep -v '^#' "$UNTORN_TOP/patches/series")
	# shellcheck disable=SC2086
	echo "# series $(cd "$UNTORN_TOP/patches" && cat series $patches | sha256sum | cut -c1-12) ($(wc -w <<<"$patches") patches), $(date -u +%Y-%m-%d)$*"
}

# fragment_check FRAGMENT CONFIG: every CONFIG_ line of FRAGMENT (its last
# value, where a later line overrides an earlier one) made it into CONFIG,
# the .config that Kconfig wrote; each that did not (a missing dependency)
# is named. 0 when all stuck.
fragment_check() {
	local frag=$1 config=$2 line opt val bad=0
	local -A want=()
	while IFS= read -r line; do
		case "$line" in CONFIG_*=*) want[${line%%=*}]=${line#*=} ;; esac
	done <"$frag"
	for opt in "${!want[@]}"; do
		val=${want[$opt]}
		if [ "$val" = n ]; then
			grep -q "^$opt=" "$config" || continue
		else
			grep -qx "$opt=$val" "$config" && continue
		fi
		echo "error: $opt=$val did not stick (got: $(grep -E "^$opt=|# $opt is" "$config" || echo unset))" >&2
		bad=1
	done
	return $bad
}

# build_at_rev REV DIR: the kernel of the tree's commit REV, built with the
# current build's .config (the variant selected above) in a git worktree
# under DIR, for benchmarks that compare kernels side by side. Sets
# REV_BUILD and REV_MODS; rebuilds only when REV changed.
build_at_rev() {
	local rev wt
	rev=$(git -C "$KSRC" rev-parse "$1") || die "no commit $1 in $KSRC"
	wt=$2/$(basename "$KSRC")
	REV_BUILD=$2/$(basename "$KBUILD")
	REV_MODS=$2/$(basename "$KMODS")
	[ "$(cat "$REV_BUILD/.untorn-base" 2>/dev/null)" = "$rev" ] && return 0
	note "building the kernel at $(git -C "$KSRC" log -1 --format='%h %s' "$rev")"
	git -C "$KSRC" worktree remove --force "$wt" 2>/dev/null || rm -rf "$wt"
	git -C "$KSRC" worktree prune
	mkdir -p "$2" "$REV_BUILD"
	git -C "$KSRC" worktree add -q --detach "$wt" "$rev"
	cp "$KBUILD/.config" "$REV_BUILD/.config"
	(
		export CCACHE_DIR=$UNTORN_CACHE/ccache CCACHE_BASEDIR=$wt
		export KBUILD_BUILD_TIMESTAMP=untorn KBUILD_BUILD_USER=untorn KBUILD_BUILD_HOST=untorn
		make -s -C "$wt" O="$REV_BUILD" CC="ccache gcc" -j"$(nproc)" olddefconfig bzImage modules
		rm -rf "$REV_MODS"
		make -s -C "$wt" O="$REV_BUILD" INSTALL_MOD_PATH="$REV_MODS" INSTALL_MOD_STRIP=1 modules_install
	) || die "building the kernel at $1 failed"
	echo "$rev" >"$REV_BUILD/.untorn-base"
}

# boot_in_turn OUT ROUNDS CMD LABEL BUILD MODS LABEL BUILD MODS: run CMD in
# the guest on two kernels booted in turn (first, second, first, ...) for
# ROUNDS rounds, so that drift of the host hits both alike. Each output
# line of CMD is appended to OUT/raw.txt as "LABEL ROUND LINE"; the VM's
# own messages go to OUT/vm.log.
boot_in_turn() {
	local out=$1 rounds=$2 cmd=$3 r i label b m
	shift 3
	mkdir -p "$out"
	for r in $(seq "$rounds"); do
		for i in 0 3; do
			label=${*:i+1:1} b=${*:i+2:1} m=${*:i+3:1}
			note "round $r/$rounds: kernel $label"
			KBUILD=$b KMODS=$m KIMAGE=$b/arch/x86/boot/bzImage \
				"$UNTORN_TOP/vm/run.sh" "$cmd" 2>>"$out/vm.log" |
				grep -v '^untorn-vm:' | sed "s/^/$label $r /" | tee -a "$out/raw.txt"
		done
	done
}
