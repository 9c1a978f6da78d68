// SPDX-License-Identifier: GPL-2.0
/*
 * atomic-fsx - a long random sequence of file operations on one file (and
 * a second one for clones), checked after every step against an in-memory
 * model of both files' contents, in the spirit of fsx.
 *
 *   atomic-fsx --file PATH [--file2 PATH2] [--ops N] [--seed S]
 *              [--size BYTES] [--align BYTES] [--no OP,...]
 *              [--expect COUNTER,...] [--log N] [--control C]
 *              [--full-check]
 *   atomic-fsx --file PATH --file2 PATH2 --threads N [--rounds R]
 *              [--seed S] [--size BYTES] [--expect COUNTER,...]
 *              [--control corrupt-file]
 *
 * Operations: RWF_ATOMIC writes of every power-of-two size that statx
 * offers (so on XFS both the hardware and the software sizes) through
 * pwritev2, io_uring and libaio; plain direct and buffered writes and
 * reads; mmap writes; truncate up and down; fallocate (allocate, punch,
 * collapse, insert, zero); FICLONERANGE and FIDEDUPERANGE to and from the
 * second file; fsync. After every operation both files' sizes, every byte
 * the operation touched and the next sixteenth of each file (so every
 * byte at least every 16 operations) are compared with the model, and
 * after every fsync and at the end the whole files (--full-check: the
 * whole files after every operation); the first difference prints the
 * offset, the last --log operations (default 32) and the command that
 * replays the run (the sequence is a function of --seed alone). --no
 * leaves operations out (ext4 has no clone or dedupe); any other refusal
 * (EOPNOTSUPP, EINVAL on a valid request) is a failure.
 *
 * With --threads N, N - 1 writer threads issue atomic writes of one unit
 * size per round (each size in turn, the smallest and the largest first,
 * so that two rounds already cover a hardware and a software size and as
 * many rounds as there are sizes cover them all) at random units of a
 * small region, so that they overlap as well as not, through all three
 * interfaces and batches of several at once, while the last thread clones
 * the region into the second file, dedupes it back, fallocates over it,
 * reads it and fsyncs. After each round every unit of both files must
 * hold one writer's whole data (or the round's starting data): one
 * complete version, no mix.
 *
 * --control corrupt-file (or corrupt-model) is the negative control: half
 * way through, one byte of the file (or of the model) is changed behind
 * the tester's back, or in the threaded mode half of a unit is rewritten;
 * the run must then fail, and a test that runs it expects exactly that.
 *
 * --expect names atomic_write counters of the filesystem (hw_writes,
 * sw_writes, fallback_mixed) that must grow: a run meant for both paths
 * fails when it took one. Exit 0 when everything matched, 1 on a mismatch
 * or a failed operation, 2 on bad usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "awstats.h"
#include "devinfo.h"
#include "io.h"
#include "pattern.h"
#include "statx.h"
#include "util.h"

#define PATTERN_SEED 0xf5c

enum op {
	OP_ATOMIC, OP_DWRITE, OP_BWRITE, OP_DREAD, OP_BREAD, OP_MMAP,
	OP_TRUNCATE, OP_FALLOC, OP_PUNCH, OP_COLLAPSE, OP_INSERT, OP_ZERO,
	OP_CLONE_TO, OP_CLONE_FROM, OP_DEDUPE, OP_FSYNC, OP_COUNT,
};

static const char *const op_names[OP_COUNT] = {
	"atomic", "dwrite", "bwrite", "dread", "bread", "mmap", "truncate",
	"falloc", "punch", "collapse", "insert", "zero", "clone_to",
	"clone_from", "dedupe", "fsync",
};

/* How often each is drawn, out of the sum. */
static const unsigned int op_weight[OP_COUNT] = {
	[OP_ATOMIC] = 30, [OP_DWRITE] = 8, [OP_BWRITE] = 8, [OP_DREAD] = 4,
	[OP_BREAD] = 4, [OP_MMAP] = 5, [OP_TRUNCATE] = 4, [OP_FALLOC] = 4,
	[OP_PUNCH] = 5, [OP_COLLAPSE] = 3, [OP_INSERT] = 3, [OP_ZERO] = 4,
	[OP_CLONE_TO] = 5, [OP_CLONE_FROM] = 5, [OP_DEDUPE] = 4,
	[OP_FSYNC] = 4,
};

/*
 * The negative controls: a byte of the file (or of the model) is changed
 * behind the tester's back half-way through; the run must then fail.
 */
enum control { CTL_NONE, CTL_CORRUPT_FILE, CTL_CORRUPT_MODEL, CTL_COUNT };
static const char *const control_names[CTL_COUNT] = {
	"none", "corrupt-file", "corrupt-model",
};

enum counter { PC_HW, PC_SW, PC_MIXED, PC_COUNT };
static const char *const counter_names[PC_COUNT] = {
	"hw_writes", "sw_writes", "fallback_mixed",
};

static struct {
	const char *file, *file2;
	unsigned int ops, threads, rounds, log;
	uint64_t seed;
	size_t size, align;
	unsigned int no;	/* mask of enum op */
	unsigned int expect;	/* mask of enum counter */
	enum control control;
	int full_check;
	int argc;
	char **argv;
} opt = { .ops = 1000, .rounds = 20, .log = 32, .size = 1 << 20 };

/* One file and its model. */
struct mfile {
	const char *path;
	int fd_d, fd_b;		/* O_DIRECT and buffered */
	unsigned char *model;	/* opt.size bytes; zero beyond size */
	size_t msize;
	size_t dlo, dhi;	/* what this step may have changed */
	size_t sweep;		/* where the next step's sweep starts */
};

static struct mfile f1, f2;
static size_t awu_min, awu_max;
static unsigned int nsizes;
static size_t sizes[32];	/* the atomic sizes: powers of two */
static char aw_dir[PATH_MAX];
static unsigned long long done[OP_COUNT];

