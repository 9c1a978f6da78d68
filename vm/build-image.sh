#!/usr/bin/env bash
# Build (or reuse) the Debian guest root image. The image is named after a
# hash of everything that goes into it, so it is rebuilt only when one of
# those inputs changes. Prints the image path on stdout.
#
# UNTORN_IMAGE=db builds the opt-in database variant (the same plus
# mariadb-server and sysbench, for the tests/db cases), side by side with
# the default image, which stays small (lvm2 and mdadm are in both).
# UNTORN_IMAGE=perf adds linux-perf, for CPU profiles (benches/cpu-profile).
set -euo pipefail
. "$(dirname "$0")/../kernel/common.sh"

# Run-time needs of the tests, tools and benchmarks in the guest.
PACKAGES=xfsprogs,e2fsprogs,fio,kmod,procps,util-linux,fdisk,strace,psmisc,jq
# Installed by apt in the new root after debootstrap: their maintainer
# scripts need a configured base (perl for addgroup, debconf). LVM and md
# for the stacking cases; no service of theirs starts in the guest.
EXTRA=(lvm2 mdadm)
variant=${UNTORN_IMAGE:-base}
case $variant in
base) prefix=rootfs-$GUEST_SUITE ;;
db)   prefix=rootfs-$GUEST_SUITE-db
      EXTRA+=(mariadb-server mariadb-client sysbench) ;;
perf) prefix=rootfs-$GUEST_SUITE-perf
      EXTRA+=(linux-perf) ;;
*)    die "UNTORN_IMAGE=$variant: base, db or perf" ;;
esac

inputs=("$0" "$UNTORN_TOP/vm/untorn-init")
hash=$( (cat "${inputs[@]}"; echo "$GUEST_SUITE $GUEST_MIRROR $PACKAGES ${EXTRA[*]}") |
	sha256sum | cut -c1-12)
img=$UNTORN_CACHE/images/$prefix-$hash.img
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
log=$UNTORN_CACHE/images/debootstrap-$variant.log
if ! debootstrap --variant=minbase --include="$PACKAGES" \
	"$GUEST_SUITE" "$dir" "$GUEST_MIRROR" >"$log" 2>&1; then
	tail -n 30 "$log" >&2
	die "debootstrap failed; full log in $log"
fi
if [ ${#EXTRA[@]} -gt 0 ]; then
	note "apt-get install ${EXTRA[*]} in the new root"
	# No service may start in the image being built.
	printf '#!/bin/sh\nexit 101\n' > "$dir/usr/sbin/policy-rc.d"
	chmod 0755 "$dir/usr/sbin/policy-rc.d"
	cp /etc/resolv.conf "$dir/etc/resolv.conf"
	if ! { chroot "$dir" apt-get update &&
	       DEBIAN_FRONTEND=noninteractive chroot "$dir" apt-get install -y \
			--no-install-recommends "${EXTRA[@]}"; } >>"$log" 2>&1; then
		tail -n 30 "$log" >&2
		die "apt-get install ${EXTRA[*]} failed; full log in $log"
	fi
	chroot "$dir" apt-get clean
	rm -f "$dir/usr/sbin/policy-rc.d"
fi
install -m 0755 "$UNTORN_TOP/vm/untorn-init" "$dir/sbin/untorn-init"
echo untorn-guest > "$dir/etc/hostname"
rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir/var/lib/apt/lists"/*_Packages
mkdir -p "$dir/lib/modules"
truncate -s 3G "$img.tmp"
mkfs.ext4 -q -F -L untorn-root -d "$dir" "$img.tmp" >&2
mv "$img.tmp" "$img"
rm -rf "$dir"
# Older images of this variant are unreachable once the inputs changed.
find "$UNTORN_CACHE/images" -maxdepth 1 -regextype egrep \
	-regex ".*/$prefix-[0-9a-f]{12}\.img" ! -path "$img" -delete
echo "$img"
