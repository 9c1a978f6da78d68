#!/bin/bash
# Runs as PID 1 in the guest (exec'd by the image's /sbin/untorn-init), from
# the checkout. Mounts what the tests need, runs the command line from the
# host, records its exit status in the run share and powers off.
top=$untorn_top
mount -t 9p -o trans=virtio,version=9p2000.L,ro modules /lib/modules
mkdir -p /run/untorn
mount -t 9p -o trans=virtio,version=9p2000.L run /run/untorn
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t configfs configfs /sys/kernel/config 2>/dev/null
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
hostname untorn-guest
echo 1 > /proc/sys/kernel/sysrq

# Name the standard disks by the serials the host gave them.
for d in /sys/block/*; do
	serial=$(cat "$d/serial" 2>/dev/null || cat "$d/device/serial" 2>/dev/null)
	case "${serial//[[:space:]]/}" in
	untorn-plain) export UNTORN_DEV_PLAIN=/dev/${d##*/} ;;
	untorn-nvme0) export UNTORN_DEV_NVME0=/dev/${d##*/} ;;
	untorn-nvme1) export UNTORN_DEV_NVME1=/dev/${d##*/} ;;
	esac
done
export UNTORN_TOP=$top UNTORN_RUN_DIR=/run/untorn
export HOME=/root TERM=${TERM:-linux}
export PATH=$top/build/bin:/usr/sbin:/usr/bin:/sbin:/bin

out=/dev/ttyS1
cmd=$(cat /run/untorn/cmd)
cd "$top" || exit 1
if [ -n "$cmd" ]; then
	stty -F $out raw -echo 2>/dev/null
	bash -c "$cmd" </dev/null >$out 2>&1
	echo $? > /run/untorn/status
else
	stty -F $out sane 2>/dev/null
	echo "untorn guest: checkout at $top; exit the shell to power off" >$out
	setsid -c bash -i <$out >$out 2>&1
fi
sync
umount /run/untorn 2>/dev/null
# -no-reboot on the host turns this reboot into QEMU exiting.
echo b > /proc/sysrq-trigger
sleep 10
