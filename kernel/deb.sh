#!/usr/bin/env bash
# make deb: the series as Debian packages that install on a Debian 12
# machine. The pinned linux-source-6.12 with patches/ applied, configured
# from Debian's own configuration of that very version (the
# linux-config-6.12 package, amd64 flavour), built with the kernel's
# bindeb-pkg into linux-image-*-untorn and linux-headers-*-untorn .deb
# files in $UNTORN_CACHE/deb/. Hours on a 2-core machine; not in CI.
#
# Changes to Debian's configuration, each for a reason:
#   LOCALVERSION=-untorn    the packages and /lib/modules stand beside
#                           Debian's own kernel, which stays installed for
#                           rollback
#   SYSTEM_TRUSTED_KEYS=""  Debian's points to its signing certificates,
#   SYSTEM_REVOCATION_KEYS="" which are not in the source package; modules
#                           are signed with a key made for this build
# Debug info and BTF stay as Debian has them (eBPF tools need BTF); the
# modules are installed stripped (INSTALL_MOD_STRIP=1, which keeps BTF), as
# Debian's own image package has them without their debug info. The
# separate -dbg package (unstripped vmlinux and modules, gigabytes to copy
# and compress) is built only with UNTORN_DEB_DBG=1: an operator installs
# the image and the headers, and Debian's own -dbg is optional too.
# New options of the series (tearblk: a test device) take their defaults.
set -euo pipefail
. "$(dirname "$0")/common.sh"

flavour=amd64_none_amd64
cfgpkg=linux-config-$KERNEL_SERIES
cfg=/usr/src/$cfgpkg/config.$flavour.xz
if [ "$(dpkg-query -W -f='${Version}' "$cfgpkg" 2>/dev/null)" != "$KERNEL_PKG_VERSION" ]; then
	[ "$(id -u)" = 0 ] || die "$cfgpkg $KERNEL_PKG_VERSION is needed: run as root to install it"
	note "installing $cfgpkg=$KERNEL_PKG_VERSION (Debian's kernel configurations)"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$cfgpkg=$KERNEL_PKG_VERSION" >/dev/null
fi
[ -f "$cfg" ] || die "$cfg missing from $cfgpkg"
missing=()
for p in dpkg-dev debhelper dwarves kmod cpio rsync bc bison flex libelf-dev libssl-dev; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	[ "$(id -u)" = 0 ] || die "packages missing: ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null
fi

"$UNTORN_TOP/kernel/prepare-tree.sh"
out=$UNTORN_CACHE/deb
bdir=$out/build
# Its own worktree at the series head: a package takes hours, and kernel
# work in $KSRC meanwhile must not leak half-made into it. The worktree
# stays between runs, so a run cut short, or a new series, rebuilds only
# what changed.
wt=$out/$(basename "$KSRC")
head=$(git -C "$KSRC" rev-parse HEAD)
if [ "$(git -C "$wt" rev-parse --git-common-dir 2>/dev/null)" != "$(git -C "$KSRC" rev-parse --absolute-git-dir)" ]; then
	rm -rf "$wt"
	git -C "$KSRC" worktree prune
	mkdir -p "$out"
	git -C "$KSRC" worktree add -q --detach "$wt" "$head"
fi
git -C "$wt" checkout -q --detach "$head"
KSRC=$wt
mkdir -p "$bdir"
xz -dc "$cfg" >"$bdir/.config"
"$KSRC/scripts/config" --file "$bdir/.config" \
	--set-str LOCALVERSION "-untorn" \
	--set-str SYSTEM_TRUSTED_KEYS "" \
	--set-str SYSTEM_REVOCATION_KEYS ""
export KBUILD_BUILD_TIMESTAMP="untorn" KBUILD_BUILD_USER=untorn KBUILD_BUILD_HOST=untorn
# mkdebian marks the -dbg package with this build profile.
[ "${UNTORN_DEB_DBG:-0}" = 1 ] || export DEB_BUILD_PROFILES="pkg.linux-upstream.nokerneldbg"
# LOCALVERSION= (set, empty): the release is 6.12.N-untorn, without the "+"
# that setlocalversion adds for a git tree past its tag.
# No ccache: make itself resumes in the kept build directory, and a
# Debian configuration's objects would push the test kernels' out of it.
kmake() { make -C "$KSRC" O="$bdir" LOCALVERSION= -j"$(nproc)" "$@"; }
kmake olddefconfig >/dev/null
krel=$(kmake -s kernelrelease)
note "building $krel packages in $bdir (a Debian configuration: hours on 2 cores)"
start=$(date +%s)
kmake KDEB_PKGVERSION="$KERNEL_PKG_VERSION+untorn" INSTALL_MOD_STRIP=1 bindeb-pkg >"$out/build.log" 2>&1 ||
	{ tail -n 40 "$out/build.log" >&2; die "bindeb-pkg failed; full log in $out/build.log"; }
secs=$(( $(date +%s) - start ))
# bindeb-pkg leaves the packages beside the build directory: in $out.
note "built in $((secs / 3600)) h $((secs % 3600 / 60)) min:"
ls -l "$out"/*.deb
for d in "$out"/linux-image-*.deb; do
	[ -e "$d" ] && dpkg-deb -I "$d"
done
