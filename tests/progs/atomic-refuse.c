// SPDX-License-Identifier: GPL-2.0
/*
 * atomic-refuse - RWF_ATOMIC requests that must be refused, each with
 * mainline's errno and nothing written, as named TAP cases.
 *
 *   atomic-refuse [--name NAME] PATH
 *
 * PATH is a file (created and filled with patterned units first) or a
 * block device. Cases: a length below unit_min, a misaligned user buffer,
 * more iovecs than stx_atomic_write_segments_max (pwritev2, io_uring and
 * libaio), RWF_NOWAIT on a size that needs the software path (EAGAIN:
 * it always allocates) and on one the hardware takes (honoured), O_APPEND
 * with i_size not aligned to the unit (EINVAL: the write would land
 * misaligned) and aligned (written whole at EOF), RLIMIT_FSIZE that would
 * cut the write short (EINVAL: never a short atomic write), RWF_ATOMIC on reads
 * (preadv2 and io_uring READV), and io_uring SQEs: WRITE (not vectored)
 * valid and with a length that is not a power of two, WRITEV with two
 * iovecs, and rw_flags with an unknown bit. After each refusal the whole
 * file (or the device's first units) and its size are compared with a
 * snapshot. Exit 0 when every case passed, 1 otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <liburing.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "io.h"
#include "pattern.h"
#include "statx.h"
#include "tap.h"
#include "util.h"

#define SEED 0xa7e5
#define NUNITS 8

static void bail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void bail(const char *fmt, ...)
{
	va_list ap;

	printf("not ok - %s: ", ut_tap_prefix);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	exit(1);
}

static const char *path;
static int fd_d, is_file;
static size_t unit_min, unit_max, hw_max, segs, span, region;
static uint64_t gen = 1;
static void *snap, *cur;
static off_t snap_size;

static off_t cur_size(void)
{
	struct stat st;

	return fstat(fd_d, &st) ? -1 : st.st_size;
}

/* The region under test as it is now, into BUF; its size into *SIZE. */
static int read_region(void *buf, off_t *size)
{
	*size = is_file ? cur_size() : (off_t)region;
	memset(buf, 0, region + span);
	return ut_pread(fd_d, buf, region + span, 0) < 0 ? -1 : 0;
}

static void take_snapshot(void)
{
	if (read_region(snap, &snap_size))
		bail("read %s: %s", path, strerror(errno));
}

static int unchanged(void)
{
	off_t size;

	if (read_region(cur, &size))
		return 0;
	return size == snap_size && !memcmp(snap, cur, region + span);
}

/* One refusal: RES must be -WANT, and nothing may have changed. */
static void judge(const char *what, ssize_t res, int want)
{
	int same = unchanged();

	ut_tap(res == -want && same, "%s -> %s%s", what,
	       res < 0 ? strerrorname_np(-res) : "success",
	       same ? "" : ", and the data CHANGED");
	if (res != -want)
		ut_diag("expected %s", strerrorname_np(want));
}

static ssize_t writev_at(int fd, enum ut_engine e, void *buf, size_t len,
			 unsigned int niov, off_t off, int flags)
{
	struct iovec iov[64];
	unsigned int i;

	for (i = 0; i < niov; i++) {
		iov[i].iov_base = (char *)buf + i * (len / niov);
		iov[i].iov_len = len / niov;
	}
	return ut_writev(e, fd, iov, niov, off, flags);
}

/* An io_uring SQE of OP with RW_FLAGS on FD; returns cqe->res. */
static ssize_t uring_one(unsigned int op, int fd, void *buf, size_t len,
			 off_t off, unsigned int rw_flags, struct iovec *iov,
			 unsigned int niov)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	ssize_t res;
	int err;

	err = io_uring_queue_init(4, &ring, 0);
	if (err)
		return err;
	sqe = io_uring_get_sqe(&ring);
	if (niov)
		io_uring_prep_rw(op, sqe, fd, iov, niov, off);
	else
		io_uring_prep_rw(op, sqe, fd, buf, len, off);
	sqe->rw_flags = rw_flags;
	err = io_uring_submit(&ring);
	if (err != 1) {
		io_uring_queue_exit(&ring);
		return err < 0 ? err : -EIO;
	}
	err = io_uring_wait_cqe(&ring, &cqe);
	res = err ? err : cqe->res;
	if (!err)
		io_uring_cqe_seen(&ring, cqe);
	io_uring_queue_exit(&ring);
	return res;
}

static void *unit_buf(size_t len)
{
	void *buf = ut_alloc_io(len + 4096);

	if (!buf)
		bail("out of memory");
	ut_pattern_fill(buf, len, 0, ++gen, SEED);
	return buf;
}

