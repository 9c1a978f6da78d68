// SPDX-License-Identifier: GPL-2.0
/*
 * redobench - a database's redo log and page writes together, on two
 * filesystems compared in interleaved slices.
 *
 *   redobench --a DIR --b DIR [--page SIZE] [--seconds S] [--slice-ms M]
 *             [--span BYTES] [--seed N]
 *
 * The LSFMM 2025 report (seeds/000-article.md) says MySQL lost to its
 * doublewrite buffer on XFS with 16 KiB blocks because of its redo log: a
 * commit is a 512-byte buffered write and an fsync, and on a 16 KiB-block
 * filesystem each of those writes back (and first reads) a whole 16 KiB
 * block. In each slice two threads run on one directory: the log writer
 * appends 512-byte records to DIR/redo with write(2) and fdatasync(2)
 * after each (a commit; the file wraps at 64 MiB, as a redo log does), and
 * the page writer writes SIZE-byte pages (default 16 KiB) with
 * pwritev2(RWF_ATOMIC) at random aligned offsets of DIR/pages (O_DIRECT,
 * which must exist and hold BYTES, default 128 MiB). Slices alternate
 * between the directories AB BA AB ..., M ms each (default 200) for S
 * seconds (default 20), so that TCG's drift cancels.
 *
 * Prints one CSV line:
 *   page,pairs,a_commits_per_s,b_commits_per_s,commit_ratio,commit_lo,
 *   commit_hi,a_pages_per_s,b_pages_per_s,page_ratio,page_lo,page_hi,
 *   a_commit_us,b_commit_us
 * where the ratios are B over A with 95 % bootstrap intervals over the
 * slice pairs, and *_commit_us the mean commit latency.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "bench.h"
#include "io.h"
#include "util.h"

#define RECORD		512
#define LOG_WRAP	(64ull << 20)

struct side {
	int redo_fd, page_fd;
	uint64_t log_pos;
};

struct slice {
	double commits, commit_us, pages, us;
};

struct run {
	struct side s[2];
	uint64_t page, span, seed;
	void *page_buf;
	char record[RECORD];
	/* the slice in progress */
	struct side *cur;
	double deadline;
	pthread_barrier_t start, end;
	double commits, commit_us, pages;
};

static void die(const char *what, int err)
{
	fprintf(stderr, "redobench: %s: %s\n", what, strerror(err));
	exit(1);
}

static void *log_writer(void *arg)
{
	struct run *r = arg;

	for (;;) {
		pthread_barrier_wait(&r->start);
		if (!r->deadline)
			return NULL;
		r->commits = r->commit_us = 0;
		do {
			struct side *s = r->cur;
			double t0 = ut_now_us();

			if (pwrite(s->redo_fd, r->record, RECORD, s->log_pos) != RECORD)
				die("redo write", errno ? errno : EIO);
			if (fdatasync(s->redo_fd))
				die("redo fdatasync", errno);
			s->log_pos = (s->log_pos + RECORD) % LOG_WRAP;
			r->commit_us += ut_now_us() - t0;
			r->commits++;
		} while (ut_now_us() < r->deadline);
		pthread_barrier_wait(&r->end);
	}
}

static void *page_writer(void *arg)
{
	struct run *r = arg;
	struct iovec iov = { .iov_base = r->page_buf, .iov_len = r->page };
	uint64_t seed = r->seed;

	for (;;) {
		pthread_barrier_wait(&r->start);
		if (!r->deadline)
			return NULL;
		r->pages = 0;
		do {
			off_t off = (off_t)(ut_rand(&seed) % (r->span / r->page)) * r->page;

			if (pwritev2(r->cur->page_fd, &iov, 1, off, RWF_ATOMIC) != (ssize_t)r->page)
				die("page write", errno ? errno : EIO);
			r->pages++;
		} while (ut_now_us() < r->deadline);
		pthread_barrier_wait(&r->end);
	}
}

static void run_slice(struct run *r, int side, double ms, struct slice *out)
{
	double t0 = ut_now_us();

	r->cur = &r->s[side];
	r->deadline = t0 + ms * 1e3;
	pthread_barrier_wait(&r->start);
	pthread_barrier_wait(&r->end);
	out->us += ut_now_us() - t0;
	out->commits += r->commits;
	out->commit_us += r->commit_us;
	out->pages += r->pages;
}

static void open_side(struct side *s, const char *dir)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/redo", dir);
	s->redo_fd = open(path, O_RDWR | O_CREAT, 0644);
	if (s->redo_fd < 0)
		die(path, errno);
	snprintf(path, sizeof(path), "%s/pages", dir);
	s->page_fd = open(path, O_RDWR | O_DIRECT);
	if (s->page_fd < 0)
		die(path, errno);
}

/* B over A of @what (0: commits, 1: pages) per second, pooled. */
static double ratio(const struct slice *a, const struct slice *b,
		    const unsigned int *pick, unsigned int n, int what)
{
	double an = 0, au = 0, bn = 0, bu = 0;

	for (unsigned int i = 0; i < n; i++) {
		unsigned int k = pick ? pick[i] : i;

		an += what ? a[k].pages : a[k].commits;
		bn += what ? b[k].pages : b[k].commits;
		au += a[k].us;
		bu += b[k].us;
	}
	return an && au ? (bn / bu) / (an / au) : 0;
}

