#!/bin/bash
# Power-cut torture, in the guest: for each configuration, a fresh tearblk
# device with that configuration's geometry, N cuts under atomic writes
# (torture), then M cuts under the same workload with plain writes (the
# negative control, which must tear). Prints TAP lines and a table.
#
#   tests/crash/crash.sh [--cuts N] [--control-cuts M] [--seed S] [CONFIG...]
#
# Defaults: N=20, M=max(20, N/10), S=1. Configurations: see CONFIGS below.
# Every failure line carries the seed and the command that replays it.
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib/common.sh"

cuts=20 control_cuts= seed=1
while [ $# -gt 0 ]; do
	case "$1" in
	--cuts) cuts=$2; shift 2 ;;
	--control-cuts) control_cuts=$2; shift 2 ;;
	--seed) seed=$2; shift 2 ;;
	-*) echo "usage: $0 [--cuts N] [--control-cuts M] [--seed S] [CONFIG...]" >&2; exit 2 ;;
	*) break ;;
	esac
done
[ -n "$control_cuts" ] || control_cuts=$(( cuts / 10 > 20 ? cuts / 10 : 20 ))

# name | tearblk geometry | fs | mkfs arguments | unit | torture options
# The tearing granularity (lbs) is 512 bytes everywhere, so that a plain
# write of even one 4 KiB block can tear. Hardware atomic limits decide
# which XFS path a write takes: up to 64 KiB on the hardware configurations,
# 4 KiB (below the 16 KiB unit) on xfs-sw, exactly the unit on xfs-hybrid
# (hardware when the mapping allows, software otherwise). With --snapshots
# the workload reflinks the file now and then, so writes meet shared
# extents and the hybrid switches paths under the cuts. With --punch the
# workload punches a block out of a unit before writing it, so that the
# write meets a hole next to written blocks (XFS: the software path;
# ext4 bigalloc: the zero-and-allocate slow path). xfs-sw-keep is xfs-sw
# without snapshots: a reflinked file keeps no staging, so only there do
# the software writes keep the blocks they replace as the next write's
# staging (patch 21) all through the run.
CONFIGS='
raw|lbs=512,awu_min=512,awu_max=64k|raw||16k
xfs-hw|lbs=512,awu_min=512,awu_max=64k|xfs|-b size=4096 -m reflink=0|4k
xfs-sw|lbs=512,awu_min=512,awu_max=4k|xfs|-b size=4096 -m reflink=1|16k|--snapshots --punch 4k
xfs-sw-keep|lbs=512,awu_min=512,awu_max=4k|xfs|-b size=4096 -m reflink=1|16k|--punch 4k
xfs-hybrid|lbs=512,awu_min=512,awu_max=16k|xfs|-b size=4096 -m reflink=1|16k|--snapshots --punch 4k
xfs-16k|lbs=512,awu_min=512,awu_max=64k|xfs|-b size=16384 -m reflink=0|16k
ext4|lbs=512,awu_min=512,awu_max=64k|ext4|-b 4096|4k
ext4-bigalloc|lbs=512,awu_min=512,awu_max=64k|ext4|-b 4096 -O bigalloc -C 16384|16k|--punch 4k
'

require_cmd torture mkfs.xfs mkfs.ext4 xfs_repair e2fsck
require_module tearblk
modprobe tearblk || skip_all "cannot load tearblk"
# Recovery and I/O errors after every cut would flood a serial console:
# keep warnings and worse (what the VM runner looks for), drop the rest.
console_level=$(cut -f1 /proc/sys/kernel/printk)
dmesg -n 5

# new_tear_dev SPEC: create a tearblk device, print its node.
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

# Which path each XFS atomic write took, from the xfs_atomic_write_path
# tracepoint: "hw 1234, size 567" (reasons other than hw are the software
# path's). The buffer is sized for a long run; an overrun is reported.
trace=/sys/kernel/tracing
path_event=$trace/events/xfs/xfs_atomic_write_path/enable
paths_start() {
	[ -w "$path_event" ] || return 0
	echo 65536 > "$trace/buffer_size_kb"
	echo 1 > "$path_event"
	echo > "$trace/trace"
}
paths_stop() {
	local overrun
	[ -w "$path_event" ] || return 0
	echo 0 > "$path_event"
	sed -n 's/.*xfs_atomic_write_path:.* path \([a-z_]*\)$/\1/p' "$trace/trace" |
		sort | uniq -c | awk '{ printf "%s%s %s", sep, $2, $1; sep = ", " }'
	overrun=$(awk '/^overrun:/ { n += $2 } END { print n + 0 }' "$trace"/per_cpu/cpu*/stats)
	[ "$overrun" = 0 ] || printf ' (trace overrun: %s events lost)' "$overrun"
	echo > "$trace/trace"
}

# field NAME LINE: the value of NAME=... in a torture summary line.
field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$2"; }

