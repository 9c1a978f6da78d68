/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What sits under a path: the filesystem and its block size, and the
 * atomic-write queue limits that the whole-disk block device exports in
 * sysfs (queue/atomic_write_*_bytes).
 */
#ifndef UNTORN_DEVINFO_H
#define UNTORN_DEVINFO_H

#include <stdint.h>

struct ut_devinfo {
	int is_blockdev;
	unsigned int major, minor;
	char disk[64];			/* sysfs name of the whole disk */
	char fsdev[64];			/* the filesystem's device (s_id) */
	char fstype[32];		/* "xfs", "ext4", "bdev", ... */
	uint64_t fs_blocksize;
	int have_queue;			/* the queue limits below are valid */
	uint64_t logical_block_size;
	uint64_t aw_max;		/* atomic_write_max_bytes */
	uint64_t aw_unit_min;
	uint64_t aw_unit_max;
	uint64_t aw_boundary;
};

/* 0 or -errno. */
int ut_devinfo(const char *path, struct ut_devinfo *info);

#endif
