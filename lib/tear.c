// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tear.h"

int ut_tear_dir(const char *dev, char *dir, size_t len)
{
	char path[PATH_MAX], *name;
	struct stat st;

	if (!realpath(dev, path))
		return -errno;
	name = basename(path);
	if (strncmp(name, "tear", 4))
		return -ENODEV;
	snprintf(dir, len, "/sys/block/%s/tear", name);
	if (stat(dir, &st))
		return -ENODEV;
	return 0;
}

int ut_tear_write(const char *dir, const char *name, uint64_t value)
{
	char path[PATH_MAX], buf[32];
	int fd, n, err = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "%" PRIu64 "\n", value);
	if (write(fd, buf, n) != n)
		err = -errno;
	close(fd);
	return err;
}

int ut_tear_read(const char *dir, const char *name, uint64_t *value)
{
	char path[PATH_MAX], buf[32];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -EIO;
	buf[n] = 0;
	*value = strtoull(buf, NULL, 10);
	return 0;
}

int ut_tear_cut(const char *dir, uint64_t seed)
{
	int err = ut_tear_write(dir, "seed", seed);

	return err ? err : ut_tear_write(dir, "cut", 1);
}

int ut_tear_power_on(const char *dir)
{
	return ut_tear_write(dir, "power_on", 1);
}
