// SPDX-License-Identifier: GPL-2.0
/*
 * clone-race - atomic writes to a file while it is cloned (FICLONE) into
 * snapshots back to back, as a backup tool would take them.
 *
 *   clone-race [--writers N] [--unit SIZE] [--first U] [--count N]
 *              [--ring N] [--margin-ms MS] SRC DST SECONDS
 *
 * N writer threads (default 3) rewrite units FIRST to FIRST+COUNT-1 of SRC
 * (stamped as untorn write does, a generation of their own each) with
 * pwritev2(RWF_ATOMIC) and O_DIRECT, while the main thread clones SRC into
 * DST.(i mod RING) for SECONDS. Two things must hold:
 *
 * - No write to SRC runs inside a clone's block remap: the clone holds the
 *   source's IOLOCK shared with XFS_IREMAPPING set and every writer must
 *   wait for it (a write beside it can free a block the clone has read
 *   but not yet shared). A write that started more than MS milliseconds
 *   (default 500) after a clone began and completed while that clone was
 *   still running is counted as "inside"; there must be none. The margin
 *   covers the clone taking its locks, which writes already running may
 *   delay. Only clones that last longer than the margin can see one; their
 *   number is printed, and the caller sizes SRC to make them long.
 *
 * - A snapshot never changes once taken: right after a clone the snapshot
 *   is read back (O_DIRECT) and a CRC-32C noted per 4 KiB block; when the
 *   ring comes back to that file it must read the same. A block that
 *   changed was freed under the snapshot and handed out again.
 *
 * Prints "clones C long L writes W inside I checked K"; exits 1 on an
 * error, a write inside a clone or a changed snapshot.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include "crc32c.h"
#include "io.h"
#include "pattern.h"
#include "util.h"

#define BLK 4096
/* The pattern seed of untorn write and verify, so that they can check. */
#define SEED 0x756e746f726eULL

static struct {
	unsigned int writers, ring;
	uint64_t unit, first, count;
	double seconds, margin;
	const char *src, *dst;
} opt = { .writers = 3, .ring = 4, .unit = 65536, .count = 8, .margin = 0.5 };

/* Odd while a clone runs; clone_t0 is when the current one began. */
static atomic_ulong clone_seq;
static _Atomic double clone_t0;
static atomic_int stop;
static atomic_ullong writes, inside;
static atomic_int writer_failed;

struct snap {
	char path[4096];
	unsigned long long round;	/* 0: not taken yet */
	size_t nblocks;
	uint32_t *crc;
};

static char *buf;
static size_t buf_size;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *writer(void *arg)
{
	unsigned int w = (uintptr_t)arg;
	uint64_t gen = (uint64_t)(w + 1) * 1000000000ULL, k;
	void *ubuf;
	int fd;

	fd = open(opt.src, O_WRONLY | O_DIRECT);
	if (fd < 0 || posix_memalign(&ubuf, BLK, opt.unit)) {
		fprintf(stderr, "clone-race: writer %u: open %s: %s\n", w,
			opt.src, strerror(errno));
		atomic_store(&writer_failed, 1);
		return NULL;
	}
	for (k = w; !atomic_load(&stop); k++) {
		uint64_t u = opt.first + k % opt.count;
		struct iovec iov = { ubuf, opt.unit };
		unsigned long seq0, seq1;
		double t0, start;
		ssize_t n;

		ut_pattern_fill(ubuf, opt.unit, u, ++gen, SEED);
		seq0 = atomic_load(&clone_seq);
		t0 = atomic_load(&clone_t0);
		start = now();
		n = pwritev2(fd, &iov, 1, u * opt.unit, RWF_ATOMIC);
		seq1 = atomic_load(&clone_seq);
		if (n != (ssize_t)opt.unit) {
			fprintf(stderr, "clone-race: writer %u: unit %llu: %s\n",
				w, (unsigned long long)u,
				n < 0 ? strerror(errno) : "short write");
			atomic_store(&writer_failed, 1);
			break;
		}
		atomic_fetch_add(&writes, 1);
		/* The same clone ran from before the write to after it. */
		if ((seq0 & 1) && seq0 == seq1 && start > t0 + opt.margin)
			atomic_fetch_add(&inside, 1);
	}
	close(fd);
	free(ubuf);
	return NULL;
}

/* Read all of PATH with O_DIRECT into buf; returns its size or -1. */
static ssize_t read_all(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECT);
	struct stat st;
	ssize_t n;

	if (fd < 0 || fstat(fd, &st)) {
		fprintf(stderr, "clone-race: open %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if ((size_t)st.st_size > buf_size) {
		free(buf);
		buf_size = ((size_t)st.st_size + BLK - 1) / BLK * BLK;
		if (posix_memalign((void **)&buf, BLK, buf_size)) {
			fprintf(stderr, "clone-race: out of memory\n");
			exit(1);
		}
	}
	/* O_DIRECT reads whole blocks; the read stops short at EOF. */
	n = ut_pread(fd, buf, ((size_t)st.st_size + BLK - 1) / BLK * BLK, 0);
	close(fd);
	if (n != st.st_size) {
		fprintf(stderr, "clone-race: read %s: %s\n", path,
			n < 0 ? strerror(-n) : "short file");
		return -1;
	}
	return n;
}

/* Does the snapshot still read as it did when it was taken? */
static int snap_unchanged(struct snap *s)
{
	ssize_t size = read_all(s->path);
	size_t b;

	if (size < 0)
		return 0;
	if ((size_t)size != s->nblocks * BLK) {
		fprintf(stderr, "clone-race: snapshot %s of clone %llu: size %zd, was %zu\n",
			s->path, s->round, size, s->nblocks * BLK);
		return 0;
	}
	for (b = 0; b < s->nblocks; b++) {
		if (ut_crc32c(0, buf + b * BLK, BLK) != s->crc[b]) {
			fprintf(stderr, "clone-race: snapshot %s of clone %llu changed at byte %zu\n",
				s->path, s->round, b * BLK);
			return 0;
		}
	}
	return 1;
}