/* The ring of the last operations, for the report. */
#define LOG_MAX 256
static char oplog[LOG_MAX][160];
static unsigned long oplog_n;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "atomic-fsx: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

static void logop(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logop(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(oplog[oplog_n % LOG_MAX], sizeof(oplog[0]), fmt, ap);
	va_end(ap);
	oplog_n++;
}

static void print_replay(void)
{
	int i;

	printf("# replay: atomic-fsx");
	for (i = 1; i < opt.argc; i++) {
		if (!strcmp(opt.argv[i], "--seed")) {
			i++;
			continue;
		}
		printf(" %s", opt.argv[i]);
	}
	printf(" --seed %#" PRIx64 "\n", opt.seed);
}

/* A mismatch or a failed call: the log, the replay, exit 1. */
static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
	unsigned long i, from;
	va_list ap;

	printf("not ok - atomic-fsx: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(" (operation %lu)\n", oplog_n);
	from = oplog_n > opt.log ? oplog_n - opt.log : 0;
	if (oplog_n - from > LOG_MAX)
		from = oplog_n - LOG_MAX;
	printf("# the last %lu operations:\n", oplog_n - from);
	for (i = from; i < oplog_n; i++)
		printf("#   %6lu %s\n", i + 1, oplog[i % LOG_MAX]);
	print_replay();
	exit(1);
}

static uint64_t rng;

static uint64_t rnd(uint64_t n)
{
	return n ? ut_rand(&rng) % n : 0;
}

/* A random multiple of A below LIMIT (0 when there is none). */
static size_t rnd_aligned(size_t limit, size_t a)
{
	return limit >= a ? rnd(limit / a) * a : 0;
}

static void fill_random(unsigned char *p, size_t len)
{
	size_t i;
	uint64_t v = 0;

	for (i = 0; i < len; i++) {
		if (i % 8 == 0)
			v = ut_rand(&rng);
		p[i] = v >> (8 * (i % 8));
	}
}

/* Compare [lo, hi) of F (clipped to its size) with the model. */
static void check_range(struct mfile *f, size_t lo, size_t hi,
			const char *after)
{
	static unsigned char *buf;
	size_t len, i;
	ssize_t n;

	if (!buf && !(buf = ut_alloc_io(opt.size + 4096)))
		die("out of memory");
	if (hi > f->msize)
		hi = f->msize;
	if (lo >= hi)
		return;
	len = hi - lo;
	n = ut_pread(f->fd_b, buf, len, lo);
	if (n < 0)
		fail("read %zu@%zu of %s: %s", len, lo, f->path, strerror(-n));
	if ((size_t)n != len)
		fail("read %zu@%zu of %s after %s returned %zd bytes, the model has %zu",
		     len, lo, f->path, after, n, f->msize);
	if (memcmp(buf, f->model + lo, len)) {
		for (i = 0; buf[i] == f->model[lo + i]; i++)
			;
		fail("%s differs from the model at byte %zu after %s: 0x%02x, model 0x%02x",
		     f->path, lo + i, after, buf[i], f->model[lo + i]);
	}
}

static void check_size(struct mfile *f, const char *after)
{
	struct stat st;

	if (fstat(f->fd_b, &st))
		fail("fstat %s: %s", f->path, strerror(errno));
	if ((size_t)st.st_size != f->msize)
		fail("%s is %lld bytes after %s, the model %zu", f->path,
		     (long long)st.st_size, after, f->msize);
}

/* The whole of F against the model. */
static void check_file(struct mfile *f, const char *after)
{
	check_size(f, after);
	check_range(f, 0, opt.size, after);
	f->dlo = f->dhi = 0;
}

/* A step may change the bytes it names: mark them for the next check. */
static void touch(struct mfile *f, size_t lo, size_t hi)
{
	if (lo >= hi)
		return;
	if (f->dlo == f->dhi) {
		f->dlo = lo;
		f->dhi = hi;
		return;
	}
	if (lo < f->dlo)
		f->dlo = lo;
	if (hi > f->dhi)
		f->dhi = hi;
}

/*
 * The check after a step: the size, every byte the step touched, and the
 * next sixteenth of the file. Reading both whole files after every step
 * costs four fifths of a run under emulation; a step that damaged bytes
 * it did not touch is still caught within 16 steps (or at the next fsync,
 * which checks everything), well inside the operation log that a
 * failure prints. --full-check reads everything after every step.
 */
#define SWEEP_STEPS 16
static size_t sweep_slice(void)
{
	return (opt.size / SWEEP_STEPS + 4095) & ~(size_t)4095;
}

static void check_step(struct mfile *f, const char *after)
{
	size_t slice = sweep_slice();

	if (opt.full_check) {
		check_file(f, after);
		return;
	}
	check_size(f, after);
	check_range(f, f->dlo, f->dhi, after);
	f->dlo = f->dhi = 0;
	check_range(f, f->sweep, f->sweep + slice, after);
	f->sweep += slice;
	if (f->sweep >= opt.size)
		f->sweep = 0;
}

/* The model of F after a write of LEN bytes of P at OFF. */
static void model_write(struct mfile *f, size_t off, const void *p, size_t len)
{
	touch(f, off, off + len);
	memcpy(f->model + off, p, len);
	if (off + len > f->msize)
		f->msize = off + len;
}

static void model_zero(struct mfile *f, size_t off, size_t len)
{
	if (off >= f->msize)
		return;
	if (off + len > f->msize)
		len = f->msize - off;
	touch(f, off, off + len);
	memset(f->model + off, 0, len);
}

static void model_resize(struct mfile *f, size_t size)
{
	touch(f, size < f->msize ? size : f->msize,
	      size < f->msize ? f->msize : size);
	if (size < f->msize)
		memset(f->model + size, 0, f->msize - size);
	f->msize = size;
}

static void *iobuf;

static void op_atomic(void)
{
	size_t len = sizes[rnd(nsizes)];
	size_t off = rnd_aligned(opt.size - len + 1, len);
	enum ut_engine e = rnd(UT_ENGINE_COUNT);
	int flags = RWF_ATOMIC | (rnd(8) == 0 ? RWF_DSYNC : 0);
	struct iovec iov = { iobuf, len };
	ssize_t n;

	fill_random(iobuf, len);
	logop("atomic %s %zu@%zu%s", ut_engine_name(e), len, off,
	      flags & RWF_DSYNC ? " dsync" : "");
	n = ut_writev(e, f1.fd_d, &iov, 1, off, flags);
	if (n != (ssize_t)len)
		fail("atomic write %zu@%zu through %s: %s", len, off,
		     ut_engine_name(e), n < 0 ? strerror(-n) : "short");
	model_write(&f1, off, iobuf, len);
}

static void op_dwrite(void)
{
	size_t len = opt.align * (1 + rnd(8)), off;
	ssize_t n;

	if (len > opt.size)
		len = opt.align;
	off = rnd_aligned(opt.size - len + 1, opt.align);
	fill_random(iobuf, len);
	logop("dwrite %zu@%zu", len, off);
	n = pwrite(f1.fd_d, iobuf, len, off);
	if (n != (ssize_t)len)
		fail("direct write %zu@%zu: %s", len, off,
		     n < 0 ? strerror(errno) : "short");
	model_write(&f1, off, iobuf, len);
}

static void op_bwrite(void)
{
	size_t len = 1 + rnd(64 << 10), off;
	ssize_t n;

	if (len > opt.size)
		len = opt.size;
	off = rnd(opt.size - len + 1);
	fill_random(iobuf, len);
	logop("bwrite %zu@%zu", len, off);
	n = pwrite(f1.fd_b, iobuf, len, off);
	if (n != (ssize_t)len)
		fail("buffered write %zu@%zu: %s", len, off,
		     n < 0 ? strerror(errno) : "short");
	model_write(&f1, off, iobuf, len);
}

static void op_read(int direct)
{
	size_t a = direct ? opt.align : 1;
	size_t len = direct ? a * (1 + rnd(16)) : 1 + rnd(128 << 10);
	size_t off = rnd_aligned(opt.size, a), want;
	ssize_t n;

	if (off + len > opt.size)
		len = opt.size - off;
	logop("%s %zu@%zu", direct ? "dread" : "bread", len, off);
	n = ut_pread(direct ? f1.fd_d : f1.fd_b, iobuf, len, off);
	want = off >= f1.msize ? 0 : f1.msize - off < len ? f1.msize - off : len;
	if (n < 0)
		fail("%s read %zu@%zu: %s", direct ? "direct" : "buffered",
		     len, off, strerror(-n));
	/* A direct read ends at the block that holds EOF. */
	if ((size_t)n < want || (!direct && (size_t)n != want))
		fail("%s read %zu@%zu returned %zd bytes, the model has %zu",
		     direct ? "direct" : "buffered", len, off, n, want);
	if (memcmp(iobuf, f1.model + off, want))
		fail("%s read %zu@%zu differs from the model",
		     direct ? "direct" : "buffered", len, off);
}

static void op_mmap(void)
{
	size_t page = sysconf(_SC_PAGESIZE), off, len, moff;
	unsigned char *p;

	if (f1.msize < 2)
		return;
	off = rnd(f1.msize - 1);
	len = 1 + rnd(f1.msize - off < (32 << 10) ? f1.msize - off : 32 << 10);
	moff = off / page * page;
	logop("mmap write %zu@%zu", len, off);
	p = mmap(NULL, off + len - moff, PROT_READ | PROT_WRITE, MAP_SHARED,
		 f1.fd_b, moff);
	if (p == MAP_FAILED)
		fail("mmap %zu@%zu: %s", off + len - moff, moff, strerror(errno));
	fill_random(iobuf, len);
	memcpy(p + (off - moff), iobuf, len);
	if (rnd(2) && msync(p, off + len - moff, MS_SYNC))
		fail("msync: %s", strerror(errno));
	munmap(p, off + len - moff);
	model_write(&f1, off, iobuf, len);
}

static void op_truncate(void)
{
	size_t size = rnd(2) ? rnd_aligned(opt.size + 1, opt.align) :
		      rnd(opt.size + 1);

	logop("truncate %zu (from %zu)", size, f1.msize);
	if (ftruncate(f1.fd_b, size))
		fail("truncate to %zu: %s", size, strerror(errno));
	model_resize(&f1, size);
}

/* A block-aligned range inside the file's limit. */
static void pick_range(size_t *off, size_t *len, size_t max_blocks)
{
	*len = opt.align * (1 + rnd(max_blocks));
	if (*len > opt.size)
		*len = opt.align;
	*off = rnd_aligned(opt.size - *len + 1, opt.align);
}

static void op_fallocate(enum op op)
{
	int keep = rnd(2) ? FALLOC_FL_KEEP_SIZE : 0, mode;
	size_t off, len;

	pick_range(&off, &len, 16);
	switch (op) {
	case OP_FALLOC:
		mode = keep;
		break;
	case OP_PUNCH:
		mode = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE;
		break;
	case OP_ZERO:
		mode = FALLOC_FL_ZERO_RANGE | keep;
		break;
	case OP_COLLAPSE:
		/* Collapse must leave the range inside the file. */
		if (f1.msize / opt.align < 2)
			return;
		len = opt.align * (1 + rnd(f1.msize / opt.align - 1 < 8 ?
					   f1.msize / opt.align - 1 : 8));
		off = rnd_aligned(f1.msize / opt.align * opt.align - len + 1,
				  opt.align);
		if (off + len >= f1.msize)
			return;
		mode = FALLOC_FL_COLLAPSE_RANGE;
		break;
	case OP_INSERT:
		if (f1.msize + len > opt.size || f1.msize < opt.align)
			return;
		off = rnd_aligned(f1.msize, opt.align);
		mode = FALLOC_FL_INSERT_RANGE;
		break;
	default:
		return;
	}
	logop("%s %zu@%zu%s (size %zu)", op_names[op], len, off,
	      mode & FALLOC_FL_KEEP_SIZE && op != OP_PUNCH ? " keep_size" : "",
	      f1.msize);
	if (fallocate(f1.fd_b, mode, off, len))
		fail("fallocate %s %zu@%zu: %s", op_names[op], len, off,
		     strerror(errno));
	touch(&f1, off, op == OP_COLLAPSE || op == OP_INSERT ?
	      f1.msize + len : off + len);
	switch (op) {
	case OP_FALLOC:
		if (!keep && off + len > f1.msize)
			model_resize(&f1, off + len);
		break;
	case OP_PUNCH:
		model_zero(&f1, off, len);
		break;
	case OP_ZERO:
		model_zero(&f1, off, len);
		if (!keep && off + len > f1.msize)
			model_resize(&f1, off + len);
		break;
	case OP_COLLAPSE:
		memmove(f1.model + off, f1.model + off + len,
			f1.msize - off - len);
		model_resize(&f1, f1.msize - len);
		break;
	case OP_INSERT:
		memmove(f1.model + off + len, f1.model + off, f1.msize - off);
		memset(f1.model + off, 0, len);
		f1.msize += len;
		break;
	default:
		break;
	}
}

/*
 * Clone LEN bytes at SOFF of S over DOFF of D. A clone must end on a
 * block boundary, or at the source's EOF (then the destination's size
 * becomes at least its end).
 */
static void op_clone(struct mfile *s, struct mfile *d, const char *name)
{
	struct file_clone_range fcr;
	size_t soff, len, doff, end_blocks;

	if (s->msize < opt.align)
		return;
	end_blocks = s->msize / opt.align;
	soff = rnd(end_blocks) * opt.align;
	len = opt.align * (1 + rnd(end_blocks - soff / opt.align < 16 ?
				   end_blocks - soff / opt.align : 16));
	/* Sometimes take the partial block up to EOF as well. */
	if (soff + len == end_blocks * opt.align && rnd(2))
		len = s->msize - soff;
	doff = rnd_aligned(opt.size - len + 1, opt.align);
	if (doff + len > opt.size)
		return;
	/* A partial tail cannot land inside the destination file. */
	if (len % opt.align && doff + len < d->msize)
		return;
	fcr = (struct file_clone_range){
		.src_fd = s->fd_b, .src_offset = soff, .src_length = len,
		.dest_offset = doff,
	};
	logop("%s %zu@%zu -> %zu (sizes %zu, %zu)", name, len, soff, doff,
	      s->msize, d->msize);
	if (ioctl(d->fd_b, FICLONERANGE, &fcr))
		fail("FICLONERANGE %zu@%zu -> %zu: %s", len, soff, doff,
		     strerror(errno));
	touch(d, doff, doff + len);
	memmove(d->model + doff, s->model + soff, len);
	if (doff + len > d->msize)
		d->msize = doff + len;
}

/*
 * Dedupe a block-aligned range of the second file into the first. Half
 * the time the range is made identical first, so that it is shared; else
 * the kernel must report whether the ranges differ, exactly as the model
 * says, and change nothing.
 */
static void op_dedupe(void)
{
	struct {
		struct file_dedupe_range r;
		struct file_dedupe_range_info info;
	} d;
	size_t off, len, same;
	int make_same = rnd(2);
	ssize_t n;

	if (f1.msize < opt.align || f2.msize < opt.align)
		return;
	len = opt.align * (1 + rnd(8));
	same = f1.msize < f2.msize ? f1.msize : f2.msize;
	if (len > same / opt.align * opt.align)
		len = same / opt.align * opt.align;
	off = rnd_aligned(same / opt.align * opt.align - len + 1, opt.align);
	if (make_same) {
		n = pwrite(f2.fd_b, f1.model + off, len, off);
		if (n != (ssize_t)len)
			fail("pwrite to %s: %s", f2.path, strerror(errno));
		memcpy(f2.model + off, f1.model + off, len);
	}
	memset(&d, 0, sizeof(d));
	d.r.src_offset = off;
	d.r.src_length = len;
	d.r.dest_count = 1;
	d.info.dest_fd = f1.fd_b;
	d.info.dest_offset = off;
	logop("dedupe %zu@%zu%s", len, off, make_same ? " (made same)" : "");
	touch(&f1, off, off + len);
	touch(&f2, off, off + len);
	if (ioctl(f2.fd_b, FIDEDUPERANGE, &d))
		fail("FIDEDUPERANGE %zu@%zu: %s", len, off, strerror(errno));
	if (d.info.status < 0)
		fail("FIDEDUPERANGE %zu@%zu: status %s", len, off,
		     strerror(-d.info.status));
	if (!memcmp(f1.model + off, f2.model + off, len)) {
		if (d.info.status != FILE_DEDUPE_RANGE_SAME ||
		    d.info.bytes_deduped != len)
			fail("FIDEDUPERANGE %zu@%zu of identical data: status %d, %llu bytes",
			     len, off, d.info.status,
			     (unsigned long long)d.info.bytes_deduped);
	} else if (d.info.status != FILE_DEDUPE_RANGE_DIFFERS) {
		fail("FIDEDUPERANGE %zu@%zu of different data: status %d",
		     len, off, d.info.status);
	}
}

static void op_fsync(void)
{
	int data = rnd(2);

	logop("%s", data ? "fdatasync" : "fsync");
	if (data ? fdatasync(f1.fd_d) : fsync(f1.fd_b))
		fail("%s: %s", data ? "fdatasync" : "fsync", strerror(errno));
}

static enum op pick_op(void)
{
	unsigned int sum = 0, i, r;

	for (i = 0; i < OP_COUNT; i++)
		if (!(opt.no & (1U << i)))
			sum += op_weight[i];
	r = rnd(sum);
	/* r < sum: the loop ends at an operation, the last at the latest. */
	for (i = 0; i < OP_COUNT - 1; i++) {
		if (opt.no & (1U << i))
			continue;
		if (r < op_weight[i])
			break;
		r -= op_weight[i];
	}
	return i;
}

/*
 * Change one byte of the first file, or of its model, without telling the
 * other, where no operation touched it: the sweep of the next check must
 * see it.
 */
static void corrupt_sequence(void)
{
	size_t slice = sweep_slice();
	size_t off, room;
	unsigned char b;

	if (f1.sweep >= f1.msize)
		return;		/* the sweep is past EOF: a later step */
	room = f1.msize - f1.sweep < slice ? f1.msize - f1.sweep : slice;
	off = f1.sweep + rnd(room);
	b = f1.model[off] ^ (1 + rnd(255));
	if (opt.control == CTL_CORRUPT_MODEL) {
		logop("control: model byte %zu changed to 0x%02x", off, b);
		f1.model[off] = b;
	} else {
		logop("control: file byte %zu written as 0x%02x", off, b);
		if (pwrite(f1.fd_b, &b, 1, off) != 1)
			die("control write: %s", strerror(errno));
	}
	opt.control = CTL_NONE;		/* once */
	/*
	 * Checked at once, by the step check alone: the next operation could
	 * overwrite the byte, and the control would prove nothing.
	 */
	check_step(&f1, oplog[(oplog_n - 1) % LOG_MAX]);
}

static void run_sequence(void)
{
	unsigned int i;

	for (i = 0; i < opt.ops; i++) {
		if (opt.control != CTL_NONE && i >= opt.ops / 2)
			corrupt_sequence();
		enum op op = pick_op();
		unsigned long before = oplog_n;

		switch (op) {
		case OP_ATOMIC: op_atomic(); break;
		case OP_DWRITE: op_dwrite(); break;
		case OP_BWRITE: op_bwrite(); break;
		case OP_DREAD: op_read(1); break;
		case OP_BREAD: op_read(0); break;
		case OP_MMAP: op_mmap(); break;
		case OP_TRUNCATE: op_truncate(); break;
		case OP_FALLOC:
		case OP_PUNCH:
		case OP_ZERO:
		case OP_COLLAPSE:
		case OP_INSERT: op_fallocate(op); break;
		case OP_CLONE_TO: op_clone(&f1, &f2, "clone_to"); break;
		case OP_CLONE_FROM: op_clone(&f2, &f1, "clone_from"); break;
		case OP_DEDUPE: op_dedupe(); break;
		case OP_FSYNC: op_fsync(); break;
		default: break;
		}
		if (oplog_n == before)
			continue;	/* nothing to do in this state */
		done[op]++;
		if (op == OP_FSYNC) {
			check_file(&f1, oplog[(oplog_n - 1) % LOG_MAX]);
			if (f2.path)
				check_file(&f2, oplog[(oplog_n - 1) % LOG_MAX]);
			continue;
		}
		check_step(&f1, oplog[(oplog_n - 1) % LOG_MAX]);
		if (f2.path)
			check_step(&f2, oplog[(oplog_n - 1) % LOG_MAX]);
	}
	check_file(&f1, "the last operation");
	if (f2.path)
		check_file(&f2, "the last operation");
}

/* ---- the multi-threaded mode ---- */

struct round {
	unsigned int no;
	size_t unit;
	unsigned int nunits;
	int stop;
	pthread_barrier_t start;
	/* gens[u][k]: what may be found in unit u after the round */
	uint64_t **gens;
	unsigned int *ngens;
	pthread_mutex_t lock;
	int cloned;		/* the second file holds a clone of the region */
};

struct thr {
	struct round *r;
	unsigned int tid;
	uint64_t rng;
	unsigned long long writes, others;
	const char *failed;
	int err;
	pthread_t th;
};

#define WRITES_PER_ROUND 24

static void note_gen(struct round *r, unsigned int u, uint64_t gen)
{
	pthread_mutex_lock(&r->lock);
	r->gens[u][r->ngens[u]++] = gen;
	pthread_mutex_unlock(&r->lock);
}

static void *writer_thread(void *p)
{
	struct thr *t = p;
	struct round *r = t->r;
	void *bufs = ut_alloc_io(4 * r->unit);
	unsigned int seq = 0;

	if (!bufs) {
		t->failed = "out of memory";
		return NULL;
	}
	pthread_barrier_wait(&r->start);
	while (seq < WRITES_PER_ROUND) {
		unsigned int n = 1 + ut_rand(&t->rng) % 4, i;
		enum ut_engine e = ut_rand(&t->rng) % UT_ENGINE_COUNT;
		struct ut_wreq req[4];
		struct iovec iov[4];

		for (i = 0; i < n; i++, seq++) {
			unsigned int u = ut_rand(&t->rng) % r->nunits;
			uint64_t gen = ((uint64_t)r->no << 32) |
				       ((uint64_t)(t->tid + 1) << 24) | (seq + 1);

			iov[i] = (struct iovec){ (char *)bufs + i * r->unit, r->unit };
			ut_pattern_fill(iov[i].iov_base, r->unit, u, gen, PATTERN_SEED);
			note_gen(r, u, gen);
			req[i] = (struct ut_wreq){
				.fd = f1.fd_d, .iov = &iov[i], .iovcnt = 1,
				.off = (off_t)u * r->unit, .rwflags = RWF_ATOMIC,
			};
		}
		if (ut_writev_batch(e, req, n))
			t->failed = "submission";
		for (i = 0; i < n; i++) {
			if (req[i].res == (ssize_t)r->unit) {
				t->writes++;
				continue;
			}
			t->failed = ut_engine_name(e);
			t->err = req[i].res < 0 ? (int)-req[i].res : EIO;
		}
		if (t->failed)
			break;
	}
	ut_io_release();
	free(bufs);
	return NULL;
}

/*
 * The other operations, on the same region while the writers write: each
 * leaves the contents alone, so every unit must still end as one whole
 * write; what they change is where the blocks are (shared, deduped,
 * preallocated), which sends the next atomic writes down other paths.
 */
static void *other_thread(void *p)
{
	struct thr *t = p;
	struct round *r = t->r;
	size_t region = (size_t)r->nunits * r->unit;
	void *buf = ut_alloc_io(r->unit);

	if (!buf) {
		t->failed = "out of memory";
		return NULL;
	}
	pthread_barrier_wait(&r->start);
	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		struct file_clone_range fcr = {
			.src_fd = f1.fd_b, .src_length = region,
		};
		unsigned int k = ut_rand(&t->rng) % 5;
		size_t u = ut_rand(&t->rng) % r->nunits;

		if ((k == 0 && (opt.no & 1U << OP_CLONE_TO)) ||
		    (k == 4 && (opt.no & 1U << OP_DEDUPE)))
			k = 1 + k % 3;	/* left out (ext4): another */

		switch (k) {
		case 0:
			if (ioctl(f2.fd_b, FICLONERANGE, &fcr)) {
				t->failed = "FICLONERANGE";
				t->err = errno;
			}
			r->cloned = 1;
			break;
		case 1:
			if (fsync(f1.fd_b)) {
				t->failed = "fsync";
				t->err = errno;
			}
			break;
		case 2:
			if (fallocate(f1.fd_b, FALLOC_FL_KEEP_SIZE, u * r->unit,
				      r->unit)) {
				t->failed = "fallocate";
				t->err = errno;
			}
			break;
		case 3:
			if (ut_pread(f1.fd_d, buf, r->unit, u * r->unit) !=
			    (ssize_t)r->unit) {
				t->failed = "direct read";
				t->err = EIO;
			}
			break;
		default:
			/* Whatever f2 holds now: same or differs. */
			if (r->cloned) {
				struct {
					struct file_dedupe_range r;
					struct file_dedupe_range_info i;
				} d = { .r = { .src_offset = u * r->unit,
					       .src_length = r->unit,
					       .dest_count = 1 },
					.i = { .dest_fd = f1.fd_b,
					       .dest_offset = u * r->unit } };

				if (ioctl(f2.fd_b, FIDEDUPERANGE, &d) ||
				    d.i.status < 0) {
					t->failed = "FIDEDUPERANGE";
					t->err = errno ? errno : -d.i.status;
				}
			}
			break;
		}
		if (t->failed)
			break;
		t->others++;
	}
	free(buf);
	return NULL;
}

