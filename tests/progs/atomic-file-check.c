// SPDX-License-Identifier: GPL-2.0
/*
 * atomic-file-check - RWF_ATOMIC on files over every kind of mapping: a
 * hole, an unwritten (fallocated) extent, a written extent, at EOF and
 * beyond it, a range shared with another file (reflink), a mix of written,
 * unwritten and hole inside the unit (and written next to a hole, written
 * next to unwritten blocks), and dirty page cache over written or
 * unallocated (delalloc) blocks; with O_DSYNC/RWF_SYNC/RWF_DSYNC variants,
 * through pwritev2, io_uring and AIO. Each write is read back intact, its
 * neighbours (and the other owner of shared blocks) are left alone and
 * i_size ends where it must.
 *
 *   atomic-file-check [--name NAME] [--unit SIZE] [--min SIZE] [--max SIZE]
 *                     [--quick] DIR
 *
 * Without --unit every power of two from the file's statx unit_min to its
 * unit_max (or from --min and to --max, within those) is tried; --quick
 * uses pwritev2 alone and no sync variants. The shared layout is skipped
 * when the filesystem cannot reflink.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io.h"
#include "pattern.h"
#include "statx.h"
#include "tap.h"
#include "util.h"

static char path[4096];
static char donor_path[4200];
static char why[512];
static int no_reflink;	/* FICLONE failed: the shared layout is skipped */
static int quick;		/* --quick */

/* Record why a check failed, for the diagnostic under its TAP line. */
static int fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return 0;
}

/* Unit idx of size len holds generation gen (0: must be zero). */
static int unit_is(int fd, size_t len, uint64_t idx, uint64_t gen)
{
	struct ut_unit_check res;
	void *buf = ut_alloc_io(len);
	ssize_t n = ut_pread(fd, buf, len, idx * len);
	int ok;

	if (n < 0) {
		free(buf);
		return fail("read of unit %llu: %s", (unsigned long long)idx, strerror(-n));
	}
	if (n < (ssize_t)len)
		memset((char *)buf + n, 0, len - n);
	ut_pattern_check(buf, len, idx, len, &res);
	free(buf);
	if (gen == 0)
		ok = res.state == UT_UNIT_ZERO;
	else
		ok = res.state == UT_UNIT_OK && res.gen == gen;
	if (!ok)
		return fail("unit %llu of %zu bytes is %s gen %llu..%llu, expected %s %llu",
			    (unsigned long long)idx, len,
			    ut_unit_state_name(res.state),
			    (unsigned long long)res.gen_min,
			    (unsigned long long)res.gen_max,
			    gen ? "generation" : "zero", (unsigned long long)gen);
	return 1;
}

static int write_unit(enum ut_engine e, int fd, size_t len, uint64_t idx,
		      uint64_t gen, int rwflags)
{
	void *buf = ut_alloc_io(len);
	struct iovec iov = { buf, len };
	ssize_t n;

	ut_pattern_fill(buf, len, idx, gen, len);
	n = ut_writev(e, fd, &iov, 1, idx * len, rwflags);
	free(buf);
	if (n != (ssize_t)len)
		return fail("%s write of unit %llu (%zu bytes, flags 0x%x): %s",
			    ut_engine_name(e), (unsigned long long)idx, len, rwflags,
			    n < 0 ? strerror(-n) : "short write");
	return 1;
}

static int size_is(int fd, off_t want)
{
	struct stat st;

	if (fstat(fd, &st))
		return fail("fstat: %s", strerror(errno));
	if (st.st_size != want)
		return fail("i_size is %lld, expected %lld", (long long)st.st_size,
			    (long long)want);
	return 1;
}