static void case_lengths(void)
{
	void *buf = unit_buf(4 * unit_min);
	enum ut_engine e;
	char what[160];

	for (e = 0; e < UT_ENGINE_COUNT; e++) {
		if (unit_min >= 1024) {
			take_snapshot();
			snprintf(what, sizeof(what), "%s: %zu bytes, below unit_min %zu",
				 ut_engine_name(e), unit_min / 2, unit_min);
			judge(what, writev_at(fd_d, e, buf, unit_min / 2, 1, 0,
					      RWF_ATOMIC), EINVAL);
		}
		take_snapshot();
		snprintf(what, sizeof(what), "%s: %zu iovecs, segments_max %zu",
			 ut_engine_name(e), segs + 1, segs);
		judge(what, writev_at(fd_d, e, buf, (segs + 1) * unit_min,
				      segs + 1, 0, RWF_ATOMIC), EINVAL);
		take_snapshot();
		snprintf(what, sizeof(what), "%s: a user buffer one byte off its alignment",
			 ut_engine_name(e));
		judge(what, writev_at(fd_d, e, (char *)buf + 1, unit_min, 1, 0,
				      RWF_ATOMIC), EINVAL);
	}
	free(buf);
}

/*
 * RWF_NOWAIT: a write the hardware takes is honoured; one that needs the
 * software path always allocates, so it is EAGAIN (as mainline), and the
 * caller retries without it.
 */
static void case_nowait(void)
{
	void *buf = unit_buf(2 * hw_max);
	ssize_t n;

	unsigned int tries;

	/*
	 * Any nowait write is EAGAIN when the file's timestamps need an
	 * update that could block, as they always do right after a stat on
	 * a filesystem with fine-grained timestamps (XFS in 6.12). So each
	 * try follows a blocking write, with no stat in between, and one
	 * of a few tries landing within the same clock tick must succeed.
	 */
	/*
	 * On a file, one block: larger units take the hardware only where
	 * the extent is aligned on disk, which plain writes do not promise.
	 */
	size_t len = is_file ? unit_min : hw_max;

	for (tries = 1; tries <= 10; tries++) {
		if (writev_at(fd_d, UT_ENGINE_PWRITEV2, buf, len, 1, 0, 0) !=
		    (ssize_t)len)
			bail("write of %s: %s", path, strerror(errno));
		n = writev_at(fd_d, UT_ENGINE_PWRITEV2, buf, len, 1, 0,
			      RWF_ATOMIC | RWF_NOWAIT);
		if (n != -EAGAIN)
			break;
	}
	ut_tap(n == (ssize_t)len, "RWF_NOWAIT on %zu bytes over written blocks (hardware) -> %s (try %u)",
	       len, n < 0 ? strerrorname_np(-n) : "written", tries);
	if (is_file && unit_max >= 2 * hw_max) {
		take_snapshot();
		judge("RWF_NOWAIT on a size only the software path takes",
		      writev_at(fd_d, UT_ENGINE_PWRITEV2, buf, 2 * hw_max, 1,
				2 * hw_max, RWF_ATOMIC | RWF_NOWAIT), EAGAIN);
	}
	free(buf);
}

/* O_APPEND moves the write to EOF, which must then be aligned too. */
static void case_append(void)
{
	void *buf = unit_buf(unit_min);
	off_t end = region;
	ssize_t n;
	int fd;

	fd = open(path, O_WRONLY | O_DIRECT | O_APPEND);
	if (fd < 0)
		bail("open %s O_APPEND: %s", path, strerror(errno));
	if (ftruncate(fd_d, end + 512))
		bail("truncate: %s", strerror(errno));
	take_snapshot();
	judge("O_APPEND with i_size 512 bytes past a unit boundary",
	      writev_at(fd, UT_ENGINE_PWRITEV2, buf, unit_min, 1, 0, RWF_ATOMIC),
	      EINVAL);
	if (ftruncate(fd_d, end))
		bail("truncate: %s", strerror(errno));
	n = writev_at(fd, UT_ENGINE_PWRITEV2, buf, unit_min, 1, 0, RWF_ATOMIC);
	ut_tap(n == (ssize_t)unit_min && cur_size() == end + (off_t)unit_min,
	       "O_APPEND with an aligned i_size: %zu bytes at EOF (%lld), i_size %lld",
	       unit_min, (long long)end, (long long)cur_size());
	if (ftruncate(fd_d, end))
		bail("truncate: %s", strerror(errno));
	close(fd);
	free(buf);
}

/* RLIMIT_FSIZE would cut the write short: all or nothing means nothing. */
static void case_fsize_limit(void)
{
	void *buf = unit_buf(unit_min);
	struct rlimit old, lim;
	ssize_t n;

	if (getrlimit(RLIMIT_FSIZE, &old))
		bail("getrlimit: %s", strerror(errno));
	signal(SIGXFSZ, SIG_IGN);
	lim = old;
	lim.rlim_cur = region + 512;
	take_snapshot();
	if (setrlimit(RLIMIT_FSIZE, &lim))
		bail("setrlimit: %s", strerror(errno));
	n = writev_at(fd_d, UT_ENGINE_PWRITEV2, buf, unit_min, 1, region, RWF_ATOMIC);
	if (setrlimit(RLIMIT_FSIZE, &old))
		bail("setrlimit: %s", strerror(errno));
	judge("a write that RLIMIT_FSIZE would cut to 512 bytes", n, EINVAL);
	signal(SIGXFSZ, SIG_DFL);
	free(buf);
}

