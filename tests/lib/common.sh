# Helpers for test cases; sourced by each case under tests/cases/.
#
# A case prints TAP-like lines ("ok - what", "not ok - what",
# "ok - what # SKIP why") and "#" comment lines. tests/guest-run.sh numbers
# the lines and prefixes the case name; the host runner sums them up.

# shellcheck disable=SC2034
UT_CASE=${UT_CASE:-$(basename "$0")}
UT_FAILED=0

t_ok()   { echo "ok - $*"; }
t_fail() { echo "not ok - $*"; UT_FAILED=1; }
t_skip() { local what=$1; shift; echo "ok - $what # SKIP $*"; }
t_diag() { sed 's/^/#   /'; }

# t_run WHAT CMD...: ok when CMD exits 0; its output becomes diagnostics
# on failure.
t_run() {
	local what=$1 out rc
	shift
	out=$("$@" 2>&1)
	rc=$?
	if [ $rc = 0 ]; then
		t_ok "$what"
	else
		t_fail "$what (exit $rc)"
		printf '%s\n' "$out" | tail -n 20 | t_diag
	fi
	return $rc
}

# t_run_fails WHAT CMD...: ok when CMD fails (a refusal that must happen).
t_run_fails() {
	local what=$1 out rc
	shift
	out=$("$@" 2>&1)
	rc=$?
	if [ $rc != 0 ]; then
		t_ok "$what"
	else
		t_fail "$what (succeeded, must fail)"
		printf '%s\n' "$out" | tail -n 20 | t_diag
	fi
}

# The whole case is skipped: one SKIP line, exit 0.
skip_all() {
	t_skip "$UT_CASE" "$*"
	exit 0
}

t_done() { exit "$UT_FAILED"; }

# Requirements, blktests style: skip the case when they are absent.
require_cmd() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null || skip_all "requires the command $c"
	done
}
require_dev() {
	local var=$1 dev=${!1:-}
	[ -n "$dev" ] && [ -b "$dev" ] || skip_all "requires the standard disk \$$var"
}
require_module() {
	modprobe -n "$1" 2>/dev/null || skip_all "requires the kernel module $1"
}

# scsi_debug with an atomic-write geometry. Sets SD_DEV to the new disk.
# delay=0: the default delay caps scsi_debug near 250 I/O per second.
scsi_debug_load() {
	local i
	scsi_debug_unload
	modprobe scsi_debug delay=0 dev_size_mb="${SD_SIZE_MB:-256}" "$@" ||
		return 1
	for i in $(seq 50); do
		SD_DEV=$(scsi_debug_disk) && [ -b "$SD_DEV" ] && return 0
		sleep 0.1
	done
	echo "scsi_debug loaded but no disk appeared" >&2
	return 1
}
scsi_debug_disk() {
	local d
	for d in /sys/bus/pseudo/drivers/scsi_debug/adapter*/host*/target*/*/block/*; do
		[ -e "$d" ] && { echo "/dev/${d##*/}"; return 0; }
	done
	return 1
}
scsi_debug_unload() {
	grep -q '^scsi_debug ' /proc/modules || return 0
	umount -q "${SD_DEV:-/nonexistent}" 2>/dev/null
	modprobe -r scsi_debug
}

# new_tear_dev SPEC: create a tearblk device (512 MiB unless SPEC has size=),
# print its node.
new_tear_dev() {
	local before after d
	before=$(ls -d /sys/block/tear* 2>/dev/null)
	echo "size=512M,$1" > /sys/module/tearblk/parameters/add || return 1
	udevadm settle 2>/dev/null
	after=$(ls -d /sys/block/tear* 2>/dev/null)
	for d in $after; do
		grep -qx "$d" <<<"$before" || { echo "/dev/${d##*/}"; return 0; }
	done
	return 1
}

# Geometries used across the suite.
SD_GEOM_512_64K="sector_size=512 atomic_wr=1 atomic_wr_gran=8 atomic_wr_align=8 atomic_wr_max_length=128"
SD_GEOM_4K_16K_64K="sector_size=4096 atomic_wr=1 atomic_wr_gran=4 atomic_wr_align=4 atomic_wr_max_length=16"

# A scratch filesystem on DEV at $SCRATCH_MNT: fs_mkfs_mount FS DEV [mkfs args].
SCRATCH_MNT=/mnt/scratch
fs_mkfs_mount() {
	local fs=$1 dev=$2
	shift 2
	fs_unmount
	mkdir -p "$SCRATCH_MNT"
	case "$fs" in
	xfs) mkfs.xfs -q -f "$@" "$dev" ;;
	ext4) mkfs.ext4 -q -F "$@" "$dev" ;;
	*) echo "fs_mkfs_mount: unknown fs $fs" >&2; return 1 ;;
	esac || return 1
	SCRATCH_FS=$fs SCRATCH_DEV=$dev
	fs_mount
}
fs_mount() {
	mount ${SCRATCH_MOUNT_OPTS:+-o "$SCRATCH_MOUNT_OPTS"} "$SCRATCH_DEV" "$SCRATCH_MNT"
}
fs_unmount() {
	mountpoint -q "$SCRATCH_MNT" 2>/dev/null && umount "$SCRATCH_MNT"
	return 0
}
# Offline check: xfs_repair -n / e2fsck -fn, quiet unless it finds something.
fs_check() {
	case "$SCRATCH_FS" in
	xfs) xfs_repair -n ${SCRATCH_RTDEV:+-r "$SCRATCH_RTDEV"} "$SCRATCH_DEV" ;;
	ext4) e2fsck -fn "$SCRATCH_DEV" ;;
	esac
}