enum layout {
	HOLE, UNWRITTEN, WRITTEN, AT_EOF, BEYOND_EOF, SHARED, MIXED,
	WRITTEN_HOLE, WRITTEN_UNWRITTEN, DIRTY_WRITTEN, DELALLOC, NR_LAYOUTS
};
static const char *const layout_names[] = {
	"onto a hole", "onto an unwritten extent", "onto a written extent",
	"at EOF", "beyond EOF", "onto a shared (reflinked) extent",
	"onto a mix of written, unwritten and hole",
	"onto written blocks next to a hole",
	"onto written blocks next to unwritten ones",
	"onto written blocks under dirty page cache",
	"onto delalloc blocks (dirty page cache over a hole)",
};

/* Units 0..3 of generation 1 in a second file, then share them all. */
static int make_shared(int fd, size_t len)
{
	int dfd = open(donor_path, O_RDWR | O_CREAT | O_TRUNC | O_DIRECT, 0644);
	int ok = 1;

	if (dfd < 0)
		return fail("open %s: %s", donor_path, strerror(errno));
	for (uint64_t i = 0; ok && i < 4; i++)
		ok = write_unit(UT_ENGINE_PWRITEV2, dfd, len, i, 1, 0);
	if (ok && ioctl(fd, FICLONE, dfd)) {
		if (errno == EOPNOTSUPP || errno == EXDEV || errno == EINVAL ||
		    errno == ENOTTY)
			no_reflink = 1;
		ok = fail("FICLONE: %s", strerror(errno));
	}
	close(dfd);
	return ok;
}

/* The donor of a shared layout must still hold generation 1 everywhere. */
static int donor_intact(size_t len)
{
	int dfd = open(donor_path, O_RDONLY | O_DIRECT);
	int ok = 1;

	if (dfd < 0)
		return fail("open %s: %s", donor_path, strerror(errno));
	for (uint64_t i = 0; ok && i < 4; i++)
		ok = unit_is(dfd, len, i, 1);
	if (!ok)
		snprintf(why + strlen(why), sizeof(why) - strlen(why),
			 " (in the reflink donor)");
	close(dfd);
	return ok;
}

/*
 * Unit 1 mixes mappings: its first block written (with bytes that are no
 * generation), its second block unwritten, the rest a hole (MIXED); or its
 * first half written and the rest a hole (WRITTEN_HOLE) or unwritten
 * (WRITTEN_UNWRITTEN). Units 0 and 3 are written; unit 2 is a hole.
 */
static int make_mixed(int fd, size_t len, size_t blksz, enum layout l)
{
	size_t written = l == MIXED || len < 2 * blksz ? blksz : len / 2;
	void *junk;
	int ok;

	ok = write_unit(UT_ENGINE_PWRITEV2, fd, len, 0, 1, 0) &&
	     write_unit(UT_ENGINE_PWRITEV2, fd, len, 3, 1, 0);
	if (!ok)
		return 0;
	junk = ut_alloc_io(written);
	memset(junk, 0xa5, written);
	if (pwrite(fd, junk, written, len) != (ssize_t)written)
		ok = fail("pwrite of the mixed unit's first part: %s", strerror(errno));
	free(junk);
	if (ok && l == MIXED && len >= 2 * blksz &&
	    fallocate(fd, FALLOC_FL_KEEP_SIZE, len + blksz, blksz))
		ok = fail("fallocate in the mixed unit: %s", strerror(errno));
	if (ok && l == WRITTEN_UNWRITTEN && written < len &&
	    fallocate(fd, FALLOC_FL_KEEP_SIZE, len + written, len - written))
		ok = fail("fallocate in the mixed unit: %s", strerror(errno));
	return ok;
}

/*
 * Dirty page cache over unit 1 through a buffered descriptor, never written
 * back before the atomic write: generation 3, which must not survive. Over
 * written units (DIRTY_WRITTEN) or over a hole, where XFS and ext4 hold
 * delayed allocations (DELALLOC; unit 0 is also buffered, generation 1).
 */
