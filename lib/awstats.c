// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "awstats.h"
#include "util.h"

static int has_prefix(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

static int has_suffix(const char *s, const char *x)
{
	size_t ls = strlen(s), lx = strlen(x);

	return ls >= lx && !strcmp(s + ls - lx, x);
}

static enum ut_awstat_kind classify(const char *name)
{
	if (has_suffix(name, "unit_min") || has_suffix(name, "unit_max"))
		return UT_AW_LIMIT;
	if (has_prefix(name, "fallback_"))
		return UT_AW_FALLBACK;
	if (has_prefix(name, "refused_"))
		return UT_AW_REFUSED;
	if (!strcmp(name, "sw_parallel") || !strcmp(name, "range_waits"))
		return UT_AW_PARALLEL;
	if (has_suffix(name, "_writes"))
		return UT_AW_WRITES;
	if (has_suffix(name, "_bytes"))
		return UT_AW_BYTES;
	return UT_AW_OTHER;
}

/* Shown by kind, then in the order the kernel documents (hw before sw). */
static int compare(const void *a, const void *b)
{
	const struct ut_awstat *x = a, *y = b;

	if (x->kind != y->kind)
		return (int)x->kind - (int)y->kind;
	return strcmp(x->name, y->name);
}

int ut_awstats_read_dir(const char *dir, struct ut_awstats *st)
{
	struct dirent *de;
	char buf[64], *end;
	DIR *d;

	memset(st, 0, sizeof(*st));
	snprintf(st->dir, sizeof(st->dir), "%s", dir);
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		struct ut_awstat *s;

		if (de->d_name[0] == '.' || !strcmp(de->d_name, "reset_counters"))
			continue;
		if (ut_read_line(dir, de->d_name, buf, sizeof(buf)))
			continue;
		if (!strcmp(de->d_name, "fallback_policy")) {
			snprintf(st->policy, sizeof(st->policy), "%s", buf);
			continue;
		}
		if (st->n == UT_AWSTATS_MAX || strlen(de->d_name) >= sizeof(s->name))
			continue;
		s = &st->s[st->n];
		errno = 0;
		s->value = strtoull(buf, &end, 10);
		if (errno || end == buf || *end)
			continue;
		snprintf(s->name, sizeof(s->name), "%s", de->d_name);
		s->kind = classify(s->name);
		st->n++;
	}
	closedir(d);
	qsort(st->s, st->n, sizeof(st->s[0]), compare);
	return 0;
}

int ut_awstats_dir(const struct ut_devinfo *dev, char *dir, size_t len)
{
	if (dev->is_blockdev || !dev->fsdev[0])
		return -ENOENT;
	snprintf(dir, len, "/sys/fs/%s/%s/atomic_write", dev->fstype,
		 dev->fsdev);
	return access(dir, F_OK) ? -ENOENT : 0;
}

int ut_awstats_get(const struct ut_awstats *st, const char *name,
		   uint64_t *value)
{
	for (int i = 0; i < st->n; i++) {
		if (!strcmp(st->s[i].name, name)) {
			*value = st->s[i].value;
			return 0;
		}
	}
	return -ENOENT;
}
