// SPDX-License-Identifier: GPL-2.0
/*
 * atomic-check - the RWF_ATOMIC contract of one block device or file, as
 * named TAP cases, through pwritev2, io_uring and Linux AIO.
 *
 *   atomic-check [--expect-none | --expect-unit MIN:MAX] [--expect-opt OPT]
 *                [--engine E] [--name NAME] PATH
 *
 * The limits under test are the ones statx promises. For a block device they
 * must agree with the sysfs queue limits. With --expect-none, PATH must offer
 * no torn-write protection: statx reports zeros and RWF_ATOMIC fails with
 * EOPNOTSUPP. --expect-opt checks stx_atomic_write_unit_max_opt. Every
 * refused write must leave the data on disk unchanged.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "devinfo.h"
#include "io.h"
#include "pattern.h"
#include "statx.h"
#include "tap.h"
#include "util.h"

static uint64_t seed = 0x5eed;
static uint64_t gen_next = 100;

struct target {
	const char *path;
	int fd_direct;
	int fd_buffered;
	uint32_t unit_min, unit_max;
	uint64_t lbs;
};

/*
 * Read the blocks around [off, off+len) so a refused write can be shown to
 * change nothing. O_DIRECT reads need the range aligned to the block size.
 */
static void *snapshot(const struct target *t, off_t *off, size_t *len)
{
	off_t start = *off & ~((off_t)t->lbs - 1);
	off_t end = (*off + *len + t->lbs - 1) & ~((off_t)t->lbs - 1);
	void *buf;

	ssize_t n;

	*off = start;
	*len = end - start;
	buf = ut_alloc_io(*len);
	if (!buf)
		return NULL;
	/* Beyond EOF reads as zeros, before and after a file grows. */
	n = ut_pread(t->fd_direct, buf, *len, *off);
	if (n < 0) {
		free(buf);
		return NULL;
	}
	memset((char *)buf + n, 0, *len - n);
	return buf;
}

static int unchanged(const struct target *t, void *before, off_t off, size_t len)
{
	void *now = snapshot(t, &off, &len);
	int same = now && before && !memcmp(now, before, len);

	free(now);
	free(before);
	return same;
}

/* Write one pattern unit of len at off and read it back. */
static int roundtrip(const struct target *t, enum ut_engine e, size_t len, off_t off)
{
	struct ut_unit_check res;
	uint64_t gen = gen_next++;
	void *buf = ut_alloc_io(len);
	struct iovec iov = { buf, len };
	off_t guard = off >= (off_t)t->lbs ? off - t->lbs : off + len;
	size_t guard_len = t->lbs;
	void *before = snapshot(t, &guard, &guard_len);
	ssize_t n;
	int ok;

	ut_pattern_fill(buf, len, off / len, gen, seed);
	n = ut_writev(e, t->fd_direct, &iov, 1, off, RWF_ATOMIC);
	if (n != (ssize_t)len) {
		ut_diag("%zu bytes at %lld: returned %zd (%s)", len, (long long)off,
		     n, n < 0 ? strerror(-n) : "short");
		free(buf);
		free(before);
		return 0;
	}
	memset(buf, 0, len);
	ok = ut_pread(t->fd_direct, buf, len, off) == (ssize_t)len;
	ut_pattern_check(buf, len, off / len, seed, &res);
	ok = ok && res.state == UT_UNIT_OK && res.gen == gen;
	if (!ok)
		ut_diag("%zu bytes at %lld read back %s", len, (long long)off,
		     ut_unit_state_name(res.state));
	if (!unchanged(t, before, guard, guard_len)) {
		ut_diag("the block next to %zu bytes at %lld changed", len, (long long)off);
		ok = 0;
	}
	free(buf);
	return ok;
}

/*
 * Submit a write the kernel must refuse with want_errno, spread over niov
 * iovecs, and check that it was refused and that nothing changed.
 */
