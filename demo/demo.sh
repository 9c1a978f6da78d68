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
run untorn write --unit 4k --count 1024 --gen 1 "$UNTORN_DEV_NVME0"
run untorn verify --unit 4k --count 1024 --gen 1 "$UNTORN_DEV_NVME0"

say "scsi_debug with a 64 KiB atomic unit (SCSI WRITE ATOMIC(16))"
scsi_debug_load $SD_GEOM_512_64K
run untorn info "$SD_DEV"
run untorn write --unit 64k --count 256 --gen 7 --engine io_uring "$SD_DEV"
run untorn verify --unit 64k --count 256 --gen 7 "$SD_DEV"
say "A 128 KiB write is larger than the unit: refused, never torn"
run untorn write --unit 128k --count 1 --gen 8 "$SD_DEV"
echo "(exit $?)"
scsi_debug_unload

say "A plain virtio disk offers no protection: RWF_ATOMIC is refused"
run untorn info "$UNTORN_DEV_PLAIN"
run untorn write --unit 4k --count 1 "$UNTORN_DEV_PLAIN"
echo "(exit $?)"

say "Files on XFS and ext4 (Linux 6.12 has no atomic writes on files yet)"
for fs in xfs ext4; do
	mkdir -p /mnt/$fs
	if [ $fs = xfs ]; then mkfs.xfs -q -f "$UNTORN_DEV_NVME1"; else mkfs.ext4 -q -F "$UNTORN_DEV_NVME1"; fi
	mount "$UNTORN_DEV_NVME1" /mnt/$fs
	run untorn info /mnt/$fs/
	run untorn write --unit 4k --count 16 /mnt/$fs/table
	echo "(exit $?)"
	umount /mnt/$fs
done
exit 0
