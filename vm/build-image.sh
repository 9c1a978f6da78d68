#!/usr/bin/env bash
# Build (or reuse) the Debian guest root image. The image is named after a
# hash of everything that goes into it, so it is rebuilt only when one of
# those inputs changes. Prints the image path on stdout.
set -euo pipefail
. "$(dirname "$0")/../kernel/common.sh"

# Run-time needs of the tests, tools and benchmarks in the guest.
PACKAGES=xfsprogs,e2fsprogs,fio,kmod,procps,util-linux,fdisk,strace,psmisc

inputs=("$0" "$UNTORN_TOP/vm/untorn-init")
hash=$( (cat "${inputs[@]}"; echo "$GUEST_SUITE $GUEST_MIRROR $PACKAGES") |
	sha256sum | cut -c1-12)
img=$UNTORN_CACHE/images/rootfs-$GUEST_SUITE-$hash.img
if [ -f "$img" ]; then
	echo "$img"
	exit 0
fi

command -v debootstrap >/dev/null || die "debootstrap missing; run scripts/install-deps.sh"
[ "$(id -u)" = 0 ] || die "debootstrap needs root"
mkdir -p "$UNTORN_CACHE/images"
dir=$UNTORN_CACHE/images/rootfs-$hash.d
rm -rf "$dir"
note "debootstrap $GUEST_SUITE into $dir (about a minute)"
log=$UNTORN_CACHE/images/debootstrap.log
if ! debootstrap --variant=minbase --include="$PACKAGES" \
	"$GUEST_SUITE" "$dir" "$GUEST_MIRROR" >"$log" 2>&1; then
	tail -n 30 "$log" >&2
	die "debootstrap failed; full log in $log"
fi
install -m 0755 "$UNTORN_TOP/vm/untorn-init" "$dir/sbin/untorn-init"
echo untorn-guest > "$dir/etc/hostname"
rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir/var/lib/apt/lists"/*_Packages
mkdir -p "$dir/lib/modules"
truncate -s 3G "$img.tmp"
mkfs.ext4 -q -F -L untorn-root -d "$dir" "$img.tmp" >&2
mv "$img.tmp" "$img"
rm -rf "$dir"
# Older images are unreachable once the inputs changed.
find "$UNTORN_CACHE/images" -maxdepth 1 -name 'rootfs-*.img' ! -path "$img" -delete
echo "$img"
