# Helpers for the stacking cases (dm, md, LVM); sourced after common.sh.
#
# The guest runs no udev: libdevmapper and LVM make their own device nodes
# and do not wait for udev, and mdadm makes /dev/mdN itself.

export DM_DISABLE_UDEV=1
LVM_CONF='activation { udev_sync = 0 udev_rules = 0 } devices { obtain_device_list_from_udev = 0 use_devicesfile = 0 }'

# lvm CMD ARGS...: an LVM command with the configuration above.
lvm_do() {
	local cmd=$1
	shift
	"$cmd" --config "$LVM_CONF" "$@"
}

# aw_units DEV: "unit_min unit_max" in bytes from sysfs. By device
# number: without udev, /dev/mapper and /dev/VG nodes are not links to
# /dev/dm-N.
aw_units() {
	local mm q
	mm=$(stat -L -c '%t %T' "$1") || return 1
	q=/sys/dev/block/$((16#${mm% *})):$((16#${mm#* }))/queue
	echo "$(cat "$q/atomic_write_unit_min_bytes") $(cat "$q/atomic_write_unit_max_bytes")"
}

# check_limits LABEL DEV "MIN MAX": the stacked device's unit min and max.
check_limits() {
	local label=$1 dev=$2 want=$3 got
	got=$(aw_units "$dev")
	if [ "$got" = "$want" ]; then
		t_ok "$label: atomic unit min/max $(fmt_pair "$got")"
	else
		t_fail "$label: atomic unit min/max $(fmt_pair "$got"), want $(fmt_pair "$want")"
	fi
}
fmt_pair() { local a b; read -r a b <<<"$1"; echo "$((a / 1024))k/$((b / 1024))k"; }

# dm_make NAME TABLE: a dm device; prints its node.
dm_make() {
	dmsetup create "$1" --table "$2" >/dev/null || return 1
	echo "/dev/mapper/$1"
}
dm_drop() { dmsetup remove --retry "$@" 2>/dev/null; }

# md_make DEV LEVEL CHUNK_KIB COMPONENTS...: an md array (no resync:
# --assume-clean, the components are scratch devices).
md_make() {
	local md=$1 level=$2 chunk=$3
	shift 3
	local args=(--create "$md" --run --assume-clean --metadata=1.2
		    --level="$level" --raid-devices=$# "$@")
	[ "$level" = 1 ] || args+=(--chunk="$chunk")
	mdadm "${args[@]}" </dev/null >/tmp/untorn-mdadm.log 2>&1 ||
		{ cat /tmp/untorn-mdadm.log >&2; return 1; }
	[ -b "$md" ]
}
md_drop() {
	local md
	for md in "$@"; do
		[ -b "$md" ] && mdadm --stop "$md" >/dev/null 2>&1
	done
	return 0
}
# md_zero COMPONENTS...: forget old md superblocks on scratch devices.
md_zero() { mdadm --zero-superblock --force "$@" >/dev/null 2>&1; return 0; }

# sectors DEV: size in 512-byte sectors.
sectors() { blockdev --getsz "$1"; }
