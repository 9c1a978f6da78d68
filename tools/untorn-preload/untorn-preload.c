// SPDX-License-Identifier: GPL-2.0
/*
 * untorn-preload - RWF_ATOMIC for databases that do not ask for it yet.
 *
 *   LD_PRELOAD=/usr/lib/untorn/untorn-preload.so mariadbd ...
 *
 * A database that turns its doublewrite buffer off trusts every page write
 * to be untorn, but issues plain pwrite(2). Loaded into it, this library
 * issues each write to a file opened with O_DIRECT whose length is one of
 * the page sizes in UNTORN_ATOMIC_SIZES (default 16384) at an offset
 * aligned to that length as pwritev2(..., RWF_ATOMIC). It covers pwrite,
 * pwrite64, pwritev, pwritev64 and libaio's io_submit (the iocb's
 * aio_rw_flags); not write(2) and not io_uring (whose requests the kernel
 * reads from shared memory).
 *
 * It reads the file's statx atomic limits once per file descriptor. A
 * page that cannot be written atomically (the limits do not cover it, or
 * the kernel refuses the RWF_ATOMIC write with EINVAL or EOPNOTSUPP) is
 * never written plainly behind the database's back: by default the write
 * fails with the kernel's error, and the library says so once per file on
 * stderr. UNTORN_ON_REFUSE=plain writes such pages plainly instead (and
 * counts them). Other errors (EIO, ENOSPC, ...) are the database's to see.
 *
 * Counters (atomic, plain, refused, passed = writes left alone) go to
 * stderr at exit, or to the file UNTORN_STATS_FILE (appended), and also
 * whenever the process gets the signal named by UNTORN_STATS_SIGNAL (a
 * number or USR1, USR2; none by default, so that the library never takes
 * a signal the program uses).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libaio.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "statx.h"

#ifndef RWF_ATOMIC
#define RWF_ATOMIC	0x00000040
#endif

/* Built with -fvisibility=hidden: only the wrappers are the program's. */
#define PUBLIC		__attribute__((visibility("default")))

#define MAX_SIZES	8
#define FD_TABLE	65536

/* What the library knows about a file descriptor. */
enum fd_state { FD_UNKNOWN, FD_KNOWN };

struct fd_info {
	unsigned char state;	/* enum fd_state, published last */
	unsigned char warned;	/* said once that a page was refused */
	unsigned int unit_min, unit_max, segments_max;
};

static struct fd_info fds[FD_TABLE];

static struct {
	size_t sizes[MAX_SIZES];
	unsigned int nsizes;
	int allow_plain;
	int stats_fd;
	int configured;
} cfg;

static unsigned long long n_atomic, n_plain, n_refused, n_passed;

static ssize_t (*real_pwrite64)(int, const void *, size_t, off_t);
static ssize_t (*real_pwritev64)(int, const struct iovec *, int, off_t);
static int (*real_io_submit)(io_context_t, long, struct iocb **);
static int (*real_close)(int);
static int (*real_dup2)(int, int);
static int (*real_dup3)(int, int, int);

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	n = snprintf(line, sizeof(line), "untorn-preload[%d]: ", getpid());
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(line) - 1)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	if (write(2, line, n) < 0)
		return;
}

/* "16384", "16k", "64K", "1m": bytes, or 0 when not a size. */
static size_t parse_size(const char *s, char **end)
{
	unsigned long long v = strtoull(s, end, 10);

	if (*end == s)
		return 0;
	switch (**end) {
	case 'k': case 'K': v <<= 10; (*end)++; break;
	case 'm': case 'M': v <<= 20; (*end)++; break;
	default: break;
	}
	return v;
}

static int parse_signal(const char *s)
{
	char *end;
	long v;

	if (!strcmp(s, "USR1") || !strcmp(s, "SIGUSR1"))
		return SIGUSR1;
	if (!strcmp(s, "USR2") || !strcmp(s, "SIGUSR2"))
		return SIGUSR2;
	v = strtol(s, &end, 10);
	return *end || v <= 0 || v >= NSIG ? -1 : (int)v;
}

/* Async-signal-safe: the counters as one line, by write(2) alone. */
static void put_uint(char **p, unsigned long long v)
{
	char tmp[24];
	int n = 0;

	do {
		tmp[n++] = '0' + v % 10;
		v /= 10;
	} while (v);
	while (n)
		*(*p)++ = tmp[--n];
}

