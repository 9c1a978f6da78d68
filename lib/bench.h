/* SPDX-License-Identifier: GPL-2.0 */
#ifndef UNTORN_BENCH_H
#define UNTORN_BENCH_H

/* Helpers of the benchmark programs (benches/progs). */

/* CLOCK_MONOTONIC in microseconds. */
double ut_now_us(void);
/* The whole machine's non-idle CPU time so far, in microseconds, from
 * /proc/stat: user, nice, system, irq, softirq and steal (kworkers and
 * interrupts count; idle and iowait do not). 0 if unreadable. */
double ut_busy_us(void);
/* qsort() comparison of doubles, ascending. */
int ut_cmp_double(const void *a, const void *b);

#endif
