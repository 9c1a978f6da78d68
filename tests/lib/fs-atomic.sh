# The per-filesystem checks of hardware atomic writes on files, shared by
# the fs/* cases: fs_atomic_suite LABEL UNIT_MIN UNIT_MAX, run against the
# filesystem mounted at $SCRATCH_MNT.

statx_field() { sed -n "s/^stat\.$2 = //p" <<<"$1"; }

fs_atomic_suite() {
	local label=$1 umin=$2 umax=$3 f out len
	f=$SCRATCH_MNT/contract
	# A written file large enough for every offset atomic-check uses.
	untorn write --no-atomic --unit "$umax" --count 8 "$f" >/dev/null ||
		t_fail "$label: prefill $f"
	atomic-check --name "$label" --expect-unit "$umin:$umax" "$f" || UT_FAILED=1
	atomic-file-check --name "$label" "$SCRATCH_MNT" || UT_FAILED=1

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
	for ((len = umin; len <= umax; len *= 2)); do
		t_run "$label: xfs_io pwrite -A -D -V1 $len bytes onto a new file" \
			xfs_io -f -d -c "pwrite -q -A -D -V1 -b $len $((len * 4)) $len" \
				"$SCRATCH_MNT/xfs_io.$len"
	done
	t_run_fails "$label: xfs_io pwrite -A of twice unit_max is refused" \
		xfs_io -f -d -c "pwrite -q -A -D -V1 -b $((umax * 2)) 0 $((umax * 2))" \
			"$SCRATCH_MNT/xfs_io.big"
	for e in pvsync2 libaio io_uring; do
		t_run "$label: fio atomic=1 bs=$umax $e with verify" \
			fio --name=atomic --directory="$SCRATCH_MNT" --filename=fio.$e \
				--direct=1 --atomic=1 --rw=randwrite --bs="$umax" \
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
		untorn write --unit "$unit" --count $count --gen 1 "$f" &&
			sync "$f" || { t_fail "$label: crash round $r: setup"; return; }
		untorn write --unit "$unit" --count $count --gen 2 --loops 1000 "$f" \
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
