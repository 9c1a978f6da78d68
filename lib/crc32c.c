// SPDX-License-Identifier: GPL-2.0
#include <pthread.h>

#include "crc32c.h"

static uint32_t table[256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void crc32c_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82F63B78U & -(c & 1));
		table[i] = c;
	}
}

/*
 * The table is built once, on first use, and torture's writer threads
 * make their first stamps at the same moment: a lazy check of one entry
 * let a thread use a table another was still filling, and stamp a unit
 * with a wrong CRC that the check then called corrupt (CI, seed
 * 0x8115ff9b32a2afd3). pthread_once() makes the others wait for it.
 */
uint32_t ut_crc32c(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	pthread_once(&table_once, crc32c_init);
	crc = ~crc;
	while (len--)
		crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}