/* Every unit of F holds one whole version that the round allows. */
static void check_round(struct round *r, struct mfile *f, void *buf)
{
	unsigned int u, k;

	for (u = 0; u < r->nunits; u++) {
		struct ut_unit_check c;
		ssize_t n = ut_pread(f->fd_d, buf, r->unit, (off_t)u * r->unit);

		if (n != (ssize_t)r->unit)
			fail("round %u: read of unit %u of %s: %s", r->no, u,
			     f->path, n < 0 ? strerror(-n) : "short");
		ut_pattern_check(buf, r->unit, u, PATTERN_SEED, &c);
		if (c.state != UT_UNIT_OK)
			fail("round %u: unit %u (%zu bytes) of %s is %s: %u stamps of generations %#" PRIx64 "..%#" PRIx64 ", %u zero, %u bad",
			     r->no, u, r->unit, f->path, ut_unit_state_name(c.state),
			     c.stamps_valid, c.gen_min, c.gen_max, c.stamps_zero,
			     c.stamps_bad);
		for (k = 0; k < r->ngens[u] && r->gens[u][k] != c.gen; k++)
			;
		if (k == r->ngens[u])
			fail("round %u: unit %u of %s holds generation %#" PRIx64 ", which no write of it made",
			     r->no, u, f->path, c.gen);
	}
}