struct slice_pair {
	const struct slice *a, *b;
	int what;
};

/* ratio() for ut_bootstrap95(). */
static double ratio_of(const unsigned int *pick, unsigned int n, void *arg)
{
	const struct slice_pair *sp = arg;

	return ratio(sp->a, sp->b, pick, n, sp->what);
}

static void interval(const struct slice *a, const struct slice *b,
		     unsigned int n, int what, uint64_t *seed, double *lo,
		     double *hi)
{
	struct slice_pair sp = { a, b, what };

	if (ut_bootstrap95(n, 2000, seed, ratio_of, &sp, lo, hi))
		die("bootstrap", ENOMEM);
}

static void usage(void)
{
	fprintf(stderr, "usage: redobench --a DIR --b DIR [--page SIZE] "
		"[--seconds S] [--slice-ms M] [--span BYTES] [--seed N]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "a", required_argument, NULL, 'a' },
		{ "b", required_argument, NULL, 'b' },
		{ "page", required_argument, NULL, 'p' },
		{ "seconds", required_argument, NULL, 's' },
		{ "slice-ms", required_argument, NULL, 'm' },
		{ "span", required_argument, NULL, 'S' },
		{ "seed", required_argument, NULL, 'r' },
		{ 0 }
	};
	struct run r = { .page = 16384, .span = 128ull << 20, .seed = 1 };
	uint64_t secs = 20, slice_ms = 200, v;
	const char *da = NULL, *db = NULL;
	struct slice *ta, *tb, sa = { 0 }, sb = { 0 }, warm = { 0 };
	double clo, chi, plo, phi;
	unsigned int pairs, i;
	pthread_t lt, pt;
	int c;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'a':
			da = optarg;
			break;
		case 'b':
			db = optarg;
			break;
		default:
			if (!strchr("psmSr", c) || ut_parse_size(optarg, &v))
				usage();
			if (c == 'p')
				r.page = v;
			else if (c == 's')
				secs = v;
			else if (c == 'm')
				slice_ms = v;
			else if (c == 'S')
				r.span = v;
			else
				r.seed = v;
		}
	}
	if (!da || !db || optind != argc || !ut_is_pow2(r.page) ||
	    r.page < 512 || r.span < r.page || !secs || !slice_ms)
		usage();
	open_side(&r.s[0], da);
	open_side(&r.s[1], db);
	r.page_buf = ut_alloc_io(r.page);
	if (!r.page_buf)
		die("buffer", ENOMEM);
	memset(r.page_buf, 0x6b, r.page);
	memset(r.record, 0x52, RECORD);
	pairs = secs * 1000 / (2 * slice_ms);
	if (pairs < 2)
		pairs = 2;
	ta = calloc(pairs, sizeof(*ta));
	tb = calloc(pairs, sizeof(*tb));
	if (!ta || !tb)
		die("slices", ENOMEM);
	pthread_barrier_init(&r.start, NULL, 3);
	pthread_barrier_init(&r.end, NULL, 3);
	r.deadline = 1;
	if (pthread_create(&lt, NULL, log_writer, &r) ||
	    pthread_create(&pt, NULL, page_writer, &r))
		die("threads", EAGAIN);

	run_slice(&r, 0, slice_ms, &warm);
	run_slice(&r, 1, slice_ms, &warm);
	for (i = 0; i < pairs; i++) {
		if (i % 2 == 0) {
			run_slice(&r, 0, slice_ms, &ta[i]);
			run_slice(&r, 1, slice_ms, &tb[i]);
		} else {
			run_slice(&r, 1, slice_ms, &tb[i]);
			run_slice(&r, 0, slice_ms, &ta[i]);
		}
	}
	r.deadline = 0;
	pthread_barrier_wait(&r.start);
	pthread_join(lt, NULL);
	pthread_join(pt, NULL);

	for (i = 0; i < pairs; i++) {
		sa.commits += ta[i].commits;
		sa.commit_us += ta[i].commit_us;
		sa.pages += ta[i].pages;
		sa.us += ta[i].us;
		sb.commits += tb[i].commits;
		sb.commit_us += tb[i].commit_us;
		sb.pages += tb[i].pages;
		sb.us += tb[i].us;
	}
	interval(ta, tb, pairs, 0, &r.seed, &clo, &chi);
	interval(ta, tb, pairs, 1, &r.seed, &plo, &phi);
	printf("%llu,%u,%.1f,%.1f,%.4f,%.4f,%.4f,%.1f,%.1f,%.4f,%.4f,%.4f,%.0f,%.0f\n",
	       (unsigned long long)r.page, pairs,
	       sa.commits / (sa.us / 1e6), sb.commits / (sb.us / 1e6),
	       ratio(ta, tb, NULL, pairs, 0), clo, chi,
	       sa.pages / (sa.us / 1e6), sb.pages / (sb.us / 1e6),
	       ratio(ta, tb, NULL, pairs, 1), plo, phi,
	       sa.commits ? sa.commit_us / sa.commits : 0,
	       sb.commits ? sb.commit_us / sb.commits : 0);
	return 0;
}
