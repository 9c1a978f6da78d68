#!/usr/bin/env bash
# make deb-check: the README's install, reboot, check and roll-back steps
# for the packages of `make deb`, on a Debian 12 system booted in QEMU
# instead of a real machine.
#
#   1. A Debian 12 (bookworm) system with its stock kernel
#      (linux-image-amd64), made once with debootstrap and kept.
#   2. A copy of it; in a chroot, `apt install ./linux-image-...deb
#      ./linux-headers-...deb`, whose maintainer scripts run depmod and
#      make the initramfs, as on a real machine.
#   3. Boot the installed kernel and its initramfs (QEMU, an NVMe disk of
#      4 KiB blocks): `untorn info`, then on XFS 4 KiB atomic writes (the
#      hardware path) and 16 KiB ones (the software path), verified, with
#      the filesystem's counters showing both paths.
#   4. Roll back: `apt remove` of the packages in the chroot leaves no
#      kernel, initramfs, module or headers (`dpkg --purge` nothing at all); the
#      stock kernel boots, and on it the same atomic write to a file is
#      refused.
#
# DEB_CHECK_DIR=DIR checks the linux-image package in DIR instead of
# $UNTORN_CACHE/deb. Needs root (debootstrap, chroot) and about 3 GiB.
set -euo pipefail
. "$(dirname "$0")/common.sh"

[ "$(id -u)" = 0 ] || die "deb-check needs root (debootstrap, chroot)"
command -v debootstrap >/dev/null || die "debootstrap missing; run scripts/install-deps.sh"
pkgdir=${DEB_CHECK_DIR:-$UNTORN_CACHE/deb}
deb=$(find "$pkgdir" -maxdepth 1 -name 'linux-image-*.deb' ! -name '*-dbg_*' | sort | tail -n 1)
[ -n "$deb" ] || die "no linux-image package in $pkgdir: run make deb first"
pkg=$(dpkg-deb -f "$deb" Package)
# The kernel release, from the kernel the package installs (Debian's own
# packages name it differently from the package: -unsigned).
krel=$(dpkg-deb -c "$deb" | sed -n 's%.* \./boot/vmlinuz-\(.*\)$%\1%p' | head -n 1)
[ -n "$krel" ] || die "$deb installs no /boot/vmlinuz-*"
# The headers package of the same release, installed beside the image
# as the README says (Debian's own come as a separate source: absent then).
hdeb=$(find "$pkgdir" -maxdepth 1 -name "linux-headers-${krel}_*.deb" | sort | tail -n 1)
hpkg=
[ -z "$hdeb" ] || hpkg=$(dpkg-deb -f "$hdeb" Package)
untorn=$UNTORN_TOP/build/bin/untorn
[ -x "$untorn" ] || die "$untorn missing: run make build"

# Debian 12: the system the packages are for.
suite=bookworm
dir=$UNTORN_CACHE/deb-check
mkdir -p "$dir"
base_pkgs=kmod,xfsprogs,procps
stock_pkgs="linux-image-amd64 initramfs-tools"
hash=$(echo "$suite $GUEST_MIRROR $base_pkgs $stock_pkgs" | sha256sum | cut -c1-12)
system=$dir/system-$suite-$hash
mounted=()
cleanup() {
	local m
	for m in "${mounted[@]}"; do umount -l "$m" 2>/dev/null || true; done
}
trap cleanup EXIT

# in_chroot CMD...: CMD in the copy, with /proc, /sys and /dev as the
# maintainer scripts of a kernel package expect them.
in_chroot() {
	local m
	for m in proc sys dev; do
		if ! mountpoint -q "$work/$m"; then
			mount --bind "/$m" "$work/$m"
			mounted+=("$work/$m")
		fi
	done
	DEBIAN_FRONTEND=noninteractive chroot "$work" "$@"
}
leave_chroot() {
	cleanup
	mounted=()
}