/*
 * The control of the threaded mode: half of unit 0 rewritten with a
 * generation of its own, a torn unit as a broken atomic write leaves it.
 */
static void corrupt_round(struct round *r, void *buf)
{
	uint64_t gen = ((uint64_t)r->no << 32) | 0xffffff;
	ssize_t n;

	ut_pattern_fill(buf, r->unit, 0, gen, PATTERN_SEED);
	note_gen(r, 0, gen);
	logop("control: the first %zu bytes of unit 0 rewritten", r->unit / 2);
	n = pwrite(f1.fd_b, buf, r->unit / 2, 0);
	if (n != (ssize_t)r->unit / 2)
		die("control write: %s", n < 0 ? strerror(errno) : "short");
}

/*
 * Round NO's unit size: the sizes from both ends in turn (smallest,
 * largest, second smallest, ...). The hardware sizes are the small ones
 * and the software ones the large, so a run of only two rounds still
 * takes both paths that --expect may ask for.
 */
static size_t round_unit(unsigned int no)
{
	unsigned int k = (no - 1) % nsizes;

	return sizes[k % 2 ? nsizes - 1 - k / 2 : k / 2];
}

static void run_threads(void)
{
	unsigned int nw = opt.threads - 1, no, t, u;
	unsigned long long writes = 0, others = 0;
	void *buf;

	buf = ut_alloc_io(sizes[nsizes - 1]);
	if (!buf)
		die("out of memory");
	for (no = 1; no <= opt.rounds; no++) {
		struct round r = { .no = no };
		struct thr th[opt.threads];

		r.unit = round_unit(no);
		r.nunits = opt.size / r.unit < 8 ? opt.size / r.unit : 8;
		if (r.nunits < 2)
			die("--size %zu holds fewer than two units of %zu", opt.size, r.unit);
		r.gens = calloc(r.nunits, sizeof(*r.gens));
		r.ngens = calloc(r.nunits, sizeof(*r.ngens));
		if (!r.gens || !r.ngens)
			die("out of memory");
		pthread_mutex_init(&r.lock, NULL);
		pthread_barrier_init(&r.start, NULL, opt.threads);
		/* The round's starting data: every unit whole. */
		if (ftruncate(f1.fd_b, 0) || ftruncate(f1.fd_b, (off_t)r.nunits * r.unit))
			fail("truncate: %s", strerror(errno));
		for (u = 0; u < r.nunits; u++) {
			struct iovec iov = { buf, r.unit };
			uint64_t gen = (uint64_t)no << 32;

			r.gens[u] = calloc(nw * WRITES_PER_ROUND + 1, sizeof(uint64_t));
			if (!r.gens[u])
				die("out of memory");
			ut_pattern_fill(buf, r.unit, u, gen, PATTERN_SEED);
			r.gens[u][r.ngens[u]++] = gen;
			if (ut_writev(UT_ENGINE_PWRITEV2, f1.fd_d, &iov, 1,
				      (off_t)u * r.unit, 0) != (ssize_t)r.unit)
				fail("round %u: setup write: %s", no, strerror(errno));
		}
		logop("round %u: %u writers, units of %zu bytes, %u units", no,
		      nw, r.unit, r.nunits);
		for (t = 0; t < opt.threads; t++) {
			th[t] = (struct thr){ .r = &r, .tid = t,
				.rng = opt.seed ^ (0x9e3779b97f4a7c15ULL * (no * 64 + t + 1)) };
			if (pthread_create(&th[t].th, NULL,
					   t < nw ? writer_thread : other_thread, &th[t]))
				die("pthread_create failed");
		}
		for (t = 0; t < nw; t++)
			pthread_join(th[t].th, NULL);
		__atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
		pthread_join(th[nw].th, NULL);
		for (t = 0; t < opt.threads; t++) {
			if (th[t].failed)
				fail("round %u: thread %u: %s failed: %s", no, t,
				     th[t].failed, strerror(th[t].err));
			writes += th[t].writes;
			others += th[t].others;
		}
		if (opt.control == CTL_CORRUPT_FILE && no == (opt.rounds + 1) / 2)
			corrupt_round(&r, buf);
		check_round(&r, &f1, buf);
		/* A clone copies whole units: each is one of the round's too. */
		if (r.cloned)
			check_round(&r, &f2, buf);
		if (f2.path && ftruncate(f2.fd_b, 0))
			fail("truncate %s: %s", f2.path, strerror(errno));
		for (u = 0; u < r.nunits; u++)
			free(r.gens[u]);
		free(r.gens);
		free(r.ngens);
		pthread_barrier_destroy(&r.start);
	}
	printf("# %u rounds: %llu atomic writes by %u writers, %llu other operations\n",
	       opt.rounds, writes, nw, others);
	done[OP_ATOMIC] = writes;
	free(buf);
}

