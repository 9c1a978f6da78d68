/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Control of a tearblk device (drivers/block/tearblk.c in the series):
 * seed, power cut, power-on and counters, through /sys/block/tearN/tear/.
 */
#ifndef UNTORN_TEAR_H
#define UNTORN_TEAR_H

#include <stddef.h>
#include <stdint.h>

/* The control directory of the tearblk device node DEV. 0 or -errno. */
int ut_tear_dir(const char *dev, char *dir, size_t len);
/* Write VALUE (a number) to the attribute NAME. 0 or -errno. */
int ut_tear_write(const char *dir, const char *name, uint64_t value);
/* Read the counter NAME. 0 or -errno. */
int ut_tear_read(const char *dir, const char *name, uint64_t *value);
/* Cut power with SEED deciding what survives. 0 or -errno. */
int ut_tear_cut(const char *dir, uint64_t seed);
/* Power on; every opener of the disk must be gone. 0 or -errno. */
int ut_tear_power_on(const char *dir);

#endif
