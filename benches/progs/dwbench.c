// SPDX-License-Identifier: GPL-2.0
/*
 * dwbench - a database page write made durable and untorn, two ways.
 *
 *   dwbench --mode MODE --bs SIZE [--batch B] [--seconds S] [--span BYTES]
 *           [--seed N] FILE
 *
 * A batch of B pages (default 1) is made durable at a time:
 *   doublewrite   what InnoDB does without atomic writes: write the B pages
 *                 to a doublewrite area, fdatasync, write them in place,
 *                 fdatasync (a crash tearing an in-place write is repaired
 *                 from the doublewrite copy)
 *   atomic-dsync  B = 1: one pwritev2(RWF_ATOMIC | RWF_DSYNC) in place;
 *                 B > 1: B RWF_ATOMIC writes in place, then one fdatasync
 *   plain-dsync   the same without RWF_ATOMIC (tearable; the reference)
 *
 * Pages go to random SIZE-aligned offsets in the first BYTES (default
 * 64 MiB) of FILE, which must exist and be that large; the doublewrite area
 * is the B * SIZE bytes after them. O_DIRECT throughout, queue depth 1,
 * for S seconds (default 5). Prints one CSV line:
 *   mode,bs,batch,pages,pages_per_s,p50_us,p99_us,cpu_us_per_page
 * where the latencies are those of a whole batch, and the CPU time is the
 * whole guest's non-idle time from /proc/stat (kworkers and interrupts
 * count), divided by the pages made durable.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "io.h"
#include "util.h"

enum mode { DOUBLEWRITE, ATOMIC_DSYNC, PLAIN_DSYNC };

static const char *const mode_names[] = {
	[DOUBLEWRITE] = "doublewrite",
	[ATOMIC_DSYNC] = "atomic-dsync",
	[PLAIN_DSYNC] = "plain-dsync",
};

static void usage(void)
{
	fprintf(stderr, "usage: dwbench --mode doublewrite|atomic-dsync|plain-dsync "
		"--bs SIZE [--batch B] [--seconds S] [--span BYTES] [--seed N] FILE\n");
	exit(2);
}

static int write_page(int fd, void *buf, size_t bs, off_t off, int flags)
{
	struct iovec iov = { .iov_base = buf, .iov_len = bs };
	ssize_t ret = pwritev2(fd, &iov, 1, off, flags);

	if (ret == (ssize_t)bs)
		return 0;
	return ret < 0 ? -errno : -EIO;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "bs", required_argument, NULL, 'b' },
		{ "seconds", required_argument, NULL, 's' },
		{ "span", required_argument, NULL, 'S' },
		{ "seed", required_argument, NULL, 'r' },
		{ "batch", required_argument, NULL, 'B' },
		{ 0 }
	};
	uint64_t bs = 0, span = 64ull << 20, secs = 5, seed = 1, batch = 1, v;
	size_t cap = 1 << 16, n = 0;
	int mode = -1, c, fd, err = 0, flags;
	double t0, t1, c0, c1, *lat;
	off_t *offs;
	void *buf;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			for (int i = 0; i < 3; i++)
				if (!strcmp(optarg, mode_names[i]))
					mode = i;
			if (mode < 0)
				usage();
			break;
		case 'b':
		case 's':
		case 'S':
		case 'r':
		case 'B':
			if (ut_parse_size(optarg, &v))
				usage();
			if (c == 'b')
				bs = v;
			else if (c == 's')
				secs = v;
			else if (c == 'S')
				span = v;
			else if (c == 'B')
				batch = v;
			else
				seed = v;
			break;
		default:
			usage();
		}
	}
	if (optind != argc - 1 || mode < 0 || !ut_is_pow2(bs) || bs < 512 ||
	    span < bs || span % bs || !secs || !batch || batch > 1024)
		usage();

	fd = open(argv[optind], O_RDWR | O_DIRECT);
	if (fd < 0) {
		fprintf(stderr, "dwbench: %s: %s\n", argv[optind], strerror(errno));
		return 1;
	}
	buf = ut_alloc_io(bs);
	lat = malloc(cap * sizeof(*lat));
	offs = malloc(batch * sizeof(*offs));
	if (!buf || !lat || !offs) {
		fprintf(stderr, "dwbench: out of memory\n");
		return 1;
	}
	memset(buf, 0x5a, bs);

	c0 = ut_busy_us();
	t0 = ut_now_us();
	t1 = t0;
	while (t1 - t0 < secs * 1e6) {
		double s = t1;
		uint64_t i;

		for (i = 0; i < batch; i++)
			offs[i] = (off_t)(ut_rand(&seed) % (span / bs)) * bs;
		((uint64_t *)buf)[0] = n;
		err = 0;
		switch (mode) {
		case DOUBLEWRITE:
			for (i = 0; i < batch && !err; i++)
				err = write_page(fd, buf, bs, span + i * bs, 0);
			if (!err && fdatasync(fd))
				err = -errno;
			for (i = 0; i < batch && !err; i++)
				err = write_page(fd, buf, bs, offs[i], 0);
			if (!err && fdatasync(fd))
				err = -errno;
			break;
		case ATOMIC_DSYNC:
		case PLAIN_DSYNC:
			flags = mode == ATOMIC_DSYNC ? RWF_ATOMIC : 0;
			if (batch == 1) {
				err = write_page(fd, buf, bs, offs[0],
						 flags | RWF_DSYNC);
				break;
			}
			for (i = 0; i < batch && !err; i++)
				err = write_page(fd, buf, bs, offs[i], flags);
			if (!err && fdatasync(fd))
				err = -errno;
			break;
		}
		if (err) {
			fprintf(stderr, "dwbench: %s of %llu-byte pages: %s\n",
				mode_names[mode], (unsigned long long)bs,
				strerror(-err));
			return 1;
		}
		t1 = ut_now_us();
		if (n == cap) {
			double *more = realloc(lat, 2 * cap * sizeof(*lat));

			if (!more) {
				fprintf(stderr, "dwbench: out of memory\n");
				return 1;
			}
			lat = more;
			cap *= 2;
		}
		lat[n++] = t1 - s;
	}
	c1 = ut_busy_us();
	qsort(lat, n, sizeof(*lat), ut_cmp_double);
	printf("%s,%llu,%llu,%llu,%.1f,%.1f,%.1f,%.1f\n", mode_names[mode],
	       (unsigned long long)bs, (unsigned long long)batch,
	       (unsigned long long)(n * batch), n * batch / ((t1 - t0) / 1e6),
	       lat[n / 2], lat[(n * 99) / 100], (c1 - c0) / (n * batch));
	return 0;
}
