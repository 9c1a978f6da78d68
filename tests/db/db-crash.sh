#!/bin/bash
# MariaDB through power cuts, in the guest (the db image): for each
# configuration, a tearblk device with its geometry, a filesystem, a data
# directory, and N cuts. Each cut: the server runs transactions
# (tests/db/acks.lua: random page updates, and a sequence number per
# thread recorded outside the device once its COMMIT returned), the power
# is cut at a seeded moment, the server is killed, the device powers on,
# the filesystem mounts (log recovery), innochecksum counts the torn pages
# the cut left, the server starts (InnoDB crash recovery), CHECK TABLE
# runs, and every acknowledged commit must be in the table. The recovered
# server then runs the next cut's workload, except after every fifth cut
# and the last: those shut it down cleanly, and innochecksum must find no
# corrupted page. Prints TAP lines and a table.
#
#   tests/db/db-crash.sh [--cuts N] [--control-cuts M] [--seed S] [CONFIG...]
#
# untorn: doublewrite OFF, pages written by untorn-preload with RWF_ATOMIC
# (XFS software path, XFS hardware path, ext4 bigalloc). Controls on the
# xfs-sw geometry: doublewrite OFF without the preload must lose pages
# (torn pages, or a recovery that fails) in a quarter or more of its cuts;
# doublewrite ON without the preload (the incumbent) must recover always.
# The controls run M cuts (default a tenth of N, at least 3): they only
# have to show what they show, not add up to a proof.
# Half of the cuts come at a seeded moment, half the moment a flush batch
# of pages waits in the disk's cache (cut_in_flush); the tearing
# control's cuts all come that way, as a moment at random almost never
# finds a page between its write and the next flush.
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib/common.sh"
. "$top/tests/db/lib.sh"

cuts=5 control_cuts= seed=
while [ $# -gt 0 ]; do
	case "$1" in
	--cuts) cuts=$2; shift 2 ;;
	--control-cuts) control_cuts=$2; shift 2 ;;
	--seed) seed=$2; shift 2 ;;
	-*) echo "usage: $0 [--cuts N] [--control-cuts M] [--seed S] [CONFIG...]" >&2; exit 2 ;;
	*) break ;;
	esac
done
[ -n "$seed" ] || seed=0x$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')
[ -n "$control_cuts" ] || control_cuts=$(( cuts / 10 > 3 ? cuts / 10 : 3 ))
[ "$control_cuts" -le "$cuts" ] || control_cuts=$cuts

nvme=discard=1,write_zeroes=1
# name | tearblk geometry | fs | mkfs arguments | doublewrite | preload |
# counters that must grow | kind (untorn, tears: must lose pages,
# recovers: must recover every cut)
CONFIGS="
xfs-sw|lbs=512,awu_min=512,awu_max=4k,$nvme|xfs|-b size=4096 -m reflink=1|OFF|yes|sw_writes|untorn
xfs-hw|lbs=512,awu_min=512,awu_max=64k,$nvme|xfs|-b size=4096 -m reflink=1|OFF|yes|hw_writes|untorn
ext4-bigalloc|size=1G,lbs=4096,awu_min=4096,awu_max=64k,boundary=64k,$nvme|ext4|-b 4096 -O bigalloc -C 16384|OFF|yes|hw_writes|untorn
dw-off-plain|lbs=512,awu_min=512,awu_max=4k,$nvme|xfs|-b size=4096 -m reflink=1|OFF|no||tears
dw-on-plain|lbs=512,awu_min=512,awu_max=4k,$nvme|xfs|-b size=4096 -m reflink=1|ON|no||recovers
"

require_cmd mariadbd mariadb mariadb-install-db innochecksum sysbench mkfs.xfs mkfs.ext4
require_module tearblk
modprobe tearblk || skip_all "cannot load tearblk"
[ -r "$top/build/lib/untorn-preload.so" ] || skip_all "requires build/lib/untorn-preload.so (make build)"
dmesg -n 5

# rand N: a seeded number below N, in R (not printed: in a $(...)
# subshell the generator would never move on).
rand() {
	rng=$(( (rng * 6364136223846793005 + 1442695040888963407) & 0x7fffffffffffffff ))
	R=$(( (rng >> 17) % $1 ))
}