static int make_dirty(int fd, size_t len, int over_hole)
{
	int bfd = open(path, O_RDWR);
	void *buf = ut_alloc_io(len);
	int ok = 1;

	if (bfd < 0) {
		free(buf);
		return fail("open %s buffered: %s", path, strerror(errno));
	}
	if (over_hole) {
		ok = !ftruncate(fd, 4 * len) || fail("ftruncate: %s", strerror(errno));
		ut_pattern_fill(buf, len, 0, 1, len);
		if (ok && pwrite(bfd, buf, len, 0) != (ssize_t)len)
			ok = fail("buffered write of unit 0: %s", strerror(errno));
	} else {
		for (uint64_t i = 0; ok && i < 4; i++)
			ok = write_unit(UT_ENGINE_PWRITEV2, fd, len, i, 1, 0);
	}
	ut_pattern_fill(buf, len, 1, 3, len);
	if (ok && pwrite(bfd, buf, len, len) != (ssize_t)len)
		ok = fail("buffered write of unit 1: %s", strerror(errno));
	free(buf);
	close(bfd);
	return ok;
}

/*
 * Build the layout around unit 1 (units 0..3), write unit 1 (unit 2 at EOF,
 * unit 4 beyond EOF) atomically, and check everything.
 */
static int one_case(enum layout l, enum ut_engine e, size_t len, size_t blksz,
		    int oflags, int rwflags)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_DIRECT | oflags, 0644);
	int ok = 1;
	uint64_t target = 1, i;
	off_t size = 4 * len;

	if (fd < 0)
		return fail("open %s: %s", path, strerror(errno));
	switch (l) {
	case HOLE:
		ok = !ftruncate(fd, size) || fail("ftruncate: %s", strerror(errno));
		break;
	case UNWRITTEN:
		ok = !fallocate(fd, 0, 0, size) || fail("fallocate: %s", strerror(errno));
		break;
	case WRITTEN:
		for (i = 0; ok && i < 4; i++)
			ok = write_unit(UT_ENGINE_PWRITEV2, fd, len, i, 1, 0);
		break;
	case AT_EOF:
		for (i = 0; ok && i < 2; i++)
			ok = write_unit(UT_ENGINE_PWRITEV2, fd, len, i, 1, 0);
		target = 2;
		size = 3 * len;
		break;
	case BEYOND_EOF:
		ok = write_unit(UT_ENGINE_PWRITEV2, fd, len, 0, 1, 0);
		target = 4;
		size = 5 * len;
		break;
	case SHARED:
		ok = make_shared(fd, len);
		break;
	case MIXED:
	case WRITTEN_HOLE:
	case WRITTEN_UNWRITTEN:
		ok = make_mixed(fd, len, blksz, l);
		break;
	case DIRTY_WRITTEN:
		ok = make_dirty(fd, len, 0);
		break;
	case DELALLOC:
		ok = make_dirty(fd, len, 1);
		break;
	default:
		break;
	}
	ok = ok && write_unit(e, fd, len, target, 2, RWF_ATOMIC | rwflags);
	ok = ok && unit_is(fd, len, target, 2) && size_is(fd, size);
	for (i = 0; ok && i < (uint64_t)size / len; i++) {
		uint64_t want = 1;

		if (i == target)
			continue;
		if (l == HOLE || l == UNWRITTEN || (l == BEYOND_EOF && i > 0) ||
		    ((l == MIXED || l == WRITTEN_HOLE || l == WRITTEN_UNWRITTEN) &&
		     i == 2) || (l == DELALLOC && i > 1))
			want = 0;
		ok = unit_is(fd, len, i, want);
	}
	if (ok && l == SHARED)
		ok = donor_intact(len);
	fsync(fd);
	close(fd);
	return ok;
}

