// SPDX-License-Identifier: GPL-2.0
/* Host-side unit tests of the userspace library: no VM, TAP output. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libaio.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "awstats.h"
#include "crc32c.h"
#include "io.h"
#include "pattern.h"
#include "statx.h"
#include "util.h"

static int failures;

#define CHECK(cond, ...) do {						\
	int ok_ = !!(cond);						\
	printf("%s - unit: ", ok_ ? "ok" : "not ok");			\
	printf(__VA_ARGS__);						\
	printf("\n");							\
	if (!ok_)							\
		failures++;						\
} while (0)

/*
 * Threads that make their first CRC at the same moment all get the right
 * one (the table is built once, not read half built). Each try is a
 * fresh child process, whose table was never built; so this runs before
 * anything in this process computes a CRC.
 */
#define RACE_THREADS 4
static pthread_barrier_t race_barrier;

static void *race_crc(void *p)
{
	pthread_barrier_wait(&race_barrier);
	*(uint32_t *)p = ut_crc32c(0, "123456789", 9);
	return NULL;
}

static void test_crc32c_first_use(void)
{
	unsigned int tries = 200, bad = 0, i;

	for (i = 0; i < tries; i++) {
		pid_t pid = fork();
		int status;

		if (pid == 0) {
			pthread_t th[RACE_THREADS];
			uint32_t got[RACE_THREADS];
			int t, wrong = 0;

			pthread_barrier_init(&race_barrier, NULL, RACE_THREADS);
			for (t = 0; t < RACE_THREADS; t++)
				if (pthread_create(&th[t], NULL, race_crc, &got[t]))
					_exit(2);
			for (t = 0; t < RACE_THREADS; t++) {
				pthread_join(th[t], NULL);
				wrong |= got[t] != 0xE3069283;
			}
			_exit(wrong);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid ||
		    !WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
	}
	CHECK(!bad, "crc32c: %u threads' first CRCs at once are right (%u of %u tries wrong)",
	      RACE_THREADS, bad, tries);
}

static void test_crc32c(void)
{
	CHECK(ut_crc32c(0, "123456789", 9) == 0xE3069283,
	      "crc32c check value of \"123456789\" is 0xE3069283");
	CHECK(ut_crc32c(ut_crc32c(0, "1234", 4), "56789", 5) == 0xE3069283,
	      "crc32c continues across calls");
}

static void test_sizes(void)
{
	static const struct { const char *s; uint64_t v; int err; } cases[] = {
		{ "4096", 4096, 0 }, { "16k", 16384, 0 }, { "16K", 16384, 0 },
		{ "1m", 1 << 20, 0 }, { "2G", 2ULL << 30, 0 }, { "64KiB", 65536, 0 },
		{ "0x1000", 4096, 0 }, { "", 0, -EINVAL }, { "k", 0, -EINVAL },
		{ "12q", 0, -EINVAL }, { "-1", 0, -EINVAL }, { "4kx", 0, -EINVAL },
		{ "99999999999999999999", 0, -EINVAL }, { "17179869184g", 0, -EINVAL },
	};
	char buf[32];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t v = 0;
		int err = ut_parse_size(cases[i].s, &v);

		CHECK(err == cases[i].err && (err || v == cases[i].v),
		      "parse_size(\"%s\") = %d, %llu", cases[i].s, err,
		      (unsigned long long)v);
	}
	CHECK(!strcmp(ut_fmt_size(16384, buf, sizeof(buf)), "16 KiB"), "fmt 16 KiB");
	CHECK(!strcmp(ut_fmt_size(1 << 20, buf, sizeof(buf)), "1 MiB"), "fmt 1 MiB");
	CHECK(!strcmp(ut_fmt_size(1536, buf, sizeof(buf)), "1536 bytes"), "fmt 1536 bytes");
	CHECK(!strcmp(ut_fmt_size(0, buf, sizeof(buf)), "0 bytes"), "fmt 0 bytes");
	CHECK(ut_is_pow2(4096) && !ut_is_pow2(12288) && !ut_is_pow2(0), "is_pow2");
}