static void expect_refused(const struct target *t, enum ut_engine e, int fd,
			   const char *what, size_t len, off_t off, int niov,
			   int want_errno)
{
	off_t snap_off = off;
	size_t snap_len = len;
	void *buf = ut_alloc_io(len), *before = snapshot(t, &snap_off, &snap_len);
	struct iovec iov[2];
	ssize_t n;
	int same;

	ut_pattern_fill(buf, len, 0, gen_next++, seed);
	iov[0].iov_base = buf;
	iov[0].iov_len = niov == 2 ? len / 2 : len;
	iov[1].iov_base = (char *)buf + len / 2;
	iov[1].iov_len = len / 2;
	n = ut_writev(e, fd, iov, niov, off, RWF_ATOMIC);
	same = unchanged(t, before, snap_off, snap_len);
	ut_tap(n == -want_errno && same, "%s: %s (%zu bytes at %lld) -> %s%s",
	    ut_engine_name(e), what, len, (long long)off,
	    n < 0 ? strerrorname_np(-n) : "success",
	    same ? "" : ", and the data CHANGED");
	if (n != -want_errno)
		ut_diag("expected %s", strerrorname_np(want_errno));
	free(buf);
}

static void check_statx(const struct target *t, const struct ut_statx *stx,
			int expect_none)
{
	struct ut_devinfo dev;
	int has = (stx->stx_mask & UT_STATX_WRITE_ATOMIC) &&
		  (stx->stx_attributes & UT_STATX_ATTR_WRITE_ATOMIC);

	if (expect_none) {
		ut_tap(!has && !stx->stx_atomic_write_unit_min &&
		    !stx->stx_atomic_write_unit_max &&
		    !stx->stx_atomic_write_segments_max &&
		    !stx->stx_atomic_write_unit_max_opt,
		    "statx reports no atomic support (attr %d, min %u, max %u, segs %u)",
		    !!(stx->stx_attributes & UT_STATX_ATTR_WRITE_ATOMIC),
		    stx->stx_atomic_write_unit_min, stx->stx_atomic_write_unit_max,
		    stx->stx_atomic_write_segments_max);
		return;
	}
	ut_tap(has && ut_is_pow2(t->unit_min) && ut_is_pow2(t->unit_max) &&
	    t->unit_min <= t->unit_max &&
	    stx->stx_atomic_write_segments_max == 1,
	    "statx: STATX_WRITE_ATOMIC, unit %u..%u, segments_max %u",
	    t->unit_min, t->unit_max, stx->stx_atomic_write_segments_max);
	if (ut_devinfo(t->path, &dev) || !dev.is_blockdev)
		return;
	ut_tap(dev.have_queue && dev.aw_unit_min == t->unit_min &&
	    dev.aw_unit_max == t->unit_max,
	    "statx agrees with sysfs %s/queue (unit_min %llu, unit_max %llu, max %llu)",
	    dev.disk, (unsigned long long)dev.aw_unit_min,
	    (unsigned long long)dev.aw_unit_max, (unsigned long long)dev.aw_max);
}