static void report(int ok, const char *how, enum layout l, uint64_t min,
		   uint64_t max)
{
	if (!ok && l == SHARED && no_reflink) {
		printf("ok - %s: %s: atomic write %s # SKIP %s\n", ut_tap_prefix,
		       how, layout_names[l], why);
		fflush(stdout);
		no_reflink = 0;
		return;
	}
	ut_tap(ok, "%s: atomic write %s, sizes %llu..%llu", how, layout_names[l],
	       (unsigned long long)min, (unsigned long long)max);
	if (!ok)
		ut_diag("%s", why);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "name", required_argument, NULL, 'N' },
		{ "unit", required_argument, NULL, 'u' },
		{ "max", required_argument, NULL, 'm' },
		{ "min", required_argument, NULL, 'n' },
		{ "quick", no_argument, NULL, 'Q' },
		{ 0 }
	};
	static const struct { const char *what; int oflags, rwflags; } syncs[] = {
		{ "O_DSYNC", O_DSYNC, 0 },
		{ "RWF_SYNC", 0, RWF_SYNC },
		{ "RWF_DSYNC", 0, RWF_DSYNC },
	};
	uint64_t only = 0, cap = 0, floor = 0, min, max;
	size_t blksz;
	struct ut_statx stx;
	int c, fd;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'N': ut_tap_prefix = optarg; break;
		case 'u':
			if (ut_parse_size(optarg, &only) || !ut_is_pow2(only)) {
				fprintf(stderr, "bad --unit %s\n", optarg);
				return 2;
			}
			break;
		case 'Q': quick = 1; break;
		case 'n':
			if (ut_parse_size(optarg, &floor) || !ut_is_pow2(floor)) {
				fprintf(stderr, "bad --min %s\n", optarg);
				return 2;
			}
			break;
		case 'm':
			if (ut_parse_size(optarg, &cap) || !ut_is_pow2(cap)) {
				fprintf(stderr, "bad --max %s\n", optarg);
				return 2;
			}
			break;
		default: return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: atomic-file-check [--name N] [--unit SIZE] [--min SIZE] [--max SIZE] [--quick] DIR\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/atomic-file-check.%d", argv[optind], getpid());
	snprintf(donor_path, sizeof(donor_path), "%s.donor", path);
	if (!*ut_tap_prefix)
		ut_tap_prefix = argv[optind];
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ut_statx(fd, "", AT_EMPTY_PATH, UT_STATX_WRITE_ATOMIC, &stx)) {
		ut_tap(0, "create and statx %s: %s", path, strerror(errno));
		return 1;
	}
	close(fd);
	min = only ?: stx.stx_atomic_write_unit_min;
	max = only ?: stx.stx_atomic_write_unit_max;
	blksz = stx.stx_atomic_write_unit_min;
	if (cap && cap < max)
		max = cap;
	if (floor > min)
		min = floor;
	if (min > max) {
		ut_tap(0, "--min %llu is above the largest size %llu",
		    (unsigned long long)min, (unsigned long long)max);
		unlink(path);
		return 1;
	}
	if (!min || !max) {
		ut_tap(0, "the file offers no atomic writes (statx unit %u..%u)",
		    stx.stx_atomic_write_unit_min, stx.stx_atomic_write_unit_max);
		unlink(path);
		return 1;
	}
	for (enum ut_engine e = 0; e < (quick ? 1 : UT_ENGINE_COUNT); e++) {
		for (enum layout l = 0; l < NR_LAYOUTS; l++) {
			int ok = 1;

			why[0] = '\0';
			for (uint64_t len = min; ok && len <= max; len <<= 1)
				ok = one_case(l, e, len, blksz, 0, 0);
			report(ok, ut_engine_name(e), l, min, max);
		}
	}
	for (size_t s = 0; !quick && s < sizeof(syncs) / sizeof(syncs[0]); s++) {
		for (enum layout l = 0; l < NR_LAYOUTS; l++) {
			int ok = 1;

			why[0] = '\0';
			for (uint64_t len = min; ok && len <= max; len <<= 1)
				ok = one_case(l, UT_ENGINE_PWRITEV2, len, blksz,
					      syncs[s].oflags, syncs[s].rwflags);
			report(ok, syncs[s].what, l, min, max);
		}
	}
	unlink(path);
	unlink(donor_path);
	return ut_tap_failures ? 1 : 0;
}