/* ---- setup ---- */

static void open_file(struct mfile *f, const char *path)
{
	f->path = path;
	f->fd_b = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	f->fd_d = open(path, O_RDWR | O_DIRECT);
	f->model = calloc(1, opt.size);
	if (f->fd_b < 0 || f->fd_d < 0)
		die("open %s: %s", path, strerror(errno));
	if (!f->model)
		die("out of memory");
}

/* The atomic_write directory of the filesystem that holds PATH, or "". */
static void find_counters(const char *path)
{
	struct ut_devinfo dev;

	if (ut_devinfo(path, &dev) || ut_awstats_dir(&dev, aw_dir, sizeof(aw_dir)))
		aw_dir[0] = 0;
}

static void read_counters(uint64_t v[PC_COUNT])
{
	struct ut_awstats st;
	int i;

	memset(v, 0, sizeof(*v) * PC_COUNT);
	if (!aw_dir[0] || ut_awstats_read_dir(aw_dir, &st))
		return;
	for (i = 0; i < PC_COUNT; i++)
		ut_awstats_get(&st, counter_names[i], &v[i]);
}

static unsigned int parse_list(const char *what, const char *arg,
			       const char *const names[], unsigned int n)
{
	unsigned int mask;
	char bad[64];
	int err = ut_parse_list(arg, names, n, &mask, bad, sizeof(bad));

	if (err == -ENOMEM)
		die("out of memory");
	if (err)
		die("%s: unknown %s", what, bad);
	return mask;
}

