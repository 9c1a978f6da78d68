// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

int ut_parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	int shift = 0;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K':
		shift = 10;
		break;
	case 'm': case 'M':
		shift = 20;
		break;
	case 'g': case 'G':
		shift = 30;
		break;
	case '\0':
		break;
	default:
		return -EINVAL;
	}
	if (*end && end[1] && !((end[1] == 'i' || end[1] == 'I') &&
				(end[2] == 'b' || end[2] == 'B') && !end[3]))
		return -EINVAL;
	if (shift && v > (UINT64_MAX >> shift))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

const char *ut_fmt_size(uint64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = { "bytes", "KiB", "MiB", "GiB", "TiB" };
	int u = 0;

	while (u < 4 && bytes && !(bytes & 1023)) {
		bytes >>= 10;
		u++;
	}
	snprintf(buf, len, "%llu %s", (unsigned long long)bytes, units[u]);
	return buf;
}

void *ut_alloc_io(size_t len)
{
	void *p;

	if (posix_memalign(&p, 4096, len ? len : 4096))
		return NULL;
	return p;
}

uint64_t ut_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

int ut_read_line(const char *dir, const char *name, char *buf, size_t len)
{
	char path[PATH_MAX];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	if (!ok)
		return -EIO;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

int ut_parse_list(const char *arg, const char *const names[], unsigned int n,
		  unsigned int *mask, char *bad, size_t badlen)
{
	char *copy = strdup(arg), *tok, *save;
	unsigned int i;

	if (!copy)
		return -ENOMEM;
	*mask = 0;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < n && strcmp(tok, names[i]); i++)
			;
		if (i == n) {
			snprintf(bad, badlen, "%s", tok);
			free(copy);
			return -EINVAL;
		}
		*mask |= 1U << i;
	}
	free(copy);
	return 0;
}

int ut_parse_uint(const char *arg, unsigned int min, unsigned int max,
		  unsigned int *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 0);
	if (errno || end == arg || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}
