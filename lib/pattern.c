// SPDX-License-Identifier: GPL-2.0
#include <string.h>

#include "crc32c.h"
#include "pattern.h"
#include "util.h"

static const char stamp_magic[8] = "UNTORN01";

struct stamp_head {
	char magic[8];
	uint64_t index;
	uint64_t gen;
	uint64_t seed;
	uint32_t unit_len;
	uint32_t stamp_no;
	uint32_t crc;
	uint32_t pad;
};

static uint32_t stamp_crc(const unsigned char *s)
{
	struct stamp_head h;
	uint32_t crc;

	memcpy(&h, s, sizeof(h));
	h.crc = 0;
	crc = ut_crc32c(0, &h, sizeof(h));
	return ut_crc32c(crc, s + sizeof(h), UT_STAMP_SIZE - sizeof(h));
}

void ut_pattern_fill(void *buf, size_t unit_len, uint64_t index, uint64_t gen,
		     uint64_t seed)
{
	unsigned char *p = buf;

	for (uint32_t n = 0; n < unit_len / UT_STAMP_SIZE; n++, p += UT_STAMP_SIZE) {
		struct stamp_head h = {
			.index = index, .gen = gen, .seed = seed,
			.unit_len = (uint32_t)unit_len, .stamp_no = n,
		};
		uint64_t x = index * 0x100000001b3ULL ^ gen << 20 ^ seed ^ n;

		memcpy(h.magic, stamp_magic, sizeof(h.magic));
		memcpy(p, &h, sizeof(h));
		for (size_t off = sizeof(h); off < UT_STAMP_SIZE; off += 8) {
			uint64_t r = ut_rand(&x);

			memcpy(p + off, &r, 8);
		}
		h.crc = stamp_crc(p);
		memcpy(p, &h, sizeof(h));
	}
}

static int all_zero(const unsigned char *p, size_t len)
{
	return p[0] == 0 && !memcmp(p, p + 1, len - 1);
}

void ut_pattern_check(const void *buf, size_t unit_len, uint64_t index,
		      uint64_t seed, struct ut_unit_check *res)
{
	const unsigned char *p = buf;
	unsigned int n, nstamps = unit_len / UT_STAMP_SIZE;

	memset(res, 0, sizeof(*res));
	res->gen_min = UINT64_MAX;
	for (n = 0; n < nstamps; n++, p += UT_STAMP_SIZE) {
		struct stamp_head h;

		if (all_zero(p, UT_STAMP_SIZE)) {
			res->stamps_zero++;
			continue;
		}
		memcpy(&h, p, sizeof(h));
		if (memcmp(h.magic, stamp_magic, sizeof(h.magic)) ||
		    h.crc != stamp_crc(p) || h.index != index ||
		    h.seed != seed || h.unit_len != unit_len ||
		    h.stamp_no != n) {
			res->stamps_bad++;
			continue;
		}
		res->stamps_valid++;
		if (h.gen < res->gen_min)
			res->gen_min = h.gen;
		if (h.gen > res->gen_max)
			res->gen_max = h.gen;
	}
	if (res->stamps_bad)
		res->state = UT_UNIT_CORRUPT;
	else if (res->stamps_zero == nstamps)
		res->state = UT_UNIT_ZERO;
	else if (res->stamps_zero || res->gen_min != res->gen_max)
		res->state = UT_UNIT_TORN;
	else
		res->state = UT_UNIT_OK;
	if (res->state == UT_UNIT_OK)
		res->gen = res->gen_max;
	if (!res->stamps_valid)
		res->gen_min = 0;
}

const char *ut_unit_state_name(enum ut_unit_state state)
{
	switch (state) {
	case UT_UNIT_ZERO:
		return "zero";
	case UT_UNIT_OK:
		return "ok";
	case UT_UNIT_TORN:
		return "torn";
	case UT_UNIT_CORRUPT:
		return "corrupt";
	}
	return "?";
}