static unsigned int parse_count(const char *what, const char *arg,
				unsigned int min, unsigned int max)
{
	unsigned int v;

	if (ut_parse_uint(arg, min, max, &v))
		die("%s %s: a number from %u to %u", what, arg, min, max);
	return v;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: atomic-fsx --file PATH [--file2 PATH2] [--ops N] [--seed S]\n"
		"                  [--size BYTES] [--align BYTES] [--no OP,...]\n"
		"                  [--expect hw_writes,sw_writes,...] [--log N] [--full-check]\n"
		"                  [--control corrupt-file|corrupt-model]\n"
		"       atomic-fsx --file PATH --file2 PATH2 --threads N [--rounds R] [--seed S]\n"
		"                  [--size BYTES] [--expect ...] [--control corrupt-file]\n");
	exit(2);
}

static void parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "file", required_argument, NULL, 'f' },
		{ "file2", required_argument, NULL, 'g' },
		{ "ops", required_argument, NULL, 'o' },
		{ "seed", required_argument, NULL, 's' },
		{ "size", required_argument, NULL, 'z' },
		{ "align", required_argument, NULL, 'a' },
		{ "no", required_argument, NULL, 'n' },
		{ "expect", required_argument, NULL, 'x' },
		{ "log", required_argument, NULL, 'l' },
		{ "threads", required_argument, NULL, 't' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "control", required_argument, NULL, 'c' },
		{ "full-check", no_argument, NULL, 'F' },
		{ NULL, 0, NULL, 0 },
	};
	int c, seeded = 0;
	unsigned int i;
	uint64_t v;
	char *end;

	opt.argc = argc;
	opt.argv = argv;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'f': opt.file = optarg; break;
		case 'g': opt.file2 = optarg; break;
		case 'o': opt.ops = parse_count("--ops", optarg, 1, 1U << 30); break;
		case 'l': opt.log = parse_count("--log", optarg, 1, LOG_MAX); break;
		case 't': opt.threads = parse_count("--threads", optarg, 2, 32); break;
		case 'r': opt.rounds = parse_count("--rounds", optarg, 1, 1U << 20); break;
		case 'c':
			for (i = 0; i < CTL_COUNT && strcmp(optarg, control_names[i]); i++)
				;
			if (i == CTL_COUNT)
				die("--control %s: corrupt-file or corrupt-model", optarg);
			opt.control = i;
			break;
		case 'F': opt.full_check = 1; break;
		case 'n': opt.no = parse_list("--no", optarg, op_names, OP_COUNT); break;
		case 'x':
			opt.expect = parse_list("--expect", optarg, counter_names, PC_COUNT);
			break;
		case 'z':
		case 'a':
			if (ut_parse_size(optarg, &v) || !v || v > (256U << 20) ||
			    (c == 'a' && !ut_is_pow2(v)))
				die("--%s %s: a size%s up to 256M", c == 'z' ? "size" : "align",
				    optarg, c == 'a' ? " (a power of two)" : "");
			if (c == 'z')
				opt.size = v;
			else
				opt.align = v;
			break;
		case 's':
			errno = 0;
			opt.seed = strtoull(optarg, &end, 0);
			if (errno || end == optarg || *end)
				die("--seed %s: a number", optarg);
			seeded = 1;
			break;
		default:
			usage();
		}
	}
	if (!opt.file || optind != argc)
		usage();
	if (opt.threads && !opt.file2 &&
	    (~opt.no & (1U << OP_CLONE_TO | 1U << OP_DEDUPE)))
		die("--threads needs --file2 for the clones, or --no clone_to,dedupe");
	if (opt.threads && opt.control == CTL_CORRUPT_MODEL)
		die("--control corrupt-model: the threaded mode's model is the patterns; use corrupt-file");
	if (!opt.file2)
		opt.no |= 1U << OP_CLONE_TO | 1U << OP_CLONE_FROM | 1U << OP_DEDUPE;
	if (!seeded && getrandom(&opt.seed, sizeof(opt.seed), 0) != sizeof(opt.seed))
		die("getrandom: %s", strerror(errno));
}

