// SPDX-License-Identifier: GPL-2.0
/*
 * abbench - two ways of writing pages, compared in interleaved slices.
 *
 *   abbench --a MODE --b MODE --bs SIZE [--qd N] [--dsync] [--batch B]
 *           [--threads T] [--a-set FILE=VALUE] [--b-set FILE=VALUE]
 *           [--seconds S] [--slice-ms M] [--span BYTES] [--seed N] FILE
 *
 * Under QEMU TCG the speed of the whole guest drifts by tens of percent
 * within seconds (the host, the translation cache), so two cells measured
 * one after the other cannot show a difference of 3 %. abbench runs A and
 * B in alternating slices of M milliseconds (default 10), in the order
 * AB BA AB BA ..., for S seconds in all (default 10): drift slower than a
 * slice pair cancels, and the ratio B/A of pages per second comes with a
 * 95 % bootstrap interval over the slice pairs. Measured in the guest
 * (plain against plain, 4 KiB, 20 s): two neighbouring slices still differ
 * by about 18 % (standard deviation of the log ratio), and the interval
 * narrows with the number of pairs: +-1 % with 10 ms slices, +-2.5 % with
 * 50 ms, +-6 % with 200 ms.
 *
 * Modes (O_DIRECT, SIZE-aligned random offsets in the first BYTES of FILE,
 * default 128 MiB; FILE must exist and be large enough):
 *   plain        pwritev2 writes, N in flight (N > 1: io_uring)
 *   atomic       the same with RWF_ATOMIC
 *                (--dsync adds RWF_DSYNC to both)
 *   With --threads T, T threads write at once, each as above (its own
 *   offsets, buffers and ring), and a slice ends when all have stopped.
 *   --a-set and --b-set write VALUE to FILE (a sysfs knob) before each
 *   slice of that side, so that A and B can be the same mode under two
 *   settings (atomic_write/sw_exclusive 1 against 0, say).
 *   doublewrite  a durable batch of B pages (default 1) the way databases
 *                do it without atomic writes: B pages to a doublewrite
 *                area (the B * SIZE bytes after BYTES), fdatasync, the B
 *                pages in place, fdatasync
 *   atomic-batch the same batch with RWF_ATOMIC: B = 1, one
 *                RWF_ATOMIC | RWF_DSYNC write; B > 1, B RWF_ATOMIC
 *                writes and one fdatasync
 *
 * Prints one CSV line:
 *   a,b,bs,qd,dsync,batch,pairs,a_pages_per_s,b_pages_per_s,ratio,
 *   ratio_lo,ratio_hi,a_cpu_us_per_page,b_cpu_us_per_page,slice_ms,
 *   threads,a_set,b_set
 * The CPU time is the whole guest's non-idle time from /proc/stat
 * (kworkers and interrupts count), divided by the pages.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <liburing.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "io.h"
#include "util.h"

enum mode { PLAIN, ATOMIC, DOUBLEWRITE, ATOMIC_BATCH, NR_MODES };

static const char *const mode_names[] = {
	[PLAIN] = "plain",
	[ATOMIC] = "atomic",
	[DOUBLEWRITE] = "doublewrite",
	[ATOMIC_BATCH] = "atomic-batch",
};

struct bench {
	int fd;
	uint64_t bs, span, batch, seed;
	unsigned int qd;
	int dsync;
	void **bufs;		/* one per write in flight */
	struct iovec *iovs;
	struct io_uring ring;
};

/* The threads of a --threads run, and the slice they are to run next. */
struct crew {
	unsigned int n;
	struct bench *b;	/* one per thread */
	pthread_t *tid;
	struct crew_slot {
		struct crew *c;
		unsigned int me;
	} *slot;		/* each thread's argument */
	pthread_barrier_t start, end;
	enum mode m;
	double deadline;	/* 0: leave */
	uint64_t *pages;	/* one per thread */
};

/* A sysfs knob that a side sets before each of its slices. */
struct knob {
	const char *path, *value;
	char orig[64];		/* put back at the end */
};

/* What the slices of one mode added up to. */
struct tally {
	double pages, us, cpu_us;
};

