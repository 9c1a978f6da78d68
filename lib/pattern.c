// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <stdlib.h>
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
			if (!res->stamps_bad++)
				res->first_bad = n;
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

/*
 * A stamp whose header is intact but whose CRC is not: which bytes differ
 * from what that header's write put there.
 */
static void describe_damage(const unsigned char *p, const struct stamp_head *h,
			    char *out, size_t len)
{
	unsigned char want[UT_STAMP_SIZE], *unit;
	unsigned int i, first = UT_STAMP_SIZE, last = 0, ndiff = 0;
	int n;

	unit = malloc(h->unit_len);
	if (!unit)
		return;
	ut_pattern_fill(unit, h->unit_len, h->index, h->gen, h->seed);
	memcpy(want, unit + (size_t)h->stamp_no * UT_STAMP_SIZE, UT_STAMP_SIZE);
	free(unit);
	for (i = 0; i < UT_STAMP_SIZE; i++) {
		if (p[i] == want[i])
			continue;
		ndiff++;
		if (first == UT_STAMP_SIZE)
			first = i;
		last = i;
	}
	n = snprintf(out, len, "; %u bytes differ, in %u..%u; found", ndiff, first, last);
	for (i = first; i <= last && i < first + 16 && n > 0 && (size_t)n < len; i++)
		n += snprintf(out + n, len - n, " %02x", p[i]);
	if (n > 0 && (size_t)n < len)
		n += snprintf(out + n, len - n, ", written");
	for (i = first; i <= last && i < first + 16 && n > 0 && (size_t)n < len; i++)
		n += snprintf(out + n, len - n, " %02x", want[i]);
}

/*
 * What a stamp that failed the check holds, for a failure report: another
 * unit's or an earlier run's stamp (the header says whose), a stamp
 * damaged in place (bad CRC), or foreign bytes (how many are zero, and
 * the first of them).
 */
void ut_stamp_describe(const void *stamp, char *out, size_t len)
{
	const unsigned char *p = stamp;
	struct stamp_head h;
	unsigned int zero = 0, i;
	int n;

	memcpy(&h, p, sizeof(h));
	for (i = 0; i < UT_STAMP_SIZE; i++)
		zero += !p[i];
	if (!memcmp(h.magic, stamp_magic, sizeof(h.magic))) {
		int crc_ok = h.crc == stamp_crc(p);

		n = snprintf(out, len,
			     "a stamp of unit %llu generation %llu, stamp %u of a %u-byte unit, seed %#llx, crc %s; %u zero bytes",
			     (unsigned long long)h.index, (unsigned long long)h.gen,
			     h.stamp_no, h.unit_len, (unsigned long long)h.seed,
			     crc_ok ? "good" : "bad", zero);
		if (!crc_ok && h.unit_len % UT_STAMP_SIZE == 0 &&
		    h.unit_len <= 64 << 20 &&
		    h.stamp_no < h.unit_len / UT_STAMP_SIZE && n > 0 && (size_t)n < len)
			describe_damage(p, &h, out + n, len - n);
		return;
	}
	n = snprintf(out, len, "no stamp: %u zero bytes of %u; first bytes", zero,
		     UT_STAMP_SIZE);
	for (i = 0; i < 32 && n > 0 && (size_t)n < len; i++)
		n += snprintf(out + n, len - n, " %02x", p[i]);
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
