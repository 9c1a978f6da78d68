// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

double ut_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

double ut_busy_us(void)
{
	unsigned long long v[8] = { 0 };
	long hz = sysconf(_SC_CLK_TCK);
	FILE *f = fopen("/proc/stat", "r");
	int n;

	if (!f)
		return 0;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu",
		   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n < 8)
		return 0;
	/* user nice system idle iowait irq softirq steal: all but idle, iowait */
	return (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) * 1e6 / hz;
}

int ut_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}
