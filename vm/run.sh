#!/usr/bin/env bash
# Boot the patched kernel in QEMU with the standard disks and run a command
# line in the guest, from the checkout's path (shared read-only over 9p).
#
#   vm/run.sh 'COMMAND LINE'   run it, print its output, exit with its status
#   vm/run.sh                  interactive shell (needs a terminal)
#
# The run fails (exit 125 or more) on a guest panic, a hang (timeout) or a
# WARNING/BUG/Oops/lockdep report in the console log, whatever the command
# returned. The full console log is kept and its path printed.
#
# Environment: UNTORN_VM_TIMEOUT (seconds, default 3600), UNTORN_VM_MEM (MiB,
# default 3072), UNTORN_VM_CPUS (default: host cores), UNTORN_VM_DISK_GB
# (size of each test disk, default 8), UNTORN_VM_KEEP=1 keeps the disk images.
set -euo pipefail
. "$(dirname "$0")/../kernel/common.sh"

cmd="$*"
timeout_s=${UNTORN_VM_TIMEOUT:-3600}
mem=${UNTORN_VM_MEM:-3072}
cpus=${UNTORN_VM_CPUS:-$(nproc)}
disk_gb=${UNTORN_VM_DISK_GB:-8}

kernel=$KIMAGE
[ -e "$kernel" ] || die "no kernel at $kernel; run 'make kernel'"
img=$("$UNTORN_TOP/vm/build-image.sh")
krel=$(cat "$KBUILD/include/config/kernel.release")
[ -d "$KMODS/lib/modules/$krel" ] || die "no modules for $krel in $KMODS; run 'make kernel'"

if [ -z "$cmd" ] && ! [ -t 0 ]; then
	die "no command given and no terminal for an interactive shell"
fi

runs=$UNTORN_CACHE/runs
rundir=$runs/$(date +%Y%m%d-%H%M%S)-$$
mkdir -p "$rundir/share"
ln -sfn "$rundir" "$runs/latest"
# Keep the logs of the last 30 runs.
ls -1d "$runs"/2* 2>/dev/null | head -n -30 | xargs -r rm -rf
console=$rundir/console.log
printf '%s\n' "$cmd" > "$rundir/share/cmd"

for d in nvme0 nvme1 plain; do
	truncate -s "${disk_gb}G" "$rundir/$d.img"
done
cleanup() {
	[ "${UNTORN_VM_KEEP:-0}" = 1 ] || rm -f "$rundir"/*.img
}
trap cleanup EXIT

accel=tcg,thread=multi
if [ -w /dev/kvm ] && [ "${UNTORN_VM_KVM:-0}" = 1 ]; then
	accel=kvm
fi

# Without ACPI timers the guest often fails to calibrate its TSC under TCG
# and keeps 4 ms jiffies as its clock (fio latencies in 4 ms steps). TCG's
# guest TSC is the host's, so on a host whose TSC rate is known and
# constant, tell the guest that rate (UNTORN_VM_TSC=0: don't).
clockargs=""
if [ "${UNTORN_VM_TSC:-1}" = 1 ] &&
   grep -qw tsc_known_freq /proc/cpuinfo && grep -qw constant_tsc /proc/cpuinfo &&
   [ "${accel%%,*}" = tcg ]; then
	tsc_khz=$(awk -F: '/^cpu MHz/ { printf "%d", $2 * 1000; exit }' /proc/cpuinfo)
	[ "${tsc_khz:-0}" -gt 0 ] && clockargs="tsc_early_khz=$tsc_khz tsc=reliable"
fi

qemu=(qemu-system-x86_64 -accel "$accel" -cpu max -smp "$cpus" -m "$mem"
	-display none -monitor none -no-reboot -nodefaults
	-kernel "$kernel"
	-append "console=ttyS0 root=/dev/vda rw rootfstype=ext4 init=/sbin/untorn-init panic=-1 oops=panic hung_task_panic=0 untorn_top=$UNTORN_TOP untorn_cpus=$cpus loglevel=7 $clockargs"
	-drive "file=$img,if=none,id=root,format=raw,snapshot=on"
	-device virtio-blk-pci,drive=root,serial=untorn-root
	-drive "file=$rundir/plain.img,if=none,id=plain,format=raw,cache=unsafe"
	-device virtio-blk-pci,drive=plain,serial=untorn-plain
	-virtfs "local,path=$UNTORN_TOP,mount_tag=top,security_model=none,readonly=on"
	-virtfs "local,path=$KMODS/lib/modules,mount_tag=modules,security_model=none,readonly=on"
	-virtfs "local,path=$rundir/share,mount_tag=run,security_model=none"
	-serial "file:$console")
for i in 0 1; do
	qemu+=(-drive "file=$rundir/nvme$i.img,if=none,id=nvme$i,format=raw,cache=unsafe"
	       -device "nvme,serial=untorn-nvme$i,drive=nvme$i,logical_block_size=4096,physical_block_size=4096")
done

echo "untorn-vm: kernel $krel, console log $console" >&2
set +e
if [ -n "$cmd" ]; then
	timeout -k 10 "$timeout_s" "${qemu[@]}" -chardev stdio,id=out,signal=off \
		-device isa-serial,chardev=out </dev/null
else
	# Interactive: no timeout, whose process group would lose the terminal.
	"${qemu[@]}" -chardev stdio,id=out,signal=off -device isa-serial,chardev=out
fi
qrc=$?
set -e

rc=0
if [ $qrc = 124 ] || [ $qrc = 137 ]; then
	echo "untorn-vm: FAIL: guest hung (no exit within ${timeout_s}s)" >&2
	rc=126
fi
if grep -q 'Kernel panic' "$console"; then
	echo "untorn-vm: FAIL: guest kernel panic" >&2
	rc=127
fi
# Reports the kernel prints when something is wrong even if the command
# itself went on and succeeded.
bad='WARNING:|BUG:|Oops|general protection fault|INFO: possible|INFO: task .* blocked|detected stalls|turning off the locking correctness validator|Assertion failed|UBSAN:|KASAN:'
if grep -Eq "$bad" "$console"; then
	echo "untorn-vm: FAIL: kernel reports in the guest log:" >&2
	grep -E -m 10 "$bad" "$console" | sed 's/^/  | /' >&2
	[ $rc != 0 ] || rc=125
fi
if [ -n "$cmd" ] && [ $rc = 0 ]; then
	if [ -f "$rundir/share/status" ]; then
		rc=$(cat "$rundir/share/status")
	else
		echo "untorn-vm: FAIL: guest stopped without an exit status (qemu rc $qrc)" >&2
		tail -n 20 "$console" | sed 's/^/  | /' >&2
		rc=125
	fi
fi
echo "untorn-vm: exit $rc; console log $console" >&2
exit "$rc"