static void die_io(const struct bench *b, enum mode m, int err)
{
	fprintf(stderr, "abbench: %s of %llu-byte pages: %s\n", mode_names[m],
		(unsigned long long)b->bs, strerror(err));
	exit(1);
}

static off_t random_offset(struct bench *b)
{
	return (off_t)(ut_rand(&b->seed) % (b->span / b->bs)) * b->bs;
}

static void write_one(struct bench *b, enum mode m, off_t off, int flags)
{
	ssize_t ret = pwritev2(b->fd, &b->iovs[0], 1, off, flags);

	if (ret != (ssize_t)b->bs)
		die_io(b, m, ret < 0 ? errno : EIO);
}

static void sync_data(struct bench *b, enum mode m)
{
	if (fdatasync(b->fd))
		die_io(b, m, errno);
}

/* One durable batch; returns the pages it made durable. */
static uint64_t run_batch(struct bench *b, enum mode m)
{
	uint64_t i;

	if (m == DOUBLEWRITE) {
		for (i = 0; i < b->batch; i++)
			write_one(b, m, b->span + i * b->bs, 0);
		sync_data(b, m);
		for (i = 0; i < b->batch; i++)
			write_one(b, m, random_offset(b), 0);
		sync_data(b, m);
	} else if (b->batch == 1) {
		write_one(b, m, random_offset(b), RWF_ATOMIC | RWF_DSYNC);
	} else {
		for (i = 0; i < b->batch; i++)
			write_one(b, m, random_offset(b), RWF_ATOMIC);
		sync_data(b, m);
	}
	return b->batch;
}

static void queue_write(struct bench *b, unsigned int slot, int flags)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&b->ring);

	io_uring_prep_writev2(sqe, b->fd, &b->iovs[slot], 1, random_offset(b),
			      flags);
	io_uring_sqe_set_data64(sqe, slot);
}

/* Writes with qd in flight until the deadline, then drains them. */
static uint64_t run_queued(struct bench *b, enum mode m, int flags,
			   double deadline)
{
	unsigned int slot, inflight = 0;
	struct io_uring_cqe *cqe;
	uint64_t done = 0;
	int ret;

	for (slot = 0; slot < b->qd; slot++, inflight++)
		queue_write(b, slot, flags);
	while (inflight) {
		ret = io_uring_submit_and_wait(&b->ring, 1);
		if (ret < 0)
			die_io(b, m, -ret);
		ret = io_uring_peek_cqe(&b->ring, &cqe);
		if (ret < 0)
			die_io(b, m, -ret);
		if (cqe->res != (int)b->bs)
			die_io(b, m, cqe->res < 0 ? -cqe->res : EIO);
		slot = io_uring_cqe_get_data64(cqe);
		io_uring_cqe_seen(&b->ring, cqe);
		inflight--;
		done++;
		if (ut_now_us() < deadline) {
			queue_write(b, slot, flags);
			inflight++;
		}
	}
	return done;
}

/* Pages written in mode @m by one writer until @deadline. */
static uint64_t run_until(struct bench *b, enum mode m, double deadline)
{
	int flags = (m == ATOMIC ? RWF_ATOMIC : 0) | (b->dsync ? RWF_DSYNC : 0);
	uint64_t pages = 0;

	if ((m == PLAIN || m == ATOMIC) && b->qd > 1)
		return run_queued(b, m, flags, deadline);
	do {
		if (m == PLAIN || m == ATOMIC) {
			write_one(b, m, random_offset(b), flags);
			pages++;
		} else {
			pages += run_batch(b, m);
		}
	} while (ut_now_us() < deadline);
	return pages;
}

static void *crew_thread(void *arg)
{
	struct crew *c = ((struct crew_slot *)arg)->c;
	unsigned int me = ((struct crew_slot *)arg)->me;

	for (;;) {
		pthread_barrier_wait(&c->start);
		if (!c->deadline)
			return NULL;
		c->pages[me] = run_until(&c->b[me], c->m, c->deadline);
		pthread_barrier_wait(&c->end);
	}
}