int main(int argc, char **argv)
{
	uint64_t before[PC_COUNT], after[PC_COUNT];
	struct ut_statx stx;
	unsigned int i, bad = 0;
	size_t s;
	int err;

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse_args(argc, argv);
	rng = opt.seed;
	open_file(&f1, opt.file);
	if (opt.file2)
		open_file(&f2, opt.file2);
	err = ut_statx(AT_FDCWD, opt.file, 0, UT_STATX_WRITE_ATOMIC, &stx);
	if (err)
		die("statx %s: %s", opt.file, strerror(-err));
	if (!(stx.stx_mask & UT_STATX_WRITE_ATOMIC) || !stx.stx_atomic_write_unit_min) {
		printf("not ok - atomic-fsx: %s offers no atomic writes\n", opt.file);
		return 1;
	}
	awu_min = stx.stx_atomic_write_unit_min;
	awu_max = stx.stx_atomic_write_unit_max;
	if (!opt.align)
		opt.align = stx.stx_blksize;
	for (s = awu_min; s <= awu_max && s <= opt.size / 2 && nsizes < 32; s *= 2)
		sizes[nsizes++] = s;
	if (!nsizes)
		die("--size %zu holds no two atomic units of %zu", opt.size, awu_min);
	iobuf = ut_alloc_io(opt.size + 4096);
	if (!iobuf)
		die("out of memory");
	find_counters(opt.file);
	printf("# atomic-fsx: %s, seed %#" PRIx64 ", atomic sizes %zu..%zu, block %zu, counters %s\n",
	       opt.file, opt.seed, sizes[0], sizes[nsizes - 1], opt.align,
	       aw_dir[0] ? aw_dir : "none");

	read_counters(before);
	if (opt.threads)
		run_threads();
	else
		run_sequence();
	read_counters(after);

	for (i = 0; i < PC_COUNT; i++) {
		if (!(opt.expect & (1U << i)) || after[i] > before[i])
			continue;
		printf("not ok - atomic-fsx: no %s counted: the run did not take the path it was built for\n",
		       counter_names[i]);
		bad = 1;
	}
	printf("# counted: hw_writes %" PRIu64 ", sw_writes %" PRIu64 ", fallback_mixed %" PRIu64 "\n",
	       after[PC_HW] - before[PC_HW], after[PC_SW] - before[PC_SW],
	       after[PC_MIXED] - before[PC_MIXED]);
	printf("# done:");
	for (i = 0; i < OP_COUNT; i++)
		if (done[i])
			printf(" %s %llu", op_names[i], done[i]);
	printf("\n");
	if (bad) {
		print_replay();
		return 1;
	}
	/* An operation that never ran was not tested: say so, and fail. */
	if (!opt.threads) {
		for (i = 0; i < OP_COUNT; i++) {
			if ((opt.no & (1U << i)) || done[i])
				continue;
			printf("not ok - atomic-fsx: %s never ran in %u operations\n",
			       op_names[i], opt.ops);
			bad = 1;
		}
		if (bad) {
			print_replay();
			return 1;
		}
	}
	if (opt.threads)
		printf("ok - atomic-fsx: %u rounds of %u threads, every unit one whole write\n",
		       opt.rounds, opt.threads);
	else
		printf("ok - atomic-fsx: %lu operations matched the model\n", oplog_n);
	return 0;
}