static void put_str(char **p, const char *s)
{
	while (*s)
		*(*p)++ = *s++;
}

static void write_stats(void)
{
	char line[256], *p = line;

	put_str(&p, "untorn-preload[");
	put_uint(&p, getpid());
	put_str(&p, "]: atomic ");
	put_uint(&p, __atomic_load_n(&n_atomic, __ATOMIC_RELAXED));
	put_str(&p, ", plain ");
	put_uint(&p, __atomic_load_n(&n_plain, __ATOMIC_RELAXED));
	put_str(&p, ", refused ");
	put_uint(&p, __atomic_load_n(&n_refused, __ATOMIC_RELAXED));
	put_str(&p, ", passed ");
	put_uint(&p, __atomic_load_n(&n_passed, __ATOMIC_RELAXED));
	*p++ = '\n';
	if (write(cfg.stats_fd, line, p - line) < 0)
		return;
}

static void stats_signal(int sig)
{
	int saved = errno;

	(void)sig;
	write_stats();
	errno = saved;
}

static void *real(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);

	if (!f) {
		say("cannot find %s: %s", name, dlerror());
		abort();
	}
	return f;
}

/*
 * The real functions; also from the wrappers, which another library's
 * constructor may call before ours ran.
 */
static void resolve(void)
{
	if (!real_pwrite64) {
		real_pwritev64 = real("pwritev64");
		real_close = real("close");
		real_dup2 = real("dup2");
		real_dup3 = real("dup3");
		__atomic_store_n(&real_pwrite64, real("pwrite64"), __ATOMIC_RELEASE);
	}
}

