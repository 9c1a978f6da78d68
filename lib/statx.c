// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "statx.h"

int ut_statx(int dirfd, const char *path, int flags, unsigned int mask,
	     struct ut_statx *stx)
{
	memset(stx, 0, sizeof(*stx));
	if (syscall(SYS_statx, dirfd, path, flags, mask, stx) < 0)
		return -errno;
	return 0;
}
