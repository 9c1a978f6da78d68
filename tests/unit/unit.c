// SPDX-License-Identifier: GPL-2.0
/* Host-side unit tests of the userspace library: no VM, TAP output. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int main(void)
{
	test_crc32c();
	test_sizes();
	test_lists();
	test_pattern();
	test_engines();
	test_engine_batches();
	test_awstats();
	return failures ? 1 : 0;
}
