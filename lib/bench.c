// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "util.h"

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

int ut_bootstrap95(unsigned int n, unsigned int boots, uint64_t *seed,
		   double (*stat)(const unsigned int *pick, unsigned int n,
				  void *arg),
		   void *arg, double *lo, double *hi)
{
	unsigned int *pick = calloc(n, sizeof(*pick));
	double *r = calloc(boots, sizeof(*r));

	if (!pick || !r) {
		free(pick);
		free(r);
		return -ENOMEM;
	}
	for (unsigned int k = 0; k < boots; k++) {
		for (unsigned int i = 0; i < n; i++)
			pick[i] = ut_rand(seed) % n;
		r[k] = stat(pick, n, arg);
	}
	qsort(r, boots, sizeof(*r), ut_cmp_double);
	*lo = r[boots * 25 / 1000];
	*hi = r[boots * 975 / 1000 - 1];
	free(pick);
	free(r);
	return 0;
}
