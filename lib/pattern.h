/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Patterned atomic units. A unit of N bytes is N/512 stamps; every stamp
 * carries the unit's index, its generation, its own position and a CRC-32C,
 * so a reader can tell a complete version of a unit from a mix of two
 * versions (a torn write), from damage and from space never written.
 */
#ifndef UNTORN_PATTERN_H
#define UNTORN_PATTERN_H

#include <stddef.h>
#include <stdint.h>

#define UT_STAMP_SIZE 512

enum ut_unit_state {
	UT_UNIT_ZERO,		/* never written: all zero bytes */
	UT_UNIT_OK,		/* one complete version */
	UT_UNIT_TORN,		/* stamps of more than one version, or some zero */
	UT_UNIT_CORRUPT,	/* a stamp that no version of this unit wrote */
};

struct ut_unit_check {
	enum ut_unit_state state;
	uint64_t gen;		/* UT_UNIT_OK: its generation */
	uint64_t gen_min;	/* over the valid stamps */
	uint64_t gen_max;
	unsigned int stamps_valid;
	unsigned int stamps_zero;
	unsigned int stamps_bad;
	unsigned int first_bad;	/* the first bad stamp's number, if any */
};

void ut_pattern_fill(void *buf, size_t unit_len, uint64_t index, uint64_t gen,
		     uint64_t seed);
void ut_pattern_check(const void *buf, size_t unit_len, uint64_t index,
		      uint64_t seed, struct ut_unit_check *res);
const char *ut_unit_state_name(enum ut_unit_state state);
void ut_stamp_describe(const void *stamp, char *out, size_t len);

#endif
