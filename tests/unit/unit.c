// SPDX-License-Identifier: GPL-2.0
/* Host-side unit tests of the userspace library: no VM, TAP output. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int main(void)
{
	test_crc32c();
	test_sizes();
	test_pattern();
	test_engines();
	return failures ? 1 : 0;
}
