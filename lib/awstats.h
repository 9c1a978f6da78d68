/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The atomic write counters, limits and fallback policy that the untorn
 * series keeps per filesystem in /sys/fs/<fstype>/<dev>/atomic_write/
 * (see Documentation/ABI/testing/sysfs-fs-xfs and sysfs-fs-ext4 in the
 * patched tree). Whatever files the directory has are read, so one reader
 * serves XFS (hw and sw paths) and ext4 (hw path and its slow path).
 */
#ifndef UNTORN_AWSTATS_H
#define UNTORN_AWSTATS_H

#include <limits.h>
#include <stdint.h>

#include "devinfo.h"

#define UT_AWSTATS_MAX 40

enum ut_awstat_kind {
	UT_AW_LIMIT,		/* *unit_min, *unit_max: bytes */
	UT_AW_WRITES,		/* PATH_writes */
	UT_AW_BYTES,		/* PATH_bytes */
	UT_AW_FALLBACK,		/* fallback_REASON */
	UT_AW_REFUSED,		/* refused_REASON */
	UT_AW_PARALLEL,		/* sw_parallel, range_waits (XFS) */
	UT_AW_OTHER,
};

struct ut_awstat {
	char name[48];
	enum ut_awstat_kind kind;
	uint64_t value;
};

struct ut_awstats {
	char dir[PATH_MAX];
	char policy[16];	/* allow, warn, deny; "" when not offered */
	int n;
	struct ut_awstat s[UT_AWSTATS_MAX];	/* in the order shown */
};

/* Read DIR. 0, or -errno (-ENOENT: no such directory). */
int ut_awstats_read_dir(const char *dir, struct ut_awstats *st);
/* The directory of the filesystem that DEV describes; 0 or -ENOENT. */
int ut_awstats_dir(const struct ut_devinfo *dev, char *dir, size_t len);
/* The value of counter NAME, or -ENOENT. */
int ut_awstats_get(const struct ut_awstats *st, const char *name,
		   uint64_t *value);

#endif