static void check_engine(const struct target *t, enum ut_engine e)
{
	const char *en = ut_engine_name(e);
	size_t min = t->unit_min, max = t->unit_max;
	int ok = 1, sizes = 0;

	/* Different offsets per size: every write lands on fresh ground too. */
	for (size_t len = min; len && len <= max; len <<= 1, sizes++)
		ok &= roundtrip(t, e, len, (off_t)len * (3 + e));
	ut_tap(ok, "%s: %d power-of-two sizes %zu..%zu written atomically and read back",
	    en, sizes, min, max);

	expect_refused(t, e, t->fd_direct, "twice unit_max", 2 * max, 0, 1, EINVAL);
	expect_refused(t, e, t->fd_direct, "unit_max plus one unit_min",
		       max + min, 0, 1, EINVAL);
	expect_refused(t, e, t->fd_direct, "non-power-of-two length",
		       3 * min, 0, 1, EINVAL);
	/* With min == max the only misalignment left is below the unit. */
	if (max > min)
		expect_refused(t, e, t->fd_direct, "offset misaligned to the length",
			       2 * min, min, 1, EINVAL);
	else
		expect_refused(t, e, t->fd_direct, "offset misaligned to the length",
			       min, min / 2, 1, EINVAL);
	expect_refused(t, e, t->fd_direct, "two iovecs",
		       max > min ? 2 * min : min, 0, 2, EINVAL);
	expect_refused(t, e, t->fd_buffered, "buffered I/O", min, 0, 1, EOPNOTSUPP);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "expect-none", no_argument, NULL, 'n' },
		{ "engine", required_argument, NULL, 'e' },
		{ "name", required_argument, NULL, 'N' },
		{ "expect-unit", required_argument, NULL, 'U' },
		{ "expect-opt", required_argument, NULL, 'O' },
		{ 0 }
	};
	int expect_none = 0, only = -1, c;
	unsigned int want_min = 0, want_max = 0;
	long long want_opt = -1;
	struct target t = { 0 };
	struct ut_statx stx;
	enum ut_engine e;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'n': expect_none = 1; break;
		case 'e':
			if (ut_engine_parse(optarg, &e)) {
				fprintf(stderr, "unknown engine %s\n", optarg);
				return 2;
			}
			only = e;
			break;
		case 'N': ut_tap_prefix = optarg; break;
		case 'U':
			if (sscanf(optarg, "%u:%u", &want_min, &want_max) != 2) {
				fprintf(stderr, "--expect-unit MIN:MAX\n");
				return 2;
			}
			break;
		case 'O':
			want_opt = strtoll(optarg, NULL, 0);
			break;
		default: return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: atomic-check [--expect-none | --expect-unit MIN:MAX] [--expect-opt OPT] [--engine E] [--name N] PATH\n");
		return 2;
	}
	t.path = argv[optind];
	if (!*ut_tap_prefix)
		ut_tap_prefix = t.path;
	t.fd_direct = open(t.path, O_RDWR | O_DIRECT);
	t.fd_buffered = open(t.path, O_RDWR);
	if (t.fd_direct < 0 || t.fd_buffered < 0) {
		ut_tap(0, "open %s: %s", t.path, strerror(errno));
		return 1;
	}
	if (ut_statx(AT_FDCWD, t.path, 0, UT_STATX_WRITE_ATOMIC, &stx)) {
		ut_tap(0, "statx %s: %s", t.path, strerror(errno));
		return 1;
	}
	t.unit_min = stx.stx_atomic_write_unit_min;
	t.unit_max = stx.stx_atomic_write_unit_max;
	t.lbs = stx.stx_dio_offset_align ?: 512;
	{
		struct ut_statx dio;

		if (!ut_statx(AT_FDCWD, t.path, 0, 0x2000 /* STATX_DIOALIGN */, &dio) &&
		    dio.stx_dio_offset_align)
			t.lbs = dio.stx_dio_offset_align;
	}
	check_statx(&t, &stx, expect_none);
	if (want_max)
		ut_tap(t.unit_min == want_min && t.unit_max == want_max,
		    "statx unit %u..%u, expected %u..%u", t.unit_min, t.unit_max,
		    want_min, want_max);
	if (want_opt >= 0)
		ut_tap(stx.stx_atomic_write_unit_max_opt == want_opt,
		    "statx unit_max_opt %u, expected %lld",
		    stx.stx_atomic_write_unit_max_opt, want_opt);
	for (e = 0; e < UT_ENGINE_COUNT; e++) {
		if (only >= 0 && (int)e != only)
			continue;
		if (expect_none) {
			size_t len = t.lbs < 4096 ? 4096 : t.lbs;

			expect_refused(&t, e, t.fd_direct,
				       "RWF_ATOMIC without support", len, 0, 1,
				       EOPNOTSUPP);
			continue;
		}
		if (!(stx.stx_attributes & UT_STATX_ATTR_WRITE_ATOMIC) ||
		    !t.unit_min)
			continue;
		check_engine(&t, e);
	}
	return ut_tap_failures ? 1 : 0;
}
