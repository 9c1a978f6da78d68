#!/bin/bash
# The untorn demo, run in the guest by 'make demo': what torn-write
# protection each standard disk offers, and atomic writes verified.
. "$UNTORN_TOP/tests/lib/common.sh"
set -u
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }

say "Kernel $(uname -r), guest userspace $(. /etc/os-release; echo "$PRETTY_NAME")"

say "NVMe disk: QEMU 7.2 gives a hardware atomic unit of one 4 KiB block"
run untorn info "$UNTORN_DEV_NVME0"
run untorn write --force --unit 4k --count 1024 --gen 1 "$UNTORN_DEV_NVME0"
run untorn verify --unit 4k --count 1024 --gen 1 "$UNTORN_DEV_NVME0"

say "scsi_debug with a 64 KiB atomic unit (SCSI WRITE ATOMIC(16))"
scsi_debug_load $SD_GEOM_512_64K
run untorn info "$SD_DEV"
run untorn write --force --unit 64k --count 256 --gen 7 --engine io_uring "$SD_DEV"
run untorn verify --unit 64k --count 256 --gen 7 "$SD_DEV"
say "A 128 KiB write is larger than the unit: refused, never torn"
run untorn write --force --unit 128k --count 1 --gen 8 "$SD_DEV"
echo "(exit $?)"
scsi_debug_unload

say "A plain virtio disk offers no protection: RWF_ATOMIC is refused"
run untorn info "$UNTORN_DEV_PLAIN"
run untorn write --force --unit 4k --count 1 "$UNTORN_DEV_PLAIN"
echo "(exit $?)"

say "Files on XFS and ext4: atomic writes through the filesystem"
echo "XFS (reflink, the mkfs default): 16 KiB pages, larger than the NVMe's"
echo "4 KiB unit, staged in copy-on-write blocks and switched in with one"
echo "transaction. ext4: one 4 KiB block, in hardware."
for fs in xfs ext4; do
	mkdir -p /mnt/$fs
	if [ $fs = xfs ]; then
		mkfs.xfs -q -f -b size=4096 "$UNTORN_DEV_NVME1"
		unit=16k count=512 too_big=2m
	else
		mkfs.ext4 -q -F -b 4096 "$UNTORN_DEV_NVME1"
		unit=4k count=2048 too_big=8k
	fi
	mount "$UNTORN_DEV_NVME1" /mnt/$fs
	dmesg | grep -o "EXT4-fs (${UNTORN_DEV_NVME1##*/}): supports atomic writes.*" | tail -1
	run untorn write --force --unit $unit --count $count --gen 1 /mnt/$fs/table
	run untorn info /mnt/$fs/table
	echo "\$ xfs_io -c 'statx -r -m 0x10000' /mnt/$fs/table | grep atomic"
	xfs_io -c "statx -r -m 0x10000" /mnt/$fs/table | grep atomic
	if [ $fs = xfs ]; then
		echo 1 >/sys/kernel/tracing/events/xfs/xfs_atomic_write_path/enable
		echo >/sys/kernel/tracing/trace
		run xfs_io -d -c "pwrite -q -A -D -V1 -b 16k 0 16k" -c "pwrite -q -A -D -V1 -b 4k 16k 4k" /mnt/$fs/table
		echo "which path each write took (tracepoint xfs_atomic_write_path):"
		grep -o 'pos .*' /sys/kernel/tracing/trace
		echo 0 >/sys/kernel/tracing/events/xfs/xfs_atomic_write_path/enable
		echo "production needs no tracepoint: the counters, and a policy that"
		echo "refuses the software path instead (EMEDIUMTYPE, nothing written):"
		run untorn stats /mnt/$fs
		echo deny >/sys/fs/xfs/${UNTORN_DEV_NVME1##*/}/atomic_write/fallback_policy
		run xfs_io -d -c "pwrite -q -A -D -V1 -b 16k 32k 16k" /mnt/$fs/table
		run xfs_io -d -c "pwrite -q -A -D -V1 -b 4k 32k 4k" /mnt/$fs/table
		grep -o "atomic_write_fallback=deny" /proc/mounts
		echo allow >/sys/fs/xfs/${UNTORN_DEV_NVME1##*/}/atomic_write/fallback_policy
	fi
	run untorn write --force --unit $unit --count $count --gen 2 --engine io_uring --dsync /mnt/$fs/table
	say "$fs: power cut (filesystem shutdown) while atomic writes stream in"
	untorn write --force --unit $unit --count $count --gen 3 --loops 100 /mnt/$fs/table 2>/dev/null &
	sleep 1
	run xfs_io -x -c shutdown /mnt/$fs
	wait
	umount /mnt/$fs
	mount "$UNTORN_DEV_NVME1" /mnt/$fs
	echo "after remount, every unit holds one whole generation:"
	run untorn verify --unit $unit --count $count /mnt/$fs/table
	say "$fs: a write larger than the file's unit is refused, not torn"
	run untorn write --force --unit $too_big --count 1 /mnt/$fs/table
	echo "(exit $?)"
	umount /mnt/$fs
done

say "power loss that tears: tearblk (patch 14) cuts power under 16 KiB writes"
echo "A RAM disk with a volatile cache: at the cut, an atomic write survives"
echo "whole or not at all, any other write may keep only some of its sectors."
echo "Ten cuts each: atomic writes on the raw disk and on XFS (software path),"
echo "then the same workload with plain writes, which must tear:"
run tests/crash/crash.sh --cuts 10 raw xfs-sw
exit 0
