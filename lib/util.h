/* SPDX-License-Identifier: GPL-2.0 */
#ifndef UNTORN_UTIL_H
#define UNTORN_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* "16k", "1M", "4096" -> bytes (k/m/g are powers of 1024). 0 or -EINVAL. */
int ut_parse_size(const char *s, uint64_t *out);
/* 16384 -> "16 KiB"; exact values only, else plain bytes. */
const char *ut_fmt_size(uint64_t bytes, char *buf, size_t len);
static inline int ut_is_pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}
/* A seeded generator (splitmix64): the next value of *STATE's sequence. */
uint64_t ut_rand(uint64_t *state);
/* The first line of DIR/NAME (a sysfs file, say), without its newline. 0 or
 * -errno. */
int ut_read_line(const char *dir, const char *name, char *buf, size_t len);
/*
 * A comma-separated list of NAMES[N] into a mask (bit i for names[i]).
 * 0, or -EINVAL with the unknown name copied into BAD, or -ENOMEM.
 */
int ut_parse_list(const char *arg, const char *const names[], unsigned int n,
		  unsigned int *mask, char *bad, size_t badlen);
/* A whole number from MIN to MAX into *OUT: 0 or -EINVAL. */
int ut_parse_uint(const char *arg, unsigned int min, unsigned int max,
		  unsigned int *out);
/* An aligned buffer for O_DIRECT, or NULL. */
void *ut_alloc_io(size_t len);

#endif
