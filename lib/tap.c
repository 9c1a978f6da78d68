// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stdio.h>

#include "tap.h"

const char *ut_tap_prefix = "";
int ut_tap_failures;

void ut_tap(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s - %s: ", ok ? "ok" : "not ok", ut_tap_prefix);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!ok)
		ut_tap_failures++;
}

void ut_diag(const char *fmt, ...)
{
	va_list ap;

	printf("#   ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}
