// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "devinfo.h"
#include "statx.h"
#include "util.h"

static const struct {
	long magic;
	const char *name;
} fs_names[] = {
	{ 0x58465342, "xfs" },
	{ 0xEF53, "ext4" },
	{ 0x01021994, "tmpfs" },
	{ 0x01021997, "9p" },
	{ 0x62656572, "sysfs" },
	{ 0x9fa0, "proc" },
	{ 0x1373, "devtmpfs" },
	{ 0x9123683E, "btrfs" },
};

static int read_u64(const char *dir, const char *name, uint64_t *val)
{
	char buf[32], *end;
	int ret = ut_read_line(dir, name, buf, sizeof(buf));

	if (ret)
		return ret;
	errno = 0;
	*val = strtoull(buf, &end, 10);
	return errno || end == buf ? -EINVAL : 0;
}

/* /sys/dev/block/M:m may be a partition: its queue is the parent's. */
static int find_queue(unsigned int major, unsigned int minor, char *dir,
		      size_t len, char *disk, size_t disklen, char *dev,
		      size_t devlen)
{
	char link[64], real[PATH_MAX], probe[PATH_MAX + 16];
	char *slash;

	snprintf(link, sizeof(link), "/sys/dev/block/%u:%u", major, minor);
	if (!realpath(link, real))
		return -errno;
	slash = strrchr(real, '/');
	snprintf(dev, devlen, "%s", slash ? slash + 1 : real);
	snprintf(probe, sizeof(probe), "%s/partition", real);
	if (!access(probe, F_OK)) {
		slash = strrchr(real, '/');
		if (slash)
			*slash = '\0';
	}
	slash = strrchr(real, '/');
	snprintf(disk, disklen, "%s", slash ? slash + 1 : real);
	snprintf(dir, len, "%s/queue", real);
	return access(dir, F_OK) ? -errno : 0;
}

int ut_devinfo(const char *path, struct ut_devinfo *info)
{
	char qdir[PATH_MAX];
	struct ut_statx stx;
	struct statfs sfs;
	int ret;

	memset(info, 0, sizeof(*info));
	ret = ut_statx(AT_FDCWD, path, 0, 0x7ff, &stx);
	if (ret)
		return ret;
	info->is_blockdev = S_ISBLK(stx.stx_mode);
	if (info->is_blockdev) {
		info->major = stx.stx_rdev_major;
		info->minor = stx.stx_rdev_minor;
		snprintf(info->fstype, sizeof(info->fstype), "bdev");
	} else {
		info->major = stx.stx_dev_major;
		info->minor = stx.stx_dev_minor;
		if (statfs(path, &sfs))
			return -errno;
		info->fs_blocksize = sfs.f_bsize;
		snprintf(info->fstype, sizeof(info->fstype), "0x%lx",
			 (long)sfs.f_type);
		for (size_t i = 0; i < sizeof(fs_names) / sizeof(fs_names[0]); i++)
			if (fs_names[i].magic == sfs.f_type)
				snprintf(info->fstype, sizeof(info->fstype), "%s",
					 fs_names[i].name);
	}
	if (find_queue(info->major, info->minor, qdir, sizeof(qdir),
		       info->disk, sizeof(info->disk), info->fsdev,
		       sizeof(info->fsdev)))
		return 0;
	info->have_queue = 1;
	read_u64(qdir, "logical_block_size", &info->logical_block_size);
	read_u64(qdir, "atomic_write_max_bytes", &info->aw_max);
	read_u64(qdir, "atomic_write_unit_min_bytes", &info->aw_unit_min);
	read_u64(qdir, "atomic_write_unit_max_bytes", &info->aw_unit_max);
	read_u64(qdir, "atomic_write_boundary_bytes", &info->aw_boundary);
	return 0;
}
