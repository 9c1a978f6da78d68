# The per-filesystem checks of atomic writes on files, shared by the fs/*
# cases: fs_atomic_suite LABEL UNIT_MIN UNIT_MAX [CAP [MAX_OPT]], run
# against the filesystem mounted at $SCRATCH_MNT. statx must report
# UNIT_MIN..UNIT_MAX (and stx_atomic_write_unit_max_opt = MAX_OPT if given);
# the write matrix, xfs_io and fio run with sizes up to CAP (default
# UNIT_MAX), since a software limit of megabytes would make them slow.
# FS_ATOMIC_FILE_ARGS adds atomic-file-check options.

statx_field() { sed -n "s/^stat\.$2 = //p" <<<"$1"; }

# The file's statx atomic write unit_max, through xfs_io.
statx_unit_max() {
	statx_field "$(xfs_io -c "statx -r -m 0x10000" "$1" 2>&1)" \
		atomic_write_unit_max
}

fs_atomic_suite() {
	local label=$1 umin=$2 umax=$3 cap=${4:-$3} opt=${5:-} f out len
	f=$SCRATCH_MNT/contract
	# A written file large enough for every offset atomic-check uses.
	untorn write --force --no-atomic --unit "$umax" --count 8 "$f" >/dev/null ||
		t_fail "$label: prefill $f"
	atomic-check --name "$label" --expect-unit "$umin:$umax" \
		${opt:+--expect-opt "$opt"} "$f" || UT_FAILED=1
	# shellcheck disable=SC2086
	atomic-file-check --name "$label" --max "$cap" ${FS_ATOMIC_FILE_ARGS:-} \
		"$SCRATCH_MNT" || UT_FAILED=1

	# xfs_io and fio, as the real clients.
	out=$(xfs_io -c "statx -r -m 0x10000" "$f" 2>&1)
	if [ "$(statx_field "$out" atomic_write_unit_min)" = "$umin" ] &&
	   [ "$(statx_field "$out" atomic_write_unit_max)" = "$umax" ] &&
	   [ "$(statx_field "$out" atomic_write_segments_max)" = 1 ]; then
		t_ok "$label: xfs_io statx -r: unit $umin..$umax, segments 1"
	else
		t_fail "$label: xfs_io statx -r"
		grep atomic <<<"$out" | t_diag
	fi
	for ((len = umin; len <= cap; len *= 2)); do
		t_run "$label: xfs_io pwrite -A -D -V1 $len bytes onto a new file" \
			xfs_io -f -d -c "pwrite -q -A -D -V1 -b $len $((len * 4)) $len" \
				"$SCRATCH_MNT/xfs_io.$len"
	done
	t_run_fails "$label: xfs_io pwrite -A of twice unit_max is refused" \
		xfs_io -f -d -c "pwrite -q -A -D -V1 -b $((umax * 2)) 0 $((umax * 2))" \
			"$SCRATCH_MNT/xfs_io.big"
	for e in pvsync2 libaio io_uring; do
		t_run "$label: fio atomic=1 bs=$cap $e with verify" \
			fio --name=atomic --directory="$SCRATCH_MNT" --filename=fio.$e \
				--direct=1 --atomic=1 --rw=randwrite --bs="$cap" \
				--size=4M --ioengine=$e --iodepth=4 --verify=crc32c \
				--do_verify=1 --verify_fatal=1
	done
	rm -f "$SCRATCH_MNT"/fio.* "$SCRATCH_MNT"/xfs_io.*
}

# Atomic writes stream into a file while the filesystem is shut down at a
# random moment; after remount every unit holds one whole generation and
# the offline checker is clean. xfs_io's shutdown ioctl is also ext4's
# EXT4_IOC_SHUTDOWN (same number).
fs_crash_check() {
	local label=$1 unit=$2 rounds=${3:-3} r count=256 pid delay out
	local f=$SCRATCH_MNT/crash
	for ((r = 1; r <= rounds; r++)); do
		untorn write --force --unit "$unit" --count $count --gen 1 "$f" &&
			sync "$f" || { t_fail "$label: crash round $r: setup"; return; }
		untorn write --force --unit "$unit" --count $count --gen 2 --loops 1000 "$f" \
			>/dev/null 2>&1 &
		pid=$!
		delay=$((RANDOM % 1500 + 200))
		sleep "$(printf '%d.%03d' $((delay / 1000)) $((delay % 1000)))"
		xfs_io -x -c shutdown "$SCRATCH_MNT"
		wait $pid
		umount "$SCRATCH_MNT" && fs_mount ||
			{ t_fail "$label: crash round $r: remount"; return; }
		out=$(untorn verify --unit "$unit" --count $count "$f" 2>&1)
		if [ $? = 0 ] && grep -q "$count units: $count ok" <<<"$out"; then
			t_ok "$label: crash round $r (shutdown after ${delay} ms): $out"
		else
			t_fail "$label: crash round $r (shutdown after ${delay} ms)"
			t_diag <<<"$out"
		fi
		fs_unmount
		t_run "$label: crash round $r: offline fsck is clean" fs_check
		fs_mount
	done
}