static void case_reads(void)
{
	void *buf = unit_buf(unit_min);
	struct iovec iov = { buf, unit_min };

	take_snapshot();
	judge("preadv2 with RWF_ATOMIC", preadv2(fd_d, &iov, 1, 0, RWF_ATOMIC) < 0 ?
	      -errno : 0, EOPNOTSUPP);
	take_snapshot();
	judge("io_uring READV with RWF_ATOMIC",
	      uring_one(IORING_OP_READV, fd_d, NULL, 0, 0, RWF_ATOMIC, &iov, 1),
	      EOPNOTSUPP);
	free(buf);
}

static void case_uring(void)
{
	void *buf = unit_buf(4 * unit_min);
	struct iovec iov[2] = { { buf, unit_min },
				{ (char *)buf + unit_min, unit_min } };
	ssize_t n;

	n = uring_one(IORING_OP_WRITE, fd_d, buf, unit_min, 0, RWF_ATOMIC, NULL, 0);
	ut_tap(n == (ssize_t)unit_min, "io_uring WRITE (not vectored) with RWF_ATOMIC -> %s",
	       n < 0 ? strerrorname_np(-n) : "written");
	take_snapshot();
	judge("io_uring WRITE of 3 x unit_min (not a power of two)",
	      uring_one(IORING_OP_WRITE, fd_d, buf, 3 * unit_min, 0, RWF_ATOMIC,
			NULL, 0), EINVAL);
	take_snapshot();
	judge("io_uring WRITEV with two iovecs",
	      uring_one(IORING_OP_WRITEV, fd_d, NULL, 0, 0, RWF_ATOMIC, iov, 2),
	      EINVAL);
	take_snapshot();
	judge("io_uring WRITE with RWF_ATOMIC and an unknown rw_flags bit",
	      uring_one(IORING_OP_WRITE, fd_d, buf, unit_min, 0,
			RWF_ATOMIC | 0x40000000, NULL, 0), EOPNOTSUPP);
	free(buf);
}

/* A file of NUNITS patterned units of SPAN bytes, on disk. */
static void fill_file(void)
{
	void *buf = ut_alloc_io(span);
	unsigned int u;

	if (!buf)
		bail("out of memory");
	for (u = 0; u < NUNITS; u++) {
		struct iovec iov = { buf, span };

		ut_pattern_fill(buf, span, u, 1, SEED);
		if (ut_writev(UT_ENGINE_PWRITEV2, fd_d, &iov, 1, (off_t)u * span, 0) !=
		    (ssize_t)span)
			bail("setup write of %s: %s", path, strerror(errno));
	}
	if (fsync(fd_d))
		bail("fsync %s: %s", path, strerror(errno));
	free(buf);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "name", required_argument, NULL, 'N' },
		{ NULL, 0, NULL, 0 },
	};
	struct ut_statx stx;
	struct stat st;
	int c, err;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c != 'N') {
			fprintf(stderr, "usage: atomic-refuse [--name NAME] PATH\n");
			return 2;
		}
		ut_tap_prefix = optarg;
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: atomic-refuse [--name NAME] PATH\n");
		return 2;
	}
	path = argv[optind];
	if (!*ut_tap_prefix)
		ut_tap_prefix = path;
	is_file = !(stat(path, &st) == 0 && S_ISBLK(st.st_mode));
	fd_d = open(path, O_RDWR | O_DIRECT | (is_file ? O_CREAT | O_TRUNC : 0), 0644);
	if (fd_d < 0)
		bail("open %s: %s", path, strerror(errno));
	err = ut_statx(AT_FDCWD, path, 0, UT_STATX_WRITE_ATOMIC, &stx);
	if (err || !(stx.stx_mask & UT_STATX_WRITE_ATOMIC) ||
	    !stx.stx_atomic_write_unit_min) {
		ut_tap(0, "statx promises atomic writes on %s", path);
		return 1;
	}
	unit_min = stx.stx_atomic_write_unit_min;
	unit_max = stx.stx_atomic_write_unit_max;
	segs = stx.stx_atomic_write_segments_max;
	hw_max = stx.stx_atomic_write_unit_max_opt ? stx.stx_atomic_write_unit_max_opt :
		 unit_max;
	span = unit_max < (64 << 10) ? 64 << 10 : unit_max > (1 << 20) ? 1 << 20 : unit_max;
	region = NUNITS * span;
	snap = ut_alloc_io(region + span);
	cur = ut_alloc_io(region + span);
	if (!snap || !cur)
		bail("out of memory");
	ut_diag("%s: unit %zu..%zu, hardware up to %zu, segments_max %zu",
		path, unit_min, unit_max, hw_max, segs);
	if (is_file)
		fill_file();
	case_lengths();
	case_nowait();
	if (is_file) {
		case_append();
		case_fsize_limit();
	}
	case_reads();
	case_uring();
	ut_io_release();
	return ut_tap_failures ? 1 : 0;
}