static void test_lists(void)
{
	static const char *const names[] = { "hw_writes", "sw_writes", "fallback_mixed" };
	unsigned int mask = 0, v = 0;
	char bad[16] = "";

	CHECK(ut_parse_list("sw_writes,hw_writes", names, 3, &mask, bad, sizeof(bad)) == 0 &&
	      mask == 3, "parse_list: two names -> mask %#x", mask);
	CHECK(ut_parse_list("hw_writes,nope", names, 3, &mask, bad, sizeof(bad)) == -EINVAL &&
	      !strcmp(bad, "nope"), "parse_list: an unknown name is named (%s)", bad);
	CHECK(ut_parse_uint("16", 1, 16, &v) == 0 && v == 16, "parse_uint 16 in 1..16");
	CHECK(ut_parse_uint("17", 1, 16, &v) == -EINVAL, "parse_uint 17 beyond 16");
	CHECK(ut_parse_uint("4x", 1, 16, &v) == -EINVAL, "parse_uint 4x");
}

static void test_pattern(void)
{
	const size_t len = 16384;
	unsigned char *a = malloc(len), *b = malloc(len);
	struct ut_unit_check r;

	ut_pattern_fill(a, len, 7, 3, 42);
	ut_pattern_check(a, len, 7, 42, &r);
	CHECK(r.state == UT_UNIT_OK && r.gen == 3 && r.stamps_valid == 32,
	      "a fresh unit checks ok with its generation");

	ut_pattern_check(a, len, 8, 42, &r);
	CHECK(r.state == UT_UNIT_CORRUPT, "a unit at the wrong index is corrupt");
	ut_pattern_check(a, len, 7, 43, &r);
	CHECK(r.state == UT_UNIT_CORRUPT, "a unit of another seed is corrupt");

	ut_pattern_fill(b, len, 7, 4, 42);
	memcpy(a + 8192, b + 8192, 512);
	ut_pattern_check(a, len, 7, 42, &r);
	CHECK(r.state == UT_UNIT_TORN && r.gen_min == 3 && r.gen_max == 4,
	      "one stamp of a newer generation makes the unit torn");

	ut_pattern_fill(a, len, 7, 3, 42);
	memset(a + len - 512, 0, 512);
	ut_pattern_check(a, len, 7, 42, &r);
	CHECK(r.state == UT_UNIT_TORN && r.stamps_zero == 1,
	      "a zero stamp in a written unit makes it torn");

	memset(a, 0, len);
	ut_pattern_check(a, len, 7, 42, &r);
	CHECK(r.state == UT_UNIT_ZERO, "an all-zero unit was never written");

	ut_pattern_fill(a, len, 7, 3, 42);
	a[4000] ^= 1;
	ut_pattern_check(a, len, 7, 42, &r);
	CHECK(r.state == UT_UNIT_CORRUPT && r.stamps_bad == 1,
	      "a flipped bit is caught by the stamp checksum");
	{
		char what[256];

		CHECK(r.first_bad == 7, "the flipped bit's stamp is named (%u)", r.first_bad);
		ut_stamp_describe(a + 7 * 512, what, sizeof(what));
		CHECK(strstr(what, "stamp 7 of a 16384-byte unit") &&
		      strstr(what, "crc bad") && strstr(what, "1 bytes differ, in 416..416"),
		      "a damaged stamp is described by the bytes that differ: %s", what);
		memset(a + 7 * 512, 0xa5, 512);
		ut_stamp_describe(a + 7 * 512, what, sizeof(what));
		CHECK(strstr(what, "no stamp: 0 zero bytes") && strstr(what, " a5 a5"),
		      "foreign bytes are described as such: %s", what);
	}

	ut_pattern_fill(a, len, 7, 3, 42);
	memcpy(a, a + 512, 512);
	ut_pattern_check(a, len, 7, 42, &r);
	CHECK(r.state == UT_UNIT_CORRUPT, "a stamp in the wrong place is corrupt");

	ut_pattern_fill(a, len, 7, 3, 42);
	ut_pattern_fill(b, len, 7, 3, 42);
	CHECK(!memcmp(a, b, len), "the pattern is reproducible");
	ut_pattern_fill(b, len, 7, 5, 42);
	CHECK(memcmp(a + 64, b + 64, 448), "payloads differ between generations");
	free(a);
	free(b);
}