# The XFS path tracepoint: one xfs_atomic_write_path event per atomic write,
# "hw" or the reason it went to software.
XFS_PATH_EVENT=/sys/kernel/tracing/events/xfs/xfs_atomic_write_path/enable
xfs_path_trace_on() {
	[ -w "$XFS_PATH_EVENT" ] || return 1
	echo 1 >"$XFS_PATH_EVENT" && echo >/sys/kernel/tracing/trace
}
xfs_path_trace_off() { echo 0 >"$XFS_PATH_EVENT"; }

# xfs_atomic_path CMD...: run CMD (one atomic write) and print the paths it
# reported, space separated ("hw", "size", "alloc", ...).
xfs_atomic_path() {
	echo >/sys/kernel/tracing/trace
	"$@" >/dev/null 2>&1 || { echo "write-failed"; return 1; }
	sed -n 's/.*xfs_atomic_write_path:.* path \([a-z_]*\)$/\1/p' \
		/sys/kernel/tracing/trace | xargs
}

# expect_path LABEL WANT FILE OFFSET LEN: one atomic write of LEN at OFFSET
# in FILE, which must take path WANT (and report it exactly once).
expect_path() {
	local label=$1 want=$2 f=$3 off=$4 len=$5 got
	got=$(xfs_atomic_path xfs_io -f -d \
		-c "pwrite -q -A -D -V1 -b $len $off $len" "$f")
	if [ "$got" = "$want" ]; then
		t_ok "$label: $len bytes at $off -> $want"
	else
		t_fail "$label: $len bytes at $off -> '$got', expected $want"
	fi
}

# The physical byte address of FILE's OFFSET, if one extent holds
# [OFFSET, OFFSET + LEN), from xfs_io fiemap (512-byte units).
phys_of_range() {
	local f=$1 off=$2 len=$3 lo hi plo
	xfs_io -c "fiemap -v $off $len" "$f" | awk -v off=$((off / 512)) \
		-v end=$(((off + len) / 512 - 1)) '
		$2 ~ /^\[/ { split($2, r, /[][.:]+/); split($3, p, /[.:]+/)
			if (r[2] + 0 <= off && r[3] + 0 >= end && p[1] != "hole") {
				print (p[1] + off - r[2]) * 512; exit }
		}'
}

# Free bytes of the scratch filesystem, after a sync.
fs_avail() { sync; df -B1 --output=avail "$SCRATCH_MNT" | tail -1; }

# xfs_extent_count FILE [-c]: the extents xfs_io bmap lists for FILE's data
# fork (with -c, its CoW fork), holes not counted.
xfs_extent_count() {
	xfs_io -c "bmap ${2:-}" "$1" | grep -c '^[[:space:]]*[0-9]*: \[.*\]: [0-9]'
}

# The untorn atomic write counters of the scratch filesystem:
# /sys/fs/TYPE/DEV/atomic_write (patches "count atomic writes").
aw_dir() {
	local dev
	dev=$(basename "$(readlink -f "$SCRATCH_DEV")")
	echo "/sys/fs/$SCRATCH_FS/$dev/atomic_write"
}
# aw_snap: "name value" for every counter, sorted (limits and knobs left out).
aw_snap() {
	local f d
	d=$(aw_dir)
	for f in "$d"/*_writes "$d"/*_bytes "$d"/fallback_* "$d"/refused_* \
		"$d"/sw_parallel "$d"/range_waits; do
		[ "${f##*/}" = fallback_policy ] && continue
		[ -r "$f" ] && echo "${f##*/} $(cat "$f")"
	done | LC_ALL=C sort
}
# aw_delta BEFORE AFTER: "name+N ..." for the counters that changed, sorted.
aw_delta() {
	LC_ALL=C join <(echo "$1") <(echo "$2") |
		awk '$3 != $2 { printf "%s+%d\n", $1, $3 - $2 }' | LC_ALL=C sort | xargs
}
# aw_expect LABEL "NAME+N ..." CMD...: CMD succeeds and changes the counters
# by exactly that, nothing else.
aw_expect() {
	local label=$1 want before after got out rc
	want=$(tr ' ' '\n' <<<"$2" | LC_ALL=C sort | xargs)
	shift 2
	before=$(aw_snap)
	out=$("$@" 2>&1)
	rc=$?
	after=$(aw_snap)
	got=$(aw_delta "$before" "$after")
	if [ $rc = 0 ] && [ "$got" = "$want" ]; then
		t_ok "$label: counted exactly $want"
	else
		t_fail "$label: exit $rc, counters changed by '$got', expected '$want'"
		t_diag <<<"$out"
	fi
}
# fails_with TEXT CMD...: CMD fails and says TEXT (xfs_io prints strerror).
fails_with() {
	local text=$1 out
	shift
	out=$("$@" 2>&1) && { echo "succeeded: $out"; return 1; }
	grep -q "$text" <<<"$out" || { echo "failed otherwise: $out"; return 1; }
}
# aw_write FILE OFF LEN [FLAGS]: one RWF_ATOMIC write, direct unless FLAGS
# (xfs_io open flags) says otherwise ("" for buffered).
aw_write() {
	xfs_io -f ${4--d} -c "pwrite -q -A -V1 -b $3 $2 $3" "$1"
}
# The data of FILE, read around the page cache.
file_sum() { dd if="$1" iflag=direct bs=64k status=none | md5sum | cut -d' ' -f1; }