# torn_pages DIR: pages innochecksum finds corrupted in the tablespaces.
# With the doublewrite buffer on, its two 64-page blocks in ibdata1 (pages
# 64 to 191) hold copies of other pages, which innochecksum reports as
# invalid in their place: they are not counted.
torn_pages() {
	local f n=0 out dwlo=0 dwhi=0
	[ "$DB_DOUBLEWRITE" = ON ] && dwlo=64 dwhi=192
	for f in "$1"/ibdata1 "$1"/"$DB_NAME"/*.ibd; do
		[ -f "$f" ] || continue
		out=$(innochecksum --allow-mismatches=1000000000 "$f" 2>&1)
		[ -z "${DB_VERBOSE:-}" ] || grep -m 5 -i 'fail\|corrupt\|mismatch' <<<"$out" >&2
		n=$(( n + $(grep -io 'fail: page::[0-9]*' <<<"$out" | sed 's/.*:://' |
			awk -v lo="$dwlo" -v hi="$dwhi" -v sys="${f##*/}" \
				'!(sys == "ibdata1" && $1 >= lo && $1 < hi) { n++ } END { print n + 0 }') ))
	done
	echo "$n"
}

# lost_commits ACKDIR: acknowledged sequence numbers missing from the table.
lost_commits() {
	local f tid last have lost=0
	for f in "$1"/acks.*; do
		[ -s "$f" ] || continue
		tid=${f##*.}
		last=$(tail -n 1 "$f" | awk '{print $2}')
		have=$(db_sql "SELECT COUNT(*) FROM acks WHERE tid = $tid AND seq <= $last") || have=0
		lost=$(( lost + last - have ))
	done
	echo "$lost"
}

# aw_counter FS DEV NAME: the filesystem's atomic_write counter NAME.
aw_counter() {
	cat "/sys/fs/$1/${2##*/}/atomic_write/$3" 2>/dev/null || echo 0
}
# The path counters over a configuration's run: counters_base after each
# mount, counters_add before each cut and unmount.
counters_base() {
	hw0=$(aw_counter "$fs" "$dev" hw_writes) sw0=$(aw_counter "$fs" "$dev" sw_writes)
}
counters_add() {
	hw=$(( hw + $(aw_counter "$fs" "$dev" hw_writes) - hw0 ))
	sw=$(( sw + $(aw_counter "$fs" "$dev" sw_writes) - sw0 ))
	counters_base
}

# cut_in_flush TEARDIR: cut while page writes wait for a flush. A cut at a
# random moment mostly finds only the redo log's small writes unflushed
# (every commit flushes the disk's cache, and the page cleaner flushes
# after each batch), and a page can tear only between its write and the
# next flush; so watch the device (up to 20 s) and cut the moment 128 KiB
# or more are pending (8 pages of a flush batch). 0 when the cut came
# that way.
cut_in_flush() {
	local v i
	for (( i = 0; i < 400000; i++ )); do
		read -r v < "$1/pending" || break
		if [ "$v" -ge 131072 ]; then
			echo 1 > "$1/cut"
			[ -z "${DB_VERBOSE:-}" ] || echo "# cut at $v bytes pending"
			return 0
		fi
	done
	echo 1 > "$1/cut"
	return 1
}

echo "# database power cuts: seed $seed, $cuts cuts per configuration, $control_cuts per control"
table=()
# fd 3: the server and clients in the loop read stdin.
while IFS='|' read -r name geom fs mkfs dw preload expect kind <&3; do
	[ -n "$name" ] || continue
	if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$name"; then
		continue
	fi
	# Each configuration's generator starts from the seed and its name, so
	# that a replay of one configuration makes the same choices.
	rng=$(( (seed ^ $(cksum <<<"$name" | cut -d' ' -f1)) & 0x7fffffffffffffff ))
	n_cuts=$cuts
	[ "$kind" = untorn ] || n_cuts=$control_cuts
	dev=$(new_tear_dev "$geom") || { t_fail "$name: cannot create a tearblk device"; continue; }
	tdir=/sys/block/${dev##*/}/tear
	# shellcheck disable=SC2086
	if ! fs_mkfs_mount "$fs" "$dev" $mkfs; then
		t_fail "$name: mkfs and mount"
		continue
	fi
	db_setup "$SCRATCH_MNT/db" "$dw" "$preload"
	rm -f "$DB_STATS"
	acks=/tmp/untorn-acks.$name
	rm -rf "$acks"
	mkdir -p "$acks"
	if ! db_install || ! db_start || ! ROWS=20000 db_bench "$top/tests/db/acks.lua" prepare >/tmp/untorn-db.prepare 2>&1; then
		t_fail "$name: the database did not come up"
		tail -n 20 "$DB_LOG" /tmp/untorn-db.prepare 2>/dev/null | t_diag
		db_kill
		fs_unmount
		continue
	fi
	# A clean copy, to start over after a control's cut lost the database.
	db_stop
	umount "$SCRATCH_MNT"
	start=$(date +%s)
	torn_total=0 torn_cuts=0 failed_recoveries=0 lost=0 bad_after=0 errors=0 check_bad=0 clean_checks=0
	committed=0
	mount "$dev" "$SCRATCH_MNT"
	tar -C "$SCRATCH_MNT" -cf /tmp/untorn-db.pristine.tar db
	hw=0 sw=0 flush_cuts=0
	counters_base
	running=0
	for cut in $(seq "$n_cuts"); do
		if [ "$running" = 0 ] && ! db_start; then
			errors=$((errors + 1))
			t_diag <<<"cut $cut: the server did not start before the workload"
			break
		fi
		running=0
		rand 1000000
		ACK_DIR=$acks db_bench "$top/tests/db/acks.lua" run --threads=4 --time=600 \
			--rand-seed=$(( R + 1 )) >/tmp/untorn-db.run 2>&1 &
		bench=$!
		rand 60
		sleep "$(( 3 + R / 10 )).$(( R % 10 ))"
		if ! kill -0 "$bench" 2>/dev/null; then
			errors=$((errors + 1))
			t_diag <<<"cut $cut: the workload stopped before the cut"
			tail -n 5 /tmp/untorn-db.run | t_diag
		fi
		counters_add
		printf '%u\n' "$(( seed + cut ))" > "$tdir/seed"
		# Half the cuts at a random moment, half in a page flush; the
		# tearing control's all in a flush, where pages can tear.
		rand 2
		if [ "$kind" != tears ] && [ "$R" = 0 ]; then
			echo 1 > "$tdir/cut"
		else
			cut_in_flush "$tdir" && flush_cuts=$((flush_cuts + 1))
		fi
		db_kill
		wait "$bench" 2>/dev/null
		umount "$SCRATCH_MNT" 2>/dev/null || umount -l "$SCRATCH_MNT"
		echo 1 > "$tdir/power_on" || { errors=$((errors + 1)); break; }
		[ -z "${DB_VERBOSE:-}" ] || echo "# cut $cut: pending writes $(cat "$tdir/cut_pending"), kept $(cat "$tdir/cut_kept"), dropped $(cat "$tdir/cut_dropped"), torn $(cat "$tdir/cut_torn")" 
		if ! mount "$dev" "$SCRATCH_MNT"; then
			errors=$((errors + 1))
			t_diag <<<"cut $cut: the filesystem did not mount"
			break
		fi
		counters_base
		n=$(torn_pages "$DB_DATA")
		torn_total=$((torn_total + n))
		[ "$n" = 0 ] || torn_cuts=$((torn_cuts + 1))
		if ! db_start; then
			failed_recoveries=$((failed_recoveries + 1))
			if [ "$kind" != tears ] || [ -n "${DB_VERBOSE:-}" ]; then
				t_diag <<<"cut $cut: InnoDB crash recovery failed"
				grep -v WSREP "$DB_LOG" | tail -n 15 | t_diag
			fi
		else
			check=$(db_sql "CHECK TABLE pages, acks" 2>&1)
			c=$(grep -vc 'status.OK$' <<<"$check")
			[ "$c" = 0 ] || check_bad=$((check_bad + 1))
			l=$(lost_commits "$acks")
			lost=$((lost + l))
			[ "$l" = 0 ] || t_diag <<<"cut $cut: $l acknowledged commits lost"
			if { [ "$c" != 0 ] || [ "$l" != 0 ]; } &&
			   { [ "$kind" != tears ] || [ -n "${DB_VERBOSE:-}" ]; }; then
				# What InnoDB said while it recovered: which page of which
				# index it found wrong, and why.
				t_diag <<<"cut $cut: CHECK TABLE: $(tr '\n' ' ' <<<"$check")"
				grep -v WSREP "$DB_LOG" | grep -i 'error\|corrupt\|warning' | tail -n 25 | t_diag
			fi
			# The recovered server runs the next cut's workload; every
			# fifth cut and the last shut it down cleanly and check every
			# page (a page that recovery got wrong stays wrong until then).
			if [ $(( cut % 5 )) != 0 ] && [ "$cut" != "$n_cuts" ]; then
				running=1
				continue
			fi
			db_stop
			n=$(torn_pages "$DB_DATA")
			bad_after=$((bad_after + n))
			clean_checks=$((clean_checks + 1))
			[ "$n" = 0 ] || [ "$kind" = tears ] || t_diag <<<"cut $cut: $n corrupted pages after recovery and a clean shutdown"
			continue
		fi
		# The control lost its database: start over from the clean copy.
		umount "$SCRATCH_MNT"
		# shellcheck disable=SC2086
		fs_mkfs_mount "$fs" "$dev" $mkfs && tar -C "$SCRATCH_MNT" -xf /tmp/untorn-db.pristine.tar || {
			errors=$((errors + 1)); break; }
		committed=$(( committed + $(cat "$acks"/acks.* 2>/dev/null | wc -l) ))
		rm -f "$acks"/acks.*
		counters_base
	done
	[ "$running" = 0 ] || db_stop
	counters_add
	umount "$SCRATCH_MNT" 2>/dev/null
	committed=$(( committed + $(cat "$acks"/acks.* 2>/dev/null | wc -l) ))
	secs=$(( $(date +%s) - start ))
	atomic=$(db_preload_count atomic)
	summary="$cut cuts ($flush_cuts while pages waited for a flush), $committed commits acknowledged: $torn_total torn pages found before recovery (in $torn_cuts cuts), $failed_recoveries failed recoveries, $bad_after corrupted pages after recovery (at $clean_checks clean shutdowns), $check_bad CHECK TABLE failures, $lost lost commits, $errors errors (preload atomic writes at clean shutdowns $atomic; fs hw $hw, sw $sw; ${secs}s)"
	case $kind in
	untorn)
		bad=$(( torn_total + failed_recoveries + bad_after + check_bad + lost + errors ))
		grew=1
		[ -z "$expect" ] || for c in ${expect//,/ }; do
			case $c in hw_writes) [ "$hw" -gt 0 ] || grew=0 ;; sw_writes) [ "$sw" -gt 0 ] || grew=0 ;; esac
		done
		if [ "$bad" = 0 ] && [ "$grew" = 1 ] && [ "$atomic" -gt 0 ]; then
			t_ok "$name: $summary"
		else
			t_fail "$name: $summary; replay: make db-crash DB_SEED=$seed DB_CUTS=$cuts DB_CONFIGS=$name"
		fi ;;
	tears)
		if [ $(( torn_cuts + failed_recoveries )) -gt 0 ] && [ "$errors" = 0 ] &&
		   [ $(( (torn_cuts + failed_recoveries) * 4 )) -ge "$n_cuts" ]; then
			t_ok "$name (control): lost pages in $((torn_cuts > failed_recoveries ? torn_cuts : failed_recoveries)) of $cut cuts: $summary"
		else
			t_fail "$name (control): did not lose pages in a quarter of the cuts: $summary; replay: make db-crash DB_SEED=$seed DB_CUTS=$cuts DB_CONTROL_CUTS=$control_cuts DB_CONFIGS=$name"
		fi ;;
	recovers)
		bad=$(( failed_recoveries + bad_after + check_bad + lost + errors ))
		if [ "$bad" = 0 ]; then
			t_ok "$name (control): recovered every cut: $summary"
		else
			t_fail "$name (control): $summary; replay: make db-crash DB_SEED=$seed DB_CUTS=$cuts DB_CONTROL_CUTS=$control_cuts DB_CONFIGS=$name"
		fi ;;
	esac
	table+=("| $name | $dw | $preload | $cut | $committed | $torn_total ($torn_cuts cuts) | $failed_recoveries | $bad_after | $lost | $errors | hw $hw, sw $sw, preload $atomic | ${secs}s |")
done 3<<<"$CONFIGS"
echo "# database power cuts, seed $seed; replay: make db-crash DB_SEED=$seed DB_CUTS=$cuts DB_CONTROL_CUTS=$control_cuts"
echo "# | configuration | doublewrite | untorn-preload | cuts | commits acknowledged | torn pages before recovery | failed recoveries | corrupted pages after recovery | lost commits | errors | atomic writes | time |"
echo "# |---|---|---|---|---|---|---|---|---|---|---|---|"
for r in "${table[@]}"; do echo "# $r"; done
t_done