static void test_engines(void)
{
	enum ut_engine e;

	CHECK(!ut_engine_parse("io_uring", &e) && e == UT_ENGINE_URING, "engine io_uring");
	CHECK(!ut_engine_parse("aio", &e) && e == UT_ENGINE_AIO, "engine aio alias");
	CHECK(ut_engine_parse("sync", &e) == -EINVAL, "unknown engine refused");
	CHECK(RWF_ATOMIC == 0x40, "RWF_ATOMIC is 0x40 as in mainline");
}

/*
 * Every engine writes a batch to a host file (buffered: no O_DIRECT on a
 * tmpfs) and reports each request's own result; a request on a closed
 * descriptor fails alone, with EBADF, while the others are written.
 */
static void test_engine_batches(void)
{
	char path[] = "/tmp/untorn-unit-io-XXXXXX";
	static char bufs[4][512];
	char back[4 * 512];
	struct iovec iov[4];
	struct ut_wreq req[4];
	int fd = mkstemp(path);

	if (fd < 0) {
		CHECK(0, "engines: mkstemp: %s", strerror(errno));
		return;
	}
	unlink(path);
	for (int e = 0; e < UT_ENGINE_COUNT; e++) {
		int ok = 1, err;

		for (int i = 0; i < 4; i++) {
			memset(bufs[i], 'a' + 4 * e + i, sizeof(bufs[i]));
			iov[i] = (struct iovec){ bufs[i], sizeof(bufs[i]) };
			req[i] = (struct ut_wreq){ .fd = i == 2 ? -1 : fd,
				.iov = &iov[i], .iovcnt = 1, .off = 512 * i };
		}
		err = ut_writev_batch(e, req, 4);
		if (ut_pread(fd, back, sizeof(back), 0) != sizeof(back))
			ok = 0;
		for (int i = 0; ok && i < 4; i++) {
			if (i == 2)
				continue;
			if (req[i].res != 512 || memcmp(back + 512 * i, bufs[i], 512))
				ok = 0;
		}
		CHECK(!err && ok, "engines: %s wrote a batch of 3 requests, each with its own result",
		      ut_engine_name(e));
		CHECK(req[2].res == -EBADF, "engines: %s: the request on a bad descriptor got %zd (EBADF is %d)",
		      ut_engine_name(e), req[2].res, -EBADF);
		ut_io_release();
	}
	close(fd);
}

