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