selected=("$@")
table=()
while IFS='|' read -r name geom fs mkfs unit topts; do
	[ -n "$name" ] || continue
	if [ ${#selected[@]} -gt 0 ] && ! printf '%s\n' "${selected[@]}" | grep -qx "$name"; then
		continue
	fi
	dev=$(new_tear_dev "$geom") || { t_fail "$name: cannot create a tearblk device ($geom)"; continue; }
	args=(--dev "$dev" --fs "$fs" --unit "$unit" --seed "$seed" --name "$name")
	[ -z "$mkfs" ] || args+=(--mkfs "$mkfs")
	# shellcheck disable=SC2206
	[ -z "$topts" ] || args+=($topts)
	start=$(date +%s)
	[ "$fs" != xfs ] || paths_start
	out=$(torture "${args[@]}" --cuts "$cuts" 2>&1)
	rc=$?
	secs=$(( $(date +%s) - start ))
	paths=-
	[ "$fs" != xfs ] || paths=$(paths_stop)
	sum=$(grep '^torture: ' <<<"$out" | tail -n 1)
	if [ $rc = 77 ]; then
		t_skip "$name" "${sum#*SKIP: }"
		table+=("| $name | skipped: ${sum#*SKIP: } | | | | | | |")
		continue
	fi
	torn=$(field torn "$sum") stale=$(field stale "$sum")
	fsck=$(field fsck_failures "$sum") dtorn=$(field device_torn "$sum")
	punches=$(field punches "$sum") pseen=$(field punch_seen "$sum")
	extra=
	[ "${punches:-0}" = 0 ] || extra="; $punches punched holes, $pseen seen as the old version with the hole"
	[ "$(field snapshots "$sum")" = 0 ] || extra="$extra; $(field snapshots "$sum") reflink snapshots"
	replay="tests/crash/crash.sh --cuts $cuts --seed $seed $name"
	if [ $rc = 0 ] && [ -n "$torn" ]; then
		t_ok "$name: $cuts cuts under RWF_ATOMIC: 0 torn, 0 stale, fsck clean (device tore $dtorn other writes; ${secs}s; XFS paths: $paths$extra)"
	else
		t_fail "$name: $cuts cuts under RWF_ATOMIC: torn ${torn:-?}, stale ${stale:-?}, fsck failures ${fsck:-?} (exit $rc); replay: $replay"
		printf '%s\n' "$out" | grep -v '^torture: ' | tail -n 60 | t_diag
	fi

	# The control drops --snapshots: a plain write to a shared extent
	# goes out of place on XFS and cannot tear, which would only dilute
	# the evidence that the checker sees tears.
	cargs=()
	for a in "${args[@]}"; do [ "$a" = --snapshots ] || cargs+=("$a"); done
	cout=$(torture "${cargs[@]}" --cuts "$control_cuts" --control 2>&1)
	crc=$?
	csum=$(grep '^torture: ' <<<"$cout" | tail -n 1)
	ctorn=$(field torn_cuts "$csum")
	# A checker that never sees a tear is broken: the control must tear
	# in a clear share (a quarter or more) of its cuts.
	if [ $crc = 0 ] && [ -n "$ctorn" ] && [ "$ctorn" -gt 0 ] &&
	   [ $((ctorn * 4)) -ge "$control_cuts" ]; then
		t_ok "$name control: plain writes torn in $ctorn of $control_cuts cuts"
	else
		t_fail "$name control: plain writes torn in ${ctorn:-?} of $control_cuts cuts (exit $crc): the checker does not see tears; replay: $replay"
		printf '%s\n' "$cout" | tail -n 5 | t_diag
	fi
	# The floor check needs its own control: on the raw device, a disk
	# that ignores flushes must show units older than their fsync.
	if [ "$fs" = raw ]; then
		echo 0 > "/sys/block/${dev##*/}/tear/honour_flush"
		lout=$(torture "${args[@]}" --cuts "$control_cuts" --name "$name-lying" 2>&1)
		echo 1 > "/sys/block/${dev##*/}/tear/honour_flush"
		lsum=$(grep '^torture: ' <<<"$lout" | tail -n 1)
		lstale=$(field stale_cuts "$lsum")
		if [ -n "$lstale" ] && [ "$lstale" -gt 0 ] && [ $((lstale * 4)) -ge "$control_cuts" ]; then
			t_ok "$name lying-disk control: units older than their fsync found in $lstale of $control_cuts cuts"
		else
			t_fail "$name lying-disk control: stale units in ${lstale:-?} of $control_cuts cuts: the floor check does not see lost durable data"
			printf '%s\n' "$lout" | tail -n 5 | t_diag
		fi
		ctorn="$ctorn / $control_cuts (stale with lying flushes: ${lstale:-?} / $control_cuts)"
	else
		ctorn="$ctorn / $control_cuts"
	fi
	table+=("| $name | $cuts | ${torn:-?} | ${stale:-?} | ${fsck:-?} | $ctorn | $paths | ${secs}s |")
done <<<"$CONFIGS"

echo "# crash torture, seed $seed, kernel $(uname -r)"
echo "# | configuration | cuts | torn units | stale units | fsck failures | control: cuts with tears | XFS write paths | time |"
echo "# |---|---|---|---|---|---|---|---|"
printf '# %s\n' "${table[@]}"
modprobe -r tearblk 2>/dev/null
dmesg -n "$console_level"
t_done