static void put_file(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* A fake /sys/fs/xfs/DEV/atomic_write/ as the kernel lays it out. */
static void test_awstats(void)
{
	char dir[] = "/tmp/untorn-unit-XXXXXX";
	struct ut_awstats st;
	uint64_t v = 0;
	int i, order_ok = 1;

	if (!mkdtemp(dir)) {
		CHECK(0, "awstats: mkdtemp: %s", strerror(errno));
		return;
	}
	put_file(dir, "sw_writes", "5\n");
	put_file(dir, "hw_writes", "12\n");
	put_file(dir, "hw_bytes", "49152\n");
	put_file(dir, "fallback_size", "5\n");
	put_file(dir, "refused_policy", "18446744073709551615\n");
	put_file(dir, "hw_unit_max", "4096\n");
	put_file(dir, "fallback_policy", "deny\n");
	put_file(dir, "reset_counters", "");
	put_file(dir, "garbage", "12x\n");
	CHECK(!ut_awstats_read_dir(dir, &st), "awstats: reads a counter directory");
	CHECK(!strcmp(st.policy, "deny"), "awstats: policy '%s' is deny", st.policy);
	CHECK(st.n == 6, "awstats: 6 numeric entries (policy, reset and garbage left out): %d", st.n);
	CHECK(!ut_awstats_get(&st, "refused_policy", &v) && v == UINT64_MAX,
	      "awstats: a full 64-bit count survives");
	CHECK(ut_awstats_get(&st, "garbage", &v) == -ENOENT, "awstats: a non-number is skipped");
	for (i = 1; i < st.n; i++)
		if (st.s[i - 1].kind > st.s[i].kind)
			order_ok = 0;
	CHECK(order_ok && st.s[0].kind == UT_AW_LIMIT &&
	      st.s[st.n - 1].kind == UT_AW_REFUSED,
	      "awstats: limits first, refusals last");
	CHECK(!ut_awstats_get(&st, "hw_writes", &v) && v == 12, "awstats: hw_writes 12");
	CHECK(ut_awstats_read_dir("/nonexistent/untorn", &st) == -ENOENT,
	      "awstats: a missing directory is ENOENT");
	{
		const char *names[] = { "sw_writes", "hw_writes", "hw_bytes",
			"fallback_size", "refused_policy", "hw_unit_max",
			"fallback_policy", "reset_counters", "garbage" };
		char path[PATH_MAX];

		for (i = 0; i < (int)(sizeof(names) / sizeof(names[0])); i++) {
			snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
			unlink(path);
		}
		rmdir(dir);
	}
}

/* ---- untorn-preload (tools/untorn-preload) ---- */

#define PAGE (16 << 10)

/*
 * The child: the writes a database would make, through the preloaded
 * library, each result as a line "NAME RET ERRNO" on stdout.
 */
static int preload_child(const char *path)
{
	int fd = open(path, O_RDWR | O_DIRECT), fdb = open(path, O_RDWR);
	struct iovec iov[4];
	io_context_t ctx = 0;
	struct iocb cb[2], *cbs[2];
	void *buf;
	ssize_t n;
	int i;

	if (fd < 0 || fdb < 0 || posix_memalign(&buf, 4096, 2 * PAGE))
		return 3;
	memset(buf, 'N', 2 * PAGE);
#define R(name, call) do {						\
	errno = 0;							\
	n = (call);							\
	printf("%s %zd %d\n", name, n, n < 0 ? errno : 0);		\
} while (0)
	R("page", pwrite(fd, buf, PAGE, 2 * PAGE));
	R("page-again", pwrite(fd, buf, PAGE, 3 * PAGE));
	R("small", pwrite(fd, buf, 4096, 0));
	R("misaligned", pwrite(fd, buf, PAGE, 4096 + 10 * PAGE));
	R("buffered", pwrite(fdb, buf, PAGE, 5 * PAGE));
	for (i = 0; i < 4; i++)
		iov[i] = (struct iovec){ (char *)buf + i * 4096, 4096 };
	R("pieces", pwritev(fd, iov, 4, 6 * PAGE));
	if (getenv("UNIT_RAISE"))
		raise(SIGUSR2);
	if (io_setup(4, &ctx) == 0) {
		io_prep_pwrite(&cb[0], fd, buf, 4096, 8 * PAGE);
		io_prep_pwrite(&cb[1], fd, buf, PAGE, 9 * PAGE);
		cbs[0] = &cb[0];
		cbs[1] = &cb[1];
		/* The number submitted, or -errno when the first failed. */
		n = io_submit(ctx, 2, cbs);
		printf("aio %zd %d\n", n < 0 ? -1 : n, n < 0 ? (int)-n : 0);
		if (n > 0) {
			struct io_event ev[2];

			io_getevents(ctx, n, n, ev, NULL);
		}
		io_destroy(ctx);
	}
	fflush(stdout);
	close(fd);
	close(fdb);
	return 0;
#undef R
}

/* Run the child under LD_PRELOAD with ENV ("NAME=VALUE;..."); its output. */
static int run_preload(const char *so, const char *file, const char *env,
		       char *out, size_t outlen, char *err, size_t errlen)
{
	int po[2], pe[2], status;
	size_t no = 0, ne = 0;
	ssize_t k;
	pid_t pid;

	if (pipe(po) || pipe(pe))
		return -1;
	pid = fork();
	if (pid == 0) {
		char envbuf[512], *save, *tok;

		dup2(po[1], 1);
		dup2(pe[1], 2);
		snprintf(envbuf, sizeof(envbuf), "%s", env);
		for (tok = strtok_r(envbuf, ";", &save); tok;
		     tok = strtok_r(NULL, ";", &save))
			putenv(strdup(tok));
		setenv("LD_PRELOAD", so, 1);
		execl("/proc/self/exe", "unit", "--preload-child", file, NULL);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	while ((k = read(po[0], out + no, outlen - 1 - no)) > 0)
		no += k;
	while ((k = read(pe[0], err + ne, errlen - 1 - ne)) > 0)
		ne += k;
	out[no] = err[ne] = 0;
	close(po[0]);
	close(pe[0]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The child's result NAME: its return value and errno. */
static int result(const char *out, const char *name, long *ret, int *err)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), "\n%s ", name);
	p = strstr(out, key + 1) == out ? out : strstr(out, key);
	if (!p)
		return -1;
	p += p == out ? strlen(key + 1) : strlen(key);
	return sscanf(p, "%ld %d", ret, err) == 2 ? 0 : -1;
}