static void write_knob(const char *path, const char *value)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(value, f) == EOF || fclose(f)) {
		fprintf(stderr, "abbench: setting %s to %s: %s\n", path, value,
			strerror(errno));
		exit(1);
	}
}

static void set_knob(const struct knob *k)
{
	if (k->path)
		write_knob(k->path, k->value);
}

static void read_knob(struct knob *k)
{
	FILE *f;

	if (!k->path)
		return;
	f = fopen(k->path, "r");
	if (!f || !fgets(k->orig, sizeof(k->orig), f)) {
		fprintf(stderr, "abbench: reading %s: %s\n", k->path,
			strerror(errno));
		exit(1);
	}
	fclose(f);
}

static void run_slice(struct bench *b, struct crew *c, const struct knob *k,
		      enum mode m, double ms, struct tally *t)
{
	double c0, t0, deadline;
	uint64_t pages = 0;

	set_knob(k);
	/* CPU time read outside the timed window: /proc/stat is not free. */
	c0 = ut_busy_us();
	t0 = ut_now_us();
	deadline = t0 + ms * 1e3;
	if (!c) {
		pages = run_until(b, m, deadline);
	} else {
		c->m = m;
		c->deadline = deadline;
		pthread_barrier_wait(&c->start);
		pthread_barrier_wait(&c->end);
		for (unsigned int i = 0; i < c->n; i++)
			pages += c->pages[i];
	}
	t->us += ut_now_us() - t0;
	t->pages += pages;
	t->cpu_us += ut_busy_us() - c0;
}

/* Each writer of @b with its own buffers, ring and offsets. */
static int setup_writer(struct bench *b)
{
	b->bufs = calloc(b->qd, sizeof(*b->bufs));
	b->iovs = calloc(b->qd, sizeof(*b->iovs));
	if (!b->bufs || !b->iovs)
		return -ENOMEM;
	for (unsigned int i = 0; i < b->qd; i++) {
		b->bufs[i] = ut_alloc_io(b->bs);
		if (!b->bufs[i])
			return -ENOMEM;
		memset(b->bufs[i], 0x5a ^ i, b->bs);
		b->iovs[i] = (struct iovec){ .iov_base = b->bufs[i], .iov_len = b->bs };
	}
	if (b->qd > 1)
		return io_uring_queue_init(b->qd, &b->ring, 0);
	return 0;
}

static struct crew *start_crew(const struct bench *proto, unsigned int n)
{
	struct crew *c = calloc(1, sizeof(*c));
	int ret;

	if (!c)
		return NULL;
	c->n = n;
	c->b = calloc(n, sizeof(*c->b));
	c->tid = calloc(n, sizeof(*c->tid));
	c->pages = calloc(n, sizeof(*c->pages));
	c->slot = calloc(n, sizeof(*c->slot));
	if (!c->b || !c->tid || !c->pages || !c->slot)
		return NULL;
	pthread_barrier_init(&c->start, NULL, n + 1);
	pthread_barrier_init(&c->end, NULL, n + 1);
	for (unsigned int i = 0; i < n; i++) {
		c->b[i] = *proto;
		c->b[i].seed = proto->seed + 0x9e3779b97f4a7c15ull * (i + 1);
		ret = setup_writer(&c->b[i]);
		if (ret) {
			fprintf(stderr, "abbench: writer %u: %s\n", i, strerror(-ret));
			return NULL;
		}
	}
	for (unsigned int i = 0; i < n; i++) {
		c->slot[i] = (struct crew_slot){ .c = c, .me = i };
		ret = pthread_create(&c->tid[i], NULL, crew_thread, &c->slot[i]);
		if (ret) {
			fprintf(stderr, "abbench: thread: %s\n", strerror(ret));
			return NULL;
		}
	}
	return c;
}

/* The tallies of the slice pairs @pick[0..n), or of pairs 0..n without one. */
static struct tally sum_tallies(const struct tally *t, const unsigned int *pick,
				unsigned int n)
{
	struct tally sum = { 0 };

	for (unsigned int i = 0; i < n; i++) {
		const struct tally *x = &t[pick ? pick[i] : i];

		sum.pages += x->pages;
		sum.us += x->us;
		sum.cpu_us += x->cpu_us;
	}
	return sum;
}

