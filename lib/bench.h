/* SPDX-License-Identifier: GPL-2.0 */
#ifndef UNTORN_BENCH_H
#define UNTORN_BENCH_H

#include <stdint.h>

/* Helpers of the benchmark programs (benches/progs). */

/* CLOCK_MONOTONIC in microseconds. */
double ut_now_us(void);
/* The whole machine's non-idle CPU time so far, in microseconds, from
 * /proc/stat: user, nice, system, irq, softirq and steal (kworkers and
 * interrupts count; idle and iowait do not). 0 if unreadable. */
double ut_busy_us(void);
/* qsort() comparison of doubles, ascending. */
int ut_cmp_double(const void *a, const void *b);
/*
 * A 95 % bootstrap interval of a statistic over N paired samples: BOOTS
 * times, draw N of them with replacement (indices from *SEED's sequence)
 * and compute STAT(pick, N, ARG); *LO and *HI are the 2.5th and 97.5th
 * percentiles of those. 0, or -ENOMEM.
 */
int ut_bootstrap95(unsigned int n, unsigned int boots, uint64_t *seed,
		   double (*stat)(const unsigned int *pick, unsigned int n,
				  void *arg),
		   void *arg, double *lo, double *hi);

#endif