static int count_lines(const char *text, const char *needle)
{
	int n = 0;

	for (const char *p = text; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* The bytes at OFF of the file are all C (what the child wrote) or not. */
static int holds(int fd, off_t off, size_t len, char c)
{
	static char back[PAGE];

	if (pread(fd, back, len, off) != (ssize_t)len)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (back[i] != c)
			return 0;
	return 1;
}

/*
 * On a host file: the host's kernel and filesystem decide whether a
 * 16 KiB page can be atomic (statx says), and the checks follow. Without
 * atomic writes the page writes must fail with the kernel's error and
 * leave the file as it was; everything else must pass through untouched.
 */
static void test_preload(const char *self)
{
	char so[PATH_MAX], dir[PATH_MAX], path[PATH_MAX], stats[PATH_MAX];
	char out[4096], err[4096], line[256];
	struct ut_statx stx;
	int fd, rc, can, e, k;
	long r;
	FILE *f;

	snprintf(dir, sizeof(dir), "%s", self);
	*strrchr(dir, '/') = 0;
	snprintf(so, sizeof(so), "%s/../lib/untorn-preload.so", dir);
	if (access(so, R_OK)) {
		CHECK(0, "preload: %s: %s", so, strerror(errno));
		return;
	}
	/* On the disk, not a tmpfs: O_DIRECT must work. */
	snprintf(path, sizeof(path), "%s/preload-file", dir);
	snprintf(stats, sizeof(stats), "%s/preload-stats", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, 12 * PAGE)) {
		CHECK(0, "preload: %s: %s", path, strerror(errno));
		return;
	}
	can = !ut_statx(fd, "", AT_EMPTY_PATH, UT_STATX_WRITE_ATOMIC, &stx) &&
	      (stx.stx_mask & UT_STATX_WRITE_ATOMIC) &&
	      stx.stx_atomic_write_unit_min <= PAGE &&
	      stx.stx_atomic_write_unit_max >= PAGE;
	printf("# preload: the host file %s 16 KiB atomic writes (statx unit max %u)\n",
	       can ? "takes" : "does not take", stx.stx_atomic_write_unit_max);

	unlink(stats);
	snprintf(line, sizeof(line), "UNTORN_STATS_FILE=%s;UNTORN_STATS_SIGNAL=USR2;UNIT_RAISE=1", stats);
	rc = run_preload(so, path, line, out, sizeof(out), err, sizeof(err));
	CHECK(rc == 0, "preload: the child ran (exit %d)", rc);
	if (can) {
		CHECK(!result(out, "page", &r, &e) && r == PAGE,
		      "preload: an aligned 16 KiB O_DIRECT page is written atomically (%ld)", r);
		CHECK(!result(out, "aio", &r, &e) && r == 2,
		      "preload: io_submit of a 4 KiB and a page request: both submitted (%ld)", r);
	} else {
		CHECK(!result(out, "page", &r, &e) && r == -1 &&
		      (e == EINVAL || e == EOPNOTSUPP),
		      "preload: an aligned 16 KiB page the file cannot take atomically fails with the kernel's error (%ld, errno %d)",
		      r, e);
		CHECK(holds(fd, 2 * PAGE, PAGE, 0) && holds(fd, 3 * PAGE, PAGE, 0),
		      "preload: the refused pages left the file as it was");
		CHECK(count_lines(err, "cannot be written atomically") == 1,
		      "preload: said so once on stderr for the file, not per write");
		CHECK(!result(out, "pieces", &r, &e) && r == -1,
		      "preload: a page in 4 iovecs is a page too (%ld)", r);
		CHECK(!result(out, "aio", &r, &e) && r == 1,
		      "preload: io_submit of a 4 KiB and a page request: the kernel stops the batch at the page (%ld submitted)",
		      r);
	}
	CHECK(!result(out, "small", &r, &e) && r == 4096 && holds(fd, 0, 4096, 'N'),
	      "preload: a 4 KiB write passes through and is written");
	CHECK(!result(out, "misaligned", &r, &e) && r == PAGE && holds(fd, 4096 + 10 * PAGE, PAGE, 'N'),
	      "preload: a 16 KiB write at a misaligned offset passes through");
	CHECK(!result(out, "buffered", &r, &e) && r == PAGE && holds(fd, 5 * PAGE, PAGE, 'N'),
	      "preload: a 16 KiB write to a descriptor without O_DIRECT passes through");

	/* The counters: once by the signal (mid-way), once at exit. */
	f = fopen(stats, "r");
	k = 0;
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long a, p, rf, ps;

		if (sscanf(strchr(line, ':') ? strchr(line, ':') + 1 : line,
			   " atomic %llu, plain %llu, refused %llu, passed %llu",
			   &a, &p, &rf, &ps) != 4)
			continue;
		k++;
		if (k == 1)
			CHECK(a + rf == 3 && p == 0 && ps == 3,
			      "preload: the signal's counters: atomic %llu + refused %llu = 3 pages, plain %llu, passed %llu = 3",
			      a, rf, p, ps);
		else
			CHECK(a + rf == 4 && p == 0 && ps == 4 && (can ? !rf : !a),
			      "preload: the counters at exit: atomic %llu, refused %llu, plain %llu, passed %llu",
			      a, rf, p, ps);
	}
	if (f)
		fclose(f);
	CHECK(k == 2, "preload: %d counter lines in UNTORN_STATS_FILE (signal, exit)", k);

	if (!can) {
		unlink(stats);
		snprintf(line, sizeof(line), "UNTORN_ON_REFUSE=plain;UNTORN_STATS_FILE=%s", stats);
		rc = run_preload(so, path, line, out, sizeof(out), err, sizeof(err));
		CHECK(rc == 0 && !result(out, "page", &r, &e) && r == PAGE &&
		      holds(fd, 2 * PAGE, PAGE, 'N') && holds(fd, 6 * PAGE, PAGE, 'N'),
		      "preload: UNTORN_ON_REFUSE=plain writes the pages plainly (%ld)", r);
		CHECK(strstr(err, "writing such pages plainly") != NULL,
		      "preload: and says so on stderr");
		f = fopen(stats, "r");
		CHECK(f && fgets(line, sizeof(line), f) &&
		      strstr(line, "atomic 0, plain 4, refused 0, passed 4"),
		      "preload: counted as plain: %s", f ? line : "no stats file");
		if (f)
			fclose(f);
	}

	rc = run_preload(so, path, "UNTORN_ATOMIC_SIZES=16k,3000", out, sizeof(out), err, sizeof(err));
	CHECK(rc == 2 && strstr(err, "UNTORN_ATOMIC_SIZES"),
	      "preload: a size that is not a power of two stops the program (exit %d)", rc);
	rc = run_preload(so, path, "UNTORN_ON_REFUSE=maybe", out, sizeof(out), err, sizeof(err));
	CHECK(rc == 2 && strstr(err, "UNTORN_ON_REFUSE"),
	      "preload: an unknown UNTORN_ON_REFUSE stops the program (exit %d)", rc);
	close(fd);
	unlink(path);
	unlink(stats);
}

int main(int argc, char **argv)
{
	char self[PATH_MAX];
	ssize_t n;

	if (argc == 3 && !strcmp(argv[1], "--preload-child"))
		return preload_child(argv[2]);
	test_crc32c_first_use();
	test_crc32c();
	test_sizes();
	test_lists();
	test_pattern();
	test_engines();
	test_engine_batches();
	test_awstats();
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = 0;
		test_preload(self);
	} else {
		CHECK(0, "preload: readlink /proc/self/exe: %s", strerror(errno));
	}
	return failures ? 1 : 0;
}