/* B's pages per second over A's, pooled over the chosen slice pairs. */
static double pooled_ratio(const struct tally *a, const struct tally *b,
			   const unsigned int *pick, unsigned int n)
{
	struct tally sa = sum_tallies(a, pick, n), sb = sum_tallies(b, pick, n);

	return (sb.pages / sb.us) / (sa.pages / sa.us);
}

struct tally_pair {
	const struct tally *a, *b;
};

/* pooled_ratio() for ut_bootstrap95(). */
static double pooled_ratio_of(const unsigned int *pick, unsigned int n,
			      void *arg)
{
	const struct tally_pair *tp = arg;

	return pooled_ratio(tp->a, tp->b, pick, n);
}

static void usage(void)
{
	fprintf(stderr, "usage: abbench --a MODE --b MODE --bs SIZE [--qd N] "
		"[--dsync] [--batch B] [--threads T] [--a-set FILE=VALUE] "
		"[--b-set FILE=VALUE] [--seconds S] [--slice-ms M] "
		"[--span BYTES] [--seed N] FILE\n"
		"modes: plain atomic doublewrite atomic-batch\n");
	exit(2);
}

static int parse_mode(const char *s)
{
	for (int i = 0; i < NR_MODES; i++)
		if (!strcmp(s, mode_names[i]))
			return i;
	usage();
	return -1;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "a", required_argument, NULL, 'a' },
		{ "b", required_argument, NULL, 'B' },
		{ "bs", required_argument, NULL, 'b' },
		{ "qd", required_argument, NULL, 'q' },
		{ "dsync", no_argument, NULL, 'd' },
		{ "batch", required_argument, NULL, 'n' },
		{ "seconds", required_argument, NULL, 's' },
		{ "slice-ms", required_argument, NULL, 'm' },
		{ "span", required_argument, NULL, 'S' },
		{ "seed", required_argument, NULL, 'r' },
		{ "threads", required_argument, NULL, 't' },
		{ "a-set", required_argument, NULL, 'x' },
		{ "b-set", required_argument, NULL, 'y' },
		{ "dump", no_argument, NULL, 'D' },	/* per pair, to stderr */
		{ 0 }
	};
	struct bench b = { .span = 128ull << 20, .batch = 1, .seed = 1, .qd = 1 };
	uint64_t secs = 10, slice_ms = 10, v, qd = 1, threads = 1;
	int ma = -1, mb = -1, c, batched, dump = 0;
	struct knob ka = { 0 }, kb = { 0 };
	struct crew *crew = NULL;
	struct tally *ta, *tb, sa, sb, warm = { 0 };
	struct tally_pair tp;
	unsigned int pairs, i;
	double lo, hi;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'a':
			ma = parse_mode(optarg);
			break;
		case 'B':
			mb = parse_mode(optarg);
			break;
		case 'd':
			b.dsync = 1;
			break;
		case 'D':
			dump = 1;
			break;
		case 'x':
		case 'y': {
			struct knob *k = c == 'x' ? &ka : &kb;
			char *eq = strchr(optarg, '=');

			if (!eq || eq == optarg)
				usage();
			*eq = '\0';
			k->path = optarg;
			k->value = eq + 1;
			break;
		}
		case 'b':
		case 'q':
		case 'n':
		case 's':
		case 'm':
		case 'S':
		case 'r':
		case 't':
			if (ut_parse_size(optarg, &v))
				usage();
			if (c == 'b')
				b.bs = v;
			else if (c == 'q')
				qd = v;
			else if (c == 'n')
				b.batch = v;
			else if (c == 's')
				secs = v;
			else if (c == 'm')
				slice_ms = v;
			else if (c == 'S')
				b.span = v;
			else if (c == 't')
				threads = v;
			else
				b.seed = v;
			break;
		default:
			usage();
		}
	}
	if (optind != argc - 1 || ma < 0 || mb < 0 || !ut_is_pow2(b.bs) ||
	    b.bs < 512 || b.span < b.bs || b.span % b.bs || !secs ||
	    !slice_ms || !qd || qd > 256 || !b.batch || b.batch > 1024 ||
	    !threads || threads > 256)
		usage();
	/* Batches are queue depth 1 and plain/atomic take no batch size. */
	batched = ma >= DOUBLEWRITE;
	if (batched != (mb >= DOUBLEWRITE) ||
	    (batched ? qd > 1 || b.dsync : b.batch > 1)) {
		fprintf(stderr, "abbench: compare plain/atomic (with --qd, "
			"--dsync) or doublewrite/atomic-batch (with --batch), "
			"not a mix\n");
		return 2;
	}
	b.qd = qd;
	read_knob(&ka);
	read_knob(&kb);

	b.fd = open(argv[optind], O_RDWR | O_DIRECT);
	if (b.fd < 0) {
		fprintf(stderr, "abbench: %s: %s\n", argv[optind], strerror(errno));
		return 1;
	}
	pairs = secs * 1000 / (2 * slice_ms);
	if (pairs < 2)
		pairs = 2;
	ta = calloc(pairs, sizeof(*ta));
	tb = calloc(pairs, sizeof(*tb));
	if (!ta || !tb) {
		fprintf(stderr, "abbench: out of memory\n");
		return 1;
	}
	if (threads > 1) {
		crew = start_crew(&b, threads);
		if (!crew) {
			fprintf(stderr, "abbench: cannot start %llu threads\n",
				(unsigned long long)threads);
			return 1;
		}
	} else {
		c = setup_writer(&b);
		if (c) {
			fprintf(stderr, "abbench: %s\n", strerror(-c));
			return 1;
		}
	}

	/* A slice of each first, so neither pays for a cold start. */
	run_slice(&b, crew, &ka, ma, slice_ms, &warm);
	run_slice(&b, crew, &kb, mb, slice_ms, &warm);
	for (i = 0; i < pairs; i++) {
		if (i % 2 == 0) {
			run_slice(&b, crew, &ka, ma, slice_ms, &ta[i]);
			run_slice(&b, crew, &kb, mb, slice_ms, &tb[i]);
		} else {
			run_slice(&b, crew, &kb, mb, slice_ms, &tb[i]);
			run_slice(&b, crew, &ka, ma, slice_ms, &ta[i]);
		}
		if (dump)
			fprintf(stderr, "pair %u %.0f %.0f %.0f %.0f\n", i,
				ta[i].pages, ta[i].us, tb[i].pages, tb[i].us);
	}

	sa = sum_tallies(ta, NULL, pairs);
	sb = sum_tallies(tb, NULL, pairs);

	/* Bootstrap over slice pairs: resample them, pool, take the ratio. */
	tp = (struct tally_pair){ ta, tb };
	if (ut_bootstrap95(pairs, 2000, &b.seed, pooled_ratio_of, &tp, &lo, &hi)) {
		fprintf(stderr, "abbench: out of memory\n");
		return 1;
	}

	printf("%s,%s,%llu,%u,%d,%llu,%u,%.1f,%.1f,%.4f,%.4f,%.4f,%.1f,%.1f,%llu,%llu,%s,%s\n",
	       mode_names[ma], mode_names[mb], (unsigned long long)b.bs, b.qd,
	       b.dsync, (unsigned long long)b.batch, pairs,
	       sa.pages / (sa.us / 1e6), sb.pages / (sb.us / 1e6),
	       pooled_ratio(ta, tb, NULL, pairs), lo, hi,
	       sa.cpu_us / sa.pages, sb.cpu_us / sb.pages,
	       (unsigned long long)slice_ms, (unsigned long long)threads,
	       ka.path ? ka.value : "", kb.path ? kb.value : "");
	if (crew) {
		crew->deadline = 0;
		pthread_barrier_wait(&crew->start);
		for (i = 0; i < crew->n; i++)
			pthread_join(crew->tid[i], NULL);
	}
	if (ka.path)
		write_knob(ka.path, ka.orig);
	if (kb.path)
		write_knob(kb.path, kb.orig);
	return 0;
}