/* Clone SRC into the snapshot; returns how long the clone took, or -1. */
static double snap_take(struct snap *s, int src, unsigned long long round)
{
	int fd = open(s->path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	double t0, took;
	ssize_t size;
	size_t b;
	int err;

	if (fd < 0) {
		fprintf(stderr, "clone-race: open %s: %s\n", s->path, strerror(errno));
		return -1;
	}
	t0 = now();
	atomic_store(&clone_t0, t0);
	atomic_fetch_add(&clone_seq, 1);
	err = ioctl(fd, FICLONE, src) ? errno : 0;
	atomic_fetch_add(&clone_seq, 1);
	took = now() - t0;
	close(fd);
	if (err) {
		fprintf(stderr, "clone-race: clone %llu into %s: %s\n", round,
			s->path, strerror(err));
		return -1;
	}
	size = read_all(s->path);
	if (size < 0)
		return -1;
	if (size % BLK) {
		fprintf(stderr, "clone-race: %s: size %zd is not whole blocks\n",
			s->path, size);
		return -1;
	}
	s->nblocks = size / BLK;
	free(s->crc);
	s->crc = malloc(s->nblocks * sizeof(*s->crc) + 1);
	if (!s->crc) {
		fprintf(stderr, "clone-race: out of memory\n");
		exit(1);
	}
	for (b = 0; b < s->nblocks; b++)
		s->crc[b] = ut_crc32c(0, buf + b * BLK, BLK);
	s->round = round;
	return took;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: clone-race [--writers N] [--unit SIZE] [--first U] [--count N]\n"
		"                  [--ring N] [--margin-ms MS] SRC DST SECONDS\n");
	exit(2);
}

static uint64_t num_arg(const char *name, const char *s, uint64_t min,
			uint64_t max)
{
	uint64_t v;

	if (ut_parse_size(s, &v) || v < min || v > max) {
		fprintf(stderr, "clone-race: %s takes %llu to %llu: %s\n", name,
			(unsigned long long)min, (unsigned long long)max, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "writers", required_argument, NULL, 'w' },
		{ "unit", required_argument, NULL, 'u' },
		{ "first", required_argument, NULL, 'f' },
		{ "count", required_argument, NULL, 'c' },
		{ "ring", required_argument, NULL, 'r' },
		{ "margin-ms", required_argument, NULL, 'm' },
		{ 0 }
	};
	unsigned long long clones = 0, longer = 0, checked = 0;
	pthread_t *tids;
	struct snap *snaps;
	double end;
	unsigned int i;
	int src, c, ok = 1;
	char *p;

	while ((c = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		switch (c) {
		case 'w': opt.writers = num_arg("--writers", optarg, 1, 64); break;
		case 'u': opt.unit = num_arg("--unit", optarg, BLK, 64 << 20); break;
		case 'f': opt.first = num_arg("--first", optarg, 0, 1 << 30); break;
		case 'c': opt.count = num_arg("--count", optarg, 1, 1 << 20); break;
		case 'r': opt.ring = num_arg("--ring", optarg, 1, 1024); break;
		case 'm': opt.margin = num_arg("--margin-ms", optarg, 0, 60000) / 1e3; break;
		default: usage();
		}
	}
	if (argc - optind != 3 || opt.unit % BLK)
		usage();
	opt.src = argv[optind];
	opt.dst = argv[optind + 1];
	opt.seconds = strtod(argv[optind + 2], &p);
	if (*p || opt.seconds <= 0)
		usage();

	src = open(opt.src, O_RDONLY);
	snaps = calloc(opt.ring, sizeof(*snaps));
	tids = calloc(opt.writers, sizeof(*tids));
	if (src < 0 || !snaps || !tids) {
		fprintf(stderr, "clone-race: open %s: %s\n", opt.src, strerror(errno));
		return 1;
	}
	for (i = 0; i < opt.ring; i++)
		snprintf(snaps[i].path, sizeof(snaps[i].path), "%s.%u", opt.dst, i);
	for (i = 0; i < opt.writers; i++)
		if (pthread_create(&tids[i], NULL, writer, (void *)(uintptr_t)i)) {
			fprintf(stderr, "clone-race: cannot start writer %u\n", i);
			return 1;
		}

	end = now() + opt.seconds;
	while (ok && now() < end && !atomic_load(&writer_failed)) {
		struct snap *s = &snaps[clones % opt.ring];
		double took;

		if (s->round) {
			ok = snap_unchanged(s);
			checked += ok;
		}
		took = ok ? snap_take(s, src, clones + 1) : -1;
		ok = took >= 0;
		clones += ok;
		longer += ok && took > opt.margin;
	}
	atomic_store(&stop, 1);
	for (i = 0; i < opt.writers; i++)
		pthread_join(tids[i], NULL);
	/* The last ring of snapshots, once more, now that the writers stopped. */
	for (i = 0; ok && i < opt.ring; i++) {
		if (!snaps[i].round)
			continue;
		ok = snap_unchanged(&snaps[i]);
		checked += ok;
	}
	printf("clones %llu long %llu writes %llu inside %llu checked %llu\n",
	       clones, longer, (unsigned long long)writes,
	       (unsigned long long)inside, checked);
	if (inside)
		fprintf(stderr, "clone-race: %llu writes ran inside a clone's remap\n",
			(unsigned long long)inside);
	return ok && !inside && !atomic_load(&writer_failed) ? 0 : 1;
}
