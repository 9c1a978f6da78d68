#!/usr/bin/env bash
# Install everything untorn needs on a Debian 12 host (root): the pinned
# kernel source, the kernel build tools, QEMU, debootstrap and the C
# libraries of the test programs. Safe to run again.
set -euo pipefail
. "$(dirname "$0")/../versions.env"

[ "$(id -u)" = 0 ] || { echo "error: run as root (apt-get)" >&2; exit 1; }
export DEBIAN_FRONTEND=noninteractive

pkgs=(build-essential bc bison flex libelf-dev libssl-dev cpio kmod xz-utils
      rsync ccache git perl python3 qemu-system-x86 qemu-utils debootstrap
      e2fsprogs liburing-dev libaio-dev libjson-c-dev gnuplot-nox sparse)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing+=("$p")
done
have=$(dpkg-query -W -f='${Version}' "$KERNEL_PKG" 2>/dev/null || true)
if [ ${#missing[@]} -eq 0 ] && [ "$have" = "$KERNEL_PKG_VERSION" ]; then
	echo "==> host packages present"
	exit 0
fi

apt-get update -qq
kpkg="$KERNEL_PKG=$KERNEL_PKG_VERSION"
# Read the list once: grep -q stops reading early, and under pipefail the
# writer's SIGPIPE would make a version that is there look gone.
avail=$(apt-cache madison "$KERNEL_PKG")
if ! grep -qF "| $KERNEL_PKG_VERSION |" <<<"$avail"; then
	newest=$(awk -F'|' 'NR==1 {gsub(/ /,"",$2); print $2}' <<<"$avail")
	[ -n "$newest" ] || { echo "error: the archive has no $KERNEL_PKG" >&2; exit 1; }
	cat >&2 <<MSG
################################################################
WARNING: $KERNEL_PKG $KERNEL_PKG_VERSION (versions.env) is gone from
WARNING: the archive; installing the newest, $newest, untested.
################################################################
MSG
	kpkg="$KERNEL_PKG=$newest"
fi
apt-get install -y -qq --no-install-recommends "${pkgs[@]}" "$kpkg" >/dev/null
echo "==> host packages installed"