__attribute__((constructor)) static void setup(void)
{
	const char *v;
	char *end;

	resolve();

	v = getenv("UNTORN_ATOMIC_SIZES");
	if (!v || !*v)
		v = "16384";
	while (*v) {
		size_t s = parse_size(v, &end);

		if (!s || (s & (s - 1)) || (*end && *end != ',') ||
		    cfg.nsizes == MAX_SIZES) {
			say("UNTORN_ATOMIC_SIZES=%s: up to %d powers of two, comma separated",
			    getenv("UNTORN_ATOMIC_SIZES"), MAX_SIZES);
			exit(2);
		}
		cfg.sizes[cfg.nsizes++] = s;
		v = *end ? end + 1 : end;
	}

	v = getenv("UNTORN_ON_REFUSE");
	if (v && !strcmp(v, "plain")) {
		cfg.allow_plain = 1;
	} else if (v && *v && strcmp(v, "fail")) {
		say("UNTORN_ON_REFUSE=%s: fail (the default) or plain", v);
		exit(2);
	}

	cfg.stats_fd = 2;
	v = getenv("UNTORN_STATS_FILE");
	if (v && *v) {
		cfg.stats_fd = open(v, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (cfg.stats_fd < 0) {
			say("UNTORN_STATS_FILE=%s: %s", v, strerror(errno));
			exit(2);
		}
	}

	v = getenv("UNTORN_STATS_SIGNAL");
	if (v && *v) {
		struct sigaction sa = { .sa_handler = stats_signal,
					.sa_flags = SA_RESTART };
		int sig = parse_signal(v);

		if (sig < 0 || sigaction(sig, &sa, NULL)) {
			say("UNTORN_STATS_SIGNAL=%s: a signal number, USR1 or USR2", v);
			exit(2);
		}
	}
	cfg.configured = 1;
}

__attribute__((destructor)) static void report(void)
{
	if (cfg.configured)
		write_stats();
}

static int is_page_size(size_t len)
{
	unsigned int i;

	for (i = 0; i < cfg.nsizes; i++)
		if (len == cfg.sizes[i])
			return 1;
	return 0;
}

static void forget_fd(int fd)
{
	if (fd >= 0 && fd < FD_TABLE) {
		__atomic_store_n(&fds[fd].state, FD_UNKNOWN, __ATOMIC_RELEASE);
		__atomic_store_n(&fds[fd].warned, 0, __ATOMIC_RELAXED);
	}
}

/* The file's atomic limits, from statx once per descriptor. */
static void fd_limits(int fd, struct fd_info *out)
{
	struct ut_statx stx;

	if (fd < FD_TABLE &&
	    __atomic_load_n(&fds[fd].state, __ATOMIC_ACQUIRE) == FD_KNOWN) {
		*out = fds[fd];
		return;
	}
	memset(out, 0, sizeof(*out));
	if (ut_statx(fd, "", AT_EMPTY_PATH, UT_STATX_WRITE_ATOMIC, &stx) == 0 &&
	    (stx.stx_mask & UT_STATX_WRITE_ATOMIC)) {
		out->unit_min = stx.stx_atomic_write_unit_min;
		out->unit_max = stx.stx_atomic_write_unit_max;
		out->segments_max = stx.stx_atomic_write_segments_max;
	}
	if (fd < FD_TABLE) {
		fds[fd].unit_min = out->unit_min;
		fds[fd].unit_max = out->unit_max;
		fds[fd].segments_max = out->segments_max;
		__atomic_store_n(&fds[fd].state, FD_KNOWN, __ATOMIC_RELEASE);
	}
}

/* A page write of LEN at OFF: O_DIRECT, a configured size, aligned. */
static int is_page_write(int fd, size_t len, off_t off)
{
	int fl;

	if (!is_page_size(len) || off < 0 || (off & (len - 1)))
		return 0;
	fl = fcntl(fd, F_GETFL);
	return fl >= 0 && (fl & O_DIRECT);
}

static int limits_cover(const struct fd_info *fi, size_t len)
{
	return fi->unit_min && len >= fi->unit_min && len <= fi->unit_max;
}

static void say_refused(int fd, const struct fd_info *fi, size_t len, int err)
{
	char link[64], path[PATH_MAX];
	ssize_t n;

	if (fd < FD_TABLE) {
		if (__atomic_exchange_n(&fds[fd].warned, 1, __ATOMIC_RELAXED))
			return;
	}
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	path[n > 0 ? n : 0] = 0;
	say("%s: a %zu-byte page cannot be written atomically (statx unit min %u, max %u; %s): %s",
	    n > 0 ? path : link, len, fi->unit_min, fi->unit_max,
	    err ? strerror(err) : "outside the limits",
	    cfg.allow_plain ? "writing such pages plainly (UNTORN_ON_REFUSE=plain)" :
	    "failing such writes (UNTORN_ON_REFUSE=plain would write them plainly)");
}

static void count(unsigned long long *c)
{
	__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

/* The kernel's answer to a write it cannot make atomic. */
static int is_refusal(int err)
{
	return err == EINVAL || err == EOPNOTSUPP;
}

/*
 * The page write itself: RWF_ATOMIC, and what to do when it cannot be.
 * The flag is tried whatever statx said, so that a refused write fails
 * with exactly the kernel's error.
 */
static ssize_t page_write(int fd, const struct fd_info *fi,
			  const struct iovec *iov, int cnt, off_t off, size_t len)
{
	ssize_t n;
	int err;

	if (!limits_cover(fi, len) && cfg.allow_plain) {
		say_refused(fd, fi, len, 0);
		count(&n_plain);
		return real_pwritev64(fd, iov, cnt, off);
	}
	n = pwritev2(fd, iov, cnt, off, RWF_ATOMIC);
	if (n >= 0) {
		count(&n_atomic);
		return n;
	}
	err = errno;
	if (!is_refusal(err))
		return n;
	say_refused(fd, fi, len, err);
	if (cfg.allow_plain) {
		count(&n_plain);
		return real_pwritev64(fd, iov, cnt, off);
	}
	count(&n_refused);
	errno = err;
	return -1;
}

PUBLIC ssize_t pwrite64(int fd, const void *buf, size_t len, off_t off)
{
	struct iovec iov = { (void *)buf, len };
	struct fd_info fi;

	resolve();
	if (!is_page_write(fd, len, off)) {
		count(&n_passed);
		return real_pwrite64(fd, buf, len, off);
	}
	fd_limits(fd, &fi);
	return page_write(fd, &fi, &iov, 1, off, len);
}

PUBLIC ssize_t pwrite(int fd, const void *buf, size_t len, off_t off)
	__attribute__((alias("pwrite64")));

/*
 * A page in more pieces than the file takes in one atomic write is
 * gathered into one buffer first: the write stays one command.
 */
PUBLIC ssize_t pwritev64(int fd, const struct iovec *iov, int cnt, off_t off)
{
	struct fd_info fi;
	struct iovec one;
	size_t len = 0, done = 0;
	ssize_t n;
	int i;

	resolve();
	for (i = 0; i < cnt; i++)
		len += iov[i].iov_len;
	if (cnt < 1 || !is_page_write(fd, len, off)) {
		count(&n_passed);
		return real_pwritev64(fd, iov, cnt, off);
	}
	fd_limits(fd, &fi);
	if (cnt == 1 || (fi.segments_max && (unsigned int)cnt <= fi.segments_max))
		return page_write(fd, &fi, iov, cnt, off, len);
	if (posix_memalign(&one.iov_base, 4096, len)) {
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; i < cnt; i++) {
		memcpy((char *)one.iov_base + done, iov[i].iov_base, iov[i].iov_len);
		done += iov[i].iov_len;
	}
	one.iov_len = len;
	n = page_write(fd, &fi, &one, 1, off, len);
	i = errno;
	free(one.iov_base);
	errno = i;
	return n;
}

PUBLIC ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
	__attribute__((alias("pwritev64")));

/* What the library did with one iocb, counted once it is submitted. */
enum aio_kind { AIO_PASSED, AIO_ATOMIC, AIO_PLAIN, AIO_REFUSED };

static enum aio_kind aio_prepare(struct iocb *cb)
{
	struct fd_info fi;
	size_t len = 0;
	unsigned long k;

	if (cb->aio_lio_opcode == IO_CMD_PWRITE) {
		len = cb->u.c.nbytes;
	} else if (cb->aio_lio_opcode == IO_CMD_PWRITEV) {
		const struct iovec *iov = cb->u.v.vec;

		for (k = 0; k < cb->u.v.nr; k++)
			len += iov[k].iov_len;
	} else {
		return AIO_PASSED;
	}
	if (!is_page_write(cb->aio_fildes, len, cb->u.c.offset))
		return AIO_PASSED;
	fd_limits(cb->aio_fildes, &fi);
	if (!limits_cover(&fi, len)) {
		say_refused(cb->aio_fildes, &fi, len, 0);
		if (cfg.allow_plain)
			return AIO_PLAIN;
	}
	cb->aio_rw_flags |= RWF_ATOMIC;
	return AIO_ATOMIC;
}

/*
 * libaio: a page write's iocb gets RWF_ATOMIC in aio_rw_flags. The kernel
 * checks it at submission, so a page it cannot make atomic fails
 * io_submit() there (the requests before it are submitted, the rest not),
 * with the kernel's error, as with pwritev2. Pages whose limits statx
 * already rules out go plainly only with UNTORN_ON_REFUSE=plain.
 */
PUBLIC int io_submit(io_context_t ctx, long nr, struct iocb **iocbs)
{
	unsigned char small[64], *kind = small;
	long i, done;
	int ret;

	if (!real_io_submit)
		real_io_submit = dlsym(RTLD_NEXT, "io_submit");
	if (!real_io_submit)
		return -ENOSYS;
	if (nr > (long)sizeof(small) && !(kind = malloc(nr)))
		return -ENOMEM;
	for (i = 0; i < nr; i++)
		kind[i] = aio_prepare(iocbs[i]);
	ret = real_io_submit(ctx, nr, iocbs);
	done = ret < 0 ? 0 : ret;
	for (i = 0; i < done; i++)
		count(kind[i] == AIO_ATOMIC ? &n_atomic :
		      kind[i] == AIO_PLAIN ? &n_plain : &n_passed);
	/* The request that stopped the batch: refused, or another error. */
	if (done < nr && kind[done] == AIO_ATOMIC &&
	    is_refusal(ret < 0 ? -ret : EINVAL))
		count(&n_refused);
	if (kind != small)
		free(kind);
	return ret;
}

/* A closed descriptor's number comes back for another file. */
PUBLIC int close(int fd)
{
	resolve();
	forget_fd(fd);
	return real_close(fd);
}

PUBLIC int dup2(int oldfd, int newfd)
{
	resolve();
	forget_fd(newfd);
	return real_dup2(oldfd, newfd);
}

PUBLIC int dup3(int oldfd, int newfd, int flags)
{
	resolve();
	forget_fd(newfd);
	return real_dup3(oldfd, newfd, flags);
}