if [ ! -d "$system" ]; then
	note "debootstrap $suite with its stock kernel into $system (a few minutes, once)"
	rm -rf "$system.tmp"
	log=$dir/debootstrap.log
	if ! debootstrap --variant=minbase --include="$base_pkgs" \
		"$suite" "$system.tmp" "$GUEST_MIRROR" >"$log" 2>&1; then
		tail -n 30 "$log" >&2
		die "debootstrap failed; full log in $log"
	fi
	cp /etc/resolv.conf "$system.tmp/etc/resolv.conf"
	printf '#!/bin/sh\nexit 101\n' >"$system.tmp/usr/sbin/policy-rc.d"
	chmod 0755 "$system.tmp/usr/sbin/policy-rc.d"
	work=$system.tmp	# in_chroot's root while it is made
	# shellcheck disable=SC2086 # a list of packages
	if ! in_chroot apt-get install -y -q --no-install-recommends $stock_pkgs >>"$log" 2>&1; then
		leave_chroot
		tail -n 30 "$log" >&2
		die "installing the stock kernel failed; full log in $log"
	fi
	in_chroot apt-get clean
	leave_chroot
	rm -f "$system.tmp/usr/sbin/policy-rc.d"
	mv "$system.tmp" "$system"
fi
find "$dir" -maxdepth 1 -name "system-$suite-*" ! -path "$system" -exec rm -rf {} +
stock=$(basename "$(ls -1 "$system"/boot/vmlinuz-* | sort -V | tail -n 1)")
stock=${stock#vmlinuz-}

# The guest's PID 1 for both boots: what the README asks a user to check
# after the reboot, printed on the console as "deb-check: " lines.
write_init() {
	cat >"$work/usr/local/sbin/deb-check-init" <<'EOF'
#!/bin/sh
PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs tmpfs /tmp
say() { echo "deb-check: $*"; }
say "kernel $(uname -r)"
modprobe nvme
modprobe xfs
i=0
while [ ! -b /dev/nvme0n1 ] && [ $i -lt 150 ]; do sleep 0.2; i=$((i + 1)); done
untorn info /dev/nvme0n1
mkfs.xfs -q -f /dev/nvme0n1 && mkdir -p /mnt && mount /dev/nvme0n1 /mnt && : >/mnt/f
untorn info /mnt/f
if untorn write --unit 4k --count 64 /mnt/f; then say "write 4k: ok"; else say "write 4k: failed $?"; fi
if untorn write --unit 16k --count 16 --offset 1m /mnt/f; then say "write 16k: ok"; else say "write 16k: failed $?"; fi
if untorn verify --unit 4k --count 64 /mnt/f && untorn verify --unit 16k --count 16 --offset 1m /mnt/f; then
	say "verify: ok"
else
	say "verify: failed"
fi
d=/sys/fs/xfs/nvme0n1/atomic_write
if [ -d $d ]; then say "counters hw_writes=$(cat $d/hw_writes) sw_writes=$(cat $d/sw_writes)"; fi
umount /mnt
say "modules $(ls /lib/modules | tr '\n' ' ')"
say done
echo b >/proc/sysrq-trigger
EOF
	chmod 0755 "$work/usr/local/sbin/deb-check-init"
	install -m 0755 "$untorn" "$work/usr/local/bin/untorn"
}

# boot KREL LOG: boot the copy's /boot/vmlinuz-KREL with its initramfs.
boot() {
	local k=$1 log=$2 img=$dir/root.img
	rm -f "$img"
	truncate -s 3G "$img"
	mkfs.ext4 -q -F -d "$work" "$img"
	truncate -s 1G "$dir/nvme.img"
	timeout -k 10 900 qemu-system-x86_64 -accel tcg,thread=multi -cpu max -smp 2 -m 2048 \
		-display none -monitor none -no-reboot -nodefaults \
		-kernel "$work/boot/vmlinuz-$k" -initrd "$work/boot/initrd.img-$k" \
		-append "console=ttyS0 root=/dev/vda rw init=/usr/local/sbin/deb-check-init panic=-1" \
		-drive "file=$img,if=none,id=root,format=raw" -device virtio-blk-pci,drive=root \
		-drive "file=$dir/nvme.img,if=none,id=nvme,format=raw,cache=unsafe" \
		-device nvme,serial=deb-check,drive=nvme,logical_block_size=4096,physical_block_size=4096 \
		-serial "file:$log" </dev/null || true
	rm -f "$img" "$dir/nvme.img"
	grep '^deb-check: ' "$log" | tr -d '\r' || true
}

fail=0
expect() {
	if grep -q "$2" "$3"; then
		echo "ok - $1"
	else
		echo "not ok - $1"
		fail=1
	fi
}

debs=("$deb")
[ -z "$hdeb" ] || debs+=("$hdeb")
names=$(for d in "${debs[@]}"; do printf './%s ' "$(basename "$d")"; done)
note "installing ${names% } on a copy of Debian 12 (stock kernel $stock)"
work=$dir/work
rm -rf "$work"
cp -a "$system" "$work"
cp "${debs[@]}" "$work/tmp/"
if in_chroot apt-get install -y -q $(printf '/tmp/%s ' "${debs[@]##*/}") >"$dir/install.log" 2>&1; then
	echo "ok - apt install ${names% } on Debian 12"
else
	echo "not ok - apt install ${names% } on Debian 12 (log: $dir/install.log)"
	tail -n 20 "$dir/install.log" | sed 's/^/#   /'
	exit 1
fi
leave_chroot
for d in "${debs[@]}"; do rm -f "$work/tmp/${d##*/}"; done
files=("boot/vmlinuz-$krel" "boot/initrd.img-$krel" "lib/modules/$krel/modules.dep")
# The headers: the tree external modules build against, and the
# build link in /lib/modules that DKMS and module Makefiles follow.
[ -z "$hdeb" ] || files+=("usr/src/linux-headers-$krel/Makefile" "usr/src/linux-headers-$krel/include/generated/autoconf.h")
for f in "${files[@]}"; do
	if [ -s "$work/$f" ]; then
		echo "ok - installed /$f"
	else
		echo "not ok - /$f missing after the install"
		fail=1
	fi
done
if [ -n "$hdeb" ]; then
	link=$(readlink "$work/lib/modules/$krel/build" || true)
	if [ "$link" = "/usr/src/linux-headers-$krel" ]; then
		echo "ok - /lib/modules/$krel/build points to the headers"
	else
		echo "not ok - /lib/modules/$krel/build points to '$link', not /usr/src/linux-headers-$krel"
		fail=1
	fi
fi
write_init
note "booting $krel"
log=$dir/boot-untorn.log
boot "$krel" "$log"
expect "boots $krel" "^deb-check: kernel $krel" "$log"
expect "4 KiB atomic writes to a file on XFS" '^deb-check: write 4k: ok' "$log"
expect "16 KiB atomic writes to a file on XFS" '^deb-check: write 16k: ok' "$log"
expect "every unit verified" '^deb-check: verify: ok' "$log"
expect "hardware and software paths both counted" '^deb-check: counters hw_writes=[1-9][0-9]* sw_writes=[1-9]' "$log"

note "rolling back to the stock kernel $stock"
# left_of WHAT FIND-ARGS...: ok when find in the copy names nothing.
left_of() {
	local what=$1 found
	shift
	# A directory the removal took away entirely makes find fail: that
	# is nothing left, not an error.
	found=$(find "$@" 2>/dev/null | sed "s%^$work%%" || true)
	if [ -z "$found" ]; then
		echo "ok - $what"
	else
		echo "not ok - $what:"
		sed 's/^/#   /' <<<"$found"
		fail=1
	fi
}
in_chroot apt-get remove -y -q "$pkg" $hpkg >"$dir/remove.log" 2>&1 || { echo "not ok - apt remove $pkg $hpkg"; fail=1; }
leave_chroot
left_of "apt remove leaves no kernel, initramfs, module or headers of $krel" \
	"$work/boot" "$work/lib/modules/$krel" "$work/usr/src" \
	'(' -path "$work/boot/*$krel*" -o -name '*.ko*' -o -path "$work/usr/src/*$krel*" -prune ')'
# What depmod made beside the modules stays until a purge, as with
# Debian's own kernel packages. dpkg, not apt: a package that came from a
# file and left nothing to purge (the headers) is unknown to apt by now.
in_chroot dpkg --purge "$pkg" $hpkg >>"$dir/remove.log" 2>&1 || { echo "not ok - dpkg --purge $pkg $hpkg"; fail=1; }
leave_chroot
left_of "dpkg --purge leaves nothing of $krel" "$work/boot" "$work/lib/modules" "$work/usr/src" -name "*$krel*" -prune
log=$dir/boot-stock.log
boot "$stock" "$log"
expect "the stock kernel $stock boots after the rollback" "^deb-check: kernel $stock" "$log"
expect "on the stock kernel the same atomic file write is refused" '^deb-check: write 4k: failed' "$log"
rm -rf "$work"
[ $fail = 0 ] || die "deb-check failed; console logs in $dir"
note "deb-check passed: $pkg installs, boots, writes atomically and rolls back"
